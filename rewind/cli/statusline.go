package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"rewind.dev/rewind/store"
)

type statuslineCmd struct{}

func (c *statuslineCmd) RegisterFlags(fs *flag.FlagSet) {}

// Exec prints one line for a status bar and never fails loudly: the status
// bar is not the place for errors.
func (c *statuslineCmd) Exec(ctx context.Context, e *env, args []string) error {
	var in struct {
		SessionID      string `json:"session_id"`
		TranscriptPath string `json:"transcript_path"`
		Cwd            string `json:"cwd"`
		Workspace      struct {
			CurrentDir string `json:"current_dir"`
			ProjectDir string `json:"project_dir"`
		} `json:"workspace"`
	}
	b, _ := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
	json.Unmarshal(b, &in)
	dir := in.Workspace.ProjectDir
	for _, d := range []string{in.Workspace.CurrentDir, in.Cwd, os.Getenv("REWIND_PROJECT_DIR"), "."} {
		if dir == "" {
			dir = d
		}
	}
	project, err := store.FindProject(dir)
	if err != nil {
		return nil
	}
	s, err := store.Open(project)
	if err != nil {
		fmt.Fprintln(e.stdout, "◇ rewind: no store (rewind init)")
		return nil
	}
	count, ids, _ := s.NewestIDs(statuslineLookback) // newest first
	if count == 0 {
		fmt.Fprintln(e.stdout, "◇ 0 checkpoints")
		return nil
	}
	mark := "◆"
	line := fmt.Sprintf("%d checkpoint%s", count, plural(count))
	if t, ok := store.TimeOfID(ids[0]); ok {
		line += " · last " + ago(t)
	}
	if in.SessionID != "" && !sessionCaptured(s, ids, in.SessionID, in.TranscriptPath) {
		mark, line = "◇", line+" · none this session"
	}
	fmt.Fprintln(e.stdout, mark+" "+line)
	return nil
}

// statuslineLookback is how many of the newest checkpoints the status line
// reads looking for the session's own: a session that has any has one among
// the newest unless other sessions of the project took this many since, and
// reading them all would cost the status bar tens of milliseconds.
const statuslineLookback = 32

// sessionCaptured reports whether one of the newest checkpoints (ids,
// newest first) holds the transcript of session id, known by its id (hooks
// record it) or its path (`rewind save --transcript` may not know the id).
func sessionCaptured(s *store.Store, ids []string, id, path string) bool {
	for _, cid := range ids {
		cp, err := s.Load(cid)
		if err != nil || cp.Transcript == nil {
			continue
		}
		if cp.Transcript.SessionID == id || (path != "" && cp.Transcript.OriginalPath == path) {
			return true
		}
	}
	return false
}

func (c *statuslineCmd) doc() doc {
	return doc{
		summary: "one line for an agent's status bar (session JSON on stdin)",
		text: `Prints the checkpoint count and the age of the newest, and says so when
none of the newest holds the session's transcript. It never fails: without a
store it prints a hint and exits 0.`,
		examples: []string{`echo '{"session_id":"5c1e…","cwd":"'"$PWD"'"}' | rewind statusline`},
	}
}
