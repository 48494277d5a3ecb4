//go:build unix

package store

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"rewind.dev/internal/layout"
)

// privateTree is a tree whose files and folders only their owner, or
// their group, may read, beside ones all may: path → mode (folders end in
// "/").
var privateTree = map[string]fs.FileMode{
	"secret.env":  0o600,
	"team.txt":    0o640,
	"open.txt":    0o644,
	"run.sh":      0o755,
	"private/":    0o700,
	"private/key": 0o600,
	"group/":      0o750,
	"group/notes": 0o640,
	"public/":     0o755,
	"public/a":    0o644,
}

// TestNothingWidensWhoCanRead: under umask 022 and 077, in project and
// global mode, over a tree holding files of 0600 and 0640 and a transcript
// of 0600 (or 0644) — save, a second save over changed modes, restore (the
// transcript cut in place), undo-restore, back (a fork), undo-restore (the
// fork moved aside), redo (it comes back), export. Nothing in the store,
// nor the export or its members, is readable or searchable by group or
// others; the restored tree has the modes it was saved with; the fork, and
// the transcript given its bytes back, have the transcript's mode. As root,
// a second user is refused every file and folder of the store and the
// export.
func TestNothingWidensWhoCanRead(t *testing.T) {
	for _, mode := range []layout.Mode{layout.ModeProject, layout.ModeGlobal} {
		for _, mask := range []int{0o022, 0o077} {
			for _, tmode := range []fs.FileMode{0o600, 0o644} {
				t.Run(fmt.Sprintf("%s,umask=%03o,transcript=%03o", mode, mask, tmode), func(t *testing.T) {
					old := syscall.Umask(mask)
					t.Cleanup(func() { syscall.Umask(old) })
					nothingWidens(t, mode, tmode)
				})
			}
		}
	}
}

