//go:build unix

package reliability

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestTreeChangingUnderTheSave runs saves while entries keep swapping
// types (a file becomes a folder holding files and back, a folder becomes
// a symlink, a file is deleted and written again): every save takes its
// checkpoint, and every checkpoint validates and restores.
func TestTreeChangingUnderTheSave(t *testing.T) {
	root := workDir(t)
	home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
	env := []string{"HOME=" + home}
	genTree(t, project, 300, 5)
	mustRun(t, proc{name: "rewind", args: []string{"init", "--mode", "project", "-C", project}, env: env})
	var stop atomic.Bool
	var wg sync.WaitGroup
	var swaps atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				p := filepath.Join(project, fmt.Sprintf("swap%d-%d", g, n%6))
				os.RemoveAll(p)
				switch n % 3 {
				case 0:
					os.MkdirAll(filepath.Join(p, "inner/deeper"), 0o755)
					os.WriteFile(filepath.Join(p, "inner/deeper/f"), []byte("in a folder"), 0o644)
				case 1:
					os.WriteFile(p, []byte("a file"), 0o644)
				case 2:
					os.Symlink("d00", p)
				}
				swaps.Add(1)
			}
		}()
	}
	runs, failures := 0, 0
	for i := range changingSaves {
		runs++
		r := run(t, proc{name: "rewind", args: []string{"save", fmt.Sprint("while changing ", i), "-C", project}, env: env})
		if r.code != 0 {
			failures++
			t.Errorf("save %d: exit %d: %s", i, r.code, strings.TrimSpace(r.stderr))
		}
	}
	stop.Store(true)
	wg.Wait()
	if probs, _ := validate(t, project, env); len(probs) > 0 {
		failures++
		t.Errorf("validate: %v", probs)
	}
	for _, id := range checkpoints(t, project, env) {
		dir := filepath.Join(root, "restored")
		os.RemoveAll(dir)
		os.Mkdir(dir, 0o755)
		m := filepath.Join(project, ".agent/rewind/checkpoints", id, "manifest")
		if r := run(t, proc{name: "rewind-snap", args: []string{"restore", "--root", dir, "--manifest", m}, env: env}); r.code != 0 {
			failures++
			t.Errorf("checkpoint %s does not restore: %s", id, strings.TrimSpace(r.stderr))
		}
	}
	figures(t, "tree-changing-under-the-save", runs, int(swaps.Load()), failures)
}

// TestUnreadableFilesCheckpointed: a file and a folder the user may not read
// (owned by someone else) do not stop a save or a hook's checkpoint: the
// checkpoint is taken and records them as unreadable; a restore and an
// undo-restore leave them alone, and restore everything else.
func TestUnreadableFilesCheckpointed(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to give files to another user")
	}
	runs, failures := 0, 0
	for round := range unreadableRounds {
		runs++
		root := workDir(t)
		home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
		env := []string{"HOME=" + home}
		genTree(t, project, 60, uint64(round))
		os.MkdirAll(home, 0o755)
		if out, err := exec.Command("chown", "-R", "-h", "65534:65534", root).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
		// Root's own: the user (nobody) may not read them.
		secret := filepath.Join(project, fmt.Sprintf("d%02d/secret.key", round%40))
		writeFile(t, secret, []byte("root's secret\n"), 0o600)
		writeFile(t, filepath.Join(project, "private/notes.txt"), []byte("root's notes\n"), 0o600)
		os.Chmod(filepath.Join(project, "private"), 0o700)
		as := func(args ...string) result {
			return run(t, proc{name: "rewind", args: append(args, "-C", project), env: env, uid: 65534})
		}
		var errs []string
		fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		if r := as("init", "--mode", "project"); r.code != 0 {
			t.Fatalf("init: %s", r.stderr)
		}
		r := as("save", "with unreadable files")
		if r.code != 0 {
			fail("save: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
		} else if !strings.Contains(r.stdout+r.stderr, "secret.key") || !strings.Contains(r.stdout+r.stderr, "private") {
			fail("save does not name the files it could not read: %q %q", r.stdout, r.stderr)
		}
		req := fmt.Sprintf(`{"version":1,"event":"UserPromptSubmit","agent":"claude","project_dir":%q,"checkpoint":"always"}`, project)
		if r := run(t, proc{name: "rewind", args: []string{"hook"}, env: env, uid: 65534, stdin: []byte(req)}); r.code != 0 || !strings.Contains(r.stdout, `"checkpoint"`) {
			fail("a hook's checkpoint: exit %d: %s %s", r.code, strings.TrimSpace(r.stdout), strings.TrimSpace(r.stderr))
		}
		ids := checkpoints(t, project, env)
		want := treeDigest(t, project)
		// The tree changes, but for what the user may not read.
		os.Rename(secret, filepath.Join(root, "secret.aside"))
		os.Rename(filepath.Join(project, "private"), filepath.Join(root, "private.aside"))
		mutateTree(t, project, uint64(round+50))
		os.MkdirAll(filepath.Dir(secret), 0o755)
		os.Rename(filepath.Join(root, "secret.aside"), secret)
		os.Rename(filepath.Join(root, "private.aside"), filepath.Join(project, "private"))
		giveTo(t, project, 65534, secret, filepath.Join(project, "private")) // what the test changed is the user's
		now := treeDigest(t, project)
		if len(ids) > 0 {
			if r := as("restore", ids[len(ids)-1], "--code-only", "--yes"); r.code != 0 {
				fail("restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
			} else if got := treeDigest(t, project); got.sum() != want.sum() {
				fail("restore did not bring the tree back (the unreadable files left as they are): %s", want.diff(got))
			}
			if r := as("undo-restore"); r.code != 0 {
				fail("undo-restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
			} else if got := treeDigest(t, project); got.sum() != now.sum() {
				fail("undo-restore did not bring the tree back: %s", now.diff(got))
			}
		}
		for p, body := range map[string]string{secret: "root's secret\n", filepath.Join(project, "private/notes.txt"): "root's notes\n"} {
			if b, err := os.ReadFile(p); err != nil || string(b) != body {
				fail("%s is %q (%v): a restore touched a file it could not read", p, b, err)
			}
		}
		if probs, _ := validate(t, project, env); len(probs) > 0 {
			fail("validate: %v", probs)
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", round, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "unreadable-files", runs, 2*runs, failures)
}

// giveTo makes everything under root uid's, but the paths in except (and
// what lies under them).
func giveTo(t testing.TB, root string, uid int, except ...string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		for _, e := range except {
			if p == e {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		os.Lchown(p, uid, uid)
		return nil
	})
}
