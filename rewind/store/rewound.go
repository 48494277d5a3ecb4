package store

import (
	"fmt"

	"rewind.dev/hookd"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// A restore that rewinds the code for a fork (back --both, or restore of code and
// conversation) leaves the session it forked from going on: a person still typing there works
// on code its conversation never saw. The restore names that session in hook-state.json (a
// file the hook reads anyway, so no event pays for it), and the session's next hook that can
// show a message tells the person, once.

// noteRewound keeps hook-state.json's rewound session in step with a change that touched the
// tree: c.rewound (filled in from e) when e forked the conversation and rewound the code; any
// other change of the code makes an older notice moot (its "undo-restore brings the code back"
// would now undo this change), so it goes.
func (s *Store) noteRewound(c change, e HistoryEntry) error {
	if c.tree == nil && c.treeFrom == nil {
		return nil
	}
	var n *layout.RewoundSession
	if c.rewound != nil && e.Done && e.Code && e.Fork != nil && e.Fork.Removed == "" {
		v := *c.rewound
		v.Restore, v.At, v.Checkpoint, v.Fork = e.ID, e.At, e.Checkpoint, e.Fork.SessionID
		n = &v
	}
	hs := s.HookState()
	if hs.Rewound == nil && n == nil {
		return nil
	}
	hs.Rewound = n
	return s.SetHookState(hs)
}

// sessionOf is the id of the session whose transcript is path (a real path), as the hooks
// or a checkpoint recorded it: session.json's when it names path, else that of the newest
// checkpoint of path among the newest 256; "" when none did.
func (s *Store) sessionOf(path string) string {
	if sess, err := s.LastSession(); err == nil && sess.SessionID != "" && sess.TranscriptPath != "" && realPath(sess.TranscriptPath) == path {
		return sess.SessionID
	}
	ids, err := s.IDs()
	if err != nil {
		return ""
	}
	for i, n := len(ids)-1, 0; i >= 0 && n < 256; i, n = i-1, n+1 {
		c, err := s.Load(ids[i])
		if err == nil && c.Transcript != nil && c.Transcript.OriginalPath == path && c.Transcript.SessionID != "" {
			return c.Transcript.SessionID
		}
	}
	return ""
}

// tellRewound answers, in resp.Notice, a hook of the session a restore left rewound (hs's),
// where the agent shows it, and forgets it: the person is told once. hs is written back.
func (s *Store) tellRewound(req hookd.Request, hs *layout.HookState, resp *hookd.Response) error {
	n := hs.Rewound
	if n == nil || !rewoundIs(n, req) {
		return nil
	}
	if a, err := hookd.LookupAgent(req.Agent); err != nil || !a.Shows(req.Event) {
		return nil // kept for an event, or an agent, that shows it
	}
	hs.Rewound = nil
	if err := s.SetHookState(*hs); err != nil {
		return err // not told, rather than told again and again
	}
	resp.Notice = rewoundNotice(n)
	return nil
}

// rewoundIs reports whether req comes from the session n names, by its id or its transcript.
func rewoundIs(n *layout.RewoundSession, req hookd.Request) bool {
	if n.SessionID != "" && req.SessionID == n.SessionID {
		return true
	}
	return n.Transcript != "" && req.TranscriptPath != "" && (req.TranscriptPath == n.Transcript || realPath(req.TranscriptPath) == n.Transcript)
}

// rewoundNotice is what the person at the rewound session is told: what happened, and the
// two ways on. "" when n does not hold what it must (hook-state.json is data: a checkpoint id
// and a session id of their grammar only).
func rewoundNotice(n *layout.RewoundSession) string {
	if !isID(n.Checkpoint) || !layout.ValidSessionID(n.Fork) {
		return ""
	}
	what := "rewind restore " + n.Checkpoint
	if n.Kind == string(KindBack) {
		what = fmt.Sprintf("rewind back %d --both", n.N)
	}
	msg := fmt.Sprintf("Rewind: the code of this project was rewound to checkpoint %s for the fork %s (%s, %s); "+
		"this session's conversation was not, so it no longer matches the files. "+
		"'rewind undo-restore' brings the code back",
		n.Checkpoint, n.Fork, what, n.At.Local().Format("Jan 2 15:04"))
	if _, err := jsonl.LookupDialect(n.Agent); err == nil {
		msg += fmt.Sprintf("; '%s' opens the fork", ResumeHint(n.Agent, n.Fork))
	}
	return msg + "."
}