// nothingWidens is TestNothingWidensWhoCanRead in mode, with a transcript
// of mode tmode.
func nothingWidens(t *testing.T, mode layout.Mode, tmode fs.FileMode) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("REWIND_HOME", filepath.Join(home, ".rewind"))
	dir := t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	writeModes(t, dir, privateTree)
	want := treeModes(t, dir)
	s, _, err := Init(dir, mode)
	if err != nil {
		t.Fatal(err)
	}

	sessions := filepath.Join(t.TempDir(), "projects")
	os.Mkdir(sessions, 0o700)
	tp := filepath.Join(sessions, "1cbbde27-5fcc-4652-9047-4142f5f1912c.jsonl")
	data := fixtureBytes(t)
	ts := turns(t, fixture)
	writeMode(t, tp, data[:ts[2].PromptOffset], tmode)
	cp := save(t, s, SaveOptions{TranscriptPath: tp, Description: "private"})

	writeMode(t, tp, data, tmode)
	os.Chmod(filepath.Join(dir, "secret.env"), 0o644)
	os.Chmod(filepath.Join(dir, "group"), 0o755)
	os.Remove(filepath.Join(dir, "private", "key"))
	writeMode(t, filepath.Join(dir, "team.txt"), []byte("changed"), 0o666)
	save(t, s, SaveOptions{TranscriptPath: tp, Description: "opened"})

	if _, err := s.Restore(ctx, cp, RestoreOptions{Code: true, Context: ContextInPlace}); err != nil {
		t.Fatal(err)
	}
	if got := treeModes(t, dir); !maps.Equal(got, want) {
		t.Errorf("restored tree's modes:\n%v\nwant the saved ones:\n%v", got, want)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if read(t, tp) != string(data) {
		t.Fatal("undo-restore did not give the transcript its bytes back")
	}
	checkMode(t, tp, tmode)
	res, err := s.Back(ctx, BackOptions{N: 1, TranscriptPath: tp})
	if err != nil {
		t.Fatal(err)
	}
	forked := res.Fork.Path
	checkMode(t, forked, tmode)
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if fileExists(forked) {
		t.Fatal("undo-restore left the fork in place")
	}
	privateFiles(t, s) // the fork, moved aside
	if _, err := s.Redo(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	checkMode(t, forked, tmode)

	out := filepath.Join(t.TempDir(), "export.tar")
	if _, err := s.Export(ctx, cp, ExportOptions{Out: out}); err != nil {
		t.Fatal(err)
	}
	checkMode(t, out, layout.FileMode)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Mode&0o077 != 0 {
			t.Errorf("export member %s has mode %o", hdr.Name, hdr.Mode)
		}
	}

	// The store's other files: session.json, hook-state.json, config.json.
	if err := s.SetLastSession(layout.Session{Agent: "claude", TranscriptPath: tp}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetHookState(layout.HookState{LastCheckpoint: cp.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTier("minimal"); err != nil {
		t.Fatal(err)
	}
	private := privateFiles(t, s)
	if len(private) < 20 {
		t.Fatalf("the store holds %d files and folders: %v", len(private), private)
	}
	secondUserRefused(t, append(private, out), filepath.Join(dir, "public", "a"), home, dir, sessions, filepath.Dir(out))
}

// secondUserRefused checks, as root, that user nobody is refused each of
// paths (a file: cat; a folder: ls) while it reads control, a file all may
// read: it is refused for the modes Rewind gave, not for a folder the test
// made, since the test's folders (open, and those above them) are opened
// to all first. Without root there is no second user to be.
func secondUserRefused(t *testing.T, paths []string, control string, open ...string) {
	if os.Geteuid() != 0 {
		t.Log("not root: cannot run as a second user, so only the modes are checked")
		return
	}
	for _, d := range open {
		for p := d; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	as := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(name, args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return c
	}
	if out, err := as("cat", control).CombinedOutput(); err != nil {
		t.Fatalf("nobody cannot read %s, which all may read: %v %s", control, err, out)
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		c := as("cat", p)
		if fi.IsDir() {
			c = as("ls", p)
		}
		out, err := c.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("nobody reads %s (%v): %v %s", p, fi.Mode(), err, out)
		}
	}
}

// writeModes writes tree (path → mode, folders ending in "/") under dir,
// each with exactly its mode whatever the umask.
func writeModes(t *testing.T, dir string, tree map[string]fs.FileMode) {
	t.Helper()
	for name := range tree {
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(filepath.Join(dir, name), 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, m := range tree {
		if !strings.HasSuffix(name, "/") {
			writeMode(t, filepath.Join(dir, name), []byte(name), m)
		}
	}
	for name, m := range tree {
		if strings.HasSuffix(name, "/") {
			os.Chmod(filepath.Join(dir, name), m)
		}
	}
}

// writeMode writes data at p and gives it mode m, whatever the umask.
func writeMode(t *testing.T, p string, data []byte, m fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

// checkMode fails the test unless p has the permission bits m.
func checkMode(t *testing.T, p string, m fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != m {
		t.Errorf("%s has mode %o, want %o", p, fi.Mode().Perm(), m)
	}
}

// treeModes is the mode of every file and folder of the tree at dir
// (folders ending in "/"), without git's and Rewind's own.
func treeModes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	got := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" || rel == ".agent" {
			return filepath.SkipDir
		}
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.IsDir() {
			rel += "/"
		}
		got[filepath.ToSlash(rel)] = fi.Mode().Perm()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// privateFiles checks that no file or folder of s (in global mode, of
// storage/) is readable or searchable by group or others, and returns
// their paths.
func privateFiles(t *testing.T, s *Store) []string {
	t.Helper()
	top := s.Dir
	if s.Mode == layout.ModeGlobal {
		top = filepath.Dir(s.Dir) // storage/
	}
	var private []string
	filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			t.Error(err)
			return nil
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", p, fi.Mode())
		}
		private = append(private, p)
		return nil
	})
	return private
}

// TestOpenClosesAnOlderStore: a store an older Rewind made open to all
// (0755 folders, in global mode storage/ too) is private once opened: its
// folder, and storage/ above it, lose group's and others' bits.
func TestOpenClosesAnOlderStore(t *testing.T) {
	t.Parallel()
	for _, mode := range []layout.Mode{layout.ModeProject, layout.ModeGlobal} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			h := testHomes(t)
			dir := t.TempDir()
			s, _, err := h.Init(dir, mode)
			if err != nil {
				t.Fatal(err)
			}
			opened := []string{s.Dir}
			if mode == layout.ModeGlobal {
				opened = append(opened, filepath.Dir(s.Dir))
			}
			for _, d := range opened {
				os.Chmod(d, 0o755)
			}
			if _, err := h.Open(dir); err != nil {
				t.Fatal(err)
			}
			for _, d := range opened {
				checkMode(t, d, layout.DirMode)
			}
		})
	}
}
