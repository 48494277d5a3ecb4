//go:build unix

package reliability

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// oddNames are names a tree may hold that a manifest, a tar header, an
// ignore rule or a restore must not trip on.
var oddNames = []string{
	"plain", "with space", "tab\there", "new\nline", `back\slash`, `"quoted"`, "-dash", "#hash", "!bang",
	"star*", "q?", "[br]", "trailing ", "é-accent", "日本", "bad-\xff-utf8", ".hidden", ".wh.foo", ".wh..wh..opq",
	".rewind-restore-notes", "x.tmp-1", strings.Repeat("L", 200), "-", "~", "a.b.c",
}

// genMixedTree writes a tree mixing every kind of entry: files of many
// sizes and modes (some read-only), empty folders, folders with modes (some
// read-only), symlinks inside, outside, absolute, dangling and looping, a
// path as deep as the limit allows (below depth elements already used), odd
// names.
func genMixedTree(t testing.TB, rng *rand.Rand, dir string, depth int) {
	t.Helper()
	name := func() string { return oddNames[rng.IntN(len(oddNames))] + fmt.Sprint(rng.IntN(3)) }
	dirs := []string{""}
	for range 6 + rng.IntN(8) {
		d := filepath.Join(dirs[rng.IntN(len(dirs))], name())
		if os.MkdirAll(filepath.Join(dir, d), 0o755) == nil {
			dirs = append(dirs, d)
		}
	}
	for range 10 + rng.IntN(30) {
		p := filepath.Join(dir, dirs[rng.IntN(len(dirs))], name())
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		size := rng.IntN(4096)
		switch rng.IntN(10) {
		case 0:
			size = 0
		case 1:
			size = 200<<10 + rng.IntN(200<<10)
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, []fs.FileMode{0o644, 0o755, 0o600, 0o444, 0o700, 0o640}[rng.IntN(6)])
	}
	targets := []string{"plain0", "../plain1", "/etc/passwd", "/no/such/thing", "../../../../../../out", ".", "..",
		"dangling", strings.Repeat("../", 40) + "x", "d/e/f", "with space0"}
	for range 4 + rng.IntN(6) {
		d := filepath.Join(dir, dirs[rng.IntN(len(dirs))])
		switch rng.IntN(4) {
		case 0:
			os.Symlink("loop-b", filepath.Join(d, "loop-a"))
			os.Symlink("loop-a", filepath.Join(d, "loop-b"))
		case 1:
			os.Symlink("self", filepath.Join(d, "self"))
		default:
			os.Symlink(targets[rng.IntN(len(targets))], filepath.Join(d, "l-"+name()))
		}
	}
	if rng.IntN(2) == 0 {
		deep := filepath.Join(dir, strings.Repeat("d/", 127-depth)) // 128 elements with the file
		os.MkdirAll(deep, 0o755)
		os.WriteFile(filepath.Join(deep, "bottom"), []byte("deep"), 0o644)
	}
	for range rng.IntN(3) {
		os.MkdirAll(filepath.Join(dir, dirs[rng.IntN(len(dirs))], "empty-"+name()), 0o755)
	}
	for _, d := range dirs[1:] {
		if rng.IntN(4) == 0 {
			os.Chmod(filepath.Join(dir, d), []fs.FileMode{0o755, 0o700, 0o750, 0o555}[rng.IntN(4)])
		}
	}
}

