package hookd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"rewind.dev/internal/durable"
)

// Entry is one hook registration in an agent's settings file.
type Entry struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"` // seconds; 0 = the agent's default
}

func (e Entry) key() string {
	return e.Event + "\x00" + e.Matcher + "\x00" + e.Command + "\x00" + strconv.Itoa(e.Timeout)
}

// Change says what Register or Unregister did to one settings file.
type Change struct {
	Path    string `json:"path"`             // the settings file as named
	Target  string `json:"target"`           // the file written: Path with symlinks resolved
	Changed bool   `json:"changed"`          // false: the file already said exactly this
	Backup  string `json:"backup,omitempty"` // the copy of the previous bytes, when there were any
	Added   int    `json:"added"`            // Rewind hook entries written
	Removed int    `json:"removed"`          // Rewind (or smart-checkpoint) hook entries taken out
	// RemovedFile: the file held nothing but what Rewind had put in a file
	// it created, and is gone again.
	RemovedFile bool `json:"removed_file,omitempty"`
	// Trust is what was done to the agent's hook trust records (Codex's
	// config.toml), nil for an agent without a trust gate.
	Trust *Change `json:"-"`
}

// Register merges the tier's hooks for agent into the settings file at
// settingsPath, running hookPath (absolute). Only Rewind's own entries (and
// those of the older smart-checkpoint shim) change: every other byte of the
// file stays as it was. Invalid JSON is refused with its position and the
// file left alone. When the file already holds exactly these entries
// nothing is written; otherwise the previous bytes are kept in a
// timestamped backup beside the file and the new ones written atomically
// with the same mode, through a symlink to its target. An agent without
// shell hooks gets its bridge file instead (see InstallBridge).
func Register(settingsPath, agent, tier, hookPath string) (Change, error) {
	a, err := LookupAgent(agent)
	if err != nil {
		return Change{}, err
	}
	t, err := LoadTier(tier)
	if err != nil {
		return Change{}, err
	}
	if !filepath.IsAbs(hookPath) {
		return Change{}, fmt.Errorf("hook path %q is not absolute (agents run hooks with the user's PATH)", hookPath)
	}
	if a.HookFile.Layout == "bridge" {
		return installBridge(settingsPath, a, hookPath)
	}
	want, err := t.Entries(a, hookPath)
	if err != nil {
		return Change{}, err
	}
	sh := a.shape(settingsPath)
	target, err := resolveLink(settingsPath)
	if err != nil {
		return Change{}, err
	}
	merge := func(src []byte) ([]byte, int, int, error) {
		if err := markUserHooks(src, settingsPath, sh, target); err != nil {
			return nil, 0, 0, err
		}
		return mergeHooks(src, settingsPath, sh, want)
	}
	if a.Trust == nil {
		return updateSettings(settingsPath, sh.Template, false, merge)
	}
	// The trust records name the entries' places in the merged file; whether they can be
	// written is known before the hook file changes.
	home, err := os.UserHomeDir()
	if err != nil {
		return Change{}, err
	}
	var have, records []trustRecord
	c, err := updateSettings(settingsPath, sh.Template, false, func(src []byte) ([]byte, int, int, error) {
		out, added, removed, err := merge(src)
		if err == nil {
			have, err = a.Trust.records(src, settingsPath, sh)
		}
		if err == nil {
			records, err = a.Trust.records(out, settingsPath, sh)
		}
		if err == nil {
			err = checkTrust(a, home, settingsPath, have, records)
		}
		return out, added, removed, err
	})
	if err != nil {
		return c, err
	}
	tc, err := updateTrust(a, home, settingsPath, have, records, false)
	c.Trust = &tc
	return c, err
}

