package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The checkpoints outlive what agents and build scripts run in the project. In global mode
// (the default) every one of these leaves the store alone, and 'rewind restore @0' brings the
// tree back from before it; in project mode the store (a nested repository to git) survives
// git clean -fdx and git stash --all, and the README says what it does not survive.
func TestStoreSurvivesWhatRunsInTheProject(t *testing.T) {
	ops := []struct {
		name    string
		run     func(t *testing.T, project string)
		project bool // project mode survives it too
	}{
		{"git clean -fdx", func(t *testing.T, p string) { gitIn(t, p, "clean", "-fdx") }, true},
		{"git clean -ffdx", func(t *testing.T, p string) { gitIn(t, p, "clean", "-ffdx") }, false},
		{"git stash -u", func(t *testing.T, p string) { gitIn(t, p, "stash", "-u") }, true},
		{"git stash --all", func(t *testing.T, p string) { gitIn(t, p, "stash", "--all") }, true},
		{"rm -rf .agent", func(t *testing.T, p string) { os.RemoveAll(filepath.Join(p, ".agent")) }, false},
		{"the project deleted and made again", func(t *testing.T, p string) {
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			os.Mkdir(p, 0o755)
		}, false},
		{"the project deleted and cloned again", func(t *testing.T, p string) {
			origin := filepath.Join(filepath.Dir(p), "origin.git")
			gitIn(t, p, "clone", "-q", "--bare", p, origin)
			os.RemoveAll(p)
			gitIn(t, filepath.Dir(p), "clone", "-q", origin, p)
		}, false},
	}
	for _, mode := range []string{"global", "project"} {
		for _, op := range ops {
			if mode == "project" && !op.project {
				continue
			}
			t.Run(mode+"/"+op.name, func(t *testing.T) {
				ownHome(t)
				p := filepath.Join(t.TempDir(), "proj")
				os.Mkdir(p, 0o755)
				gitIn(t, p, "init", "-q")
				files := map[string]string{"a.txt": "tracked\n", ".gitignore": "build/\n", "notes/u.txt": "untracked work\n"}
				for name, body := range files {
					os.MkdirAll(filepath.Join(p, filepath.Dir(name)), 0o755)
					os.WriteFile(filepath.Join(p, name), []byte(body), 0o644)
				}
				gitIn(t, p, "add", "a.txt", ".gitignore")
				gitIn(t, p, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "start")
				os.MkdirAll(filepath.Join(p, "build"), 0o755)
				os.WriteFile(filepath.Join(p, "build", "out.o"), []byte("ignored\n"), 0o644)
				args := []string{"init"}
				if mode == "project" {
					args = append(args, "--mode", "project")
				}
				mustRun(t, p, "", args...)
				mustRun(t, p, "", "save", "before the agent")

				op.run(t, p)

				out := mustRun(t, p, "", "list")
				if !strings.Contains(out, "before the agent") {
					t.Fatalf("after %s, list shows:\n%s", op.name, out)
				}
				mustRun(t, p, "", "restore", "@0", "--yes")
				for name, body := range files {
					if b, err := os.ReadFile(filepath.Join(p, name)); err != nil || string(b) != body {
						t.Errorf("after %s and a restore, %s holds %q (%v), want %q", op.name, name, b, err, body)
					}
				}
			})
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
}
