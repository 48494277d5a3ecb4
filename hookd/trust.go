package hookd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// Codex runs a user hook only once it is trusted: its config.toml holds, per hook, a table
//
//	[hooks.state."<hooks.json path>:<event_snake>:<group index>:<handler index>"]
//	trusted_hash = "sha256:<hex>"
//
// whose hash is SHA-256 over the canonical JSON (keys sorted, no white space) of the hook's
// identity {"event_name", "matcher" (events with matchers only), "hooks": [{"type",
// "command", "timeout", "async", "statusMessage" (when set)}]}, as its app-server's hooks/list
// reports it (established against Codex 0.169.0). An untrusted hook is skipped without a word,
// so registering Rewind's hooks writes their trust records too, without running Codex.
//
// Which records are Rewind's is proven, never guessed from a name: a record is Rewind's when
// its key names the hook file and an event, and its hash is that of one of Rewind's own hook
// entries for that event (the hash covers the entry's whole command, rewind-hook's absolute
// path included). Rewind writes each record as a table of its own at the end of the file, and
// takes out only such tables, with the separator it wrote, so a file Rewind's records were
// added to and removed from again is byte for byte what it was. Every edit is checked by
// parsing the file before and after: it must be valid TOML and differ by exactly Rewind's
// records, or nothing is written.

// TrustRule is an agent's hook trust gate, from its profile.
type TrustRule struct {
	// File is the config file holding the trust records, a path template of the manifest.
	File string `json:"file"`
	// Table is the dotted table whose subtables, one per hook key, hold the records.
	Table string `json:"table"`
	// HashKey is the member of a record holding the hook's hash.
	HashKey string `json:"hash_key"`
	// MatcherEvents are the events whose hash covers the group's matcher.
	MatcherEvents []string `json:"matcher_events"`
	// DefaultTimeout is the timeout (seconds) of a handler that names none.
	DefaultTimeout int `json:"default_timeout"`
	// MaxTimeout caps some events' timeouts before hashing (Codex clamps SessionEnd to 3 s).
	MaxTimeout map[string]int `json:"max_timeout"`

	// homeVar is the variable that moves the agent's home (its manifest's): when it is set,
	// the agent names its hook file with the symlinks in that path resolved (Codex
	// canonicalizes CODEX_HOME, but not ~/.codex).
	homeVar string
}

// trustRecord is one hook's trust: its key and its hash.
type trustRecord struct {
	Event string // the agent's own event name
	Key   string
	Hash  string
}

// snakeCase turns an event name into the agent's key form: PreToolUse → pre_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hash is the trust hash of one hook entry.
func (tr *TrustRule) hash(e Entry) string {
	event := snakeCase(e.Event)
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = tr.DefaultTimeout
	}
	if max, ok := tr.MaxTimeout[e.Event]; ok && timeout > max {
		timeout = max
	}
	id := map[string]any{
		"event_name": event,
		"hooks":      []any{map[string]any{"type": "command", "command": e.Command, "timeout": timeout, "async": false}},
	}
	if e.Matcher != "" && slices.Contains(tr.MatcherEvents, e.Event) {
		id["matcher"] = e.Matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(id) // maps encode with sorted keys; nothing here fails to encode
	canon := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	// serde_json writes U+2028 and U+2029 as they are; encoding/json escapes them.
	canon = bytes.ReplaceAll(canon, []byte(`\u2028`), []byte("\u2028"))
	canon = bytes.ReplaceAll(canon, []byte(`\u2029`), []byte("\u2029"))
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// keyPath is the hook file's path as the agent names it in trust keys.
func (tr *TrustRule) keyPath(hooksPath string) string {
	p, err := filepath.Abs(hooksPath)
	if err != nil {
		p = hooksPath
	}
	if tr.homeVar == "" {
		return p
	}
	home := os.Getenv(tr.homeVar)
	if home == "" {
		return p
	}
	if h, err := filepath.Abs(home); err == nil && filepath.Dir(p) == filepath.Clean(h) {
		if real, err := filepath.EvalSymlinks(h); err == nil {
			return filepath.Join(real, filepath.Base(p))
		}
	}
	return p
}

// records are the trust records of Rewind's hooks in the hook file src (at hooksPath).
func (tr *TrustRule) records(src []byte, hooksPath string, sh shape) ([]trustRecord, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		return nil, nil
	}
	d, err := parseSettings(src, hooksPath, sh.hooksKey)
	if err != nil {
		return nil, err
	}
	kp := tr.keyPath(hooksPath)
	var out []trustRecord
	for _, f := range d.rewindHooks(src, sh) {
		out = append(out, trustRecord{
			Event: f.entry.Event,
			Key:   fmt.Sprintf("%s:%s:%d:%d", kp, snakeCase(f.entry.Event), f.groupIdx, f.hookIdx),
			Hash:  tr.hash(f.entry),
		})
	}
	return out, nil
}

