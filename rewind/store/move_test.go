package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"rewind.dev/internal/layout"
)

// A store moved to global mode and back keeps every checkpoint, each restoring its tree, and
// leaves nothing behind: where both places share a file system (a rename), and across file
// systems (a copy, as root with a tmpfs for Rewind's home).
func TestMoveBetweenModes(t *testing.T) {
	t.Parallel()
	for _, across := range []bool{false, true} {
		name := "one file system"
		if across {
			name = "across file systems"
		}
		t.Run(name, func(t *testing.T) {
			s := project(t)
			if across {
				if runtime.GOOS != "linux" || os.Geteuid() != 0 {
					t.Skip("a tmpfs for Rewind's home needs root on Linux")
				}
				home := t.TempDir()
				if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", home).CombinedOutput(); err != nil {
					t.Skipf("mount tmpfs: %v %s", err, out)
				}
				t.Cleanup(func() { exec.Command("umount", "-l", home).Run() })
				// The project's store stays the user's: its registry moves with the home.
				reg, _ := os.ReadDir(layout.Registry(s.Homes.Rewind))
				os.MkdirAll(layout.Registry(home), 0o700)
				for _, e := range reg {
					b, _ := os.ReadFile(filepath.Join(layout.Registry(s.Homes.Rewind), e.Name()))
					os.WriteFile(filepath.Join(layout.Registry(home), e.Name()), b, 0o600)
				}
				s.Homes.Rewind = home
			}
			write(t, s.Project, "a.txt", "one\n")
			a := save(t, s, SaveOptions{Description: "one"})
			write(t, s.Project, "a.txt", "two\n")
			b := save(t, s, SaveOptions{Description: "two"})

			g, res, err := s.Move(ctx, layout.ModeGlobal)
			if err != nil {
				t.Fatalf("move to global: %v", err)
			}
			if res.Copied != across || g.Mode != layout.ModeGlobal {
				t.Errorf("move: %+v", res)
			}
			if _, err := os.Lstat(filepath.Join(s.Project, ".agent")); err == nil {
				t.Error(".agent is still in the project")
			}
			checkMoved(t, s.Homes, s.Project, layout.ModeGlobal, a.ID, b.ID)

			p, res, err := g.Move(ctx, layout.ModeProject)
			if err != nil {
				t.Fatalf("move to project: %v", err)
			}
			if p.Dir != filepath.Join(s.Project, layout.ProjectStore) || res.Copied != across {
				t.Errorf("move back: %+v", res)
			}
			if _, err := os.Lstat(g.Dir); err == nil {
				t.Errorf("the global store %s is still there", g.Dir)
			}
			checkMoved(t, s.Homes, s.Project, layout.ModeProject, a.ID, b.ID)
		})
	}
}

// checkMoved opens the store of project in the homes h: in mode, with the checkpoints ids,
// each restoring.
func checkMoved(t *testing.T, h Homes, project string, mode layout.Mode, ids ...string) {
	t.Helper()
	s, err := h.Open(project)
	if err != nil {
		t.Fatalf("open after the move: %v", err)
	}
	if s.Mode != mode {
		t.Fatalf("the store is in %s mode, want %s", s.Mode, mode)
	}
	for i, id := range ids {
		cp, err := s.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Restore(ctx, cp, RestoreOptions{Code: true}); err != nil {
			t.Fatalf("restore %s: %v", id, err)
		}
		want := []string{"one\n", "two\n"}[i]
		if b, _ := os.ReadFile(filepath.Join(project, "a.txt")); string(b) != want {
			t.Errorf("%s restores a.txt as %q, want %q", id, b, want)
		}
	}
	for _, left := range []string{s.Dir + ".partial", s.Dir + ".moved"} {
		if _, err := os.Lstat(left); err == nil {
			t.Errorf("%s was left behind", left)
		}
	}
}
