package fork

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// OpenCode keeps its sessions in SQLite, not in a file. Rewind's bridge mirrors a session into
// <id>.jsonl (one line per message, exactly as `opencode export` lists it) with the session's
// own record in <id>.session.json beside it; that mirror is the transcript Rewind checkpoints.
// A fork is the mirror's kept messages as an export, under new ids, loaded into OpenCode with
// `opencode import`. Established with OpenCode 1.18.33: import inserts rows with ON CONFLICT DO
// NOTHING and reports nothing, so a fork must give the session, every message and every part
// new ids (a reused id silently attaches rows to the original session), point each part's
// messageID and each assistant's parentID at the new ids, and run where the session's folder
// is (elsewhere the session is filed under another project); Rewind checks the rows it wrote
// by exporting the new session.

// openCodeCommand is the OpenCode the fork runs: opencode on PATH, else the executable the
// bridge recorded in Rewind's own folder (~/.rewind/opencode/agent.json; OpenCode's own
// process path, for an OpenCode that is not on PATH). Never a path that data names: the record
// is read only from that one folder, only when it is the user's and no one else may write it,
// and the executable it names must be an absolute path to an executable file that only its
// owner (the user, or root) may change.
func openCodeCommand() string {
	if p, err := exec.LookPath("opencode"); err == nil {
		return p
	}
	var rec struct {
		Executable string `json:"executable"`
	}
	name := filepath.Join(layout.UserHome(), "opencode", "agent.json")
	if fi, err := os.Lstat(name); err != nil || !privateFile(fi, false) {
		return "opencode"
	}
	b, err := os.ReadFile(name)
	if err != nil || json.Unmarshal(b, &rec) != nil || !filepath.IsAbs(rec.Executable) {
		return "opencode"
	}
	if fi, err := os.Stat(rec.Executable); err != nil || !privateFile(fi, true) || fi.Mode().Perm()&0o111 == 0 {
		return "opencode"
	}
	return rec.Executable
}

// privateFile reports whether fi is a regular file that no one but its owner may change,
// owned by the user (or, with rootToo, by root).
func privateFile(fi os.FileInfo, rootToo bool) bool {
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	uid, ok := fileid.Owner(fi)
	return !ok || uid == os.Geteuid() || rootToo && uid == 0
}

// openCodeMessage is one message of an export: its record and its parts, kept as raw JSON so
// that every field OpenCode wrote is carried over.
type openCodeMessage struct {
	Info  map[string]json.RawMessage   `json:"info"`
	Parts []map[string]json.RawMessage `json:"parts"`
}

// createByImport writes the kept messages of the mirror at o.From (or of its snapshots) as an
// OpenCode export under new ids beside it, as <new id>.export.json, and imports it.
func createByImport(ctx context.Context, o CreateOptions, d *jsonl.Dialect, src *os.File, method string) (Fork, error) {
	kept, err := keptBytes(ctx, src, o, method)
	if err != nil {
		return Fork{}, err
	}
	if o.Import != nil { // the messages' folders move; `opencode import` files the session under its cwd
		var moved bytes.Buffer
		mv := &folderRewriter{w: &moved, fields: d.Fork.CwdFields, from: o.Import.From, to: o.Import.To}
		if _, err := mv.Write(kept); err != nil {
			return Fork{}, err
		}
		if err := mv.flush(); err != nil {
			return Fork{}, err
		}
		kept = moved.Bytes()
	}
	msgs, err := mirrorMessages(kept, o.From)
	if err != nil {
		return Fork{}, err
	}
	info, err := openCodeSession(o.From)
	if err != nil {
		return Fork{}, err
	}
	oldID := rawStr(info["id"])
	newID := newOpenCodeID("ses", time.Now(), true)
	title := ""
	if !o.NoTitle {
		title = openCodeTitle(ctx, info, kept, d, o.Import)
	}
	if o.Import != nil {
		importedSession(info, o.Import)
	}
	export, err := rewriteExport(info, msgs, newID, title)
	if err != nil {
		return Fork{}, err
	}
	out := o.Out
	if out == "" {
		out = filepath.Join(filepath.Dir(o.From), newID+".export.json")
	}
	if o.Import != nil {
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return Fork{}, err
		}
	}
	if err := durable.WriteFile(out, export, 0o600, durable.NoReplace); err != nil {
		return Fork{}, err
	}
	dir := rawStr(info["directory"])
	loaded, err := importOpenCode(ctx, openCodeCommand(), out, dir, newID, len(msgs), countParts(msgs))
	if err != nil {
		return Fork{}, &ImportError{Session: oldID, Out: out, Dir: orDot(dir), Err: err}
	}
	f := Fork{Type: "fork", Path: out, SessionID: newID, Bytes: int64(len(export)), EventsKept: int64(len(msgs)),
		Method: method, Title: title}
	if o.Import != nil {
		// The imported session's transcript is its mirror, as the bridge writes it, so that a
		// checkpoint of it is one the bridge's later mirrors extend.
		if f.Path, f.Bytes, err = writeMirror(filepath.Dir(o.From), newID, loaded); err != nil {
			return Fork{}, err
		}
	}
	return f, nil
}

