// Package fork writes a fork of an AI coding agent's session: a new session holding the
// agent's transcript up to a boundary (Create), or — behind a verified backup — cuts the live
// transcript back to it (Truncate).
//
// A fork is the transcript's bytes [0, offset) under a new session id, appearing atomically; the
// source is opened read-only. When the live transcript still holds the checkpointed prefix the
// bytes are copied from it with the kernel's copy (copy_file_range, which reflinks where the
// filesystem can); otherwise they are inflated from the checkpoint's transcript.jsonl.gz.
//
// Where the fork goes and what names its session are each agent's dialect's fork rule (see
// jsonl and layout.go): Claude Code resumes a byte-prefix copy beside the original as is and
// lists it titled by an appended custom-title line; Droid keeps the session's id and title in
// its first line, which the fork rewrites, and copies a settings sidecar; Codex, Gemini CLI and
// Copilot carry the id in many lines, which the fork replaces (Copilot's fork is a folder of its
// own, with workspace.yaml); pi's fork ends with a line pointing at where its conversation
// ends; OpenCode's sessions are not files, and its fork is an export loaded with `opencode
// import` (opencode.go). Each was established against the real client (see the e2e tests).
package fork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"rewind.dev/internal/durable"
	"rewind.dev/jsonl"
)

// Methods a fork's bytes came by.
const (
	MethodPrefixCopy = "prefix-copy" // copied from the live transcript
	MethodSnapshot   = "snapshot"    // inflated from the checkpoint's transcript.jsonl.gz
)

// CreateOptions says what to fork.
type CreateOptions struct {
	From       string     // the live transcript (need not exist when Snapshots are given)
	Checkpoint Checkpoint // the cut, and what the bytes before it were
	// Snapshots are checkpoint transcripts (gzip, possibly of several members); their inflated
	// bytes, concatenated in order, are the transcript from byte 0. Used when the live file no
	// longer holds the checkpointed prefix.
	Snapshots []string
	Agent     string // the dialect (claude, codex, …); "" to take Checkpoint.Agent or detect
	Out       string // the fork's path; "" for <session id>.jsonl beside From
	NoTitle   bool   // do not mark the fork's title
	// DryRun checks what can be checked without writing (the cut, whether the live transcript
	// still holds the bytes, the dialect) and returns where the fork would go (its Path,
	// SessionID and Method; the id of a fork named by a new id is drawn again by the real run).
	DryRun bool
	// SourceTitle is the source session's own title where the kept bytes may not hold it: a
	// fork of a fork whose title line comes after the cut (Claude's is appended at the end).
	// The fork is titled after it, marked once more, when the kept bytes hold no title.
	SourceTitle string
	// Import installs another folder's (or machine's) session: the bytes come from Snapshots
	// whatever From holds (From only names the source session, by its file name), the old
	// session id is replaced by the new one in every line (they have the same length), the
	// dialect's working-folder fields are rewritten from Import.From to Import.To, and the
	// title is marked Import.Prefix instead of the fork prefix.
	Import *Import
}

// Import is how a session is installed for another folder (CreateOptions.Import).
type Import struct {
	From, To string // the session's folder where it was made, and where it goes
	Prefix   string // the title's mark, e.g. "[Imported] "
	Version  string // the agent's version the session was made with ("" when not known)
}

// Fork is what Create wrote; it is printed as JSON.
type Fork struct {
	Type       string `json:"type"` // "fork"
	Path       string `json:"path"`
	SessionID  string `json:"session_id"`
	Bytes      int64  `json:"bytes"`       // size of the fork file
	EventsKept int64  `json:"events_kept"` // JSON-object lines kept from the transcript
	Method     string `json:"method"`      // MethodPrefixCopy or MethodSnapshot
	Title      string `json:"title"`       // the fork's title, "" when none was set
	// Warnings are best-effort steps that failed (the title, a sidecar) without failing the fork.
	Warnings []string `json:"-"`
	// ReplacedFirstLine is the source's first line, newline included, where the fork rewrote it
	// (Droid's session_start); nil when the fork's bytes before the title are the source's. The
	// rest of the fork is the source's bytes, shifted by the two lines' difference in length.
	ReplacedFirstLine []byte `json:"-"`
	// ReplacedID is the source's session id where the fork replaced it by its own in every
	// line (Gemini): the fork's bytes before the title are the source's with one id for the
	// other, at the same offsets. "" when the fork did not.
	ReplacedID string `json:"-"`
}

// firstLineLimit bounds the first line a fork rewrites (Droid's session_start is small).
const firstLineLimit = 1 << 20