// Unregister takes every Rewind (and smart-checkpoint) hook entry out of the
// settings file at settingsPath, and the event lists, groups and "hooks"
// object that held only them — but a "hooks" object that was there, empty,
// before Register (userHooksMarker) is left, empty. When nothing else changed
// since Register, the file is byte for byte what it was before (unless
// Register had to fill a pre-existing empty event list, which then goes too);
// a file Register created is removed again. A missing file is left missing.
func Unregister(settingsPath, agent string) (Change, error) {
	a, err := LookupAgent(agent)
	if err != nil {
		return Change{}, err
	}
	if a.HookFile.Layout == "bridge" {
		return removeBridge(settingsPath, a)
	}
	sh := a.shape(settingsPath)
	var trust *Change
	if a.Trust != nil {
		// The trust records first: which are Rewind's follows from the hook file as it still is.
		if trust, err = untrust(a, settingsPath, sh); err != nil {
			return Change{Path: settingsPath, Trust: trust}, err
		}
	}
	target, err := resolveLink(settingsPath)
	if err != nil {
		return Change{Path: settingsPath, Trust: trust}, err
	}
	userHooks := fileExists(target + userHooksMarker)
	c, err := updateSettings(settingsPath, sh.Template, true, func(src []byte) ([]byte, int, int, error) {
		out, removed, err := removeHooks(src, settingsPath, sh, userHooks)
		return out, 0, removed, err
	})
	if err == nil && userHooks {
		os.Remove(target + userHooksMarker) // the object is as it was; the next Register marks it again
	}
	c.Trust = trust
	return c, err
}

// userHooksMarker is the suffix of the file beside a settings file that says
// its hooks object was there, empty, before Register filled it: it is the
// user's, and Unregister leaves it as it was ("hooks": {}), where it takes
// out a hooks object Register made.
const userHooksMarker = ".rewind-user-hooks"

// markUserHooks writes the userHooksMarker beside target when src holds an
// empty hooks object, before Register fills it.
func markUserHooks(src []byte, path string, sh shape, target string) error {
	if sh.hooksKey == "" {
		return nil // the events are the top level: there is no object to take out
	}
	d, err := parseSettings(src, path, sh.hooksKey)
	if err != nil || d.hooks == nil || len(d.hooks.elems) > 0 || fileExists(target+userHooksMarker) {
		return nil // (a parse error is mergeHooks' to report)
	}
	return durable.WriteFile(target+userHooksMarker, []byte("the empty \""+sh.hooksKey+"\" object of the file beside is the user's: unregistering Rewind leaves it\n"), 0o600, durable.KeepOwner)
}

// untrust takes the trust records of Rewind's entries in the hook file at settingsPath out of
// the agent's trust file (nothing is read there when the hook file has none).
func untrust(a *Agent, settingsPath string, sh shape) (*Change, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	tc := Change{Path: a.path(a.Trust.File, home)}
	target, err := resolveLink(settingsPath)
	if err != nil {
		return &tc, err
	}
	src, err := readFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return &tc, nil
	}
	if err != nil {
		return &tc, err
	}
	have, err := a.Trust.records(src, settingsPath, sh)
	if err != nil || len(have) == 0 {
		return &tc, err
	}
	tc, err = updateTrust(a, home, settingsPath, have, nil, true)
	return &tc, err
}

