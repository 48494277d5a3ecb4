package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"rewind.dev/fork"
	"rewind.dev/hookd"
	"rewind.dev/jsonl"
	"rewind.dev/snap"
)

// RestoreOptions say what a restore brings back.
type RestoreOptions struct {
	Code    bool
	Context string // "" (none), "fork", "in-place"
	DryRun  bool
	Kind    RestoreKind // recorded in the history: KindRestore (default), KindUndo
}

// RestoreResult is what a restore did.
type RestoreResult struct {
	Type       string              `json:"type"` // "restore"
	Kind       RestoreKind         `json:"kind"`
	Checkpoint string              `json:"checkpoint"`
	Backup     string              `json:"backup_checkpoint,omitempty"`
	DryRun     bool                `json:"dry_run"`
	Code       *snap.RestoreResult `json:"code,omitempty"`
	Fork       *fork.Fork          `json:"fork,omitempty"`
	Truncate   *fork.Truncation    `json:"truncate,omitempty"`
	// Resume tells how to open the fork in its agent.
	Resume string `json:"resume,omitempty"`
	// Cut is, in a dry run, where the conversation would be cut.
	Cut *Cut `json:"cut,omitempty"`
	// Reverts is the history entry an undo-restore or redo reverts (its id);
	// RevertsWhat what an undo-restore undoes or a redo puts back, in words.
	Reverts     string `json:"reverts,omitempty"`
	RevertsWhat string `json:"reverts_what,omitempty"`
	// Moved are the files of a fork that an undo-restore moved aside or a
	// redo moved back (in a dry run, To is the folder they would go to).
	Moved []Move `json:"moved,omitempty"`
	// Transcript is a transcript an undo-restore or redo gave its earlier
	// bytes back.
	Transcript *Swap    `json:"transcript,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Cut is where a dry run would cut a conversation, and what it would write.
type Cut struct {
	Transcript string `json:"transcript"`
	Agent      string `json:"agent,omitempty"`
	How        string `json:"how"`    // fork, in-place
	Offset     int64  `json:"offset"` // the bytes kept: [0, Offset)
	Size       int64  `json:"size"`   // the transcript's size now
	// Before is the prompt the cut comes before (N: back's count, that
	// prompt being the Nth most recent); After the last prompt it keeps.
	Before string `json:"before_prompt,omitempty"`
	N      int    `json:"n,omitempty"`
	After  string `json:"after_prompt,omitempty"`
	// Fork is where the fork would be written (its id is drawn anew by the
	// run), "" for an agent that names an imported session itself; Method
	// says whether its bytes would come from the live transcript or from the
	// checkpoint's copy.
	Fork   string `json:"fork,omitempty"`
	Method string `json:"method,omitempty"`
}

// Move is a file moved from one path to another.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Swap is a transcript whose bytes were replaced by an earlier copy: Path
// now holds From's bytes, and the bytes it had are kept in Saved.
type Swap struct {
	Path  string `json:"path"`
	From  string `json:"from"`
	Saved string `json:"saved,omitempty"`
}

// Restore brings back cp's tree and/or transcript. It first takes a backup
// checkpoint of the tree and transcript as they are, and records itself in
// the restore history, so UndoRestore can bring everything back.
func (s *Store) Restore(ctx context.Context, cp *Checkpoint, opts RestoreOptions) (*RestoreResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	return s.restoreLocked(ctx, cp, opts)
}

func (s *Store) restoreLocked(ctx context.Context, cp *Checkpoint, opts RestoreOptions) (*RestoreResult, error) {
	if opts.Kind == "" {
		opts.Kind = KindRestore
	}
	res := &RestoreResult{Type: "restore", Kind: opts.Kind, Checkpoint: cp.ID, DryRun: opts.DryRun}
	if opts.Context != "" && (cp.Transcript == nil || cp.Transcript.Snapshot == "") {
		return nil, &HintError{Err: fmt.Errorf("checkpoint %s holds no transcript (it was taken before the session wrote one)", cp.ID),
			Hint: "restore the code only (--code-only), or pick another checkpoint"}
	}
	what := part(0)
	if opts.Code {
		what |= partCode
	}
	if opts.Context != "" {
		what |= partChat
	}
	k := s.newChecker(ctx, false)
	defer k.save()
	if err := k.check(cp, what); err != nil {
		return nil, damaged(err)
	}
	if opts.DryRun {
		if opts.Code {
			r, err := s.restoreTree(ctx, cp, true)
			if err != nil {
				return nil, err
			}
			res.Code = r
		}
		if opts.Context != "" {
			chain, err := s.TranscriptChain(cp)
			if err != nil {
				return nil, err
			}
			t := cp.Transcript
			ck := fork.Checkpoint{Offset: t.Cursor.ByteOffsetEnd, PrefixSHA256: t.Cursor.PrefixSHA256, TailSHA256: t.Cursor.TailSHA256, Agent: t.Agent}
			if res.Cut, err = s.planCut(ctx, t.OriginalPath, t.Agent, ck, chain, opts.Context); err != nil {
				return nil, err
			}
			if cp.Trigger.Event == hookd.EventPrompt {
				res.Cut.Before = cp.Trigger.Prompt
			}
			res.Cut.After = t.LastPrompt
		}
		return res, nil
	}
	backup, err := s.backup(ctx, k, SaveOptions{Trigger: Trigger{Kind: TriggerPreRestore}, Description: "before " + string(opts.Kind) + " to " + cp.ID, UseSession: true,
		TranscriptPath: transcriptOf(cp), TranscriptBestEffort: true})
	if err != nil {
		return nil, err
	}
	res.Backup = backup.ID
	entry := HistoryEntry{ID: backup.ID, At: time.Now().UTC(), Kind: opts.Kind, Checkpoint: cp.ID, BackupCheckpoint: backup.ID, Code: opts.Code, Context: opts.Context}
	// Recorded before anything changes: killed half way, the restore can
	// still be undone from its backup.
	if err := s.appendHistory(entry); err != nil {
		return nil, err
	}
	if opts.Code {
		r, err := s.restoreTree(ctx, cp, false)
		res.Code = r
		if err != nil {
			return res, &HintError{Err: fmt.Errorf("restore code from %s: %w", cp.ID, err), Hint: "'rewind undo-restore' brings back the tree as it was (backup " + backup.ID + ")"}
		}
	}
	if opts.Context != "" {
		err := s.restoreContext(ctx, cp, opts.Context, res, &entry)
		if uerr := s.updateHistory(entry); err == nil {
			err = uerr
		}
		if err != nil {
			return res, err
		}
	}
	entry.Done = true
	return res, s.updateHistory(entry)
}

// backup takes the checkpoint a restore starts from, and makes sure it
// restores before anything changes.
func (s *Store) backup(ctx context.Context, k *checker, o SaveOptions) (*Checkpoint, error) {
	backup, err := s.SaveLocked(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("backup checkpoint before restoring: %w", err)
	}
	k.refresh()
	if err := k.check(backup, partAll); err != nil {
		return nil, &HintError{Err: fmt.Errorf("the backup checkpoint does not restore, so nothing was changed: %w", err),
			Hint: "'rewind validate' lists the damage in the store; save again ('rewind save --full') before restoring"}
	}
	return backup, nil
}

// damaged is the error of a restore refused for a damaged checkpoint.
func damaged(err error) error {
	return &HintError{Err: fmt.Errorf("%w; nothing was changed", err), Hint: "'rewind validate' lists the damage; restore another checkpoint ('rewind list')"}
}

func transcriptOf(cp *Checkpoint) string {
	if cp.Transcript != nil {
		return cp.Transcript.OriginalPath
	}
	return ""
}

// restoreContext forks (or truncates) cp's transcript at its cursor.
func (s *Store) restoreContext(ctx context.Context, cp *Checkpoint, how string, res *RestoreResult, entry *HistoryEntry) error {
	// The live transcript is a regular file (checked without blocking)
	// before the fork opens it.
	live, err := jsonl.Open(cp.Transcript.OriginalPath, nil)
	if err != nil {
		return err
	}
	live.Close()
	chain, err := s.TranscriptChain(cp)
	if err != nil {
		return err
	}
	t := cp.Transcript
	ck := fork.Checkpoint{Offset: t.Cursor.ByteOffsetEnd, PrefixSHA256: t.Cursor.PrefixSHA256, TailSHA256: t.Cursor.TailSHA256, Agent: t.Agent}
	return s.cutTranscript(ctx, t.OriginalPath, t.Agent, ck, chain, how, res, entry)
}

// cutTranscript writes a fork of path at ck, or truncates path in place
// behind a verified backup, and records which in entry.
func (s *Store) cutTranscript(ctx context.Context, path, agent string, ck fork.Checkpoint, chain []string, how string, res *RestoreResult, entry *HistoryEntry) error {
	switch how {
	case "fork":
		f, err := fork.Create(ctx, fork.CreateOptions{From: path, Checkpoint: ck, Snapshots: chain, Agent: agent, SourceTitle: s.forkTitle(path)})
		if err != nil {
			return hintFrom(fmt.Errorf("fork transcript %s: %w", path, err), how)
		}
		res.Fork = &f
		res.Warnings = append(res.Warnings, f.Warnings...)
		res.Resume = ResumeHint(agent, f.SessionID)
		entry.Fork = &ForkRecord{Path: f.Path, SessionID: f.SessionID, Agent: agent, ParentTranscript: path, Offset: ck.Offset,
			ParentFirstLine: f.ReplacedFirstLine, ParentSessionID: f.ReplacedID, Title: f.Title, Method: f.Method}
	case "in-place":
		tr, err := fork.Truncate(ctx, fork.TruncateOptions{From: path, Checkpoint: ck, BackupDir: s.backupDir(), Snapshots: chain})
		if err != nil {
			return hintFrom(fmt.Errorf("truncate transcript %s: %w", path, err), how)
		}
		res.Truncate = &tr
		res.Warnings = append(res.Warnings, tr.Warnings...)
		entry.Truncate = &TruncateRecord{Path: path, Backup: tr.Backup, Offset: ck.Offset, BytesRemoved: tr.BytesRemoved}
	default:
		return fmt.Errorf("unknown context restore %q", how)
	}
	return nil
}

// planCut checks what a cut of path at ck can check without writing, and
// says where it would go.
func (s *Store) planCut(ctx context.Context, path, agent string, ck fork.Checkpoint, chain []string, how string) (*Cut, error) {
	c := &Cut{Transcript: path, Agent: agent, How: how, Offset: ck.Offset}
	if fi, err := os.Stat(path); err == nil {
		c.Size = fi.Size()
	}
	if how == "in-place" {
		chain = nil // a cut in place needs the live file to hold the bytes
	}
	f, err := fork.Create(ctx, fork.CreateOptions{From: path, Checkpoint: ck, Snapshots: chain, Agent: agent, DryRun: true})
	if err != nil {
		return nil, hintFrom(err, how)
	}
	if how == "fork" {
		c.Fork, c.Method = f.Path, f.Method
	}
	return c, nil
}

// ResumeHint says how to open a session in its agent (the dialect's resume command).
func ResumeHint(agent, session string) string {
	if agent == "" {
		agent = "claude"
	}
	if d, err := jsonl.LookupDialect(agent); err == nil {
		if cmd := d.ResumeCommand(session); cmd != "" {
			return cmd
		}
	}
	return agent + ": open session " + session
}

// restoreTree makes the project's tree equal to c's snapshot, reading from
// its layer chain only the files that differ.
func (s *Store) restoreTree(ctx context.Context, c *Checkpoint, dryRun bool) (*snap.RestoreResult, error) {
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", c.ID, err)
	}
	return snap.Restore(ctx, s.Project, "", snap.RestoreOptions{DryRun: dryRun, Manifest: m, Walk: snap.WalkOptions{Ignore: cfg.Ignore}})
}

// HintError is an error with a hint of what to do.
type HintError struct {
	Err  error
	Hint string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// hintFrom gives a fork error its hint, as rewind's commands would say it:
// the fork package's hints name rewind-fork's flags (--snapshot,
// --backup-dir, rewind-fork create), which rewind passes itself.
func hintFrom(err error, how string) error {
	h := fork.Hint(err)
	plumbing := strings.Contains(h, "--snapshot") || strings.Contains(h, "--backup-dir") || strings.Contains(h, "rewind-fork")
	switch {
	case h == "":
		return err
	case plumbing && how == "in-place":
		h = "fork instead (without --in-place): a fork leaves the live transcript as it is, and can be made from the checkpoint's copy"
	case plumbing:
		h = "the transcript changed while it was read; run this again"
	}
	return &HintError{Err: err, Hint: h}
}

// Undo restores the code to before the step the agent just took: to the
// newest checkpoint when the tree has changed since it, else to the one
// before it.
func (s *Store) Undo(ctx context.Context, dryRun bool) (*RestoreResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, ErrNoCheckpoints
	}
	target := cps[0]
	changes, err := snap.DiffManifest(ctx, s.Project, mustManifest(cps[0]), snap.WalkOptions{})
	if err == nil && len(changes) == 0 {
		if len(cps) < 2 {
			return nil, &HintError{Err: errors.New("nothing to undo: the tree equals the only checkpoint"), Hint: "'rewind list' shows the checkpoints"}
		}
		target = cps[1]
	}
	return s.restoreLocked(ctx, target, RestoreOptions{Code: true, DryRun: dryRun, Kind: KindUndo})
}

func mustManifest(c *Checkpoint) *snap.Manifest {
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return &snap.Manifest{}
	}
	return m
}

// moveAside moves a file Rewind made into transcript-backup/ (never
// deleting it: the user may have chatted in the fork since). It returns the
// new path, "" when the file is already gone.
func (s *Store) moveAside(p string) (string, error) {
	if !fileExists(p) {
		return "", nil
	}
	return s.keepAside(p, filepath.Base(p), true)
}

// keepAside puts a copy of p into transcript-backup/ under a new name that
// starts with the time and ends in base — moved when move is set, copied
// otherwise — and returns its path. It never replaces a file already there.
func (s *Store) keepAside(p, base string, move bool) (string, error) {
	stamp := time.Now().UTC().Format("20060102_150405")
	for n := 0; ; n++ {
		dst := filepath.Join(s.backupDir(), stamp+"-"+base)
		if n > 0 {
			dst = filepath.Join(s.backupDir(), fmt.Sprintf("%s.%d-%s", stamp, n, base))
		}
		if fileExists(dst) {
			continue
		}
		if move {
			// A hard link cannot replace an existing file: no backup is lost
			// to a name taken in the same second.
			err := os.Link(p, dst)
			if errors.Is(err, os.ErrExist) {
				continue
			}
			if err == nil {
				syncPath(s.backupDir())
				return dst, os.Remove(p)
			}
		}
		if err := copyFile(p, dst); err != nil {
			return "", fmt.Errorf("keep %s aside: %w", p, err)
		}
		if move {
			return dst, os.Remove(p)
		}
		return dst, nil
	}
}

// untruncate gives a truncated transcript its bytes back: the current file
// (which may hold newer turns) is saved aside first, then the backup taken
// before the truncation replaces it atomically. saved is where the current
// bytes went ("" when there was no file).
func (s *Store) untruncate(t *TruncateRecord) (saved string, err error) {
	if fileExists(t.Path) {
		saved, err = s.keepAside(t.Path, "before-undo-"+filepath.Base(t.Path), false)
		if err != nil {
			return "", fmt.Errorf("save %s before undoing its truncation: %w", t.Path, err)
		}
	}
	// copyFile writes through a temporary name of its own and renames: no
	// fixed side name that a file of the user's could hold.
	if err := copyFile(t.Backup, t.Path); err != nil {
		return saved, fmt.Errorf("bring back %s from %s: %w", t.Path, t.Backup, err)
	}
	return saved, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := snap.CreateAtomic(dst, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer out.Abort()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Commit()
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// BackOptions say how far back to go.
type BackOptions struct {
	N              int
	Both           bool
	InPlace        bool
	DryRun         bool
	TranscriptPath string // default: session.json's
	Agent          string
	// InAgent: rewind runs inside the agent's own session (its shell tool), in the middle of a
	// prompt: that prompt counts as the newest even when the agent has not written its line
	// yet, so N means the same whenever the agent writes it.
	InAgent bool
}

// Back rewinds the conversation to before the Nth most recent prompt (a fork
// by default), and with Both the code to the newest checkpoint of the same
// conversation taken before that prompt. With Both and no such checkpoint it
// changes nothing.
func (s *Store) Back(ctx context.Context, o BackOptions) (*RestoreResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	path, agent := o.TranscriptPath, o.Agent
	if path == "" {
		sess, err := s.Session()
		if err != nil {
			return nil, err
		}
		path = sess.TranscriptPath
		if agent == "" {
			agent = sess.Agent
		}
	}
	if path == "" {
		return nil, &HintError{Err: errors.New("no transcript known for this project"), Hint: "pass --transcript PATH, or let the hooks record the session (rewind config --register-hooks)"}
	}
	path = realPath(path)
	var d *jsonl.Dialect
	if agent != "" {
		d, _ = jsonl.LookupDialect(agent)
	}
	t, err := jsonl.Open(path, d)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if !t.Exists() {
		return nil, &HintError{Err: fmt.Errorf("transcript %s: %w", path, syscall.ENOENT),
			Hint: "pass the session's file with --transcript PATH (the hooks record the current one in session.json)"}
	}
	if t.Dialect != nil {
		agent = t.Dialect.Name
	}
	turn, err := s.backTurn(ctx, t, path, o)
	if err != nil {
		if errors.Is(err, jsonl.ErrFewerPrompts) {
			return nil, fewerPrompts(ctx, t, o.N)
		}
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	res := &RestoreResult{Type: "restore", Kind: KindBack, DryRun: o.DryRun}
	var target *Checkpoint
	if o.Both {
		target, err = s.checkpointBefore(ctx, t, path, turn)
		if err != nil {
			return nil, err
		}
		if target == nil {
			return nil, &HintError{Err: fmt.Errorf("no checkpoint of this conversation is older than prompt %d (%q); nothing was changed", o.N, turn.Text),
				Hint: "rewind chat only (drop --both), or pick a checkpoint with 'rewind list' and 'rewind restore'"}
		}
		res.Checkpoint = target.ID
	}
	how := "fork"
	if o.InPlace {
		how = "in-place"
	}
	k := s.newChecker(ctx, false)
	defer k.save()
	if target != nil {
		if err := k.check(target, partCode); err != nil {
			return nil, damaged(err)
		}
	}
	if o.DryRun {
		if target != nil {
			r, err := s.restoreTree(ctx, target, true)
			if err != nil {
				return nil, err
			}
			res.Code = r
		}
		if res.Cut, err = s.planCut(ctx, path, agent, fork.Checkpoint{Offset: turn.Offset, Agent: agent, Leaf: turn.ParentID}, nil, how); err != nil {
			return nil, err
		}
		res.Cut.Before, res.Cut.N = turn.Text, o.N
		return res, nil
	}
	backup, err := s.backup(ctx, k, SaveOptions{Trigger: Trigger{Kind: TriggerPreRestore}, Description: fmt.Sprintf("before back %d", o.N), TranscriptPath: path, Agent: agent})
	if err != nil {
		return nil, err
	}
	res.Backup = backup.ID
	entry := HistoryEntry{ID: backup.ID, At: time.Now().UTC(), Kind: KindBack, BackupCheckpoint: backup.ID, Context: how}
	if target != nil {
		entry.Checkpoint, entry.Code = target.ID, true
	}
	if err := s.appendHistory(entry); err != nil { // before anything changes
		return nil, err
	}
	if target != nil {
		r, err := s.restoreTree(ctx, target, false)
		res.Code = r
		if err != nil {
			return res, &HintError{Err: fmt.Errorf("restore code from %s: %w", target.ID, err), Hint: "'rewind undo-restore' brings back the tree as it was"}
		}
	}
	ck := fork.Checkpoint{Offset: turn.Offset, Agent: agent, Leaf: turn.ParentID}
	err = s.cutTranscript(ctx, path, agent, ck, nil, how, res, &entry)
	if err == nil {
		entry.Done = true
	}
	if uerr := s.updateHistory(entry); err == nil {
		err = uerr
	}
	return res, err
}

// backTurn is the Nth most recent prompt of t. Inside the agent (InAgent), the prompt being
// answered may not be in the transcript yet (Claude Code writes it late in interactive mode,
// early with -p): the newest prompt-hook checkpoint of this transcript tells, since its cursor
// is where the file ended when the prompt was submitted. When no prompt of the file starts at
// or after it, that prompt is the first of the N, and "before it" is that cursor.
func (s *Store) backTurn(ctx context.Context, t *jsonl.Transcript, path string, o BackOptions) (jsonl.Turn, error) {
	if !o.InAgent {
		return t.Back(ctx, o.N)
	}
	ups := s.newestPromptCheckpoint(path)
	if ups == nil {
		return t.Back(ctx, o.N)
	}
	cur := ups.Transcript.Cursor
	if v, err := t.Verify(cur); err != nil || !v.Extends {
		return t.Back(ctx, o.N)
	}
	newest, err := t.Turns(ctx, 1)
	if err != nil {
		return jsonl.Turn{}, err
	}
	if len(newest) > 0 && newest[0].PromptOffset >= cur.ByteOffsetEnd {
		return t.Back(ctx, o.N) // the running prompt is written: count as usual
	}
	if o.N == 1 {
		// The lines the agent wrote for the prompt before the hook (Claude's queue lines)
		// go with it, as they would in a cut before its written line.
		start, err := t.PreambleStart(ctx, cur.ByteOffsetEnd)
		if err != nil {
			return jsonl.Turn{}, err
		}
		return jsonl.Turn{N: 1, Offset: start, PromptOffset: cur.ByteOffsetEnd, End: t.End(), Text: ups.Trigger.Prompt}, nil
	}
	turn, err := t.Back(ctx, o.N-1)
	turn.N = o.N
	return turn, err
}

// newestPromptCheckpoint is the newest checkpoint taken at a prompt hook of the transcript at
// path, among the newest few, or nil.
func (s *Store) newestPromptCheckpoint(path string) *Checkpoint {
	ids, err := s.IDs()
	if err != nil {
		return nil
	}
	for i, n := len(ids)-1, 0; i >= 0 && n < 64; i, n = i-1, n+1 {
		c, err := s.Load(ids[i])
		if err != nil || c.Transcript == nil || c.Trigger.Event != "UserPromptSubmit" || c.Transcript.OriginalPath != path {
			continue
		}
		return c
	}
	return nil
}

// SessionTranscript is the transcript (and its agent) that the hooks recorded for session id:
// session.json's when it names that session, else the newest checkpoint's of that session.
func (s *Store) SessionTranscript(id string) (path, agent string, ok bool) {
	if sess, err := s.Session(); err == nil && sess.SessionID == id && sess.TranscriptPath != "" {
		return sess.TranscriptPath, sess.Agent, true
	}
	ids, err := s.IDs()
	if err != nil {
		return "", "", false
	}
	for i, n := len(ids)-1, 0; i >= 0 && n < 256; i, n = i-1, n+1 {
		c, err := s.Load(ids[i])
		if err == nil && c.Transcript != nil && c.Transcript.SessionID == id && c.Transcript.OriginalPath != "" {
			return c.Transcript.OriginalPath, c.Transcript.Agent, true
		}
	}
	return "", "", false
}

// FewerPromptsError is back asked to go further than the prompts in view.
type FewerPromptsError struct {
	Have, Want int
	Compacted  bool // compaction hid the older prompts
}

func (e *FewerPromptsError) Error() string {
	if e.Compacted {
		return fmt.Sprintf("only %d prompts are in view: the transcript was compacted past prompt %d", e.Have, e.Want)
	}
	return fmt.Sprintf("the conversation has %d prompts, fewer than %d", e.Have, e.Want)
}

// Is makes errors.Is(err, jsonl.ErrFewerPrompts) hold.
func (e *FewerPromptsError) Is(target error) bool { return target == jsonl.ErrFewerPrompts }

// fewerPrompts explains why back cannot go that far: the conversation is
// short, or compaction hid the older prompts.
func fewerPrompts(ctx context.Context, t *jsonl.Transcript, n int) error {
	turns, _ := t.Turns(ctx, 0)
	compacted, _ := t.Compacted(ctx)
	err := &FewerPromptsError{Have: len(turns), Want: n, Compacted: compacted}
	if compacted {
		return &HintError{Err: err,
			Hint: "go back at most " + fmt.Sprint(len(turns)) + ", or restore an older checkpoint with 'rewind restore' (its transcript snapshot predates the compaction)"}
	}
	return &HintError{Err: err, Hint: "'rewind-jsonl turns' lists them"}
}

// checkpointBefore finds the newest checkpoint of this conversation whose
// transcript cursor lies at or before promptOffset and whose bytes the
// transcript still holds. The conversation includes the sessions it was
// forked from (recorded in the restore history): their checkpoints count
// when they lie inside the shared prefix, which Verify checks by hash — with
// the ancestor's own first line in place where a fork rewrote it (Droid).
func (s *Store) checkpointBefore(ctx context.Context, t *jsonl.Transcript, path string, turn jsonl.Turn) (*Checkpoint, error) {
	promptOffset := turn.PromptOffset
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	lineage, err := lineageOf(t, path, promptOffset, h)
	if err != nil {
		return nil, err
	}
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, c := range cps { // newest first
		if c.Transcript == nil || c.Backup() {
			continue
		}
		a, ok := lineage[c.Transcript.OriginalPath]
		cur := c.Transcript.Cursor
		// The cursor's data ends at ByteOffsetEnd, or — where the agent rewrote its first
		// line since (Droid) — that moved by the line's change in length, never below this.
		if !ok || cur.ByteOffsetEnd-max(cur.FirstLine-1, 0) > a.limit {
			continue
		}
		if cur.ByteOffsetEnd == 0 {
			if c.Transcript.OriginalPath == path {
				return c, nil // taken before the session wrote anything
			}
			continue
		}
		if off, found, err := a.held.Locate(cur); err == nil && found && off <= a.limit {
			return c, nil
		}
	}
	return s.checkpointInParentSessions(ctx, t, turn, cps)
}

// maxParentSessions bounds how far checkpointInParentSessions follows forks of forks.
const maxParentSessions = 32

// checkpointInParentSessions looks for the checkpoint before turn in the sessions the agent
// itself forked t from (pi's /fork and --fork copy the lines of the path with their ids, under
// a header naming the parent file): a checkpoint of a parent session is before the prompt when
// the last line it saw is on the fork's path at or above the prompt's parent. The fork's bytes
// differ from the parent's (left branches are dropped), so ids, not offsets, decide.
func (s *Store) checkpointInParentSessions(ctx context.Context, t *jsonl.Transcript, turn jsonl.Turn, cps []*Checkpoint) (*Checkpoint, error) {
	if t.Dialect == nil || t.Dialect.Tree == nil || turn.ParentID == "" {
		return nil, nil
	}
	parents := map[string]bool{}
	for cur := t; len(parents) < maxParentSessions; {
		p, err := cur.ParentSession()
		if err != nil || p == "" || parents[p] || p == t.Path {
			break
		}
		parents[p] = true
		next, err := jsonl.Open(p, t.Dialect)
		if err != nil {
			break // the parent session is gone: its checkpoints can still match by id
		}
		defer next.Close()
		cur = next
	}
	if len(parents) == 0 {
		return nil, nil
	}
	onPath, err := t.PathIDs(ctx, turn.ParentID)
	if err != nil {
		return nil, err
	}
	for _, c := range cps { // newest first
		if c.Transcript == nil || c.Backup() || !parents[c.Transcript.OriginalPath] {
			continue
		}
		if id := c.Transcript.Cursor.LastEventID; id != "" && onPath[id] {
			return c, nil
		}
	}
	return nil, nil
}

// ancestor is what the current transcript holds of a transcript in its
// lineage (itself included).
type ancestor struct {
	limit int64  // where the shared bytes end, in the ancestor's own offsets
	first []byte // the ancestor's first line where a fork on the way rewrote it, else nil
	// held is the current transcript with first in place of its own first
	// line: the ancestor's bytes as far as they are shared.
	held *jsonl.Transcript
}

// lineageOf follows the forks Rewind made from path back to the sessions they
// came from and returns, for path and each of them, what t (path's transcript)
// holds of it.
func lineageOf(t *jsonl.Transcript, path string, promptOffset int64, h History) (map[string]ancestor, error) {
	forkOf := map[string]*ForkRecord{}
	for i := range h.Entries {
		if f := h.Entries[i].Fork; f != nil {
			forkOf[f.Path] = f // the newest record of a path wins
		}
	}
	var firstSize int64 = -1 // t's first line, read only when a fork rewrote one
	lineage := map[string]ancestor{path: {limit: promptOffset, held: t}}
	for cur := path; ; {
		f := forkOf[cur]
		if f == nil {
			break
		}
		if _, seen := lineage[f.ParentTranscript]; seen {
			break
		}
		child := lineage[cur]
		parent := ancestor{first: child.first, held: child.held}
		if f.ParentSessionID != "" && len(f.ParentSessionID) == len(f.SessionID) {
			// Gemini: the fork named its session in every line; the parent's bytes are the
			// fork's with the parent's id put back, at the same offsets.
			held, err := jsonl.New(t.Path, swappedID{rest: child.held.ReaderAt(), from: []byte(f.SessionID), to: []byte(f.ParentSessionID)},
				child.held.Size(), t.Dialect)
			if err != nil {
				return nil, err
			}
			parent.held, parent.limit = held, min(child.limit, f.Offset)
			lineage[f.ParentTranscript] = parent
			cur = f.ParentTranscript
			continue
		}
		if f.ParentFirstLine != nil {
			parent.first = f.ParentFirstLine
			if firstSize < 0 {
				var err error
				if firstSize, err = firstLineSize(t); err != nil {
					return nil, err
				}
			}
			held, err := jsonl.New(t.Path, replacedFirstLine{first: parent.first, rest: t.ReaderAt(), skip: firstSize},
				int64(len(parent.first))+max(t.Size()-firstSize, 0), t.Dialect)
			if err != nil {
				return nil, err
			}
			parent.held = held
		}
		// The child's limit in the parent's offsets: the bytes after the
		// first line are shared, so the offsets differ by the first lines'.
		limit := child.limit - lineSize(child.first, firstSize) + lineSize(parent.first, firstSize)
		parent.limit = min(limit, f.Offset)
		lineage[f.ParentTranscript] = parent
		cur = f.ParentTranscript
	}
	return lineage, nil
}

// lineSize is the length of first, or of the current transcript's own first
// line (current) where first is nil.
func lineSize(first []byte, current int64) int64 {
	if first == nil {
		return current
	}
	return int64(len(first))
}

// firstLineSize is the length of t's first line, newline included.
func firstLineSize(t *jsonl.Transcript) (int64, error) {
	var size int64
	err := t.Lines(0, func(l jsonl.Line) bool {
		size = l.End
		return false
	})
	if err != nil {
		return 0, fmt.Errorf("transcript %s: %w", t.Path, err)
	}
	return size, nil
}

// swappedID reads as rest with every occurrence of from replaced by to, of the same length.
type swappedID struct {
	rest     io.ReaderAt
	from, to []byte
}

func (r swappedID) ReadAt(p []byte, off int64) (int, error) {
	// Read len(from)-1 bytes more on each side, so that an occurrence cut by the window's
	// edges is seen whole.
	pad := int64(len(r.from) - 1)
	start := max(off-pad, 0)
	buf := make([]byte, int64(len(p))+(off-start)+pad)
	n, err := r.rest.ReadAt(buf, start)
	buf = bytes.ReplaceAll(buf[:n], r.from, r.to)
	if int64(len(buf)) <= off-start {
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	m := copy(p, buf[off-start:])
	if m == len(p) {
		return m, nil
	}
	if err == nil {
		err = io.EOF
	}
	return m, err
}

// replacedFirstLine reads as first followed by rest from skip on.
type replacedFirstLine struct {
	first []byte
	rest  io.ReaderAt
	skip  int64
}

func (r replacedFirstLine) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(r.first)) {
		n = copy(p, r.first[off:])
		if n == len(p) {
			return n, nil
		}
		off = int64(len(r.first))
	}
	m, err := r.rest.ReadAt(p[n:], off-int64(len(r.first))+r.skip)
	return n + m, err
}
