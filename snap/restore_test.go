package snap

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind.dev/snap/pathspec"
)

// state is everything about a tree a restore must get right, keyed by path:
// kind, permission bits and content or link target. Nothing is skipped, so
// ignored files are compared too.
func state(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || d.Name() == ".git" && d.IsDir() {
			if rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %o %s", fi.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffStates(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "- "+k)
		} else if v != w {
			out = append(out, fmt.Sprintf("~ %s: %.60q != %.60q", k, v, w))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "+ "+k)
		}
	}
	return strings.Join(out, "\n")
}

func create(t *testing.T, root, out string) *Result {
	t.Helper()
	res, err := createWalked(context.Background(), root, CreateOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// genTree fills dir with a random tree: files of mixed sizes (some above the
// prefetch threshold), executables, symlinks, empty folders, and ignored
// files that must survive every restore untouched.
func genTree(t *testing.T, rng *rand.Rand, dir string, n int) {
	t.Helper()
	writeTree(t, dir, map[string]string{".gitignore": "*.ignored\nnode_modules/\n"})
	for i := 0; i < n; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%d", rng.Intn(6)), fmt.Sprintf("s%d", rng.Intn(3)))
		os.MkdirAll(d, 0o755)
		name := filepath.Join(d, fmt.Sprintf("f%d", i))
		switch rng.Intn(10) {
		case 0:
			os.Symlink(fmt.Sprintf("../s%d/f%d", rng.Intn(3), rng.Intn(n)), name)
		case 1:
			os.MkdirAll(name+".empty", 0o750)
		case 2:
			os.WriteFile(name+".ignored", []byte("precious"), 0o644)
		default:
			size := rng.Intn(4096)
			if rng.Intn(40) == 0 {
				size = prefetchMax + rng.Intn(300_000)
			}
			b := make([]byte, size)
			rng.Read(b)
			mode := os.FileMode(0o644)
			if rng.Intn(5) == 0 {
				mode = 0o755
			}
			os.WriteFile(name, b, mode)
			os.Chmod(name, mode)
		}
	}
	os.MkdirAll(filepath.Join(dir, "node_modules", "pkg"), 0o755)
	os.WriteFile(filepath.Join(dir, "node_modules", "pkg", "index.js"), []byte("ignored"), 0o644)
}

// editable lists what under dir (as genTree makes it) a test may edit:
// all but the ignored files and the ignore file.
func editable(dir string) []string {
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir && !strings.Contains(p, "node_modules") && !strings.HasSuffix(p, ".ignored") && !strings.HasSuffix(p, ".gitignore") {
			paths = append(paths, p)
		}
		return nil
	})
	return paths
}

// mutate applies random edits of every kind a restore has to undo.
func mutate(t *testing.T, rng *rand.Rand, dir string) {
	t.Helper()
	paths := editable(dir)
	for i := 0; i < 1+len(paths)/5; i++ {
		p := paths[rng.Intn(len(paths))]
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch rng.Intn(6) {
		case 0:
			os.RemoveAll(p)
		case 1:
			if fi.Mode().IsRegular() {
				os.WriteFile(p, []byte("changed"), 0o644)
			}
		case 2:
			if fi.Mode().IsRegular() {
				os.Chmod(p, fi.Mode().Perm()^0o111)
			}
		case 3:
			os.WriteFile(p+".new", []byte("added"), 0o644)
		case 4: // a file becomes a folder, or a folder a file
			os.RemoveAll(p)
			if fi.IsDir() {
				os.WriteFile(p, []byte("was a folder"), 0o644)
			} else {
				os.MkdirAll(filepath.Join(p, "inner"), 0o755)
			}
		case 5:
			os.RemoveAll(p)
			os.Symlink("elsewhere", p)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			dir := t.TempDir()
			genTree(t, rng, dir, 120)
			snapFile := filepath.Join(t.TempDir(), "s.tar.gz")
			res := create(t, dir, snapFile)
			before, _ := splitIgnored(state(t, dir))
			mutate(t, rng, dir)
			_, ignoredBefore := splitIgnored(state(t, dir))
			if _, err := Restore(context.Background(), dir, snapFile, RestoreOptions{}); err != nil {
				t.Fatal(err)
			}
			after, ignoredAfter := splitIgnored(state(t, dir))
			if d := diffStates(before, after); d != "" {
				t.Fatalf("tree after restore differs:\n%s", d)
			}
			if d := diffStates(ignoredBefore, ignoredAfter); d != "" {
				t.Fatalf("restore touched ignored files:\n%s", d)
			}
			tree, _ := Walk(context.Background(), dir, WalkOptions{})
			if got := TreeHash(hashAll(t, dir, tree.Entries)); got != res.TreeHash {
				t.Errorf("tree hash after restore %s, snapshot %s", got, res.TreeHash)
			}
			again, err := Restore(context.Background(), dir, snapFile, RestoreOptions{})
			if err != nil || again.Written+again.Deleted+again.ModeChanged != 0 {
				t.Errorf("second restore changed something: %+v %v", again, err)
			}
		})
	}
}

