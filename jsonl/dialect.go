package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"rewind.dev/internal/agents"
)

// Dialect is one agent's transcript profile: the "dialect" section of its manifest
// (rewind.dev/internal/agents). Its fields are data; the methods interpret them. Treat a
// Dialect as read-only.
type Dialect struct {
	// Name is the agent's name as used by --agent (the manifest's).
	Name string `json:"-"`
	// Agent is the agent's manifest: its folders, its display name; nil for a dialect that
	// is not a built-in agent's.
	Agent       *agents.Agent `json:"-"`
	Description string        `json:"description"`
	// IDField is the dotted path of a line's event id ("uuid", "id"); empty when the agent's
	// lines carry no ids (codex).
	IDField string `json:"id_field"`
	// UpdatesByID says a line whose id (IDField) an earlier line has is a new version of that
	// record, which replaces it where it stood (Gemini CLI re-appends its last record to add
	// tool calls or token counts, with only id-less metadata lines between the versions). A
	// prompt is counted once, from its newest version, at its record's first line. Not for
	// tree dialects.
	UpdatesByID bool `json:"updates_by_id,omitempty"`
	// RewindField is the member of a line that rewinds the conversation to before the record
	// (by IDField) it names (Gemini CLI's native /rewind writes {"$rewindTo":<id>}): that
	// record and the ones after it, up to the line, are no longer the conversation's, and
	// their prompts are no turns.
	RewindField string `json:"rewind_field,omitempty"`
	// TimestampField is the dotted path of a line's timestamp.
	TimestampField string       `json:"timestamp_field"`
	Detect         DetectRule   `json:"detect"`
	Prompt         PromptRule   `json:"prompt"`
	Preamble       PreambleRule `json:"preamble"`
	Title          TitleRule    `json:"title"`
	Fork           ForkRule     `json:"fork"`
	// Compaction lists the kinds of line that mark a compaction: prompts before one may no
	// longer be in the conversation the agent shows (Claude's compact_boundary).
	Compaction []Conds `json:"compaction,omitempty"`
	// FirstLineRewritten: the agent rewrites its first line after writing it (Droid's
	// session_start gains a field once the SessionStart hook has run), so cursors also
	// remember what follows that line (see Transcript.Locate).
	FirstLineRewritten bool `json:"first_line_rewritten,omitempty"`
	// Tree, when set, says the lines form a tree by id and parent id (pi) whose conversation
	// is the path from the last line back to the root: prompts off that path (branches left
	// by navigating back) are not turns.
	Tree *TreeRule `json:"tree,omitempty"`
	// ForkedFrom is the dotted path, in the first line, of the id of the session the agent
	// itself forked this one from (Codex's fork: payload.forked_from_id).
	ForkedFrom string `json:"forked_from,omitempty"`
}

// TreeRule names the fields that link a line to its parent.
type TreeRule struct {
	ID     string `json:"id"`
	Parent string `json:"parent"`
	// ParentSession is the first line's field naming the transcript this one was forked
	// from by the agent itself (pi's /fork and --fork: "parentSession"), whose lines it
	// copied with their ids.
	ParentSession string `json:"parent_session,omitempty"`
}

// Cond is one test on a line's JSON object. Field is a dotted path; exactly one test is set.
type Cond struct {
	Field     string            `json:"field"`
	Equals    json.RawMessage   `json:"equals,omitempty"`     // value equals this JSON value
	NotEquals json.RawMessage   `json:"not_equals,omitempty"` // absent, or a different value
	In        []json.RawMessage `json:"in,omitempty"`         // value equals one of these
	NotTrue   bool              `json:"not_true,omitempty"`   // absent, or anything but true
	Absent    bool              `json:"absent,omitempty"`     // the key is not there at all
	Present   bool              `json:"present,omitempty"`    // the key is there
	HasPrefix string            `json:"has_prefix,omitempty"` // a string starting with this
	NotPrefix string            `json:"not_prefix,omitempty"` // absent, not a string, or not starting with this
	// ContainsAny: an array holding an element equal to one of these values, or, for an object
	// value, an object element with at least its fields, equal.
	ContainsAny []json.RawMessage `json:"contains_any,omitempty"`
	// EqualsPromptField (preamble rules only): the value is the string Prefix followed by the
	// prompt line's value at this path.
	EqualsPromptField string `json:"equals_prompt_field,omitempty"`
	Prefix            string `json:"prefix,omitempty"`
}