// Registered returns the Rewind hook entries in the settings file at
// settingsPath (none when the file does not exist).
func Registered(settingsPath, agent string) ([]Entry, error) {
	a, err := LookupAgent(agent)
	if err != nil {
		return nil, err
	}
	if a.HookFile.Layout == "bridge" {
		return bridgeEntries(settingsPath, a)
	}
	src, err := os.ReadFile(settingsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	sh := a.shape(settingsPath)
	d, err := parseSettings(src, settingsPath, sh.hooksKey)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, f := range d.rewindHooks(src, sh) {
		out = append(out, f.entry)
	}
	return out, nil
}

// shape is how hook entries are written in one settings file.
type shape struct {
	hooksKey string
	HookFile
}

func (a *Agent) shape(settingsPath string) shape {
	return shape{hooksKey: a.hooksKey(settingsPath), HookFile: a.HookFile}
}

// timeout converts an entry's timeout (seconds) to the file's unit and back.
func (sh shape) timeout(seconds int) int {
	if sh.TimeoutUnit == "ms" {
		return seconds * 1000
	}
	return seconds
}

func (sh shape) seconds(v int) int {
	if sh.TimeoutUnit == "ms" {
		return v / 1000
	}
	return v
}

// IsRewindCommand reports whether a hook command runs rewind-hook (or the
// older smart-checkpoint shim Rewind replaces): its program, or the script
// an interpreter runs, is named so.
func IsRewindCommand(cmd string) bool {
	words := shellWords(cmd)
	for i, w := range words {
		base := filepath.Base(w)
		if base == "rewind-hook" || strings.HasPrefix(base, "smart-checkpoint") {
			return true
		}
		switch {
		case i == 0 && slices.Contains([]string{"sh", "bash", "zsh", "env", "exec", "command", "nohup"}, base):
		case strings.HasPrefix(w, "-") && i > 0, strings.Contains(w, "=") && i > 0:
		default:
			return false
		}
	}
	return false
}

// shellWords splits a command line into words, honouring quotes, well
// enough to find its program.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
			if c != ' ' && c != '\t' {
				return words
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// settingsDoc is a parsed settings file: the top-level object and the
// object holding the hook events (the top level itself for hooks.json).
type settingsDoc struct {
	root     *node
	hooksIdx int   // index of the hooks member in root; -1 when absent or when the events are the top level
	hooks    *node // the events object; nil when absent
}

// parseObject parses src and requires an object at the top level.
func parseObject(src []byte, path string) (*node, error) {
	root, err := parseJSON(src)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			se.Path = path
		}
		return nil, err
	}
	if root.kind != '{' {
		return nil, posError(src, path, root.start, "the top level is %s; want an object", kindName(root.kind))
	}
	return root, nil
}

func parseSettings(src []byte, path, hooksKey string) (*settingsDoc, error) {
	root, err := parseObject(src, path)
	if err != nil {
		return nil, err
	}
	d := &settingsDoc{root: root, hooksIdx: -1}
	if hooksKey == "" {
		d.hooks = root
	} else {
		for i, e := range root.elems {
			if e.key != hooksKey {
				continue
			}
			if d.hooksIdx >= 0 {
				return nil, posError(src, path, e.start, "duplicate %q member", hooksKey)
			}
			if e.val.kind != '{' {
				return nil, posError(src, path, e.val.start, "%q is %s; want an object", hooksKey, kindName(e.val.kind))
			}
			d.hooksIdx, d.hooks = i, e.val
		}
	}
	if d.hooks != nil {
		seen := map[string]bool{}
		for _, e := range d.hooks.elems {
			if seen[e.key] {
				return nil, posError(src, path, e.start, "duplicate hook event %q", e.key)
			}
			seen[e.key] = true
		}
	}
	return d, nil
}

func posError(src []byte, path string, at int, format string, args ...any) error {
	err := (&parser{src: src}).fail(at, format, args...)
	err.(*SyntaxError).Path = path
	return err
}

// found is one Rewind hook command inside a settings file: in a grouped
// file event → group → hook; in a flat one event → hook (groupIdx is the
// hook's index, hookIdx -1).
type found struct {
	eventIdx, groupIdx, hookIdx int
	entry                       Entry
	solo                        bool // alone in a group Rewind would have written
}