// splitIgnored separates the ignored paths genTree makes from the rest.
func splitIgnored(st map[string]string) (scope, ignored map[string]string) {
	scope, ignored = map[string]string{}, map[string]string{}
	for k, v := range st {
		if strings.HasSuffix(k, ".ignored") || k == "node_modules" || strings.HasPrefix(k, "node_modules/") {
			ignored[k] = v
		} else {
			scope[k] = v
		}
	}
	return scope, ignored
}

func hashAll(t *testing.T, dir string, es []Entry) []Entry {
	for i := range es {
		if es[i].Kind == KindFile {
			h, err := hashFile(context.Background(), filepath.Join(dir, es[i].Path))
			if err != nil {
				t.Fatal(err)
			}
			es[i].Hash = h
		}
	}
	return es
}

// TestRestoreKeepsUnchangedFiles: a file whose content and mode match is not
// rewritten (its mtime and inode stay), a written one gets a fresh mtime.
func TestRestoreKeepsUnchangedFiles(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"same.txt": "same", "edit.txt": "v1"})
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "same.txt"), old, old)
	os.Chtimes(filepath.Join(dir, "edit.txt"), old, old)
	snapFile := filepath.Join(t.TempDir(), "s.tar.gz")
	create(t, dir, snapFile)
	os.WriteFile(filepath.Join(dir, "edit.txt"), []byte("v2"), 0o644)
	res, err := Restore(context.Background(), dir, snapFile, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written != 1 || res.Unchanged != 1 {
		t.Errorf("written %d unchanged %d, want 1 and 1", res.Written, res.Unchanged)
	}
	fi, _ := os.Stat(filepath.Join(dir, "same.txt"))
	if !fi.ModTime().Equal(old) {
		t.Errorf("unchanged file was rewritten (mtime %v)", fi.ModTime())
	}
	fi, _ = os.Stat(filepath.Join(dir, "edit.txt"))
	if fi.ModTime().Before(time.Now().Add(-time.Minute)) {
		t.Errorf("restored file kept an old mtime %v; build tools would miss it", fi.ModTime())
	}
}

// TestRealTarReadsArchive: the archive is a plain tar.gz for GNU tar.
func TestRealTarReadsArchive(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("tar not installed")
	}
	dir := t.TempDir()
	genTree(t, rand.New(rand.NewSource(7)), dir, 60)
	snapFile := filepath.Join(t.TempDir(), "s.tar.gz")
	create(t, dir, snapFile)
	out := t.TempDir()
	if b, err := exec.Command("tar", "-xzf", snapFile, "-C", out).CombinedOutput(); err != nil {
		t.Fatalf("tar xzf: %v\n%s", err, b)
	}
	want := state(t, dir)
	for k := range want { // ignored files are not captured
		if strings.HasSuffix(k, ".ignored") || strings.HasPrefix(k, "node_modules") {
			delete(want, k)
		}
	}
	if d := diffStates(want, state(t, out)); d != "" {
		t.Errorf("tar xzf result differs:\n%s", d)
	}
}

func TestUnchangedNeverWrong(t *testing.T) {
	t.Parallel()
	testUnchangedNeverWrong(t, 0)
}

