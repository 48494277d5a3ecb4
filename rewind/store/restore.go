package store

import (
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
	"rewind.dev/jsonl"
	"rewind.dev/snap"
)

// RestoreOptions say what a restore brings back.
type RestoreOptions struct {
	Code    bool
	Context string // "" (none), "fork", "in-place"
	DryRun  bool
	Kind    string // recorded in the history: restore (default), undo
}

// RestoreResult is what a restore did.
type RestoreResult struct {
	Type       string              `json:"type"` // "restore"
	Kind       string              `json:"kind"`
	Checkpoint string              `json:"checkpoint"`
	Backup     string              `json:"backup_checkpoint,omitempty"`
	DryRun     bool                `json:"dry_run"`
	Code       *snap.RestoreResult `json:"code,omitempty"`
	Fork       *fork.Fork          `json:"fork,omitempty"`
	Truncate   *fork.Truncation    `json:"truncate,omitempty"`
	// Resume tells how to open the fork in its agent.
	Resume   string   `json:"resume,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
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
		opts.Kind = "restore"
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
		return res, nil
	}
	backup, err := s.backup(ctx, k, SaveOptions{Trigger: Trigger{Kind: "pre-restore"}, Description: "before " + opts.Kind + " to " + cp.ID, UseSession: true,
		TranscriptPath: transcriptOf(cp), TranscriptBestEffort: true})
	if err != nil {
		return nil, err
	}
	res.Backup = backup.ID
	entry := HistoryEntry{ID: historyID(time.Now()), At: time.Now().UTC(), Kind: opts.Kind, Checkpoint: cp.ID, BackupCheckpoint: backup.ID, Code: opts.Code, Context: opts.Context}
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
		f, err := fork.Create(ctx, fork.CreateOptions{From: path, Checkpoint: ck, Snapshots: chain, Agent: agent})
		if err != nil {
			return hintFrom(fmt.Errorf("fork transcript %s: %w", path, err))
		}
		res.Fork = &f
		res.Warnings = append(res.Warnings, f.Warnings...)
		res.Resume = ResumeHint(agent, f.SessionID)
		entry.Fork = &ForkRecord{Path: f.Path, SessionID: f.SessionID, Agent: agent, ParentTranscript: path, Offset: ck.Offset,
			ParentFirstLine: f.ReplacedFirstLine, Title: f.Title, Method: f.Method}
	case "in-place":
		tr, err := fork.Truncate(ctx, fork.TruncateOptions{From: path, Checkpoint: ck, BackupDir: s.backupDir(), Snapshots: chain})
		if err != nil {
			return hintFrom(fmt.Errorf("truncate transcript %s: %w", path, err))
		}
		res.Truncate = &tr
		res.Warnings = append(res.Warnings, tr.Warnings...)
		entry.Truncate = &TruncateRecord{Path: path, Backup: tr.Backup, Offset: ck.Offset, BytesRemoved: tr.BytesRemoved}
	default:
		return fmt.Errorf("unknown context restore %q", how)
	}
	return nil
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

func hintFrom(err error) error {
	if h := fork.Hint(err); h != "" {
		return &HintError{Err: err, Hint: h}
	}
	return err
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
	return s.restoreLocked(ctx, target, RestoreOptions{Code: true, DryRun: dryRun, Kind: "undo"})
}

func mustManifest(c *Checkpoint) *snap.Manifest {
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return &snap.Manifest{}
	}
	return m
}

// UndoRestore reverts the newest restore that is not undone yet: the tree
// comes back from its backup checkpoint, a fork it wrote is moved into
// transcript-backup/, a truncated transcript gets its bytes back. The
// current state is saved first, so the undo can itself be undone.
func (s *Store) UndoRestore(ctx context.Context) (*RestoreResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	idx := -1
	for i := len(h.Entries) - 1; i >= 0; i-- {
		if h.Entries[i].UndoneBy == "" && h.Entries[i].Kind != "undo-restore" {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, &HintError{Err: errors.New("no restore to undo"), Hint: "'rewind forks list' and 'rewind list' show what exists"}
	}
	e := h.Entries[idx]
	backup, err := s.Load(e.BackupCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("the restore's backup checkpoint is gone: %w", err)
	}
	k := s.newChecker(ctx, false)
	defer k.save()
	if e.Code {
		if err := k.check(backup, partCode); err != nil {
			return nil, damaged(err)
		}
	}
	res := &RestoreResult{Type: "restore", Kind: "undo-restore", Checkpoint: backup.ID}
	now, err := s.backup(ctx, k, SaveOptions{Trigger: Trigger{Kind: "pre-restore"}, Description: "before undo-restore of " + e.ID, UseSession: true,
		TranscriptPath: transcriptOf(backup), TranscriptBestEffort: true})
	if err != nil {
		return nil, err
	}
	res.Backup = now.ID
	undo := HistoryEntry{ID: historyID(time.Now()), At: time.Now().UTC(), Kind: "undo-restore", UndoOf: e.ID, BackupCheckpoint: now.ID, Checkpoint: backup.ID, Code: e.Code, Done: true}
	if e.Code {
		r, err := s.restoreTree(ctx, backup, false)
		res.Code = r
		if err != nil {
			return res, fmt.Errorf("restore the tree from backup %s: %w", backup.ID, err)
		}
	}
	if e.Fork != nil {
		moved, err := s.moveAside(e.Fork.Path)
		if err != nil {
			return res, err
		}
		if moved != "" {
			e.Fork.Removed = moved
			res.Warnings = append(res.Warnings, "moved the fork "+e.Fork.Path+" to "+moved)
			if side := strings.TrimSuffix(e.Fork.Path, ".jsonl") + ".settings.json"; fileExists(side) {
				s.moveAside(side)
			}
		}
	}
	if e.Truncate != nil {
		if err := s.untruncate(e.Truncate); err != nil {
			return res, err
		}
	}
	h.Entries[idx].UndoneBy = undo.ID
	if e.Fork != nil {
		h.Entries[idx].Fork = e.Fork
	}
	h.Entries = append(h.Entries, undo)
	h.Version = Version
	if err := writeJSON(s.historyPath(), h); err != nil {
		return res, err
	}
	return res, nil
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
// before the truncation replaces it atomically.
func (s *Store) untruncate(t *TruncateRecord) error {
	if fileExists(t.Path) {
		if _, err := s.keepAside(t.Path, "before-undo-"+filepath.Base(t.Path), false); err != nil {
			return fmt.Errorf("save %s before undoing its truncation: %w", t.Path, err)
		}
	}
	// copyFile writes through a temporary name of its own and renames: no
	// fixed side name that a file of the user's could hold.
	if err := copyFile(t.Backup, t.Path); err != nil {
		return fmt.Errorf("bring back %s from %s: %w", t.Path, t.Backup, err)
	}
	return nil
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
	turn, err := t.Back(ctx, o.N)
	if err != nil {
		if errors.Is(err, jsonl.ErrFewerPrompts) {
			return nil, fewerPrompts(ctx, t, o.N)
		}
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	res := &RestoreResult{Type: "restore", Kind: "back", DryRun: o.DryRun}
	var target *Checkpoint
	if o.Both {
		target, err = s.checkpointBefore(t, path, turn.PromptOffset)
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
		return res, nil
	}
	backup, err := s.backup(ctx, k, SaveOptions{Trigger: Trigger{Kind: "pre-restore"}, Description: fmt.Sprintf("before back %d", o.N), TranscriptPath: path, Agent: agent})
	if err != nil {
		return nil, err
	}
	res.Backup = backup.ID
	entry := HistoryEntry{ID: historyID(time.Now()), At: time.Now().UTC(), Kind: "back", BackupCheckpoint: backup.ID, Context: how}
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
	ck := fork.Checkpoint{Offset: turn.Offset, Agent: agent}
	err = s.cutTranscript(ctx, path, agent, ck, nil, how, res, &entry)
	if err == nil {
		entry.Done = true
	}
	if uerr := s.updateHistory(entry); err == nil {
		err = uerr
	}
	return res, err
}

// fewerPrompts explains why back cannot go that far: the conversation is
// short, or compaction hid the older prompts.
func fewerPrompts(ctx context.Context, t *jsonl.Transcript, n int) error {
	turns, _ := t.Turns(ctx, 0)
	compacted := false
	t.Lines(0, func(l jsonl.Line) bool {
		if strings.Contains(string(l.Data), `"compact_boundary"`) || strings.Contains(string(l.Data), `"isCompactSummary":true`) || strings.Contains(string(l.Data), `"compaction`) {
			compacted = true
			return false
		}
		return true
	})
	if compacted {
		return &HintError{Err: fmt.Errorf("only %d prompts are in view: the transcript was compacted past prompt %d", len(turns), n),
			Hint: "go back at most " + fmt.Sprint(len(turns)) + ", or restore an older checkpoint with 'rewind restore' (its transcript snapshot predates the compaction)"}
	}
	return &HintError{Err: fmt.Errorf("the conversation has %d prompts, fewer than %d", len(turns), n), Hint: "'rewind-jsonl turns' lists them"}
}

// checkpointBefore finds the newest checkpoint of this conversation whose
// transcript cursor lies at or before promptOffset and whose bytes the
// transcript still holds. The conversation includes the sessions it was
// forked from (recorded in the restore history): their checkpoints count
// when they lie inside the shared prefix, which Verify checks by hash — with
// the ancestor's own first line in place where a fork rewrote it (Droid).
func (s *Store) checkpointBefore(t *jsonl.Transcript, path string, promptOffset int64) (*Checkpoint, error) {
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
		if c.Transcript == nil || c.Trigger.Kind == "pre-restore" {
			continue
		}
		a, ok := lineage[c.Transcript.OriginalPath]
		if !ok || c.Transcript.Cursor.ByteOffsetEnd > a.limit {
			continue
		}
		if c.Transcript.Cursor.ByteOffsetEnd == 0 {
			if c.Transcript.OriginalPath == path {
				return c, nil // taken before the session wrote anything
			}
			continue
		}
		if v, err := a.held.Verify(c.Transcript.Cursor); err == nil && v.Extends {
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