func (d *settingsDoc) rewindHooks(src []byte, sh shape) []found {
	var out []found
	if d.hooks == nil {
		return nil
	}
	// hook reads one hook object; ok when it runs rewind-hook.
	hook := func(h *node, matcher string, event string) (Entry, bool, bool) {
		ci := h.member(sh.CommandKey)
		if ci < 0 {
			return Entry{}, false, false
		}
		cmd, ok := h.elems[ci].val.stringValue(src)
		if !ok || !IsRewindCommand(cmd) {
			return Entry{}, false, false
		}
		e := Entry{Event: event, Matcher: matcher, Command: cmd}
		if ti := h.member(sh.TimeoutKey); ti >= 0 && h.elems[ti].val.kind == '0' {
			v := h.elems[ti].val
			n, _ := strconv.Atoi(string(src[v.start:v.end]))
			e.Timeout = sh.seconds(n)
		}
		typ := ""
		if ti := h.member("type"); ti >= 0 {
			typ, _ = h.elems[ti].val.stringValue(src)
		}
		keys := []string{"type", sh.CommandKey, sh.TimeoutKey}
		if sh.Name != "" {
			keys = append(keys, "name")
		}
		return e, typ == "command" && onlyKeys(h, keys...), true
	}
	for ei, ev := range d.hooks.elems {
		if ev.val.kind != '[' {
			continue
		}
		for gi, g := range ev.val.elems {
			if g.val.kind != '{' {
				continue
			}
			if sh.Layout == "flat" {
				if e, solo, ok := hook(g.val, "", ev.key); ok {
					out = append(out, found{eventIdx: ei, groupIdx: gi, hookIdx: -1, entry: e, solo: solo})
				}
				continue
			}
			hi := g.val.member("hooks")
			if hi < 0 || g.val.elems[hi].val.kind != '[' {
				continue
			}
			arr := g.val.elems[hi].val
			matcher := ""
			if mi := g.val.member("matcher"); mi >= 0 {
				matcher, _ = g.val.elems[mi].val.stringValue(src)
			}
			for ki, h := range arr.elems {
				if h.val.kind != '{' {
					continue
				}
				if e, solo, ok := hook(h.val, matcher, ev.key); ok {
					solo = solo && len(arr.elems) == 1 && onlyKeys(g.val, "matcher", "hooks")
					out = append(out, found{eventIdx: ei, groupIdx: gi, hookIdx: ki, entry: e, solo: solo})
				}
			}
		}
	}
	return out
}

func onlyKeys(n *node, keys ...string) bool {
	for _, e := range n.elems {
		if !slices.Contains(keys, e.key) {
			return false
		}
	}
	return true
}

// mergeHooks returns src with exactly the want entries as its Rewind hooks.
func mergeHooks(src []byte, path string, sh shape, want []Entry) (out []byte, added, removed int, err error) {
	hooksKey := sh.hooksKey
	d, err := parseSettings(src, path, hooksKey)
	if err != nil {
		return nil, 0, 0, err
	}
	have := d.rewindHooks(src, sh)
	if sameRegistrations(have, want) {
		return src, 0, 0, nil
	}
	src, removed, err = removeHooks(src, path, sh, true) // the object stays where it is, to be filled again
	if err != nil {
		return nil, 0, 0, err
	}
	// Group the entries by event, keeping the tier's order.
	var events []string
	groups := map[string][]jv{}
	for _, e := range want {
		if _, ok := groups[e.Event]; !ok {
			events = append(events, e.Event)
		}
		groups[e.Event] = append(groups[e.Event], e.group(sh))
	}
	for i, ev := range events {
		d, err := parseSettings(src, path, hooksKey)
		if err != nil {
			return nil, 0, 0, err
		}
		if d.hooks == nil {
			all := jv{key: hooksKey, isObj: true}
			for _, ev := range events[i:] {
				all.obj = append(all.obj, jv{key: ev, isArr: true, arr: groups[ev]})
			}
			src = insertElem(src, d.root, d.root, all)
			break
		}
		ei := d.hooks.member(ev)
		if ei < 0 {
			src = insertElem(src, d.root, d.hooks, jv{key: ev, isArr: true, arr: groups[ev]})
			continue
		}
		if v := d.hooks.elems[ei].val; v.kind != '[' {
			return nil, 0, 0, posError(src, path, v.start, "hook event %q is %s; want an array", ev, kindName(v.kind))
		}
		for gi, g := range groups[ev] {
			if gi > 0 {
				if d, err = parseSettings(src, path, hooksKey); err != nil {
					return nil, 0, 0, err
				}
			}
			src = insertElem(src, d.root, d.hooks.elems[d.hooks.member(ev)].val, g)
		}
	}
	return src, len(want), removed, nil
}