// testUnchangedNeverWrong is TestUnchangedNeverWrong, with the restore's
// plan written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testUnchangedNeverWrong(t *testing.T, _ int) {
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "aaaa", "b.txt": "bbbb"})
	snapFile := filepath.Join(t.TempDir(), "s.tar.gz")
	res := create(t, dir, snapFile)
	// Same size, same mtime, within the racy window: only the content differs.
	p := filepath.Join(dir, "a.txt")
	fi, _ := os.Stat(p)
	os.WriteFile(p, []byte("AAAA"), 0o644)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	res2, err := createWalked(context.Background(), dir, CreateOptions{Out: filepath.Join(t.TempDir(), "s2.tar.gz"), Parent: res.Manifest})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Unchanged {
		t.Fatal("a same-tick, same-size write was reported as unchanged")
	}
	res3, err := createWalked(context.Background(), dir, CreateOptions{Out: filepath.Join(t.TempDir(), "s3.tar.gz"), Parent: res2.Manifest})
	if err != nil || !res3.Unchanged || res3.TreeHash != res2.TreeHash {
		t.Fatalf("untouched tree not reported unchanged: %+v %v", res3, err)
	}
}

// tarEntry is one crafted archive entry.
type tarEntry struct {
	name, link string
	typ        byte
	mode       int64
	body       string
	size       int64 // declared size when body is empty and size is set
}

func craft(t testing.TB, entries []tarEntry) []byte {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, Size: int64(len(e.body)), Format: tar.FormatPAX}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
		}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if e.size > 0 {
			hdr.Size = e.size
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("craft %q: %v", e.name, err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Flush()
	if !containsDeclared(entries) {
		tw.Close()
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tb.Bytes())
	zw.Close()
	return gz.Bytes()
}

func containsDeclared(es []tarEntry) bool {
	for _, e := range es {
		if e.size > 0 {
			return true
		}
	}
	return false
}

func TestCheckNameRefusesNUL(t *testing.T) {
	t.Parallel()
	s := &archiveScanner{name: "x", limits: DefaultLimits}
	if err := s.checkName("a\x00b", "a\x00b"); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("err = %v, want a NUL refusal", err)
	}
}

func TestHostileArchives(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	reg := byte(tar.TypeReg)
	tests := []struct {
		name    string
		entries []tarEntry
		raw     []byte
		want    string
	}{
		{name: "absolute path", entries: []tarEntry{{name: "/etc/evil", typ: reg}}, want: "absolute path"},
		{name: "dot dot", entries: []tarEntry{{name: "a/../../evil", typ: reg}}, want: "leaves the root"},
		{name: "empty name", entries: []tarEntry{{name: "", typ: reg}}, want: "empty name"},
		{name: "duplicate", entries: []tarEntry{{name: "a", typ: reg, body: "1"}, {name: "a", typ: reg, body: "2"}}, want: "duplicate"},
		{name: "file then folder", entries: []tarEntry{{name: "a", typ: reg}, {name: "a/b", typ: reg}}, want: "holds as a file"},
		{name: "folder then file", entries: []tarEntry{{name: "a/b", typ: reg}, {name: "a", typ: reg}}, want: "holds as a file"}, // (out of walk order: refused as its copy in walk order is)
		{name: "char device", entries: []tarEntry{{name: "dev", typ: tar.TypeChar}}, want: "device"},
		{name: "fifo", entries: []tarEntry{{name: "fifo", typ: tar.TypeFifo}}, want: "FIFO"},
		{name: "hard link", entries: []tarEntry{{name: "a", typ: reg}, {name: "h", typ: tar.TypeLink, link: "a"}}, want: "hard link"},
		{name: "empty symlink target", entries: []tarEntry{{name: "l", typ: tar.TypeSymlink}}, want: "empty target"},
		{name: "write through archive symlink", entries: []tarEntry{
			{name: "l", typ: tar.TypeSymlink, link: "d"}, {name: "l/x", typ: reg},
		}, want: "holds as a symlink"},
		{name: "into .git", entries: []tarEntry{{name: ".git/hooks/pre-commit", typ: reg}}, want: "never restores"},
		{name: "into the store", entries: []tarEntry{{name: ".agent/rewind/lock", typ: reg}}, want: "never restores"},
		{name: "bomb declared", entries: []tarEntry{{name: "big", typ: reg, size: 10 << 30}}, want: "limit"},
		{name: "declared beyond deflate", entries: []tarEntry{{name: "big", typ: reg, size: 1 << 30}}, want: "compression bomb"},
		{name: "too deep", entries: []tarEntry{{name: strings.Repeat("d/", 200) + "f", typ: reg}}, want: "deeper"},
		{name: "not gzip", raw: []byte("this is not an archive"), want: "not a gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"keep.txt": "keep", "sub/x": "x"})
			before := state(t, dir)
			archive := filepath.Join(t.TempDir(), "bad.tar.gz")
			data := tt.raw
			if data == nil {
				data = craft(t, tt.entries)
			}
			os.WriteFile(archive, data, 0o644)
			_, err := Restore(context.Background(), dir, archive, RestoreOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if d := diffStates(before, state(t, dir)); d != "" {
				t.Fatalf("refused restore changed the tree:\n%s", d)
			}
		})
	}
}