// Create writes the fork. On error nothing is left behind.
func Create(ctx context.Context, o CreateOptions) (Fork, error) {
	pl, err := planFork(o)
	if pl != nil && pl.src != nil {
		defer pl.src.Close()
	}
	if err != nil {
		return Fork{}, err
	}
	if pl.d != nil && pl.d.Fork.Method == "opencode_import" {
		if o.DryRun {
			return Fork{Type: "fork", Method: pl.method}, nil // a session OpenCode imports, named by it
		}
		return createByImport(ctx, o, pl.d, pl.src, pl.method)
	}
	if o.DryRun {
		return Fork{Type: "fork", Path: pl.out, SessionID: pl.id, Method: pl.method}, nil
	}
	return pl.write(ctx)
}

// forkPlan is what a fork will be, decided before anything is written.
type forkPlan struct {
	o      CreateOptions
	src    *os.File // the live transcript, nil when it is gone
	perm   os.FileMode
	method string         // MethodPrefixCopy or MethodSnapshot
	d      *jsonl.Dialect // nil when the agent is not known
	oldID  string         // the source's session id, where the agent names it inside
	out    string         // the fork's path
	id     string         // the fork's session id
}

// planFork opens the source and decides how the fork is made and where it goes. The
// returned plan's src is open even when err is not nil: the caller closes it.
func planFork(o CreateOptions) (*forkPlan, error) {
	if o.From == "" {
		return nil, ErrNoTranscript
	}
	if err := o.Checkpoint.validate(); err != nil {
		return nil, err
	}
	cp := o.Checkpoint
	src, size, perm, reason, err := openLive(o.From, cp)
	if err != nil {
		return nil, err
	}
	pl := &forkPlan{o: o, src: src, perm: perm, method: MethodPrefixCopy}
	if o.Import != nil && len(o.Snapshots) > 0 {
		reason = "imported" // the bytes are rewritten on the way: never a kernel copy
	}
	if reason != "" {
		if len(o.Snapshots) == 0 {
			return pl, &ChangedError{Path: o.From, Offset: cp.Offset, Reason: reason}
		}
		pl.method = MethodSnapshot
	}
	if pl.d, err = resolveDialect(o.Agent, cp.Agent, o.From, src, size); err != nil {
		return pl, err
	}
	if o.Import != nil && (pl.d == nil || len(pl.d.Fork.CwdFields) == 0) {
		return pl, &UnmovableError{Agent: dialectName(pl.d)}
	}
	if pl.d != nil && pl.d.Fork.Method == "opencode_import" {
		return pl, nil // OpenCode names the session it imports
	}
	if pl.oldID, err = sourceSession(pl.d, o, src, pl.method); err != nil {
		return pl, err
	}
	if pl.out, pl.id, err = forkPath(o, pl.d, time.Now()); err != nil {
		return pl, err
	}
	if same, err := sameFile(pl.out, o.From); err != nil || same {
		if err == nil {
			err = fmt.Errorf("output %s is the transcript itself", pl.out)
		}
		return pl, err
	}
	return pl, nil
}

// write writes the planned fork: the kept bytes, the title, the agent's sidecars, and the
// entry in the agent's index of names, staged so that a failed fork leaves nothing.
func (pl *forkPlan) write(ctx context.Context) (Fork, error) {
	o, d, cp := pl.o, pl.d, pl.o.Checkpoint
	final := pl.out
	out, folder, err := stageOutput(pl.out, pl.id)
	if err != nil {
		return Fork{}, err
	}
	if folder != "" {
		defer os.RemoveAll(filepath.Dir(out)) // gone after the rename; a failed fork leaves nothing
	}
	p, err := durable.Create(out, pl.perm, durable.NoReplace)
	if err != nil {
		return Fork{}, err
	}
	defer p.Abort()
	f := Fork{Type: "fork", Path: final, SessionID: pl.id, Method: pl.method}
	w := &prefixWriter{ctx: ctx, dst: p.File, dialect: d, from: o.From, oldID: pl.oldID, newID: pl.id, noTitle: o.NoTitle, sourceTitle: o.SourceTitle, imp: o.Import}
	if pl.method == MethodPrefixCopy {
		err = w.fromFile(pl.src, cp.Offset)
	} else {
		err = w.fromSnapshots(o.Snapshots, cp)
	}
	if err != nil {
		return Fork{}, err
	}
	f.EventsKept = w.events
	f.Warnings = append(f.Warnings, w.warnings...)
	f.ReplacedFirstLine = w.replaced
	if w.replacesAll() {
		f.ReplacedID = pl.oldID
	}

	if d != nil && d.Fork.Require != nil {
		if err := requireLine(ctx, p.File, out, d); err != nil {
			return Fork{}, err
		}
	}
	var indexLine []byte // the title's line in the agent's index of names, once the fork is there
	if d != nil && (!o.NoTitle || w.appendsTitle()) {
		if indexLine, err = w.writeTitle(p, out, cp.Leaf, o.Out != "", &f); err != nil {
			return Fork{}, err
		}
	}
	if f.Bytes, err = p.Seek(0, io.SeekCurrent); err != nil {
		return Fork{}, fmt.Errorf("size of %s: %w", out, err)
	}
	if folder == "" {
		if err := p.Commit(); err != nil {
			return Fork{}, err
		}
	}
	warns, err := copySidecars(d, o.From, out, pl.oldID, pl.id, f.Title, o.Import)
	if err != nil {
		if folder == "" {
			os.Remove(out)
		}
		return Fork{}, err
	}
	f.Warnings = append(f.Warnings, warns...)
	if folder != "" {
		if err := p.Commit(); err != nil {
			return Fork{}, err
		}
		if err := publishFolder(filepath.Dir(out), folder); err != nil {
			return Fork{}, err
		}
	}
	if indexLine != nil {
		if err := appendIndex(d, final, indexLine); err != nil {
			f.Warnings = append(f.Warnings, "fork title not indexed: "+err.Error())
			f.Title = ""
		}
	}
	return f, nil
}

