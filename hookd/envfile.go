package hookd

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// EnvExports is what SessionStart appends to the agent's env file, which the
// agent sources before each shell command it runs: the session's identity,
// so `rewind back 1` run by the agent itself finds its own transcript, and a
// PATH that starts with binDir (~/.local/bin unless installed elsewhere),
// because agents run commands with the user's PATH, which may lack it.
func EnvExports(req Request, binDir string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "export REWIND_AGENT=%s REWIND_SESSION_ID=%s REWIND_TRANSCRIPT_PATH=%s REWIND_PROJECT_DIR=%s\n",
		singleQuote(req.Agent), singleQuote(req.SessionID), singleQuote(req.TranscriptPath), singleQuote(req.ProjectDir))
	fmt.Fprintf(&b, "export PATH=%s\"${PATH:+:$PATH}\"\n", singleQuote(binDir))
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
