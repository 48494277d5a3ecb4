package hookd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// SessionRefresh is how old session.json may get before rewind rewrites it
// on a hook event that changes nothing in it (rewind/store.Store.Hook).
const SessionRefresh = time.Minute

// SkippedByInterval reports whether rewind, given req, would only answer
// "skip, interval" and write nothing: the checkpoint is throttled, the
// store's hook-state.json shows one taken within the interval, and its
// session.json already says all that req would record and is fresh. Then
// rewind-hook need not start rewind: most tool events of a busy session
// end here. It only reads, without the store lock, and any doubt (a file
// missing or unreadable) answers false, leaving the decision to rewind. A
// test in rewind/store keeps the two in step.
func SkippedByInterval(storeDir string, req Request, now time.Time) bool {
	if req.Checkpoint != CheckpointThrottled || req.MinIntervalMS <= 0 || req.Retention {
		return false
	}
	var hs struct {
		LastCheckpointAt time.Time `json:"last_checkpoint_at"`
	}
	if !readJSONFile(filepath.Join(storeDir, "hook-state.json"), &hs) || hs.LastCheckpointAt.IsZero() ||
		now.Sub(hs.LastCheckpointAt) >= time.Duration(req.MinIntervalMS)*time.Millisecond {
		return false
	}
	if req.TranscriptPath == "" && req.SessionID == "" && req.EnvFile == "" {
		return true // rewind would not touch session.json
	}
	var sess struct {
		Agent          string    `json:"agent"`
		TranscriptPath string    `json:"transcript_path"`
		SessionID      string    `json:"session_id"`
		EnvFile        string    `json:"env_file"`
		UpdatedAt      time.Time `json:"updated_at"`
	}
	if !readJSONFile(filepath.Join(storeDir, "session.json"), &sess) {
		return false
	}
	same := func(want, have string) bool { return want == "" || want == have }
	return same(req.Agent, sess.Agent) && same(req.TranscriptPath, sess.TranscriptPath) &&
		same(req.SessionID, sess.SessionID) && same(req.EnvFile, sess.EnvFile) &&
		now.Sub(sess.UpdatedAt) <= SessionRefresh
}

func readJSONFile(name string, v any) bool {
	b, err := os.ReadFile(name)
	return err == nil && json.Unmarshal(b, v) == nil
}
