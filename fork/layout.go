package fork

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"rewind.dev/internal/durable"
	"rewind.dev/jsonl"
)

// Where a fork goes and what names its session are the dialect's ForkRule (see jsonl): a path
// template, the field holding the session id, where that id is replaced, the sidecar files that
// go with a session. This file interprets them.

var templateVar = regexp.MustCompile(`\{([a-z_0-9]+)(?::([^}]*))?\}`)

// expand fills a path template. vars holds the plain variables; {up:N}, {now:LAYOUT},
// {utc:LAYOUT} and {utcfile:LAYOUT} are computed from dir and now.
func expand(tmpl string, vars map[string]string, dir string, now time.Time) (string, error) {
	var bad error
	out := templateVar.ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := templateVar.FindStringSubmatch(m)
		name, arg := sub[1], sub[2]
		switch name {
		case "up":
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 {
				bad = fmt.Errorf("template %q: {up:%s} needs a count", tmpl, arg)
				return ""
			}
			d := dir
			for range n {
				d = filepath.Dir(d)
			}
			return d
		case "now":
			return now.Format(arg)
		case "utc":
			return now.UTC().Format(arg)
		case "utcfile":
			// A time fit for a file name: ':' and '.' become '-' (pi's session files).
			return strings.NewReplacer(":", "-", ".", "-").Replace(now.UTC().Format(arg))
		}
		v, ok := vars[name]
		if !ok {
			bad = fmt.Errorf("template %q: unknown {%s}", tmpl, name)
		}
		return v
	})
	return filepath.Clean(out), bad
}

// rand8 is eight random hex digits that are never other (case aside): a tag for a fork's file
// name that does not repeat its session's {id8}. Gemini CLI, starting, deletes every chat file
// whose name ends in the -<id8>.jsonl of a session it drops (the stub a resume leaves behind):
// a fork named by its own id8 would go with its stub.
func rand8(other string) string {
	for {
		s := strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
		if !strings.EqualFold(s, other) {
			return s
		}
	}
}

// uuidIn matches a UUID in a file or folder name.
var uuidIn = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// sessionIDOf tells the source's session id: the dialect's field of the first line, else the
// UUID in the file's name, else in its folder's name, else the name itself without .jsonl.
func sessionIDOf(d *jsonl.Dialect, from string, firstLine []byte) string {
	if d != nil && d.Fork.SessionField != "" && len(firstLine) > 0 {
		if id := dottedString(firstLine, d.Fork.SessionField); id != "" {
			return id
		}
	}
	base := filepath.Base(from)
	if m := uuidIn.FindAllString(base, -1); len(m) > 0 {
		return m[len(m)-1]
	}
	if m := uuidIn.FindString(filepath.Base(filepath.Dir(from))); m != "" {
		return m
	}
	return strings.TrimSuffix(base, ".jsonl")
}