// sourceSession is the session id of the transcript forked from. Where the
// agent names the session inside the transcript, it is read from the bytes
// the fork is made of: a live file that no longer holds them may have
// another first line.
func sourceSession(d *jsonl.Dialect, o CreateOptions, src *os.File, method string) (string, error) {
	var head []byte
	if d != nil && d.Fork.SessionField != "" {
		live := src
		if method == MethodSnapshot {
			live = nil
		}
		var err error
		if head, err = firstLine(live, o.Snapshots); err != nil {
			return "", err
		}
	}
	return sessionIDOf(d, o.From, head), nil
}

// stageOutput makes the folder the fork is written in. A fork that is a
// folder of its own (folder, returned) is built under a hidden name beside
// it and appears by one rename, sidecars and all: out is then its path
// inside that hidden folder, which the caller removes when done.
func stageOutput(out, id string) (staged, folder string, err error) {
	if !ownsFolder(out, id) {
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return "", "", fmt.Errorf("create the fork's folder: %w", err)
		}
		return out, "", nil
	}
	folder = filepath.Dir(out)
	stage := filepath.Join(filepath.Dir(folder), "."+id+".rewind-fork")
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return "", "", fmt.Errorf("create the fork's folder: %w", err)
	}
	return filepath.Join(stage, filepath.Base(out)), folder, nil
}

// writeTitle gives the fork its title: a line appended to the fork, or
// (returned) the line for the agent's index of names, written once the
// fork is there — not for a fork written elsewhere (--out), since the index
// is found from the fork's place in the agent's folders. For the sidecar
// method the title goes into the sidecar. A title that cannot be made is a
// warning, except in a tree-shaped transcript, where the title line also
// ends the conversation.
func (w *prefixWriter) writeTitle(p *durable.File, out, leaf string, elsewhere bool, f *Fork) (indexLine []byte, err error) {
	leaf, err = w.leafOf(leaf)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", out, err)
	}
	title, line, err := w.titleLine(leaf)
	switch {
	case err != nil && w.dialect.Tree != nil:
		return nil, fmt.Errorf("fork %s: the line that ends its conversation: %w", out, err)
	case err != nil:
		f.Warnings = append(f.Warnings, "fork title not set: "+err.Error())
	case line != nil && w.indexesTitle() && !elsewhere:
		indexLine, f.Title = line, title
	case line != nil && w.indexesTitle():
	case line != nil:
		if _, err := p.Write(line); err != nil {
			return nil, fmt.Errorf("write %s: %w", out, err)
		}
		f.Title = title
	default:
		f.Title = title
	}
	return indexLine, nil
}

// appendIndex appends the fork's title line to the agent's index of session names (Codex's
// session_index.jsonl, which `codex resume <name>` reads; its last line for an id wins), in one
// write, and syncs it. The index is the agent's own file: Rewind only ever appends to it.
func appendIndex(d *jsonl.Dialect, fork string, line []byte) error {
	path, err := IndexPath(d, fork)
	if err != nil {
		return err
	}
	if err := durable.Fault("append", path); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		// A last line without its newline is completed first, so the two do not run together.
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			if _, err := r.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
				line = append([]byte{'\n'}, line...)
			}
			r.Close()
		}
	}
	_, err = f.Write(line)
	if err == nil {
		err = durable.Sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return nil
}