func TestTruncatedAndCorruptArchives(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	src := t.TempDir()
	genTree(t, rand.New(rand.NewSource(3)), src, 80)
	good := filepath.Join(t.TempDir(), "s.tar.gz")
	create(t, src, good)
	data, _ := os.ReadFile(good)
	for name, bad := range damaged(data) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, map[string]string{"mine.txt": "mine", "d0/s0/f1": "different"})
			before := state(t, dir)
			archive := filepath.Join(t.TempDir(), "bad.tar.gz")
			os.WriteFile(archive, bad, 0o644)
			_, err := Restore(context.Background(), dir, archive, RestoreOptions{})
			if err == nil {
				t.Fatal("restore from a damaged archive succeeded")
			}
			if d := diffStates(before, state(t, dir)); d != "" {
				t.Fatalf("failed restore changed the tree:\n%s", d)
			}
		})
	}
}

// damaged is the archive data cut short and with a byte flipped, in
// its content and in its gzip checksum, each by name.
func damaged(data []byte) map[string][]byte {
	return map[string][]byte{
		"truncated half":   data[:len(data)/2],
		"truncated tail":   data[:len(data)-4],
		"flipped byte":     flip(data, len(data)/3),
		"flipped checksum": flip(data, len(data)-6),
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0xff
	return c
}

// TestSymlinkInTreeNeverRedirects: an ignored symlink standing where the
// snapshot has a folder must not lead writes elsewhere.
// TestSymlinksRestoredWhateverTheyPointAt: a symlink comes back as a
// symlink, absolute, leaving the root, dangling or looping, and nothing is
// ever written through one (the tree's or the archive's).
func TestSymlinksRestoredWhateverTheyPointAt(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "root")
	os.Mkdir(dir, 0o755)
	outside := filepath.Join(parent, "outside")
	os.Mkdir(outside, 0o755)
	links := []tarEntry{
		{name: "abs", typ: tar.TypeSymlink, link: outside},
		{name: "d/up", typ: tar.TypeSymlink, link: "../../outside"},
		{name: "d1/d2/s", typ: tar.TypeSymlink, link: "../../.."},
		{name: "d1/d2/x", typ: tar.TypeSymlink, link: "s/outside"},
		{name: "loop-a", typ: tar.TypeSymlink, link: "loop-b"},
		{name: "loop-b", typ: tar.TypeSymlink, link: "loop-a"},
		{name: "self", typ: tar.TypeSymlink, link: "self"},
		{name: "dangling", typ: tar.TypeSymlink, link: "no/such"},
	}
	// The tree has real folders where the archive's files go, and a
	// symlink out where the archive has a folder.
	os.Symlink(outside, filepath.Join(dir, "was-a-link"))
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	os.WriteFile(archive, craft(t, append(links, tarEntry{name: "was-a-link/", typ: tar.TypeDir}, tarEntry{name: "was-a-link/f", typ: tar.TypeReg, body: "in"})), 0o644)
	if _, err := Restore(context.Background(), dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if got, err := os.Readlink(filepath.Join(dir, l.name)); err != nil || got != l.link {
			t.Errorf("%s -> %q (%v), want -> %q", l.name, got, err, l.link)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "was-a-link")); err != nil || !fi.IsDir() {
		t.Errorf("was-a-link is not a folder now: %v", err)
	}
	if des, _ := os.ReadDir(outside); len(des) != 0 {
		t.Errorf("written outside the root: %v", des)
	}
}

func TestSymlinkInTreeNeverRedirects(t *testing.T) {
	t.Parallel()
	testSymlinkInTreeNeverRedirects(t, 0)
}