// dottedString is the string at a dotted path of a JSON object line, "" when there is none.
func dottedString(line []byte, path string) string {
	var v any
	if json.Unmarshal(jsonl.Clean(line), &v) != nil {
		return ""
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// ownsFolder reports whether the fork at out is a folder of its own (Copilot's
// session-state/<id>/): the folder's name is the fork's session id.
func ownsFolder(out, id string) bool {
	return filepath.Base(filepath.Dir(out)) == id
}

// idReplacer is a writer that replaces every occurrence of old with new (of the same length)
// in what passes through it, holding back the last len(old)-1 bytes of each write until the
// next write or flush shows whether they start an occurrence.
type idReplacer struct {
	w        io.Writer
	old, new []byte
	pending  []byte
	n        int64 // occurrences replaced
}

func newIDReplacer(w io.Writer, old, new string) (*idReplacer, error) {
	if len(old) != len(new) || old == "" {
		return nil, fmt.Errorf("session id %q cannot be replaced by %q in place (lengths differ)", old, new)
	}
	return &idReplacer{w: w, old: []byte(old), new: []byte(new)}, nil
}

func (r *idReplacer) Write(p []byte) (int, error) {
	buf := append(r.pending, p...)
	r.n += int64(bytes.Count(buf, r.old))
	buf = bytes.ReplaceAll(buf, r.old, r.new)
	keep := min(len(r.old)-1, len(buf))
	// An occurrence that straddles the cut is replaced at the next write, when it is whole.
	out := buf[:len(buf)-keep]
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	r.pending = append(r.pending[:0:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// flush writes what is held back.
func (r *idReplacer) flush() error {
	_, err := r.w.Write(r.pending)
	r.pending = nil
	return err
}

// copySidecars copies the dialect's sidecar files of the source session beside the fork,
// each atomically, replacing the session id where the rule says so. A missing optional sidecar
// is no error; a failure is a warning unless the sidecar is required. An import, whose source
// session is elsewhere, writes a sidecar's Import text instead where it has one.
func copySidecars(d *jsonl.Dialect, from, out, oldID, newID, title string, imp *Import) (warnings []string, err error) {
	if d == nil {
		return nil, nil
	}
	vars := map[string]string{
		"src_dir": filepath.Dir(from), "src_stem": strings.TrimSuffix(filepath.Base(from), ".jsonl"),
		"fork_dir": filepath.Dir(out), "fork_stem": strings.TrimSuffix(filepath.Base(out), ".jsonl"),
	}
	for _, sc := range d.Fork.Sidecars {
		src, err1 := expand(sc.From, vars, filepath.Dir(from), time.Now())
		dst, err2 := expand(sc.To, vars, filepath.Dir(out), time.Now())
		if err := firstErr(err1, err2); err != nil {
			return warnings, err
		}
		set := map[string]string{}
		for k, v := range sc.SetYAML {
			if v = strings.NewReplacer("{title}", title, "{id}", newID).Replace(v); v != "" {
				set[k] = v
			}
		}
		if imp != nil && sc.Import != "" {
			if _, err := os.Lstat(src); os.IsNotExist(err) {
				if err := writeImportSidecar(sc.Import, dst, newID, imp.To, set); err != nil {
					warnings = append(warnings, fmt.Sprintf("sidecar %s not written: %v", filepath.Base(dst), err))
				}
				continue
			}
		}
		if err := copySidecar(src, dst, sc.ReplaceID, oldID, newID, set); err != nil {
			if os.IsNotExist(err) && !sc.Required {
				continue
			}
			if sc.Required {
				return warnings, fmt.Errorf("sidecar %s: %w", src, err)
			}
			warnings = append(warnings, fmt.Sprintf("sidecar %s not copied: %v", filepath.Base(src), err))
		}
	}
	return warnings, nil
}

func copySidecar(src, dst string, replace bool, oldID, newID string, set map[string]string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if replace && oldID != "" {
		data = bytes.ReplaceAll(data, []byte(oldID), []byte(newID))
	}
	for _, k := range sortedKeys(set) {
		data = setYAMLScalar(data, k, set[k])
	}
	return durable.WriteFile(dst, data, fi.Mode().Perm(), durable.NoReplace)
}

// writeImportSidecar writes an imported session's sidecar from its template: {id} is the new
// session's id and {now} the time (UTC, milliseconds); cwd, the session's folder, and the
// sidecar's set keys are YAML scalars set on it.
func writeImportSidecar(tmpl, dst, id, cwd string, set map[string]string) error {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	data := []byte(strings.NewReplacer("{id}", id, "{now}", now).Replace(tmpl))
	data = setYAMLScalar(data, "cwd", cwd)
	for _, k := range sortedKeys(set) {
		data = setYAMLScalar(data, k, set[k])
	}
	return durable.WriteFile(dst, data, 0o600, durable.NoReplace)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// setYAMLScalar sets the top-level key of a YAML document to value, single-quoted (so that
// "[Fork] …" is a string, not a flow sequence): the key's line, with any indented lines of a
// block scalar after it, is replaced; a missing key is appended.
func setYAMLScalar(doc []byte, key, value string) []byte {
	line := key + ": '" + strings.ReplaceAll(strings.ReplaceAll(value, "\n", " "), "'", "''") + "'\n"
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	done := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !done && strings.HasPrefix(l, key+":") {
			out.WriteString(line)
			done = true
			for i+1 < len(lines) && (strings.HasPrefix(lines[i+1], " ") || strings.HasPrefix(lines[i+1], "\t")) {
				i++ // the old value's continuation lines
			}
			continue
		}
		out.WriteString(l)
	}
	if !done {
		if s := out.String(); s != "" && !strings.HasSuffix(s, "\n") {
			out.WriteString("\n")
		}
		out.WriteString(line)
	}
	return []byte(out.String())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
