package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"syscall"

	"rewind.dev/fork"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/verify"
)

// BackOptions say how far back to go.
type BackOptions struct {
	N       int
	Both    bool
	InPlace bool
	DryRun  bool
	// TranscriptPath is the transcript to go back in; by default
	// session.json's, else the newest checkpoint's (see backSessions).
	TranscriptPath string
	Agent          string
	// InAgent: rewind runs inside the agent's own session (its shell tool), in the middle of a
	// prompt: that prompt counts as the newest even when the agent has not written its line
	// yet, so N means the same whenever the agent writes it.
	InAgent bool
	// Text, when set, names the prompt by its words instead of N: the newest
	// prompt containing it (Mentions's rule). N is then found from it, in
	// the first session that holds such a prompt: every session the
	// project's checkpoints recorded is searched (see backSessions), and
	// the one found is gone back in, with its agent.
	Text string
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
	sessions, err := s.backSessions(o)
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, ErrNoTranscript
	}
	t, path, agent, o, err := s.backIn(ctx, sessions, o)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	turn, err := s.backTurn(ctx, t, path, o)
	if err != nil {
		if errors.Is(err, jsonl.ErrFewerPrompts) {
			return nil, fewerPrompts(ctx, t, o.N)
		}
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	res := &RestoreResult{Type: "restore", Kind: KindBack, TreeChange: TreeChange{DryRun: o.DryRun}}
	var target *Checkpoint
	if o.Both {
		target, err = s.checkpointBefore(ctx, t, path, turn)
		if err != nil {
			return nil, err
		}
		if target == nil {
			return nil, &NoCheckpointBeforeError{N: o.N, Prompt: turn.Text}
		}
		res.Checkpoint = target.ID
	}
	how := ContextFork
	if o.InPlace {
		how = ContextInPlace
	}
	k := s.newChecker(ctx)
	defer k.Save()
	if target != nil {
		if err := k.Check(target, verify.Code); err != nil {
			return nil, &DamagedError{Err: err}
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
	ck := fork.Checkpoint{Offset: turn.Offset, Agent: agent, Leaf: turn.ParentID}
	c := change{
		backup: SaveOptions{Description: fmt.Sprintf("before back %d", o.N), TranscriptPath: path, Agent: agent},
		entry:  HistoryEntry{Kind: KindBack, Context: how},
		tree:   target,
		conversation: func(e *HistoryEntry) error {
			return s.cutTranscript(ctx, path, agent, ck, nil, how, res, e)
		},
	}
	if target != nil {
		c.entry.Checkpoint, c.entry.Code = target.ID, true
		if how == ContextFork {
			c.rewound = &layout.RewoundSession{Kind: string(KindBack), N: o.N, Agent: agent, Transcript: path, SessionID: s.sessionOf(path)}
		}
	}
	return applied(res, &res.TreeChange, s.apply(ctx, k, c, &res.TreeChange, &res.Warnings))
}

// backSession is a transcript back may go back in, and its agent ("" to
// detect).
type backSession struct{ path, agent string }

// backSessions are the transcripts back looks in, the first to look in
// first: the one o names (alone, unless it is the agent's own, InAgent);
// else session.json's, the session the hooks saw last; then every other
// one the project's checkpoints recorded, the newest first (the newest
// checkpoint's first of all: without hooks, it is the session a save
// recorded last). A transcript read from a checkpoint is checked as any
// path the store recorded (checkpointTranscript); one that fails the check
// is left out. Without Text only the first is wanted.
func (s *Store) backSessions(o BackOptions) ([]backSession, error) {
	var out []backSession
	seen := map[string]bool{}
	add := func(path, agent string) {
		if r := realPath(path); path != "" && !seen[r] {
			seen[r] = true
			out = append(out, backSession{r, agent})
		}
	}
	if o.TranscriptPath != "" {
		add(o.TranscriptPath, o.Agent)
		if !o.InAgent {
			return out, nil
		}
	} else {
		sess, err := s.LastSession()
		if err != nil {
			return nil, err
		}
		add(sess.TranscriptPath, cmp.Or(o.Agent, sess.Agent))
	}
	if len(out) > 0 && o.Text == "" {
		return out, nil
	}
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		c, err := s.Load(ids[i])
		if err != nil || c.Transcript == nil || c.Transcript.OriginalPath == "" {
			continue
		}
		path, err := checkpointTranscript(c)
		if err != nil {
			continue
		}
		agent := c.Transcript.Agent
		if len(out) == 0 && o.Agent != "" {
			agent = o.Agent // (--agent names the default transcript's)
		}
		add(path, agent)
		if o.Text == "" {
			break
		}
	}
	return out, nil
}

// backIn opens the transcript back goes back in: the first of sessions,
// or, with o.Text, the first whose prompts contain it (with o.N set to how
// far back that prompt is). It returns it with its path and agent, and o
// as it holds for it: InAgent only in the agent's own session, the first.
// When no session holds the text, the error counts the prompts of them all.
func (s *Store) backIn(ctx context.Context, sessions []backSession, o BackOptions) (*jsonl.Transcript, string, string, BackOptions, error) {
	var first error
	miss := &NoPromptError{Text: o.Text}
	for i, ses := range sessions {
		oi := o
		oi.InAgent = o.InAgent && i == 0
		t, agent, err := openBack(ses)
		if err == nil && o.Text != "" {
			oi.N, err = s.backCount(ctx, t, ses.path, oi)
		}
		if err == nil {
			return t, ses.path, agent, oi, nil
		}
		if t != nil {
			t.Close()
		}
		var np *NoPromptError
		switch {
		case errors.As(err, &np):
			miss.Searched += np.Searched
			miss.Compacted = miss.Compacted || np.Compacted
			miss.Sessions++
		case first == nil:
			first = err
		}
		if o.Text == "" {
			break
		}
	}
	if miss.Sessions > 0 {
		return nil, "", "", o, miss
	}
	return nil, "", "", o, first
}

// openBack opens the transcript of ses, which must exist, and says its
// agent: ses's, else the one its lines tell.
func openBack(ses backSession) (*jsonl.Transcript, string, error) {
	var d *jsonl.Dialect
	if ses.agent != "" {
		d, _ = jsonl.LookupDialect(ses.agent)
	}
	t, err := jsonl.Open(ses.path, d)
	if err != nil {
		return nil, "", err
	}
	if !t.Exists() {
		t.Close()
		return nil, "", &MissingTranscriptError{Path: ses.path, Err: syscall.ENOENT}
	}
	agent := ses.agent
	if t.Dialect != nil {
		agent = t.Dialect.Name
	}
	return t, agent, nil
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
// session.json's when it names that session, else the newest checkpoint's of that session
// (checked as any path a checkpoint recorded: checkpointTranscript).
func (s *Store) SessionTranscript(id string) (path, agent string, ok bool) {
	if sess, err := s.LastSession(); err == nil && sess.SessionID == id && sess.TranscriptPath != "" {
		return sess.TranscriptPath, sess.Agent, true
	}
	ids, err := s.IDs()
	if err != nil {
		return "", "", false
	}
	for i, n := len(ids)-1, 0; i >= 0 && n < 256; i, n = i-1, n+1 {
		c, err := s.Load(ids[i])
		if err != nil || c.Transcript == nil || c.Transcript.SessionID != id {
			continue
		}
		if p, err := checkpointTranscript(c); err == nil && p != "" { // (a recorded path, checked as any)
			return p, c.Transcript.Agent, true
		}
	}
	return "", "", false
}

// fewerPrompts explains why back cannot go that far: the conversation is
// short, or compaction hid the older prompts. Prompts before a compaction
// are counted where the file still holds them (agents that compact in place
// keep every line): it hid some only when the file holds no prompt before it.
func fewerPrompts(ctx context.Context, t *jsonl.Transcript, n int) error {
	turns, _ := t.Turns(ctx, 0)
	at, compacted, _ := t.FirstCompaction(ctx)
	hid := compacted && (len(turns) == 0 || turns[len(turns)-1].PromptOffset > at)
	return &FewerPromptsError{Have: len(turns), Want: n, Compacted: hid}
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
