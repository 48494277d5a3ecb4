package store

import (
	"context"
	"errors"
	"fmt"

	"rewind.dev/fork"
	"rewind.dev/hookd"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/verify"
	"rewind.dev/snap"
	"rewind.dev/snap/pathspec"
)

// RestoreOptions say what a restore brings back.
type RestoreOptions struct {
	Code    bool
	Context ContextMode // "" for none
	DryRun  bool
	Kind    RestoreKind // recorded in the history: KindRestore (default), KindUndo
	// Paths, when set, limits the code restore to the paths it selects (git's
	// pathspec meaning); the rest of the tree is left as it is.
	Paths *pathspec.Pathspec
}

// TreeChange is the part every result of restore, undo, back,
// undo-restore, redo and revert has: the backup checkpoint taken first
// (the crash-safe sequence of change.go), whether it was a dry run, and
// what was, or would be, done to the tree.
type TreeChange struct {
	Backup string              `json:"backup_checkpoint,omitempty"`
	DryRun bool                `json:"dry_run"`
	Code   *snap.RestoreResult `json:"code,omitempty"`
}

// RestoreResult is what a restore did: Restore's, and Undo's and Back's,
// which are restores too (Kind says which).
type RestoreResult struct {
	Type       string      `json:"type"` // "restore"
	Kind       RestoreKind `json:"kind"` // KindRestore, KindUndo or KindBack
	Checkpoint string      `json:"checkpoint"`
	// Paths are the pathspec items a restore of some paths only was limited to.
	Paths []string `json:"paths,omitempty"`
	TreeChange
	Fork     *fork.Fork       `json:"fork,omitempty"`
	Truncate *fork.Truncation `json:"truncate,omitempty"`
	// Resume tells how to open the fork in its agent.
	Resume string `json:"resume,omitempty"`
	// Cut is, in a dry run, where the conversation would be cut.
	Cut      *Cut     `json:"cut,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Nothing says the restore found (or, in a dry run, would find)
	// nothing to change: the tree (or its paths) already the checkpoint's,
	// and the conversation, if cut in place, already ending where the
	// checkpoint's does. It took no backup and recorded nothing.
	Nothing bool `json:"nothing_to_restore,omitempty"`
}

// Cut is where a dry run would cut a conversation, and what it would write.
type Cut struct {
	Transcript string      `json:"transcript"`
	Agent      string      `json:"agent,omitempty"`
	How        ContextMode `json:"how"`
	Offset     int64       `json:"offset"` // the bytes kept: [0, Offset)
	Size       int64       `json:"size"`   // the transcript's size now
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

// FileMove is a file an undo-restore or a redo moved from one path to
// another.
type FileMove struct {
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
	res := &RestoreResult{Type: "restore", Kind: opts.Kind, Checkpoint: cp.ID, Paths: opts.Paths.Items(), TreeChange: TreeChange{DryRun: opts.DryRun}}
	if opts.Paths != nil && (opts.Context != "" || !opts.Code) {
		return nil, errors.New("a restore of some paths restores the tree only, not the conversation")
	}
	if opts.Context != "" && (cp.Transcript == nil || cp.Transcript.Snapshot == "") {
		return nil, &NoTranscriptError{Checkpoint: cp.ID}
	}
	what := verify.Part(0)
	if opts.Code {
		what |= verify.Code
	}
	if opts.Context != "" {
		what |= verify.Chat
	}
	k := s.newChecker(ctx)
	defer k.Save()
	if err := k.Check(cp, what); err != nil {
		return nil, &DamagedError{Err: err}
	}
	if opts.DryRun {
		if opts.Code {
			r, err := s.restorePaths(ctx, cp, opts.Paths, true)
			if err != nil {
				return nil, err
			}
			res.Code = r
		}
		if opts.Context != "" {
			var err error
			if res.Cut, err = s.planContext(ctx, cp, opts.Context); err != nil {
				return nil, err
			}
		}
		res.Nothing = (res.Code == nil || !res.Code.Changed()) && (res.Cut == nil || res.Cut.cutsNothing())
		return res, nil
	}
	// A restore that would change nothing takes no backup and records
	// nothing: there is nothing to undo. (Its check refuses too, before the
	// backup, a path that selects nothing, or a selection that would have
	// to replace a path outside it.)
	//
	// A restore of the whole tree alone asks the backup's own walk, so that
	// it walks the tree no more often than one that goes ahead: when the
	// tree is the newest checkpoint's and that is cp's, no backup is taken
	// (ErrUnchanged); when the backup's tree is cp's, it stops there,
	// recording nothing (errNothing). Anything else is asked by a brief dry
	// run first.
	wholeTree := opts.Code && opts.Paths == nil && opts.Context == ""
	if !wholeTree {
		if nothing, err := s.nothingToRestore(ctx, cp, opts, res); err != nil || nothing {
			if err != nil {
				return nil, err
			}
			res.Nothing = true
			return res, nil
		}
	}
	newest, err := s.Newest()
	if err != nil {
		return nil, err
	}
	c := change{
		backup: SaveOptions{Description: "before " + string(opts.Kind) + " to " + cp.ID, UseSession: true,
			TranscriptPath: transcriptOf(cp), TranscriptBestEffort: true,
			SkipUnchanged: wholeTree && newest != nil && newest.Snapshot.TreeHash == cp.Snapshot.TreeHash},
		entry: HistoryEntry{Kind: opts.Kind, Checkpoint: cp.ID, Code: opts.Code, Context: opts.Context, Paths: opts.Paths.Items()},
	}
	if opts.Code {
		c.tree, c.paths = cp, opts.Paths
	}
	if opts.Context != "" {
		c.conversation = func(e *HistoryEntry) error { return s.restoreContext(ctx, cp, opts.Context, res, e) }
	}
	if opts.Code && opts.Context == ContextFork {
		t := cp.Transcript
		c.rewound = &layout.RewoundSession{Kind: string(opts.Kind), Agent: t.Agent, Transcript: transcriptOf(cp), SessionID: t.SessionID}
	}
	if wholeTree {
		c.nothingIf = func(b *Checkpoint) bool { return b.Snapshot.TreeHash == cp.Snapshot.TreeHash }
	}
	r, err := applied(res, &res.TreeChange, s.apply(ctx, k, c, &res.TreeChange, &res.Warnings))
	if wholeTree && (errors.Is(err, ErrUnchanged) || errors.Is(err, errNothing)) {
		res.Nothing = true
		res.Code = &snap.RestoreResult{Type: "restore", Unchanged: cp.Snapshot.Files + cp.Snapshot.Symlinks}
		return res, nil
	}
	return r, err
}

// planContext is where a restore of cp's conversation (how) would cut it.
func (s *Store) planContext(ctx context.Context, cp *Checkpoint, how ContextMode) (*Cut, error) {
	chain, err := s.TranscriptChain(cp)
	if err != nil {
		return nil, err
	}
	t := cp.Transcript
	path, err := checkpointTranscript(cp)
	if err != nil {
		return nil, err
	}
	ck := fork.Checkpoint{Offset: t.Cursor.ByteOffsetEnd, PrefixSHA256: t.Cursor.PrefixSHA256, TailSHA256: t.Cursor.TailSHA256, Agent: t.Agent}
	c, err := s.planCut(ctx, path, t.Agent, ck, chain, how)
	if err != nil {
		return nil, err
	}
	if cp.Trigger.Event == hookd.EventPrompt {
		c.Before = cp.Trigger.Prompt
	}
	c.After = t.LastPrompt
	return c, nil
}

// nothingToRestore reports whether the restore opts asks for would change
// nothing: the tree (or the paths) already cp's, and the conversation, when
// cut in place, already ends where cp's does (see Cut.cutsNothing). Its check of the tree is a brief dry run, whose counts it
// leaves in res.Code.
func (s *Store) nothingToRestore(ctx context.Context, cp *Checkpoint, opts RestoreOptions, res *RestoreResult) (bool, error) {
	if opts.Context == ContextFork {
		return false, nil
	}
	var code *snap.RestoreResult
	if opts.Code {
		r, err := s.restoreWith(ctx, cp, snap.RestoreOptions{DryRun: true, Brief: true, Paths: opts.Paths})
		if err != nil {
			return false, err
		}
		r.Close() // (brief: it holds no lists)
		if r.Changed() {
			return false, nil
		}
		r.DryRun = false
		code = r
	}
	if opts.Context != "" {
		c, err := s.planContext(ctx, cp, opts.Context)
		if err != nil || !c.cutsNothing() {
			return false, nil // (an error is the restore's to report, after its backup as ever)
		}
	}
	res.Code = code
	return true, nil
}

// cutsNothing reports whether the cut is one in place that would keep
// every byte of the live transcript (which holds the checkpoint's, and no
// more). A fork is a new session, asked for: it is written all the same.
func (c *Cut) cutsNothing() bool {
	return c.How == ContextInPlace && c.Size > 0 && c.Offset == c.Size
}

// transcriptOf is the transcript cp recorded, for the backup a restore takes
// first: "" when it has none, or names one that its metadata — data — may
// not lead Rewind to read (see checkpointTranscript).
func transcriptOf(cp *Checkpoint) string {
	p, err := checkpointTranscript(cp)
	if err != nil {
		return ""
	}
	return p
}

// checkpointTranscript is the transcript cp recorded, which a restore of its
// conversation forks or cuts. Read from its metadata, it must lie in its
// agent's session folders (jsonl.CheckTranscriptPath), unless the user named
// it when saving; either way it must be a regular file of the user's.
func checkpointTranscript(cp *Checkpoint) (string, error) {
	if cp.Transcript == nil || cp.Transcript.OriginalPath == "" {
		return "", nil
	}
	t := cp.Transcript
	check := jsonl.CheckTranscriptPath
	if t.Named {
		check = jsonl.CheckTranscriptFile
	}
	if err := check(t.Agent, t.OriginalPath); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", cp.ID, err)
	}
	return t.OriginalPath, nil
}

// restoreTree makes the project's tree equal to c's snapshot, reading from
// its layer chain only the files that differ.
func (s *Store) restoreTree(ctx context.Context, c *Checkpoint, dryRun bool) (*snap.RestoreResult, error) {
	return s.restorePaths(ctx, c, nil, dryRun)
}

// restorePaths is restoreTree limited to the paths selects (all when nil).
func (s *Store) restorePaths(ctx context.Context, c *Checkpoint, paths *pathspec.Pathspec, dryRun bool) (*snap.RestoreResult, error) {
	return s.restoreWith(ctx, c, snap.RestoreOptions{DryRun: dryRun, Paths: paths})
}

// restoreWith restores the project's tree to c's snapshot, with o (its
// manifest and walk set here).
func (s *Store) restoreWith(ctx context.Context, c *Checkpoint, o snap.RestoreOptions) (*snap.RestoreResult, error) {
	walk, err := s.walkOptions()
	if err != nil {
		return nil, err
	}
	m, err := snap.OpenManifest(c.ManifestPath()) // (compared in walk order: not held)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", c.ID, err)
	}
	o.Manifest, o.Walk = m, walk
	return snap.Restore(ctx, s.Project, "", o.WithSpillAt(s.spillAt))
}