// requireLine refuses a fork that lacks the line its dialect requires.
func requireLine(ctx context.Context, f *os.File, out string, d *jsonl.Dialect) error {
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	t, err := jsonl.New(out, io.NewSectionReader(f, 0, size), size, d)
	if err != nil {
		return err
	}
	ok, err := t.HasLine(ctx, d.Fork.Require.Match)
	if err != nil {
		return fmt.Errorf("read %s: %w", out, err)
	}
	if !ok {
		return &EmptyError{What: d.Fork.Require.Why}
	}
	return nil
}

// publishFolder renames the staged folder of a fork into place, refusing to replace anything.
func publishFolder(stage, folder string) error {
	if _, err := os.Lstat(folder); err == nil {
		return fmt.Errorf("output %s already exists", folder)
	}
	if err := durable.Fault("rename", folder); err != nil {
		return fmt.Errorf("rename into %s: %w", folder, err)
	}
	if err := os.Rename(stage, folder); err != nil {
		return fmt.Errorf("rename into %s: %w", folder, err)
	}
	if err := durable.SyncDir(filepath.Dir(folder)); err != nil {
		os.RemoveAll(folder)
		return err
	}
	return nil
}

// firstLine reads the source's first line (at most firstLineLimit bytes): from the live file,
// else from the snapshots.
func firstLine(src *os.File, snapshots []string) ([]byte, error) {
	var r io.Reader
	if src != nil {
		r = io.NewSectionReader(src, 0, firstLineLimit)
	} else if len(snapshots) > 0 {
		zr, err := OpenSnapshots(snapshots)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	} else {
		return nil, nil
	}
	head := make([]byte, firstLineLimit)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("read the transcript's first line: %w", err)
	}
	head = head[:n]
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	return head, nil
}

// openLive opens the live transcript read-only and tells why it does not hold the checkpointed
// prefix ("" when it does; "missing" when it does not exist). perm is the mode the fork gets:
// the transcript's, or 0600 (what Claude Code uses) when it is gone.
func openLive(path string, cp Checkpoint) (f *os.File, size int64, perm fs.FileMode, reason string, err error) {
	f, err = openFile(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, 0o600, "missing", nil
	}
	if err != nil {
		return nil, 0, 0, "", fmt.Errorf("open transcript: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("transcript %s is not a regular file", path)
	}
	if err == nil {
		reason, err = cp.mismatch(f, fi.Size())
	}
	if err != nil {
		f.Close()
		return nil, 0, 0, "", fmt.Errorf("read transcript %s: %w", path, err)
	}
	return f, fi.Size(), fi.Mode().Perm(), reason, nil
}

// resolveDialect picks the transcript's dialect: named, or detected from the path and the live
// file's first bytes. nil (no error) when it cannot be told: the fork is written without a title.
func resolveDialect(agent, cpAgent, path string, src *os.File, size int64) (*jsonl.Dialect, error) {
	if agent == "" {
		agent = cpAgent
	}
	if agent != "" {
		d, err := jsonl.LookupDialect(agent)
		if err != nil {
			return nil, &AgentError{Agent: agent, Err: err}
		}
		return d, nil
	}
	var head []byte
	if src != nil {
		head = make([]byte, min(size, jsonl.HashWindow))
		if _, err := src.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read transcript %s: %w", path, err)
		}
	}
	return jsonl.Detect(path, head).Dialect, nil
}

// forkPath decides the fork's path and session id: Out (named for the session when its name
// is a UUID), else the dialect's path template with a new id.
func forkPath(o CreateOptions, d *jsonl.Dialect, now time.Time) (path, id string, err error) {
	if o.Out != "" {
		base := strings.TrimSuffix(filepath.Base(o.Out), ".jsonl")
		if u, err := uuid.Parse(base); err == nil && u.String() == base {
			return o.Out, base, nil
		}
		return o.Out, newSessionID(d), nil
	}
	id = newSessionID(d)
	tmpl := "{dir}/{id}.jsonl"
	if d != nil {
		tmpl = d.Fork.Path
	}
	id8 := id[:min(8, len(id))]
	path, err = expand(tmpl, map[string]string{"dir": filepath.Dir(o.From), "id": id, "id8": id8, "rand8": rand8(id8)}, filepath.Dir(o.From), now)
	return path, id, err
}

// newSessionID is a new session id of the dialect's kind.
func newSessionID(d *jsonl.Dialect) string {
	if d != nil && d.Fork.IDKind == "uuid7" {
		if u, err := uuid.NewV7(); err == nil {
			return u.String()
		}
	}
	return uuid.NewString()
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, nil
	}
	return os.SameFile(fa, fb), nil
}

// trailingNewline returns "\n" when data does not end in one.
func trailingNewline(last byte, n int64) []byte {
	if n > 0 && last != '\n' {
		return []byte{'\n'}
	}
	return nil
}