func sameRegistrations(have []found, want []Entry) bool {
	if len(have) != len(want) {
		return false
	}
	h := make([]Entry, len(have))
	for i, f := range have {
		if !f.solo {
			return false
		}
		h[i] = f.entry
	}
	return slices.Equal(sortedEntries(h), sortedEntries(want))
}

// group is the JSON Rewind writes for one entry: in a grouped file a group
// holding the hook, in a flat file the hook itself.
func (e Entry) group(sh shape) jv {
	hook := jv{isObj: true, obj: []jv{{key: "type", lit: jsonString("command")}}}
	if sh.Name != "" {
		hook.obj = append(hook.obj, jv{key: "name", lit: jsonString(sh.Name)})
	}
	hook.obj = append(hook.obj, jv{key: sh.CommandKey, lit: jsonString(e.Command)})
	if e.Timeout > 0 {
		hook.obj = append(hook.obj, jv{key: sh.TimeoutKey, lit: strconv.Itoa(sh.timeout(e.Timeout))})
	}
	if sh.Layout == "flat" {
		return hook
	}
	g := jv{isObj: true}
	if e.Matcher != "" {
		g.obj = append(g.obj, jv{key: "matcher", lit: jsonString(e.Matcher)})
	}
	g.obj = append(g.obj, jv{key: "hooks", isArr: true, arr: []jv{hook}})
	return g
}

// removeHooks takes every Rewind hook command out of src, with the groups
// and event lists left empty by that, and the hooks object too unless
// keepHooks (then it is left empty, as "hooks": {} was before Register).
func removeHooks(src []byte, path string, sh shape, keepHooks bool) ([]byte, int, error) {
	removed := 0
	for {
		d, err := parseSettings(src, path, sh.hooksKey)
		if err != nil {
			return nil, 0, err
		}
		fs := d.rewindHooks(src, sh)
		if len(fs) == 0 {
			return src, removed, nil
		}
		f := fs[0]
		ev := d.hooks.elems[f.eventIdx].val
		var arr *node
		if f.hookIdx >= 0 {
			grp := ev.elems[f.groupIdx].val
			arr = grp.elems[grp.member("hooks")].val
		}
		switch {
		case arr != nil && len(arr.elems) > 1:
			src = removeElem(src, arr, f.hookIdx)
		case len(ev.elems) > 1:
			src = removeElem(src, ev, f.groupIdx)
		case len(d.hooks.elems) > 1 || d.hooksIdx < 0 || keepHooks:
			src = removeElem(src, d.hooks, f.eventIdx)
		default:
			src = removeElem(src, d.root, d.hooksIdx)
		}
		removed++
	}
}

// jv is a JSON value Rewind writes: a literal, an object or an array; key
// names it inside an object.
type jv struct {
	key          string
	lit          string
	isObj, isArr bool
	obj, arr     []jv
}

// style is how the surrounding document is written.
type style struct {
	multi bool   // one member per line
	unit  string // one level of indentation
	nl    string // "\n" or "\r\n"
	colon string // between a member name and its value, e.g. ": "
	sp    string // after a comma when not multi-line
}