// testSymlinkInTreeNeverRedirects is TestSymlinkInTreeNeverRedirects, with
// the restore's plan written out spill entries a block (0: as in production;
// see TestRestoresWithThePlanSpilled).
func testSymlinkInTreeNeverRedirects(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	outside := t.TempDir()
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	os.WriteFile(archive, craft(t, []tarEntry{{name: "out/", typ: tar.TypeDir, mode: 0o755}, {name: "out/file", typ: tar.TypeReg, body: "x"}}), 0o644)
	writeTree(t, dir, map[string]string{".gitignore": "out\n"})
	os.Symlink(outside, filepath.Join(dir, "out"))
	_, err := Restore(context.Background(), dir, archive, RestoreOptions{spillAt: spill})
	if err == nil {
		t.Fatal("restore wrote through a symlink")
	}
	if _, err := os.Stat(filepath.Join(outside, "file")); err == nil {
		t.Fatal("a file was written outside the root")
	}
}

func TestSetuidDropped(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	os.WriteFile(archive, craft(t, []tarEntry{{name: "suid", typ: tar.TypeReg, mode: 0o4755, body: "x"}}), 0o644)
	if _, err := Restore(context.Background(), dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "suid"))
	if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want -rwxr-xr-x", fi.Mode())
	}
}

// TestIgnoredFolderInTheWay: a restore never deletes ignored files, even to
// put a snapshot's file where their folder stands.
func TestIgnoredFolderInTheWay(t *testing.T) {
	t.Parallel()
	testIgnoredFolderInTheWay(t, 0)
}

// testIgnoredFolderInTheWay is TestIgnoredFolderInTheWay, with the restore's
// plan written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testIgnoredFolderInTheWay(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "*.log\n", "x/a.txt": "a", "x/debug.log": "precious"})
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	os.WriteFile(archive, craft(t, []tarEntry{{name: ".gitignore", typ: tar.TypeReg, body: "*.log\n"}, {name: "x", typ: tar.TypeReg, body: "now a file"}}), 0o644)
	before := state(t, dir)
	_, err := Restore(context.Background(), dir, archive, RestoreOptions{spillAt: spill})
	if err == nil || !strings.Contains(err.Error(), "ignored files") {
		t.Fatalf("err = %v, want a refusal naming the ignored files", err)
	}
	if d := diffStates(before, state(t, dir)); d != "" {
		t.Fatalf("tree changed:\n%s", d)
	}
	// A folder not in the snapshot that holds ignored files is kept.
	archive2 := filepath.Join(t.TempDir(), "s2.tar.gz")
	os.WriteFile(archive2, craft(t, []tarEntry{{name: ".gitignore", typ: tar.TypeReg, body: "*.log\n"}}), 0o644)
	res, err := Restore(context.Background(), dir, archive2, RestoreOptions{spillAt: spill})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x", "debug.log")); string(b) != "precious" || len(res.Kept) != 1 {
		t.Errorf("ignored file lost or folder not reported kept: %q %+v", b, res)
	}
}