// mirrorMessages are the OpenCode messages of a mirror's bytes kept, one a line.
func mirrorMessages(kept []byte, from string) ([]openCodeMessage, error) {
	var msgs []openCodeMessage
	sc := bufio.NewScanner(bytes.NewReader(kept))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	for sc.Scan() {
		line := jsonl.Clean(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m openCodeMessage
		if err := json.Unmarshal(line, &m); err != nil || m.Info == nil {
			return nil, fmt.Errorf("mirror %s: a line is not an OpenCode message", from)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil, &EmptyError{Path: from, What: "message"}
	}
	return msgs, nil
}

// openCodeTitle is the title of the session made of the bytes kept: the session's own, else
// its last prompt, marked as a fork's (or an import's) title is.
func openCodeTitle(ctx context.Context, info map[string]json.RawMessage, kept []byte, d *jsonl.Dialect, imp *Import) string {
	base := rawStr(info["title"])
	if base == "" {
		base = lastPrompt(ctx, kept, d)
	}
	switch {
	case base == "":
		return ""
	case imp != nil:
		return imp.Prefix + base
	}
	return markTitle(d, base)
}

// importedSession fills in OpenCode's record of a session from elsewhere, which no export
// holds: import refuses one without a slug and a version (it files it under its own cwd,
// whatever it says).
func importedSession(info map[string]json.RawMessage, imp *Import) {
	info["directory"], _ = json.Marshal(imp.To)
	if len(info["slug"]) == 0 {
		info["slug"], _ = json.Marshal("imported")
	}
	if len(info["version"]) == 0 {
		info["version"], _ = json.Marshal(imp.Version)
	}
}

// keptBytes is the transcript's bytes before the cut: from the live mirror, or inflated from
// the checkpoint's snapshots, checked against the checkpoint either way.
func keptBytes(ctx context.Context, src *os.File, o CreateOptions, method string) ([]byte, error) {
	if method == MethodPrefixCopy {
		b := make([]byte, o.Checkpoint.Offset)
		if _, err := src.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", o.From, err)
		}
		return b, nil
	}
	r, err := OpenSnapshots(o.Snapshots)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(ctxio.Reader{Ctx: ctx, R: io.LimitReader(r, o.Checkpoint.Offset)})
	if err != nil {
		return nil, err
	}
	if int64(len(b)) < o.Checkpoint.Offset {
		return nil, fmt.Errorf("the snapshot holds %d bytes of the session, fewer than the cut at %d", len(b), o.Checkpoint.Offset)
	}
	if reason, err := o.Checkpoint.mismatch(bytes.NewReader(b), int64(len(b))); err != nil || reason != "" {
		if err == nil {
			err = errors.New(reasonText(reason))
		}
		return nil, fmt.Errorf("the snapshot does not hold the checkpointed session: %w", err)
	}
	return b, nil
}

// openCodeSession reads the session's own record the bridge keeps beside the mirror; without
// it (a mirror from elsewhere) a minimal record names the session after the mirror's file.
func openCodeSession(mirror string) (map[string]json.RawMessage, error) {
	info := map[string]json.RawMessage{}
	b, err := os.ReadFile(strings.TrimSuffix(mirror, ".jsonl") + ".session.json")
	if err == nil {
		if err := json.Unmarshal(b, &info); err != nil {
			return nil, fmt.Errorf("%s.session.json: %w", strings.TrimSuffix(mirror, ".jsonl"), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(info["id"]) == 0 {
		info["id"], _ = json.Marshal(strings.TrimSuffix(filepath.Base(mirror), ".jsonl"))
	}
	return info, nil
}

// rewriteExport is the export of msgs as session newID: every message and part gets a new id
// that keeps the old one's time (so the order stays), parts point at their message's new id,
// assistants at their prompt's, and the session's record gets the new id, title and times.
func rewriteExport(info map[string]json.RawMessage, msgs []openCodeMessage, newID, title string) ([]byte, error) {
	sid, _ := json.Marshal(newID)
	now, _ := json.Marshal(time.Now().UnixMilli())
	s := map[string]json.RawMessage{}
	for k, v := range info {
		s[k] = v
	}
	s["id"] = sid
	if title != "" {
		s["title"], _ = json.Marshal(title)
	}
	var t map[string]json.RawMessage
	if json.Unmarshal(s["time"], &t) != nil || t == nil {
		t = map[string]json.RawMessage{}
	}
	t["created"], t["updated"] = now, now
	s["time"], _ = json.Marshal(t)
	delete(s, "revert")
	delete(s, "share")

	ids := map[string]string{}
	for _, m := range msgs {
		old := rawStr(m.Info["id"])
		ids[old] = resuffix(old)
	}
	out := make([]openCodeMessage, 0, len(msgs))
	for _, m := range msgs {
		mi := map[string]json.RawMessage{}
		for k, v := range m.Info {
			mi[k] = v
		}
		mid := ids[rawStr(m.Info["id"])]
		mi["id"], _ = json.Marshal(mid)
		mi["sessionID"] = sid
		if p := rawStr(mi["parentID"]); p != "" {
			if np, ok := ids[p]; ok {
				mi["parentID"], _ = json.Marshal(np)
			}
		}
		parts := make([]map[string]json.RawMessage, 0, len(m.Parts))
		for _, p := range m.Parts {
			np := map[string]json.RawMessage{}
			for k, v := range p {
				np[k] = v
			}
			np["id"], _ = json.Marshal(resuffix(rawStr(p["id"])))
			np["sessionID"] = sid
			np["messageID"], _ = json.Marshal(mid)
			parts = append(parts, np)
		}
		out = append(out, openCodeMessage{Info: mi, Parts: parts})
	}
	return json.Marshal(map[string]any{"info": s, "messages": out})
}

// writeMirror writes session id's mirror in dir from OpenCode's export of it, as the bridge
// does: one compact line per message, and the session's record beside it.
func writeMirror(dir, id string, export []byte) (string, int64, error) {
	var e struct {
		Info     json.RawMessage   `json:"info"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(export, &e); err != nil {
		return "", 0, fmt.Errorf("opencode export %s: %w", id, err)
	}
	var b bytes.Buffer
	for _, m := range e.Messages {
		if err := json.Compact(&b, m); err != nil {
			return "", 0, fmt.Errorf("opencode export %s: %w", id, err)
		}
		b.WriteByte('\n')
	}
	var info bytes.Buffer
	if err := json.Compact(&info, e.Info); err == nil {
		info.WriteByte('\n')
		if err := durable.WriteFile(filepath.Join(dir, id+".session.json"), info.Bytes(), 0o600, durable.NoReplace); err != nil {
			return "", 0, err
		}
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := durable.WriteFile(path, b.Bytes(), 0o600, durable.NoReplace); err != nil {
		return "", 0, err
	}
	return path, int64(b.Len()), nil
}

// importOpenCode loads the export into OpenCode from the session's folder, then checks that
// the new session holds every message and part (import skips rows silently), and returns
// OpenCode's export of it.
func importOpenCode(ctx context.Context, bin, file, dir, id string, messages, parts int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Run in the session's folder, which may hold a project's OpenCode config (plugins, MCP
	// servers) that came with it — an imported tree's: OpenCode is told to read none of it.
	env := append(os.Environ(), "OPENCODE_DISABLE_PROJECT_CONFIG=true")
	cmd := exec.CommandContext(ctx, bin, "import", "--pure", file)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("opencode import: %v: %s", err, strings.TrimSpace(string(out)))
	}
	cmd = exec.CommandContext(ctx, bin, "export", "--pure", id)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("opencode export %s after the import: %v: %s", id, err, strings.TrimSpace(stderr.String()))
	}
	var got struct {
		Messages []struct {
			Parts []json.RawMessage `json:"parts"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("opencode export %s after the import: %w", id, err)
	}
	n := 0
	for _, m := range got.Messages {
		n += len(m.Parts)
	}
	if len(got.Messages) != messages || n != parts {
		return nil, fmt.Errorf("the imported session holds %d messages and %d parts, the fork %d and %d", len(got.Messages), n, messages, parts)
	}
	return stdout.Bytes(), nil
}

func countParts(msgs []openCodeMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Parts)
	}
	return n
}

// lastPrompt is the newest prompt's text in data, "" when there is none.
func lastPrompt(ctx context.Context, data []byte, d *jsonl.Dialect) string {
	t, err := jsonl.New("", bytes.NewReader(data), int64(len(data)), d)
	if err != nil {
		return ""
	}
	turns, err := t.Turns(ctx, 1)
	if err != nil || len(turns) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(turns[0].Text), " ")
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newOpenCodeID makes an id the way OpenCode does: prefix, "_", 12 hex digits of
// ms*4096+counter (bitwise NOT for session ids, which sort newest first), 14 random base-62
// characters.
func newOpenCodeID(prefix string, t time.Time, descending bool) string {
	v := uint64(t.UnixMilli())*0x1000 + 1
	if descending {
		v = ^v
	}
	return fmt.Sprintf("%s_%012x%s", prefix, v&(1<<48-1), random62(14))
}

// resuffix keeps an id's prefix and time and gives it a new random tail.
func resuffix(id string) string {
	prefix, rest, ok := strings.Cut(id, "_")
	if !ok || len(rest) < 12 {
		return newOpenCodeID(cmp.Or(prefix, "prt"), time.Now(), false)
	}
	return prefix + "_" + rest[:12] + random62(14)
}

func random62(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = base62[int(b[i])%len(base62)]
	}
	return string(b)
}

func rawStr(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

func orDot(dir string) string {
	if dir == "" {
		return "the project's folder"
	}
	return dir
}