// trustBlock is one record table found in the config file's text.
type trustBlock struct {
	start, end int // the header line's start; the end of the hash line (its newline included)
	key, hash  string
	alone      bool // nothing but blank lines between the hash line and the next table or the end
}

var (
	tableHeader = regexp.MustCompile(`^\[\s*([A-Za-z0-9_.-]+)\.("(?:[^"\\]|\\.)*")\s*\]\s*$`)
	hashLine    = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=\s*"(sha256:[0-9a-f]{64})"\s*$`)
)

// blocks finds the record tables of the config text: a header naming a key of tr.Table, then
// the hash line. A table with more in it is reported with alone false.
func (tr *TrustRule) blocks(src []byte) []trustBlock {
	var out []trustBlock
	type line struct {
		start, end int // end includes the newline
		text       string
	}
	var lines []line
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '\n')
		end := len(src)
		if j >= 0 {
			end = i + j + 1
		}
		lines = append(lines, line{i, end, strings.TrimRight(string(src[i:end]), "\r\n")})
		i = end
	}
	for n, l := range lines {
		m := tableHeader.FindStringSubmatch(l.text)
		if m == nil || m[1] != tr.Table || n+1 >= len(lines) {
			continue
		}
		var key string
		if json.Unmarshal([]byte(m[2]), &key) != nil {
			continue
		}
		h := hashLine.FindStringSubmatch(lines[n+1].text)
		if h == nil || h[1] != tr.HashKey {
			continue
		}
		b := trustBlock{start: l.start, end: lines[n+1].end, key: key, hash: h[2], alone: true}
		for _, rest := range lines[n+2:] {
			t := strings.TrimSpace(rest.text)
			if strings.HasPrefix(t, "[") {
				break
			}
			if t != "" {
				b.alone = false
				break
			}
		}
		out = append(out, b)
	}
	return out
}

// ours reports whether a record in the file is one of Rewind's: its key names the hook file
// and the event of one of Rewind's entries (at any place in the file: Rewind's groups move
// when others are added or taken out before them), and its hash is that entry's.
func ours(key, hash, keyPath string, rewind []trustRecord) bool {
	for _, r := range rewind {
		if r.Hash == hash && strings.HasPrefix(key, keyPath+":"+snakeCase(r.Event)+":") {
			return true
		}
	}
	return false
}

// TrustConflictError says the config file already holds a record of another hook under a key
// Rewind needs: the agent would see two tables of one name.
type TrustConflictError struct {
	Path, Key string
}

func (e *TrustConflictError) Error() string {
	return fmt.Sprintf("%s already has a [%s] record that is not Rewind's (it trusts a hook no longer at that place in the hook file)", e.Path, e.Key)
}

// editTrust returns the config text src with exactly want as Rewind's trust records: Rewind's
// records not in want (known by the hashes of the entries in have and want) are taken out, the
// missing ones appended. The result is checked by parsing both texts.
func (tr *TrustRule) editTrust(src []byte, path, keyPath string, have, want []trustRecord) (out []byte, added, removed int, err error) {
	before, err := tr.decode(src, path)
	if err != nil {
		return nil, 0, 0, err
	}
	known := append(slices.Clone(have), want...)
	wanted := map[string]string{}
	for _, r := range want {
		wanted[r.Key] = r.Hash
	}
	out = src
	blocks := tr.blocks(src)
	gone := map[string]bool{}
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		if !b.alone || !ours(b.key, b.hash, keyPath, known) || wanted[b.key] == b.hash {
			continue
		}
		out = cutBlock(out, b)
		gone[b.key] = true
		removed++
	}
	after, err := tr.decode(out, path)
	if err != nil {
		return nil, 0, 0, err
	}
	state := tr.state(after)
	var add []trustRecord
	for _, r := range want {
		rec, exists := state[r.Key]
		if !exists {
			add = append(add, r)
			continue
		}
		if m, ok := rec.(map[string]any); !ok || m[tr.HashKey] != r.Hash {
			return nil, 0, 0, &TrustConflictError{Path: path, Key: tr.Table + "." + tomlString(r.Key)}
		}
	}
	out = tr.appendBlocks(out, add)
	// The edit changed exactly Rewind's records, and the file is still TOML.
	final, err := tr.decode(out, path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: Rewind's trust records would not parse (%w); nothing was changed", path, err)
	}
	expect := tr.state(before)
	for k := range gone {
		delete(expect, k)
	}
	for _, r := range add {
		expect[r.Key] = map[string]any{tr.HashKey: r.Hash}
	}
	if !reflect.DeepEqual(tr.state(final), expect) || !reflect.DeepEqual(tr.strip(before), tr.strip(final)) {
		return nil, 0, 0, fmt.Errorf("%s: editing Rewind's trust records would change more than them (a record table inside a multi-line string?); nothing was changed", path)
	}
	return out, len(add), removed, nil
}

// strip is a copy of a decoded document without the table of records (and the tables left
// empty by that), for comparing everything else.
func (tr *TrustRule) strip(doc map[string]any) map[string]any {
	var cut func(m map[string]any, parts []string) map[string]any
	cut = func(m map[string]any, parts []string) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
		}
		if len(parts) == 1 {
			delete(out, parts[0])
			return out
		}
		if sub, ok := out[parts[0]].(map[string]any); ok {
			if rest := cut(sub, parts[1:]); len(rest) > 0 {
				out[parts[0]] = rest
			} else {
				delete(out, parts[0])
			}
		}
		return out
	}
	return cut(doc, strings.Split(tr.Table, "."))
}

func (tr *TrustRule) decode(src []byte, path string) (map[string]any, error) {
	doc := map[string]any{}
	if _, err := toml.Decode(string(src), &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid TOML: %w", path, err)
	}
	return doc, nil
}

// state is the table of records in a decoded document (a copy; empty when absent).
func (tr *TrustRule) state(doc map[string]any) map[string]any {
	var cur any = doc
	for _, part := range strings.Split(tr.Table, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return map[string]any{}
		}
		cur = m[part]
	}
	out := map[string]any{}
	if m, ok := cur.(map[string]any); ok {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// newline is the file's line ending.
func newline(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// appendBlocks appends a table per record: after a blank line when the file ends with a
// newline, else after the newline the last line lacks (cutBlock takes each separator out again).
func (tr *TrustRule) appendBlocks(src []byte, recs []trustRecord) []byte {
	nl := newline(src)
	out := slices.Clone(src)
	for _, r := range recs {
		if len(out) > 0 {
			out = append(out, nl...)
		}
		out = append(out, "["+tr.Table+"."+tomlString(r.Key)+"]"+nl+tr.HashKey+" = "+tomlString(r.Hash)+nl...)
	}
	return out
}

// cutBlock removes a record table and the separator appendBlocks wrote before it: the blank
// line before it; or, for the first table appended to a file that lacked its last newline,
// that newline when the table is last, else the blank line after it (which the next table
// then stands in for).
func cutBlock(src []byte, b trustBlock) []byte {
	nl := newline(src)
	start, end := b.start, b.end
	before := src[:start]
	switch {
	case start == 0:
	case bytes.HasSuffix(before, []byte(nl+nl)):
		start -= len(nl)
	case !bytes.HasSuffix(before, []byte(nl)):
	case end == len(src):
		start -= len(nl)
	case bytes.HasPrefix(src[end:], []byte(nl)):
		end += len(nl)
	}
	return append(slices.Clone(src[:start]), src[end:]...)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// updateTrust edits the agent's trust file so that Rewind's records there are want, given
// have, the records of Rewind's entries before the change. removeOnly: a missing file stays
// missing, and a file Rewind created goes once nothing else is in it.
func updateTrust(a *Agent, home, hooksPath string, have, want []trustRecord, removeOnly bool) (Change, error) {
	tr := a.Trust
	path := a.path(tr.File, home)
	keyPath := tr.keyPath(hooksPath)
	return updateSettings(path, "", removeOnly, func(src []byte) ([]byte, int, int, error) {
		return tr.editTrust(src, path, keyPath, have, want)
	})
}

// checkTrust is updateTrust's edit without writing: whether it can be made.
func checkTrust(a *Agent, home, hooksPath string, have, want []trustRecord) error {
	tr := a.Trust
	path := a.path(tr.File, home)
	target, err := resolveLink(path)
	if err != nil {
		return err
	}
	src, err := readFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, _, _, err = tr.editTrust(src, path, tr.keyPath(hooksPath), have, want)
	return err
}
