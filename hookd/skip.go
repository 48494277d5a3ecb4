package hookd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/layout"
)

// Skip tells whether rewind, given req, would write nothing and only answer
// "skip" with the reason returned ("" when rewind must run): a throttled
// checkpoint inside the interval that the store's hook-state.json shows
// ("interval"), or an event that takes no checkpoint ("none"), when the
// store's session.json already says all that req would record and is
// fresh. Then rewind-hook need not start rewind: most tool events of a busy
// session end here (in Copilot CLI, whose hooks take no tool matcher, every
// tool call). It only reads, without the store lock, and any doubt (a file
// missing or unreadable) answers "", leaving the decision to rewind. A test
// in rewind/store keeps the two decisions in step. A session's start and a prompt always go
// to rewind, whatever their checkpoint policy: rewind may have something to tell the person
// then (Response.Notice), which it keeps in hook-state.json, a file it reads anyway.
func Skip(storeDir string, req Request, now time.Time) SkipReason {
	if req.Retention || storeDir == "" || req.Event == EventSessionStart || req.Event == EventPrompt {
		return ""
	}
	var reason SkipReason
	switch req.Checkpoint {
	case CheckpointNone:
		reason = SkipNone
	case CheckpointThrottled:
		var hs layout.HookState
		if req.MinIntervalMS <= 0 || !readJSONFile(filepath.Join(storeDir, layout.HookStateFile), &hs) || hs.LastCheckpointAt.IsZero() ||
			now.Sub(hs.LastCheckpointAt) >= time.Duration(req.MinIntervalMS)*time.Millisecond {
			return ""
		}
		reason = SkipInterval
	default:
		return ""
	}
	var sess layout.Session
	if !readJSONFile(filepath.Join(storeDir, layout.SessionFile), &sess) {
		return ""
	}
	if req.TranscriptPath == "" && req.SessionID == "" && req.EnvFile == "" {
		return reason // rewind would not touch session.json
	}
	same := func(want, have string) bool { return want == "" || want == have }
	if same(req.Agent, sess.Agent) && same(req.TranscriptPath, sess.TranscriptPath) &&
		same(req.SessionID, sess.SessionID) && same(req.EnvFile, sess.EnvFile) &&
		now.Sub(sess.UpdatedAt) <= layout.SessionRefresh {
		return reason
	}
	return ""
}

func readJSONFile(name string, v any) bool {
	b, err := os.ReadFile(name)
	return err == nil && json.Unmarshal(b, v) == nil
}
