package hookd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvExports is what SessionStart appends to the agent's env file, which the
// agent applies before each shell command it runs: the session's identity,
// so `rewind back 1` run by the agent itself finds its own transcript, and a
// PATH that starts with binDir (~/.local/bin unless installed elsewhere),
// because agents run commands with the user's PATH, which may lack it.
//
// One plain `export NAME='value'` per line, with PATH spelled out from the
// hook's own PATH (the agent's): Droid 0.225.2 does not run the file as
// shell but reads NAME=value lines, taking the rest of the line as the
// value and expanding nothing — "$PATH" there became a literal and broke
// every later hook and command.
func EnvExports(req Request, binDir, path string) []byte {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"REWIND_AGENT", req.Agent},
		{"REWIND_SESSION_ID", req.SessionID},
		{"REWIND_TRANSCRIPT_PATH", req.TranscriptPath},
		{"REWIND_PROJECT_DIR", req.ProjectDir},
	} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], singleQuote(kv[1]))
	}
	newPath := binDir
	for _, d := range filepath.SplitList(path) {
		if d != binDir && d != "" {
			newPath += string(filepath.ListSeparator) + d
		}
	}
	fmt.Fprintf(&b, "export PATH=%s\n", singleQuote(newPath))
	return []byte(b.String())
}

// AppendEnvFile appends exports to the env file at path, unless the file
// already ends with exactly them (a SessionStart hook that fired twice). The
// agent creates the file's folder; a missing folder is an error.
func AppendEnvFile(path string, exports []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.HasSuffix(old, exports) {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("env file: %w", err)
	}
	// One write: O_APPEND keeps it whole even if another hook appends too.
	_, err = f.Write(exports)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("env file %s: %w", path, err)
	}
	return nil
}

func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