func docStyle(src []byte, root *node) style {
	st := style{multi: true, unit: "  ", nl: "\n", colon: ": ", sp: " "}
	if bytes.Contains(src, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	if len(root.elems) == 0 {
		return st
	}
	first := root.elems[0]
	if !strings.ContainsAny(first.colonSep, "\r\n") {
		st.colon = first.colonSep
	}
	st.sp = ""
	if strings.HasSuffix(st.colon, " ") {
		st.sp = " "
	}
	sep := string(src[first.delim+1 : first.start])
	ind, multi := afterNewline(sep)
	st.multi = multi || bytes.ContainsAny(src[root.start:root.end], "\n")
	if u := unitOf(ind, lineIndent(src, root.start)); multi && u != "" {
		st.unit = u
	}
	return st
}

func unitOf(ind, outer string) string {
	if strings.HasPrefix(ind, outer) && len(ind) > len(outer) {
		return ind[len(outer):]
	}
	return ""
}

// insertElem appends v to the object or array c, written the way c's last
// element is (or, in an empty c, the way the document is).
func insertElem(src []byte, root, c *node, v jv) []byte {
	st := docStyle(src, root)
	if n := len(c.elems); n > 0 {
		last := c.elems[n-1]
		sep := string(src[last.delim+1 : last.start])
		ind, multi := afterNewline(sep)
		st.multi = multi
		if u := unitOf(ind, lineIndent(src, c.start)); multi && u != "" {
			st.unit = u
		}
		if c.kind == '{' && !strings.ContainsAny(last.colonSep, "\r\n") {
			st.colon = last.colonSep
		}
		if !multi {
			st.sp = sep
		}
		return splice(src, last.val.end, last.val.end, ","+sep+format(v, st, ind))
	}
	// In an empty c, the whitespace that was inside stays after v, so that
	// removing v gives it back; "{}" and "{\n}" both become one member per
	// line.
	w := string(src[c.start+1 : c.end-1])
	if !st.multi {
		return splice(src, c.start+1, c.end-1, format(v, st, "")+w)
	}
	closing := lineIndent(src, c.start)
	ind := closing + st.unit
	if w == "" || w == st.nl+closing {
		w = st.nl + closing
	}
	return splice(src, c.start+1, c.end-1, st.nl+ind+format(v, st, ind)+w)
}

// removeElem deletes element i of c with the separator that insertElem
// would have added for it, so removing what was appended restores the
// bytes exactly.
func removeElem(src []byte, c *node, i int) []byte {
	n := len(c.elems)
	switch {
	case n == 1:
		tail := string(src[c.elems[0].val.end : c.end-1])
		closing := lineIndent(src, c.start)
		if tail == "\n"+closing || tail == "\r\n"+closing {
			tail = "" // what insertElem writes into "{}"
		}
		return splice(src, c.start+1, c.end-1, tail)
	case i == n-1:
		return splice(src, c.elems[i-1].val.end, c.elems[i].val.end, "")
	default:
		return splice(src, c.elems[i].start, c.elems[i+1].start, "")
	}
}

// format writes v at indentation ind.
func format(v jv, st style, ind string) string {
	var b strings.Builder
	if v.key != "" {
		b.WriteString(jsonString(v.key))
		b.WriteString(st.colon)
	}
	var kids []jv
	open, closer := "", ""
	switch {
	case v.isObj:
		kids, open, closer = v.obj, "{", "}"
	case v.isArr:
		kids, open, closer = v.arr, "[", "]"
	default:
		b.WriteString(v.lit)
		return b.String()
	}
	b.WriteString(open)
	for i, k := range kids {
		if i > 0 {
			b.WriteString(",")
		}
		if st.multi {
			b.WriteString(st.nl + ind + st.unit)
			b.WriteString(format(k, st, ind+st.unit))
		} else {
			if i > 0 {
				b.WriteString(st.sp)
			}
			b.WriteString(format(k, st, ind))
		}
	}
	if st.multi && len(kids) > 0 {
		b.WriteString(st.nl + ind)
	}
	b.WriteString(closer)
	return b.String()
}

func splice(src []byte, from, to int, text string) []byte {
	out := make([]byte, 0, len(src)-(to-from)+len(text))
	out = append(out, src[:from]...)
	out = append(out, text...)
	return append(out, src[to:]...)
}

// jsonString quotes s as JSON without HTML escaping, so "&&" and ">" in a
// command stay as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// sortedEntries is a canonical copy for comparing sets of registrations.
func sortedEntries(es []Entry) []Entry {
	out := slices.Clone(es)
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}