// mutateMixedTree changes a tree the way an agent might: content, modes,
// deletions, a file for a folder and a folder for a file, a folder for a
// symlink to its sibling, retargeted symlinks, new entries of every kind.
func mutateMixedTree(t testing.TB, rng *rand.Rand, dir string) {
	t.Helper()
	var all []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if d.Name() == ".agent" {
			return filepath.SkipDir
		}
		all = append(all, p)
		if d.IsDir() {
			os.Chmod(p, 0o755) // writable while it changes
		}
		return nil
	})
	for _, p := range all {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch rng.IntN(12) {
		case 0:
			os.RemoveAll(p)
		case 1:
			os.RemoveAll(p)
			os.WriteFile(p, []byte("now a file"), 0o644)
		case 2:
			os.RemoveAll(p)
			os.MkdirAll(filepath.Join(p, "now-a-folder"), 0o755)
		case 3:
			if fi.IsDir() {
				os.Rename(p, p+"-sibling")
				os.Symlink(filepath.Base(p)+"-sibling", p)
			}
		case 4:
			if fi.Mode()&fs.ModeSymlink != 0 {
				os.Remove(p)
				os.Symlink("/somewhere/else", p)
			}
		case 5:
			if fi.Mode().IsRegular() {
				os.Chmod(p, fi.Mode().Perm()^0o111)
			}
		case 6:
			if fi.Mode().IsRegular() {
				os.WriteFile(p, []byte(fmt.Sprint("changed ", rng.Int())), 0)
			}
		}
	}
	genMixedTree(t, rng, filepath.Join(dir, fmt.Sprint("added", rng.IntN(1000))), 1)
}

