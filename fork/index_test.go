package fork

import (
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/jsonl"
)

// TestForgetTitles: only the lines whose session id and title are what
// Rewind wrote go; every other line (the agent's own, one it cannot read,
// a last one without its newline) stays byte for byte, and the mode too.
func TestForgetTitles(t *testing.T) {
	d, err := jsonl.LookupDialect("codex")
	if err != nil {
		t.Fatal(err)
	}
	const (
		ours    = `{"id":"a","thread_name":"[Fork] fix it","updated_at":"2026-11-20T09:00:00Z"}` + "\n"
		renamed = `{"id":"a","thread_name":"my name","updated_at":"2026-11-21T09:00:00Z"}` + "\n"
		other   = `{"id":"b","thread_name":"[Fork] fix it","updated_at":"2026-11-20T09:00:00Z"}` + "\n"
		broken  = `{"id":"a", not json` + "\n"
		last    = `{"id":"a","thread_name":"[Fork] fix it"}`
	)
	index := filepath.Join(t.TempDir(), "session_index.jsonl")
	if err := os.WriteFile(index, []byte(ours+renamed+other+broken+ours+last), 0o640); err != nil {
		t.Fatal(err)
	}
	n, err := ForgetTitles(d, index, map[string]string{"a": "[Fork] fix it"})
	if err != nil || n != 3 {
		t.Fatalf("ForgetTitles: %d, %v; want 3", n, err)
	}
	got, _ := os.ReadFile(index)
	if want := renamed + other + broken; string(got) != want {
		t.Errorf("index:\n%s\nwant:\n%s", got, want)
	}
	if fi, _ := os.Stat(index); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if n, err := ForgetTitles(d, filepath.Join(t.TempDir(), "none"), map[string]string{"a": "x"}); n != 0 || err != nil {
		t.Errorf("a missing index: %d, %v", n, err)
	}
	if p, err := IndexPath(d, "/h/.codex/sessions/2026/11/20/rollout-x.jsonl"); p != "/h/.codex/session_index.jsonl" || err != nil {
		t.Errorf("IndexPath = %q, %v", p, err)
	}
}