// Conds holds when every Cond holds.
type Conds []Cond

// DetectRule tells the agent from a transcript's first lines (its path: the manifest's
// transcript hints).
type DetectRule struct {
	SignatureTypes  []string `json:"signature_types"`   // line types only this agent writes
	Types           []string `json:"types"`             // line types this agent writes among others
	RequireAnyField []string `json:"require_any_field"` // a line counts only when it has one of these keys
	// SignatureFields: a line with all these keys is this agent's, for lines without a type
	// (OpenCode's mirror: info and parts).
	SignatureFields []string `json:"signature_fields,omitempty"`
}

// PromptRule says which lines are real user prompts (turns): lines where Match holds and,
// when MatchAny is set, one of its alternatives too (an agent that wrote its prompts in two
// forms over its versions: Codex's event_msg user_message, then response_item messages).
type PromptRule struct {
	Match    Conds   `json:"match"`
	MatchAny []Conds `json:"match_any,omitempty"`
	// Content lists dotted paths of the prompt's content: a string, or an array of blocks
	// ({"type":"text","text":…}, {"type":"image",…}, …). A block without a "type" is typed by
	// its member that one of the block type lists names (Gemini's {"text":…} parts).
	Content []string `json:"content"`
	// Attachments lists dotted paths of arrays whose non-empty value counts as content even
	// without text (pasted images, attached files).
	Attachments      []string `json:"attachments"`
	TextBlockTypes   []string `json:"text_block_types"`   // default text, input_text
	ImageBlockTypes  []string `json:"image_block_types"`  // default image, input_image
	RejectBlockTypes []string `json:"reject_block_types"` // a block of one of these types: not a prompt
	// SkipBlockFlags: a block with one of these fields true is passed over (OpenCode's
	// synthetic and ignored text parts, which the client adds, not the user).
	SkipBlockFlags []string `json:"skip_block_flags"`
	// RejectTextPrefixes: the text, leading white space trimmed, starting with one of these is
	// not a prompt.
	RejectTextPrefixes []string `json:"reject_text_prefixes"`
	// StripLeadingWrappers: [open, close] pairs removed from the start of the text before the
	// tests (injected context such as <system-reminder>…</system-reminder>); text that is only
	// wrappers is not a prompt.
	StripLeadingWrappers [][2]string `json:"strip_leading_wrappers"`
}

// PreambleRule says which lines just before a prompt belong to it, so that a cut before the
// prompt removes them too (Claude's file-history-snapshot and queue-operation lines).
type PreambleRule struct {
	MaxLines    int     `json:"max_lines"`   // how far back from the prompt to look
	Owned       []Conds `json:"owned"`       // lines that belong to the prompt: the cut moves before them
	Transparent []Conds `json:"transparent"` // lines passed over without moving the cut
}

// TitleRule says where a session's title lives and how a fork marks its own.
type TitleRule struct {
	Sources []TitleSource `json:"sources"`
	Fork    ForkTitle     `json:"fork"`
}

// TitleSource is one kind of line carrying a title. The newest line of the highest Rank wins.
type TitleSource struct {
	Match Conds  `json:"match"`
	Field string `json:"field"`
	Rank  int    `json:"rank"`
}

// ForkTitle says how a fork marks its title.
type ForkTitle struct {
	// Method is "append_line" (append Line with {title} and {session_id} filled in),
	// "rewrite_first_line" (set Field of the first line, which holds the title), "sidecar" (a
	// sidecar file's SetYAML carries it: Copilot's workspace.yaml name), "index_line" (append
	// Line to the agent's index of session names, the file Index), or "none".
	Method string          `json:"method"`
	Prefix string          `json:"prefix"`
	Line   json.RawMessage `json:"line,omitempty"`
	Field  string          `json:"field,omitempty"`
	// Index is the index file of method index_line, a template over the fork's folder:
	// {fork_dir}, {up:N} (the Nth folder above it).
	Index string `json:"index,omitempty"`
}