// exactDigest is a tree's every entry with all its permission bits: path,
// kind, mode, content hash or link target (Rewind's store left out).
func exactDigest(t testing.TB, root string) digest {
	t.Helper()
	d := digest{}
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if rel == ".agent/rewind" || stagingFolder(p) {
			return filepath.SkipDir
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			d[rel] = "link " + target
		case fi.IsDir():
			d[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			d[rel] = fmt.Sprintf("file %o %x", fi.Mode().Perm(), sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("digest %s: %v", root, err)
	}
	return d
}

// TestSaveRestoreSymmetry is the property behind "every tree a save
// accepts, restore brings back exactly": random trees mixing every kind of
// entry go through save → change → save → change → restore → undo-restore
// with the real rewind, and every step is exact (modes included). Half the
// rounds run as an unprivileged user when the suite runs as root, so
// read-only files and folders bind as they would for a user.
func TestSaveRestoreSymmetry(t *testing.T) {
	runs, failures := 0, 0
	for round := range symmetryRounds {
		runs++
		rng := rand.New(rand.NewPCG(uint64(round), 21))
		root := workDir(t)
		home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
		os.MkdirAll(home, 0o755)
		genMixedTree(t, rng, project, 0)
		var uid uint32
		if os.Getuid() == 0 && round%2 == 1 {
			uid = 65534
		}
		own := func() { // the tree is the user's, as the test wrote it
			if uid == 0 {
				return
			}
			if out, err := exec.Command("chown", "-R", "-h", fmt.Sprintf("%d:%d", uid, uid), root).CombinedOutput(); err != nil {
				t.Fatalf("chown: %v %s", err, out)
			}
		}
		own()
		t.Cleanup(func() { exec.Command("chmod", "-R", "u+rwX", root).Run() })
		rw := func(args ...string) result {
			return run(t, proc{name: "rewind", args: append(args, "-C", project), env: []string{"HOME=" + home}, dir: root, uid: uid})
		}
		var errs []string
		fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		step := func(want digest, args ...string) {
			if len(errs) > 0 {
				return
			}
			r := rw(args...)
			if r.code != 0 {
				fail("rewind %s: exit %d: %s", strings.Join(args, " "), r.code, strings.TrimSpace(r.stderr))
				return
			}
			if os.Getenv("REWIND_RELIABILITY_DEBUG") != "" {
				t.Logf("rewind %s:\n%s", strings.Join(args, " "), r.stdout)
			}
			if want != nil {
				if got := exactDigest(t, project); got.sum() != want.sum() {
					fail("rewind %s is not exact: %s", strings.Join(args, " "), want.diff(got))
				}
			}
		}
		env := []string{"HOME=" + home}
		step(nil, "init", "--mode", "project")
		d0 := exactDigest(t, project)
		step(nil, "save", "s0")
		mutateMixedTree(t, rng, project)
		own()
		d1 := exactDigest(t, project)
		step(nil, "save", "s1")
		var s0, s1 string
		if ids := checkpoints(t, project, env); len(ids) == 2 {
			s1, s0 = ids[0], ids[1]
		}
		mutateMixedTree(t, rng, project)
		own()
		d2 := exactDigest(t, project)
		step(d0, "restore", s0, "--code-only", "--yes")
		step(d2, "undo-restore")
		step(d1, "restore", s1, "--code-only", "--yes")
		step(d2, "undo-restore")
		if len(errs) == 0 {
			if probs, _ := validate(t, project, env); len(probs) > 0 {
				fail("validate: %v", probs)
			}
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d (uid %d): %s", round, uid, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "save-restore-symmetry", runs, runs*6, failures)
}

// TestSavesPastALimitRefused: a tree past one of the limits a restore
// enforces is refused at save, naming the entry and the limit, and no
// checkpoint is added; within limits raised in the config it is saved, and
// restores with no flag.
func TestSavesPastALimitRefused(t *testing.T) {
	runs, failures := 0, 0
	for _, tc := range []struct {
		name, path, limit, config string
	}{
		{"129 path elements", strings.Repeat("d/", 128) + "f", "max_depth", `{"version":1,"limits":{"max_depth":200}}`},
		{"more content than allowed", "big.bin", "max_bytes", `{"version":1,"limits":{"max_bytes":100000}}`},
	} {
		runs++
		root := workDir(t)
		home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
		env := []string{"HOME=" + home}
		writeFile(t, filepath.Join(project, "a.txt"), []byte("a"), 0o644)
		rw := func(args ...string) result {
			return run(t, proc{name: "rewind", args: append(args, "-C", project), env: env})
		}
		mustRun(t, proc{name: "rewind", args: []string{"init", "--mode", "project", "-C", project}, env: env})
		if tc.limit == "max_bytes" {
			mustRun(t, proc{name: "rewind", args: []string{"save", "small", "-C", project}, env: env})
			writeFile(t, filepath.Join(project, tc.path), make([]byte, 200000), 0o644)
			writeFile(t, filepath.Join(project, ".agent/rewind/config.json"), []byte(`{"version":1,"limits":{"max_bytes":100000}}`), 0o644)
		} else {
			writeFile(t, filepath.Join(project, tc.path), []byte("x"), 0o644)
		}
		before := checkpoints(t, project, env)
		var errs []string
		r := rw("save", "past a limit")
		if r.code != 1 || !strings.Contains(r.stderr, tc.limit) || !strings.Contains(r.stderr, "hint:") {
			errs = append(errs, fmt.Sprintf("save exit %d, want 1 with the limit named and a hint: %s", r.code, strings.TrimSpace(r.stderr)))
		}
		if got := checkpoints(t, project, env); len(got) != len(before) {
			errs = append(errs, fmt.Sprintf("a refused save added a checkpoint (%d, had %d)", len(got), len(before)))
		}
		if tc.limit == "max_depth" {
			writeFile(t, filepath.Join(project, ".agent/rewind/config.json"), []byte(tc.config), 0o644)
			want := exactDigest(t, project)
			if r := rw("save", "within the raised limit"); r.code != 0 {
				errs = append(errs, fmt.Sprintf("save within the raised limit: exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
			}
			os.WriteFile(filepath.Join(project, ".agent/rewind/config.json"), []byte(`{"version":1}`), 0o644)
			os.RemoveAll(filepath.Join(project, "d"))
			if r := rw("restore", "@0", "--code-only", "--yes"); r.code != 0 {
				errs = append(errs, fmt.Sprintf("restore with the limits back at their defaults: exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
			} else if got := exactDigest(t, project); got.sum() != want.sum() {
				errs = append(errs, "restore is not exact: "+want.diff(got))
			}
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("%s: %s", tc.name, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "saves-past-a-limit", runs, runs, failures)
}

// asUser makes cmd run as uid (and the group of the same number).
func asUser(uid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
}