// TestStaleStagingCleaned: the staging folder a killed restore left is
// removed by the next restore; the folders of a user that only look like
// one (the prefix, a lock file, a token without the marker) are captured,
// restored and never removed.
func TestStaleStagingCleaned(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	mine := map[string]string{
		stagingPrefix + "notes/todo.txt":                        "mine",
		stagingPrefix + "lockish/lock":                          "",
		stagingPrefix + "0123456789abcdef0123456789abcdef/lock": "not the marker",
		stagingPrefix + "file":                                  "a file",
	}
	files := map[string]string{"a": "a"}
	for k, v := range mine {
		files[k] = v
	}
	writeTree(t, dir, files)
	lookalike := stagingPrefix + "0123456789abcdef01234567deadbeef"
	os.Mkdir(filepath.Join(dir, lookalike), 0o755)
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	res := create(t, dir, archive)
	if res.Files != len(files) {
		t.Fatalf("snapshot holds %d files, want %d: folders named like staging were left out", res.Files, len(files))
	}
	// A restore killed right after creating its folder, and one killed
	// after staging: their folders stay, their locks are free. A user's
	// empty folder with a token-like name is not theirs.
	justMade, _ := newStagingName()
	os.Mkdir(filepath.Join(dir, justMade), 0o700)
	p, err := plan(context.Background(), dir, archive, nil, RestoreOptions{}, true)
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, p.stage)
	p.stageLock.Close()
	p.r.Close()
	if got := walkFiles(t, dir); len(got) != len(files) {
		t.Errorf("a walk with a stale staging folder lists %v", got)
	}
	os.WriteFile(filepath.Join(dir, "a"), []byte("b"), 0o644)
	for k := range mine {
		os.Remove(filepath.Join(dir, k))
	}
	if _, err := Restore(context.Background(), dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{stale, filepath.Join(dir, justMade)} {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale staging folder %s left behind", d)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, lookalike)); err != nil {
		t.Errorf("the user's empty folder %s was removed: %v", lookalike, err)
	}
	for k, v := range mine {
		if b, err := os.ReadFile(filepath.Join(dir, k)); err != nil || string(b) != v {
			t.Errorf("%s: %q %v, want it restored", k, b, err)
		}
	}
	if _, err := Restore(context.Background(), dir, archive, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for k := range mine {
		if _, err := os.Stat(filepath.Join(dir, k)); err != nil {
			t.Errorf("%s removed by a restore: %v", k, err)
		}
	}
}

// FuzzRestore restores arbitrary tar streams into a root inside a parent
// folder: whatever happens, nothing appears outside the root.
func FuzzRestore(f *testing.F) {
	reg := byte(tar.TypeReg)
	seeds := [][]tarEntry{
		{{name: "a", typ: reg, body: "x"}, {name: "d/", typ: tar.TypeDir}, {name: "d/b", typ: reg, body: "y"}},
		{{name: "../evil", typ: reg}},
		{{name: "l", typ: tar.TypeSymlink, link: "../.."}, {name: "l/x", typ: reg}},
		{{name: "d1/d2/s", typ: tar.TypeSymlink, link: "../../t"}, {name: "d1/d2/x", typ: tar.TypeSymlink, link: "s/../.."}},
		{{name: "s", typ: tar.TypeSymlink, link: "."}, {name: "s/s/f", typ: reg}},
	}
	for _, s := range seeds {
		var tb bytes.Buffer
		tw := tar.NewWriter(&tb)
		for _, e := range s {
			tw.WriteHeader(&tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body))})
			tw.Write([]byte(e.body))
		}
		tw.Close()
		f.Add(tb.Bytes())
	}
	f.Fuzz(func(t *testing.T, tarBytes []byte) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		os.Mkdir(root, 0o755)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(tarBytes)
		zw.Close()
		archive := filepath.Join(t.TempDir(), "f.tar.gz")
		os.WriteFile(archive, gz.Bytes(), 0o644)
		Restore(context.Background(), root, archive, RestoreOptions{Limits: Limits{MaxEntries: 1000, MaxBytes: 1 << 20, MaxDepth: 32, MaxPath: 256}})
		des, _ := os.ReadDir(parent)
		if len(des) != 1 || des[0].Name() != "root" {
			t.Fatalf("something was written outside the root: %v", des)
		}
		// Symlinks may point anywhere (they are restored as they are), but
		// nothing is ever written through one.
	})
}

// TestRestoreSparesFilesIgnoredBySnapshotRules: after the agent edits
// .gitignore so that .env comes into scope, a restore brings the old
// .gitignore back and leaves .env alone.
func TestRestoreSparesFilesIgnoredBySnapshotRules(t *testing.T) {
	t.Parallel()
	testRestoreSparesFilesIgnoredBySnapshotRules(t, 0)
}

// testRestoreSparesFilesIgnoredBySnapshotRules is
// TestRestoreSparesFilesIgnoredBySnapshotRules, with the restore's plan
// written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testRestoreSparesFilesIgnoredBySnapshotRules(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": ".env\n", ".env": "SECRET=1", "a.go": "package a"})
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	create(t, dir, archive)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# nothing ignored\n"), 0o644)
	res, err := Restore(context.Background(), dir, archive, RestoreOptions{spillAt: spill})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".env")); string(b) != "SECRET=1" {
		t.Fatalf(".env lost: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(b) != ".env\n" {
		t.Fatalf(".gitignore not restored: %q", b)
	}
	if len(res.LeftIgnored) != 1 || res.LeftIgnored[0] != ".env" || res.Deleted != 0 {
		t.Errorf("result %+v, want .env spared and nothing deleted", res)
	}
}

