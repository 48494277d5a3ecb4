package store

import (
	"context"
	"slices"
	"time"

	"rewind.dev/jsonl"
)

// Session is one conversation the store knows: the checkpoints taken of its
// transcript, and where it came from when it is a fork — one Rewind wrote
// (the restore history's record) or one the agent made itself (pi's /fork,
// Codex's fork: their first line names the parent).
type Session struct {
	// Path is the transcript; "" gathers the checkpoints taken without one.
	Path      string `json:"path"`
	SessionID string `json:"session_id,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Title     string `json:"title,omitempty"` // the title Rewind gave a fork it wrote
	// Parent says where the session branched off, nil for a session that is
	// no fork the store knows of.
	Parent *Branch `json:"parent,omitempty"`
	// Checkpoints are the session's, newest first (restore backups included:
	// the caller decides whether to show them).
	Checkpoints []*Checkpoint `json:"-"`
	// Start is when the session began as far as the store knows: the fork's
	// time, else its oldest checkpoint's.
	Start time.Time `json:"start"`
}

// BranchBy says who made a fork.
type BranchBy string

const (
	BranchRewind BranchBy = "rewind" // rewind back or restore wrote it
	BranchAgent  BranchBy = "agent"  // the agent's own fork (pi, Codex)
)

// Branch is where a fork left its parent session.
type Branch struct {
	Path      string    `json:"path"` // the parent's transcript
	SessionID string    `json:"session_id,omitempty"`
	By        BranchBy  `json:"by"`
	At        time.Time `json:"at,omitzero"`
	// Offset is where the fork's copy of the parent's bytes ends (Rewind's forks).
	Offset int64 `json:"offset,omitempty"`
	// Prompt is the parent's prompt the fork was cut before, when the parent's
	// transcript still shows it.
	Prompt string `json:"prompt,omitempty"`
	// After is the parent's newest checkpoint taken before that prompt: the
	// fork branches after it. "" when the parent has none that old.
	After string `json:"after,omitempty"`
	// Restore is the restore-history entry that wrote the fork, and What says
	// in a few words what it was ("back", "restore to …").
	Restore string `json:"restore,omitempty"`
	What    string `json:"what,omitempty"`
}

// Sessions gathers the store's checkpoints by transcript, with the forks the
// restore history records and those the agents made, parents before their
// forks, then oldest first.
func (s *Store) Sessions(ctx context.Context) ([]*Session, error) {
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	h, err := s.History()
	if err != nil {
		return nil, err
	}
	g := &sessionGraph{byPath: map[string]*Session{}}
	g.addCheckpoints(cps)
	g.addForks(&h)
	if err := g.linkAgentForks(ctx); err != nil {
		return nil, err
	}
	if err := g.placeBranches(ctx); err != nil {
		return nil, err
	}
	// Parents first, then oldest first: a stable order for tools, and the
	// order a tree is read in.
	depth := func(se *Session) int {
		n := 0
		for p := se.Parent; p != nil && n < len(g.order); p = g.byPath[p.Path].Parent {
			n++
		}
		return n
	}
	slices.SortStableFunc(g.order, func(a, b *Session) int {
		if da, db := depth(a), depth(b); da != db {
			return da - db
		}
		return a.Start.Compare(b.Start)
	})
	return g.order, nil
}

// sessionGraph is the sessions of a store as they are found, by transcript path.
type sessionGraph struct {
	byPath map[string]*Session
	order  []*Session // in the order found
}

// session is the session of the transcript at path, made when first asked for.
func (g *sessionGraph) session(path string) *Session {
	if se := g.byPath[path]; se != nil {
		return se
	}
	se := &Session{Path: path}
	g.byPath[path] = se
	g.order = append(g.order, se)
	return se
}

// addCheckpoints files cps (newest first) under their transcripts' sessions.
func (g *sessionGraph) addCheckpoints(cps []*Checkpoint) {
	for _, c := range cps {
		path := ""
		if c.Transcript != nil {
			path = c.Transcript.OriginalPath
		}
		se := g.session(path)
		se.Checkpoints = append(se.Checkpoints, c)
		if c.Transcript != nil {
			if se.SessionID == "" {
				se.SessionID = c.Transcript.SessionID
			}
			if se.Agent == "" {
				se.Agent = c.Transcript.Agent
			}
		}
		if se.Agent == "" {
			se.Agent = c.Trigger.Agent
		}
		se.Start = c.CreatedAt
	}
}

// addForks adds Rewind's forks from the history, each a branch of the session it was cut
// from; oldest record first, so that a fork's newest record wins.
func (g *sessionGraph) addForks(h *History) {
	for i := range h.Entries {
		e := &h.Entries[i]
		f := e.Fork
		if f == nil || e.Kind == KindUndoRestore || e.Kind == KindRedo {
			continue
		}
		se := g.session(f.Path)
		se.SessionID, se.Title = f.SessionID, f.Title
		if se.Agent == "" {
			se.Agent = f.Agent
		}
		se.Parent = &Branch{Path: f.ParentTranscript, By: BranchRewind, At: e.At, Offset: f.Offset, Restore: e.ID, What: e.What(h)}
		se.Start = e.At
		g.session(f.ParentTranscript)
	}
}

// linkAgentForks links the agents' own forks to their parents, among the sessions known.
func (g *sessionGraph) linkAgentForks(ctx context.Context) error {
	byID := map[string]*Session{}
	for _, se := range g.order {
		if se.SessionID != "" {
			byID[se.SessionID] = se
		}
	}
	for _, se := range g.order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if se.Parent != nil || se.Path == "" {
			continue
		}
		if p := agentParent(se, byID); p != "" {
			se.Parent = &Branch{Path: p, By: BranchAgent}
			g.session(p)
		}
	}
	return nil
}

// placeBranches says where each branch left its parent (the prompt and the checkpoint after
// which it branched) and dates each session from its oldest checkpoint.
func (g *sessionGraph) placeBranches(ctx context.Context) error {
	turns := map[string]map[int64]jsonl.Turn{} // each parent's prompts by cut offset, read once
	for _, se := range g.order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if b := se.Parent; b != nil {
			parent := g.byPath[b.Path]
			b.SessionID = parent.SessionID
			if _, ok := turns[b.Path]; !ok && b.By == BranchRewind {
				turns[b.Path] = promptsByOffset(ctx, parent)
			}
			b.Prompt, b.After = branchPoint(parent, b, se, turns[b.Path])
		}
		for _, c := range se.Checkpoints {
			if se.Start.IsZero() || c.CreatedAt.Before(se.Start) {
				se.Start = c.CreatedAt
			}
		}
	}
	return nil
}

// agentParent is the transcript the agent forked se from, when its first
// line names one the store knows ("" otherwise).
func agentParent(se *Session, byID map[string]*Session) string {
	var d *jsonl.Dialect
	if se.Agent != "" {
		d, _ = jsonl.LookupDialect(se.Agent)
	}
	t, err := jsonl.Open(se.Path, d)
	if err != nil {
		return ""
	}
	defer t.Close()
	if p, err := t.ParentSession(); err == nil && p != "" && p != se.Path {
		return realPath(p)
	}
	if id, err := t.ForkedFromID(); err == nil && id != "" {
		if p := byID[id]; p != nil && p != se {
			return p.Path
		}
	}
	return ""
}

// promptsByOffset is the prompts of se's transcript by the offset a cut before
// each goes to; empty when the transcript cannot be read.
func promptsByOffset(ctx context.Context, se *Session) map[int64]jsonl.Turn {
	out := map[int64]jsonl.Turn{}
	var d *jsonl.Dialect
	if se.Agent != "" {
		d, _ = jsonl.LookupDialect(se.Agent)
	}
	t, err := jsonl.Open(se.Path, d)
	if err != nil {
		return out
	}
	defer t.Close()
	_ = t.ScanTurns(ctx, func(tu jsonl.Turn) bool {
		out[tu.Offset] = tu
		return true
	})
	return out
}

// branchPoint is the prompt of parent a Rewind fork was cut before (when the
// parent's transcript still shows it) and the parent's newest checkpoint
// before it: the one whose cursor lies at or before the prompt's line. For an
// agent's fork, the newest parent checkpoint older than the fork's first.
func branchPoint(parent *Session, b *Branch, fork *Session, prompts map[int64]jsonl.Turn) (prompt, after string) {
	limit := int64(-1)
	if b.By == BranchRewind {
		limit = b.Offset
		if tu, ok := prompts[b.Offset]; ok {
			prompt, limit = tu.Text, tu.PromptOffset
		}
	}
	for _, c := range parent.Checkpoints { // newest first
		if c.Backup() {
			continue
		}
		if limit >= 0 {
			if c.Transcript != nil && c.Transcript.Cursor.ByteOffsetEnd <= limit {
				return prompt, c.ID
			}
			continue
		}
		if len(fork.Checkpoints) == 0 || c.CreatedAt.Before(fork.Checkpoints[len(fork.Checkpoints)-1].CreatedAt) {
			return prompt, c.ID
		}
	}
	return prompt, ""
}