// ForkRule says where a fork of one of the agent's sessions goes, what in it names the
// session, what goes with it, and how the agent opens it.
type ForkRule struct {
	// Method is how a fork is made: "copy" (default: a new file of the kept bytes) or
	// "opencode_import" (a session that is not a file: OpenCode's export of the kept messages
	// under new ids, loaded with `opencode import`).
	Method string `json:"method,omitempty"`
	// Path is the fork's path, a template over the source transcript's: {dir} is its folder,
	// {up:N} the Nth folder above that, {id} the fork's session id and {id8} its first eight
	// characters, {rand8} eight random hex digits never equal to {id8}, {now:LAYOUT} and
	// {utc:LAYOUT} the time in Go's layout, local or UTC, and {utcfile:LAYOUT} the UTC time with
	// ':' and '.' as '-'. Default "{dir}/{id}.jsonl".
	Path string `json:"path"`
	// SessionField is the dotted path of the session id in the first line; "" when the
	// session id is the UUID in the transcript's file name (or its folder's name).
	SessionField string `json:"session_field,omitempty"`
	// ReplaceID says where the fork replaces the old session id with its own: "none" (the
	// agent takes the id from the file name), "first_line", or "all_lines" (every occurrence:
	// the ids have the same length, so no offset moves).
	ReplaceID string `json:"replace_id"`
	// Sidecars are files that go with a session: From and To are templates over the source's
	// and the fork's paths ({src_dir}, {src_stem}, {fork_dir}, {fork_stem}).
	Sidecars []Sidecar `json:"sidecars,omitempty"`
	// Resume is the command that opens a session in the agent; {id} is the session id.
	Resume string `json:"resume"`
	// IDKind is the kind of UUID a new session id is: "uuid4" (default) or "uuid7" (time
	// ordered, as pi and Codex make theirs).
	IDKind string `json:"id_kind,omitempty"`
	// Require is a line a fork must keep for the agent to resume it well (pi: a reply of the
	// agent, without which pi writes the session's first lines a second time); a fork without
	// one is refused, saying Why.
	Require *Requirement `json:"require,omitempty"`
	// CwdFields are the fields of a line that hold the session's working folder (Claude's
	// cwd): an import into another folder rewrites them. Each is a dotted path from the line's
	// top ("payload.cwd"); a "[]" element stands for every element of an array of strings
	// ("payload.runtime_workspace_roots.[]"). An agent without them cannot be imported into
	// another folder yet. A field that records what the model was told is not one of them:
	// Codex tells the model its folder again only when it differs from the one its world_state
	// line says the model knows, so that line keeps the old folder, and the resumed session's
	// first request tells the model the new one (seen with Codex CLI 0.169.0).
	CwdFields []string `json:"cwd_fields,omitempty"`
	// Import says where the agent keeps the sessions of a project folder, for rewind import;
	// nil when its sessions cannot be imported.
	Import *ImportRule `json:"import,omitempty"`
}

// ImportRule says where an imported session is installed: beside a session of the project
// that the fork's Path template then places the new session next to, as it would a fork.
type ImportRule struct {
	// From is the path of a session of the project (it need not exist): a template where
	// {project} is the project folder as the agent names it (see Project), {id} the source
	// session's id, and the rest a path template of the agent's manifest ({home}/…).
	From string `json:"from"`
	// Project is how the agent names a project folder in From: "dashes" (every character but
	// ASCII letters and digits as '-': Claude Code), "dashed_path" (the leading '/' dropped,
	// '/', '\' and ':' as '-', between "--" and "--": pi), "registry" (the slug that the
	// agent's registry of projects gives the folder, claimed the way Gemini CLI claims one when
	// it has none), or "" when From does not name it.
	Project string `json:"project,omitempty"`
}

// Requirement is a kind of line a fork must hold.
type Requirement struct {
	Match Conds  `json:"match"`
	Why   string `json:"why"`
}

// HasLine reports whether a complete line of t matches cs.
func (t *Transcript) HasLine(ctx context.Context, cs Conds) (bool, error) {
	found := false
	needles := cs.needles()
	err := t.Lines(0, func(l Line) bool {
		if ctx.Err() != nil {
			return false
		}
		for _, n := range needles {
			if !containsBytes(l.Data, n) {
				return true
			}
		}
		if o := parseObject(Clean(l.Data)); o != nil && cs.holds(o, nil) {
			found = true
			return false
		}
		return true
	})
	if err == nil {
		err = ctx.Err()
	}
	return found, err
}