// A restore limited to paths makes the selected paths what the snapshot has
// and leaves every other path as the tree has it, from a whole archive and
// from a manifest alike.
func TestRestorePaths(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	specs := [][]string{{"d1"}, {"d2/s0", "d3/s1/"}, {"*.empty"}, {":(glob)d*/s2/*", ":!d4"}, {"d0", ":^d0/s1"}}
	for seed := int64(1); seed <= 8; seed++ {
		for _, withManifest := range []bool{false, true} {
			spec := specs[int(seed)%len(specs)]
			t.Run(fmt.Sprint(seed, spec, withManifest), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				dir := t.TempDir()
				genTree(t, rng, dir, 120)
				snapFile := filepath.Join(t.TempDir(), "s.tar.gz")
				res := create(t, dir, snapFile)
				before := state(t, dir)
				mutate(t, rng, dir)
				mutated := state(t, dir)
				ps, err := pathspec.Parse(spec, pathspec.Options{})
				if err != nil {
					t.Fatal(err)
				}
				opts := RestoreOptions{Paths: ps}
				if withManifest {
					opts.Manifest = res.Manifest
				}
				if _, err := Restore(context.Background(), dir, snapFile, opts); err != nil {
					var (
						un  *UnmatchedError
						sel *SelectionError
					)
					if !errors.As(err, &un) && !errors.As(err, &sel) {
						t.Fatal(err)
					}
					if d := diffStates(mutated, state(t, dir)); d != "" {
						t.Fatalf("refused (%v), yet the tree changed:\n%s", err, d)
					}
					t.Skipf("refused: %v", err)
				}
				after := state(t, dir)
				check, _ := pathspec.Parse(spec, pathspec.Options{})
				for _, k := range keys(before, mutated, after) {
					want := mutated[k]
					isDir := strings.HasPrefix(before[k], "dir") || strings.HasPrefix(mutated[k], "dir")
					if check.Match(filepath.ToSlash(k), isDir) && !strings.Contains(k, "node_modules") && !strings.HasSuffix(k, ".ignored") {
						want = before[k]
					}
					if after[k] == want {
						continue
					}
					if want == "" && after[k] == before[k] && strings.HasPrefix(after[k], "dir") {
						continue // a folder above a selected path, created for it
					}
					t.Errorf("%s: %q, want %q (snapshot %q, before the restore %q)", k, after[k], want, before[k], mutated[k])
				}
			})
		}
	}
}

