package store

import (
	"os"
	"path/filepath"
	"testing"
)

// geminiProject finds a project's slug as Gemini CLI does, and claims one as it does.
func TestGeminiProject(t *testing.T) {
	home := t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(rel string) string {
		b, _ := os.ReadFile(filepath.Join(home, rel))
		return string(b)
	}
	// Registered, its folders owned by it.
	write("projects.json", `{"projects":{"/w/app":"app","/x/my App!":"taken"}}`)
	write("tmp/app/.project_root", "/w/app")
	if got, err := geminiProject(home, "/w/app"); err != nil || got != "app" {
		t.Errorf("registered: %q, %v", got, err)
	}
	// Not registered, but a folder's marker names it.
	write("history/old-slug/.project_root", "/w/old")
	if got, err := geminiProject(home, "/w/old"); err != nil || got != "old-slug" || read("tmp/old-slug/.project_root") != "/w/old" {
		t.Errorf("adopted: %q, %v", got, err)
	}
	// New: the base name's slug, past one the registry gives another and one another owns.
	write("tmp/app-1/.project_root", "/z/app")
	if got, err := geminiProject(home, "/y/App"); err != nil || got != "app-2" {
		t.Errorf("claimed: %q, %v", got, err)
	}
	if read("tmp/app-2/.project_root") != "/y/App" || read("history/app-2/.project_root") != "/y/App" {
		t.Error("the claim wrote no .project_root files")
	}
	if got, _ := geminiProject(home, "/y/App"); got != "app-2" {
		t.Errorf("claimed again: %q", got)
	}
	for in, want := range map[string]string{"My App!": "my-app", "--": "project", "a__b": "a-b", "Ünï": "n"} {
		if got := geminiSlug(in); got != want {
			t.Errorf("geminiSlug(%q) = %q, want %q", in, got, want)
		}
	}
}