// Sidecar is a file copied with a fork.
type Sidecar struct {
	From      string `json:"from"`
	To        string `json:"to"`
	ReplaceID bool   `json:"replace_id,omitempty"` // the old session id in it becomes the fork's
	Required  bool   `json:"required,omitempty"`   // a fork without it does not resume
	// SetYAML sets top-level scalar keys of a YAML sidecar (Copilot's workspace.yaml), each
	// value a template of {title} and {id}, written single-quoted; a key that is not there is
	// added. "" for a key leaves it as it is when the value comes out empty.
	SetYAML map[string]string `json:"set_yaml,omitempty"`
	// Import is the sidecar's text for an imported session, which has no source sidecar: a
	// template of {id} and {now} (UTC, milliseconds), to which the session's folder is set as
	// its "cwd" key, then SetYAML's keys. "" leaves an import without the sidecar.
	Import string `json:"import,omitempty"`
}

// ResumeCommand is the command that opens session id in the agent, "" when not known.
func (d *Dialect) ResumeCommand(id string) string {
	if d == nil || d.Fork.Resume == "" {
		return ""
	}
	return strings.ReplaceAll(d.Fork.Resume, "{id}", id)
}

// dialects parses the dialect section of every agent's manifest that has one, on first use.
var dialects = sync.OnceValues(func() (map[string]*Dialect, error) {
	m := make(map[string]*Dialect)
	for _, a := range agents.All() {
		if a.Dialect == nil {
			continue
		}
		d, err := parseDialect(a.Name, a.Dialect)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", a.Name, err)
		}
		d.Agent = a
		m[d.Name] = d
	}
	return m, nil
})

// parseDialect reads the dialect of the agent name from its JSON form and checks it.
func parseDialect(name string, data []byte) (*Dialect, error) {
	var d Dialect
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("parse dialect profile: %w", err)
	}
	if d.Name = name; d.Name == "" {
		return nil, fmt.Errorf("dialect profile has no name")
	}
	if len(d.Prompt.Match) == 0 && len(d.Prompt.MatchAny) == 0 {
		return nil, fmt.Errorf("dialect %s: prompt rule has no match conditions", d.Name)
	}
	for _, cs := range d.Prompt.MatchAny {
		if len(cs) == 0 {
			return nil, fmt.Errorf("dialect %s: an alternative of the prompt rule's match_any is empty", d.Name)
		}
	}
	all := append([]Conds{d.Prompt.Match}, d.Prompt.MatchAny...)
	all = append(all, d.Preamble.Owned...)
	all = append(all, d.Preamble.Transparent...)
	for _, s := range d.Title.Sources {
		all = append(all, s.Match)
	}
	for _, cs := range all {
		for _, c := range cs {
			if c.Field == "" {
				return nil, fmt.Errorf("dialect %s: a condition has no field", d.Name)
			}
		}
	}
	if len(d.Prompt.TextBlockTypes) == 0 {
		d.Prompt.TextBlockTypes = []string{"text", "input_text"}
	}
	if len(d.Prompt.ImageBlockTypes) == 0 {
		d.Prompt.ImageBlockTypes = []string{"image", "input_image"}
	}
	if (d.UpdatesByID || d.RewindField != "") && (d.IDField == "" || d.Tree != nil) {
		return nil, fmt.Errorf("dialect %s: updates_by_id and rewind_field need an id_field and no tree", d.Name)
	}
	if d.Fork.Path == "" {
		d.Fork.Path = "{dir}/{id}.jsonl"
	}
	switch d.Fork.Method {
	case "":
		d.Fork.Method = "copy"
	case "copy", "opencode_import":
	default:
		return nil, fmt.Errorf("dialect %s: unknown fork method %q", d.Name, d.Fork.Method)
	}
	switch d.Fork.IDKind {
	case "":
		d.Fork.IDKind = "uuid4"
	case "uuid4", "uuid7":
	default:
		return nil, fmt.Errorf("dialect %s: unknown fork id_kind %q", d.Name, d.Fork.IDKind)
	}
	switch d.Fork.ReplaceID {
	case "":
		d.Fork.ReplaceID = "none"
	case "none", "first_line", "all_lines":
	default:
		return nil, fmt.Errorf("dialect %s: unknown fork replace_id %q", d.Name, d.Fork.ReplaceID)
	}
	switch d.Title.Fork.Method {
	case "", "none":
		d.Title.Fork.Method = "none"
	case "append_line", "rewrite_first_line", "sidecar":
	case "index_line":
		if d.Title.Fork.Index == "" || len(d.Title.Fork.Line) == 0 {
			return nil, fmt.Errorf("dialect %s: fork title method index_line needs an index and a line", d.Name)
		}
	default:
		return nil, fmt.Errorf("dialect %s: unknown fork title method %q", d.Name, d.Title.Fork.Method)
	}
	return &d, nil
}

