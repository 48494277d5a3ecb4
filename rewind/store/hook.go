package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"rewind.dev/hookd"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// retentionEvery is how many new checkpoints pass between automatic
// retention runs.
const retentionEvery = 50

// Hook applies what rewind-hook decided for one agent event: it keeps
// session.json current and takes a checkpoint when the request calls for
// one, all under the store lock.
func (s *Store) Hook(ctx context.Context, req hookd.Request) (hookd.Response, error) {
	started := time.Now() // retention's budget is the hook's
	resp := hookd.Response{Type: "hook", Action: hookd.ActionSkip}
	if req.DeadlineUnixMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.UnixMilli(req.DeadlineUnixMS))
		defer cancel()
	}
	l, err := s.Lock(ctx)
	if err != nil {
		return resp, err
	}
	defer l.Unlock()
	if req.Agent != "" {
		if _, err := jsonl.LookupDialect(req.Agent); err != nil {
			return resp, err
		}
	}
	if req.SessionID != "" && !layout.ValidSessionID(req.SessionID) {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("session id %q is not an agent's: not recorded", req.SessionID))
		req.SessionID = ""
	}
	refused := ""
	if req.TranscriptPath != "" {
		// The payload's word only: a path outside the agent's sessions is never read.
		if err := jsonl.CheckTranscriptPath(req.Agent, req.TranscriptPath); err != nil {
			resp.Warnings = append(resp.Warnings, err.Error())
			req.TranscriptPath, refused = "", err.Error()
		}
	}
	if req.TranscriptPath != "" || req.SessionID != "" || req.EnvFile != "" {
		sess, _ := s.LastSession()
		before := sess
		if req.Agent != "" {
			sess.Agent = req.Agent
		}
		if req.TranscriptPath != "" {
			sess.TranscriptPath = req.TranscriptPath
		}
		if req.SessionID != "" {
			if req.SessionID != sess.SessionID && req.EnvFile == "" {
				sess.EnvFile = "" // a new session: the old env file is not its own
			}
			sess.SessionID = req.SessionID
		}
		if req.EnvFile != "" {
			sess.EnvFile = req.EnvFile
		}
		// Rewritten when something changed, or to refresh updated_at once a
		// minute: an unchanged session costs no write (and no fsync) on the
		// hook's hot path. hookd.Skip mirrors these rules.
		if sess != before || time.Since(sess.UpdatedAt) > layout.SessionRefresh {
			if err := s.SetLastSession(sess); err != nil {
				return resp, err
			}
		}
	}
	hs := s.HookState()
	if err := s.tellRewound(req, &hs, &resp); err != nil {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("tell the session its code was rewound: %v", err))
	}
	switch req.Checkpoint {
	case hookd.CheckpointAlways, hookd.CheckpointThrottled:
	default:
		resp.Reason = hookd.SkipNone
		return s.retentionIfDue(ctx, req, hs, resp, started)
	}
	if req.Checkpoint == hookd.CheckpointThrottled && req.MinIntervalMS > 0 && !hs.LastCheckpointAt.IsZero() &&
		time.Since(hs.LastCheckpointAt) < time.Duration(req.MinIntervalMS)*time.Millisecond {
		resp.Reason = hookd.SkipInterval
		return resp, nil
	}
	prompt := req.Prompt
	if len(prompt) > 200 {
		prompt = prompt[:200]
	}
	c, err := s.SaveLocked(ctx, SaveOptions{
		Trigger:        Trigger{Kind: TriggerHook, Event: req.Event, Tool: req.Tool, File: req.File, Agent: req.Agent, Prompt: prompt},
		TranscriptPath: req.TranscriptPath, Agent: req.Agent, SessionID: req.SessionID, UseSession: true, TranscriptBestEffort: true, TranscriptRefused: refused,
		SkipUnchanged: req.Checkpoint == hookd.CheckpointThrottled && req.MinChangedFiles > 0,
	})
	if errors.Is(err, ErrUnchanged) {
		resp.Reason = hookd.SkipUnchanged
		return resp, nil
	}
	if err != nil {
		return resp, err
	}
	resp.Action, resp.Checkpoint = hookd.ActionCheckpoint, c.ID
	hs.LastCheckpoint, hs.LastCheckpointAt = c.ID, time.Now().UTC()
	hs.SinceRetention++
	if err := s.SetHookState(hs); err != nil {
		return resp, err
	}
	return s.retentionIfDue(ctx, req, hs, resp, started)
}

func (s *Store) retentionIfDue(ctx context.Context, req hookd.Request, hs layout.HookState, resp hookd.Response, started time.Time) (hookd.Response, error) {
	if !req.Retention && hs.SinceRetention < retentionEvery {
		return resp, nil
	}
	budget := time.Duration(req.RetentionBudgetMS) * time.Millisecond
	if budget <= 0 {
		budget = 2 * time.Second
	}
	res, err := s.ApplyRetention(ctx, budget, started)
	if res != nil {
		resp.Removed = len(res.Removed)
		for _, u := range res.Unremovable {
			resp.Warnings = append(resp.Warnings, "retention: "+u.Message()+"; "+u.Fix+" lets it go")
		}
	}
	return resp, err
}