func keys(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// A path that selects nothing is refused before anything changes; the rules of
// an ignore file left out of the selection still spare what it ignored.
func TestRestorePathsRefusedAndRules(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": ".env\n", ".env": "SECRET=1", "a.go": "package a", "b.go": "package b"})
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	res := create(t, dir, archive)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# nothing ignored\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("changed"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("changed"), 0o644)
	ps, _ := pathspec.Parse([]string{"a.go", "nothing"}, pathspec.Options{})
	_, err := Restore(context.Background(), dir, archive, RestoreOptions{Paths: ps, Manifest: res.Manifest})
	var un *UnmatchedError
	if !errors.As(err, &un) || len(un.Items) != 1 || un.Items[0] != "nothing" {
		t.Fatalf("err %v, want nothing unmatched", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(b) != "changed" {
		t.Fatalf("a.go written by a refused restore: %q", b)
	}
	file := filepath.Join(t.TempDir(), "manifest")
	if err := WriteManifestFile(file, res.Manifest, nil); err != nil {
		t.Fatal(err)
	}
	opened, err := OpenManifest(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Manifest{nil, res.Manifest, opened} {
		ps, _ = pathspec.Parse([]string{".", ":!.gitignore", ":!b.go"}, pathspec.Options{})
		r, err := Restore(context.Background(), dir, archive, RestoreOptions{Paths: ps, Manifest: m})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, ".env")); string(b) != "SECRET=1" {
			t.Fatalf(".env lost: %q", b)
		}
		for f, want := range map[string]string{"a.go": "package a", "b.go": "changed", ".gitignore": "# nothing ignored\n"} {
			if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != want {
				t.Errorf("%s: %q, want %q", f, b, want)
			}
		}
		if len(r.LeftIgnored) != 1 || r.LeftIgnored[0] != ".env" || r.Deleted != 0 {
			t.Errorf("result %+v, want .env spared and nothing deleted", r)
		}
		os.WriteFile(filepath.Join(dir, "a.go"), []byte("changed"), 0o644)
	}
}

// TestCraftedManifestRefused: a manifest's entries are checked in walk
// order, not against maps of every path, so a crafted or damaged one —
// a path twice, paths out of order, an entry inside a file — is refused
// before the tree is touched, read whole or opened.
func TestCraftedManifestRefused(t *testing.T) {
	t.Parallel()
	testCraftedManifestRefused(t, 0)
}

// testCraftedManifestRefused is TestCraftedManifestRefused, with the
// restore's plan written out spill entries a block (0: as in production; see
// TestRestoresWithThePlanSpilled).
func testCraftedManifestRefused(t *testing.T, spill int) {
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.go": "package a", "b/c.go": "package c", "d.txt": "d"})
	res := create(t, dir, filepath.Join(t.TempDir(), "s.tar.gz"))
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("changed"), 0o644)
	before := state(t, dir)
	at := func(path string) int {
		for i := range res.Manifest.Entries {
			if res.Manifest.Entries[i].Path == path {
				return i
			}
		}
		t.Fatalf("no %s in the snapshot", path)
		return -1
	}
	for _, c := range []struct {
		name, want string
		edit       func([]Entry) []Entry
	}{
		{"a path twice", "duplicate entry", func(es []Entry) []Entry {
			i := at("b/c.go")
			return slices.Insert(es, i, es[i])
		}},
		{"out of order", "out of walk order", func(es []Entry) []Entry {
			i, j := at("a.go"), at("d.txt")
			es[i], es[j] = es[j], es[i]
			return es
		}},
		{"inside a file", "inside a.go, which the archive holds as a file", func(es []Entry) []Entry {
			i := at("a.go")
			in := es[i]
			in.Path = "a.go/x"
			return slices.Insert(es, i+1, in)
		}},
		{"a folder after what is in it", "out of walk order", func(es []Entry) []Entry {
			i := at("b")
			b := es[i]
			return slices.Insert(slices.Delete(es, i, i+1), at("b/c.go"), b)
		}},
	} {
		m := *res.Manifest
		m.Entries = c.edit(slices.Clone(res.Manifest.Entries))
		file := filepath.Join(t.TempDir(), "manifest")
		if err := WriteManifestFile(file, &m, nil); err != nil {
			t.Fatal(err)
		}
		opened, err := OpenManifest(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*Manifest{&m, opened} {
			_, err := Restore(context.Background(), dir, "", RestoreOptions{spillAt: spill, Manifest: m})
			var ae *ArchiveError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s (opened %v): %v, want a refusal saying %q", c.name, m.stream != nil, err, c.want)
			}
			if d := diffStates(before, state(t, dir)); d != "" {
				t.Fatalf("%s: a refused restore changed the tree:\n%s", c.name, d)
			}
		}
	}
}

// TestRestoreCountsFiles: a restore's counts are of files, as a person
// counts a tree's; the folders it makes, deletes or changes the mode of are
// counted apart. Over a manifest and an archive, planned over what differs
// or the whole tree, alike.
func TestRestoreCountsFiles(t *testing.T) {
	t.Parallel()
	for _, sparse := range []bool{false, true} {
		for _, manifest := range []bool{false, true} {
			dir, snaps := t.TempDir(), t.TempDir()
			writeTree(t, dir, map[string]string{"a.txt": "a", "src/b.txt": "b", "src/c.txt": "c", "src/lib/d.txt": "d"})
			layerSave(t, dir, snaps, 0, 0)
			// One file changed, one deleted (and its folder), one folder made with a file in it.
			writeTree(t, dir, map[string]string{"a.txt": "changed", "new/e.txt": "e"})
			if err := os.RemoveAll(filepath.Join(dir, "src", "lib")); err != nil {
				t.Fatal(err)
			}
			m, err := OpenManifest(filepath.Join(snaps, "0", "manifest"))
			if err != nil {
				t.Fatal(err)
			}
			opts := RestoreOptions{Manifest: m, planWhole: !sparse}
			archive := ""
			if !manifest {
				opts.Manifest, archive = nil, filepath.Join(snaps, "0", "snapshot.tar.gz")
			}
			for _, dry := range []bool{true, false} {
				opts.DryRun = dry
				res, err := Restore(context.Background(), dir, archive, opts)
				if err != nil {
					t.Fatal(err)
				}
				res.Close()
				got := fmt.Sprintf("%d written, %d deleted, %d unchanged, %d folders", res.Written, res.Deleted, res.Unchanged, res.Folders)
				if want := "2 written, 1 deleted, 2 unchanged, 2 folders"; got != want {
					t.Errorf("over what differs %v, manifest %v, dry run %v: %s, want %s", sparse, manifest, dry, got, want)
				}
			}
			res, err := Restore(context.Background(), dir, archive, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Changed() || res.Unchanged != 4 {
				t.Errorf("over what differs %v, manifest %v, again: %+v, want 4 files unchanged and nothing else", sparse, manifest, res)
			}
		}
	}
}