// Dialects returns every built-in dialect, sorted by name.
func Dialects() []*Dialect {
	m, _ := dialects()
	var out []*Dialect
	for _, a := range agents.All() {
		if d := m[a.Name]; d != nil {
			out = append(out, d)
		}
	}
	return out
}

// DialectNames returns the built-in dialects' names, sorted.
func DialectNames() []string {
	var names []string
	for _, d := range Dialects() {
		names = append(names, d.Name)
	}
	return names
}

// LookupDialect returns the built-in dialect with this name (case-insensitive).
func LookupDialect(name string) (*Dialect, error) {
	m, err := dialects()
	if err != nil {
		return nil, err
	}
	if d, ok := m[strings.ToLower(strings.TrimSpace(name))]; ok {
		return d, nil
	}
	return nil, &UnknownDialectError{Name: name}
}

// holds reports whether the condition holds for o. prompt is the prompt line's object for
// EqualsPromptField conditions (nil elsewhere: such a condition then fails).
func (c Cond) holds(o, prompt *object) bool {
	raw, present := o.get(c.Field)
	switch {
	case c.EqualsPromptField != "":
		if prompt == nil || !present {
			return false
		}
		want := prompt.str(c.EqualsPromptField)
		return want != "" && rawString(raw) == c.Prefix+want
	case c.Equals != nil:
		return present && rawEqual(raw, c.Equals)
	case c.NotEquals != nil:
		return !present || !rawEqual(raw, c.NotEquals)
	case c.In != nil:
		if !present {
			return false
		}
		for _, v := range c.In {
			if rawEqual(raw, v) {
				return true
			}
		}
		return false
	case c.NotTrue:
		return !present || !rawEqual(raw, json.RawMessage("true"))
	case c.Absent:
		return !present
	case c.Present:
		return present
	case c.HasPrefix != "":
		return present && strings.HasPrefix(rawString(raw), c.HasPrefix)
	case c.NotPrefix != "":
		return !present || !strings.HasPrefix(rawString(raw), c.NotPrefix)
	case c.ContainsAny != nil:
		var elems []json.RawMessage
		if !present || json.Unmarshal(raw, &elems) != nil {
			return false
		}
		for _, e := range elems {
			for _, v := range c.ContainsAny {
				if rawEqual(e, v) || hasFields(e, v) {
					return true
				}
			}
		}
		return false
	}
	return present
}

// hasFields reports whether e and v are JSON objects and e has every field of v, equal.
func hasFields(e, v json.RawMessage) bool {
	var want map[string]json.RawMessage
	if json.Unmarshal(v, &want) != nil || len(want) == 0 {
		return false
	}
	eo := parseObject(bytes.TrimSpace(e))
	if eo == nil {
		return false
	}
	for k, wv := range want {
		if got, ok := eo.get(k); !ok || !rawEqual(got, wv) {
			return false
		}
	}
	return true
}

// holds reports whether o is a prompt line by the rule's conditions (not yet its content).
func (r *PromptRule) holds(o *object) bool {
	if !r.Match.holds(o, nil) {
		return false
	}
	if len(r.MatchAny) == 0 {
		return true
	}
	for _, cs := range r.MatchAny {
		if cs.holds(o, nil) {
			return true
		}
	}
	return false
}

// mayHold is the cheap test before parsing: the line holds every needle of Match and, with
// MatchAny, every needle of one of its alternatives.
func (r *PromptRule) mayHold(line []byte) bool {
	if !mayMatch(line, r.Match) {
		return false
	}
	if len(r.MatchAny) == 0 {
		return true
	}
	for _, cs := range r.MatchAny {
		if mayMatch(line, cs) {
			return true
		}
	}
	return false
}

func (cs Conds) holds(o, prompt *object) bool {
	for _, c := range cs {
		if !c.holds(o, prompt) {
			return false
		}
	}
	return true
}

// needles returns byte strings that every line matching cs must contain: the JSON encoding of
// each string Equals value. Lines without them are rejected before parsing, which keeps tail
// scans over large tool-output lines cheap. (A writer that escaped plain ASCII as \u00XX would
// defeat this; no agent does.)
func (cs Conds) needles() [][]byte {
	var out [][]byte
	for _, c := range cs {
		if c.Equals == nil {
			continue
		}
		if s := rawString(c.Equals); s != "" {
			b, _ := json.Marshal(s)
			out = append(out, b)
		}
	}
	return out
}
