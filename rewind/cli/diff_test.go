package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// genEntry is a file or symlink of a generated tree.
type genEntry struct {
	link string // a symlink's target; "" for a file
	data string
	exec bool
}

// genTree is a generated tree: its files and symlinks by slash path.
// Folders are what the paths imply: a patch has no form for an empty one.
type genTree map[string]genEntry

// genNames are the names generated trees use, with the ones git quotes in
// its headers (a tab, a quote, a backslash, a newline) and the one it ends
// with a tab (a space).
var genNames = []string{"a.txt", "b.go", "main.c", "README", "name with space.txt", "tab\there", `quote"d`, `back\slash`, "ünï.txt", "new\nline", "x", "-dash"}

var genDirs = []string{"", "", "src/", "src/sub/", "a b/", "docs/"}

// gen makes trees and changes to them from one seed. A tame one leaves out
// what patch(1) refuses of git's patches (see patchRefuses): names with a
// space, symlinks pointed elsewhere.
type gen struct {
	r           *rand.Rand
	names, dirs []string
	tame        bool
}

func newGen(seed int64, tame bool) *gen {
	g := &gen{r: rand.New(rand.NewSource(seed)), names: genNames, dirs: genDirs, tame: tame}
	if tame {
		noSpace := func(s string) bool { return strings.Contains(s, " ") }
		g.names = slices.DeleteFunc(slices.Clone(genNames), noSpace)
		g.dirs = slices.DeleteFunc(slices.Clone(genDirs), noSpace)
	}
	return g
}

func (g *gen) name() string { return g.names[g.r.Intn(len(g.names))] }
func (g *gen) dir() string  { return g.dirs[g.r.Intn(len(g.dirs))] }

var genLines = []string{"alpha", "beta", "gamma", "delta", "", "}", "\treturn nil", "if x {", "// note", "epsilon zeta"}

// genText is random lines, some repeated (as code's are, so that a diff has
// choices to make), with or without a final newline; sometimes nothing.
func genText(r *rand.Rand) string {
	if r.Intn(10) == 0 {
		return ""
	}
	var b strings.Builder
	for range r.Intn(40) + 1 {
		b.WriteString(genLines[r.Intn(len(genLines))])
		b.WriteByte('\n')
	}
	s := b.String()
	if r.Intn(5) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// free reports whether p can be added to t, and was never in was: no entry
// is p, under p, or above it. (A folder that became a file, or the
// reverse, is left out: patch(1) applies the changes in the order given.)
func (t genTree) free(p string, was genTree) bool {
	for _, t := range []genTree{t, was} {
		for q := range t {
			if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
				return false
			}
		}
	}
	return true
}

func (g *gen) add(t genTree, dir string, was genTree) {
	r := g.r
	for range 10 {
		p := dir + g.name()
		if !t.free(p, was) {
			continue
		}
		e := genEntry{data: genText(r), exec: r.Intn(5) == 0}
		if r.Intn(10) == 0 {
			e = genEntry{link: []string{"a.txt", "../README", "src/sub", "nowhere"}[r.Intn(4)]}
		}
		t[p] = e
		return
	}
}

func (g *gen) start() genTree {
	t := genTree{}
	for range 15 + g.r.Intn(15) {
		g.add(t, g.dir(), nil)
	}
	return t
}

// editLines inserts, deletes and replaces a few lines of s, keeping whether
// it ends in a newline.
func editLines(r *rand.Rand, s string) string {
	nl := s == "" || strings.HasSuffix(s, "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if s == "" {
		lines = nil
	}
	for range 1 + r.Intn(4) {
		i := r.Intn(len(lines) + 1)
		switch r.Intn(3) {
		case 0:
			lines = slices.Insert(lines, i, genLines[r.Intn(len(genLines))])
		case 1:
			if i < len(lines) {
				lines = slices.Delete(lines, i, i+1)
			}
		default:
			if i < len(lines) {
				lines[i] = genLines[r.Intn(len(genLines))] + " changed"
			}
		}
	}
	out := strings.Join(lines, "\n")
	if nl && len(lines) > 0 {
		out += "\n"
	}
	return out
}

// genChange changes t as an agent might: lines edited, final newlines
// added or taken away, files emptied, made executable or not, deleted,
// renamed (a deletion and an addition), turned into symlinks and back,
// added (in new folders too), symlinks pointed elsewhere (unless tame).
func (g *gen) change(t genTree) genTree {
	r := g.r
	out := genTree{}
	for p, e := range t {
		out[p] = e
	}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range t {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range paths {
		e := out[p]
		switch r.Intn(12) {
		case 0:
			delete(out, p)
		case 1: // renamed: somewhere else, a new folder maybe
			delete(out, p)
			for range 10 {
				q := fmt.Sprintf("new%d/%s", r.Intn(3), g.name())
				if r.Intn(2) == 0 {
					q = g.dir() + "moved-" + g.name()
				}
				if out.free(q, t) {
					out[q] = e
					break
				}
			}
		case 2:
			if e.link == "" {
				e.exec = !e.exec
			}
		case 3, 4, 5:
			if e.link == "" {
				e.data = editLines(r, e.data)
			}
		case 6:
			if e.link == "" && e.data != "" {
				if strings.HasSuffix(e.data, "\n") {
					e.data = strings.TrimSuffix(e.data, "\n")
				} else {
					e.data += "\n"
				}
			}
		case 7:
			if e.link == "" {
				e.data = ""
			}
		case 8: // a file became a symlink, or the reverse
			if e.link == "" {
				e = genEntry{link: "a.txt"}
			} else {
				e = genEntry{data: genText(r)}
			}
		case 9:
			if e.link != "" && !g.tame {
				e.link += "2"
			}
		}
		if _, ok := out[p]; ok {
			out[p] = e
		}
	}
	for range r.Intn(6) {
		dir := g.dir()
		if r.Intn(2) == 0 {
			dir = fmt.Sprintf("new%d/deeper/", r.Intn(3))
		}
		g.add(out, dir, t)
	}
	return out
}

// write makes dir's files and symlinks t's: what t lacks is deleted (its
// folders may stay, empty), the rest written.
func (t genTree) write(tb testing.TB, dir string) {
	tb.Helper()
	for p := range readGen(tb, dir) {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			tb.Fatal(err)
		}
	}
	for p, e := range t {
		name := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			tb.Fatal(err)
		}
		var err error
		if e.link != "" {
			err = os.Symlink(e.link, name)
		} else {
			mode := fs.FileMode(0o644)
			if e.exec {
				mode = 0o755
			}
			if err = os.WriteFile(name, []byte(e.data), mode); err == nil {
				err = os.Chmod(name, mode)
			}
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// readGen reads dir's files and symlinks as a patch carries them: content,
// target, the owner's execute bit.
func readGen(tb testing.TB, dir string) genTree {
	tb.Helper()
	t := genTree{}
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, name)
		switch {
		case d.IsDir() && (d.Name() == ".git" || d.Name() == ".agent"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(name)
			t[filepath.ToSlash(rel)] = genEntry{link: l}
			return err
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		t[filepath.ToSlash(rel)] = genEntry{data: string(b), exec: fi.Mode()&0o100 != 0}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// sameTree reports how got differs from want, path by path.
func sameTree(tb testing.TB, what string, got, want genTree) {
	tb.Helper()
	var diffs []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%q missing", p))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%q is %+v, want %+v", p, g, w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%q should not be there", p))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		tb.Errorf("%s:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// copyGen copies the files and symlinks of src into a new folder.
func copyGen(tb testing.TB, src string) string {
	dir := tb.TempDir()
	readGen(tb, src).write(tb, dir)
	return dir
}

// applyPatch applies patch in dir with tool: "git" (git apply) or "patch"
// (patch -p1).
func applyPatch(tb testing.TB, tool, dir, patch string) {
	tb.Helper()
	var cmd *exec.Cmd
	if tool == "git" {
		cmd = exec.Command("git", "apply", "-")
	} else {
		// -f: patch(1) asks before it deletes an empty file (of git's own
		// patches too), and the answer no one types is no.
		cmd = exec.Command("patch", "-p1", "-f", "-s")
	}
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(patch)
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Errorf("%s: %v\n%s\npatch:\n%s", cmd, err, out, patch)
	}
}

// rewindOut runs rewind in dir and returns what it wrote on stdout.
func rewindOut(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	var out, errs strings.Builder
	if code := Main(context.Background(), append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errs); code != 0 {
		tb.Fatalf("rewind %q: exit %d: %s", args, code, errs.String())
	}
	if errs.Len() > 0 {
		tb.Errorf("rewind %q wrote on stderr: %s", args, errs.String())
	}
	return out.String()
}

// TestDiffIsAPatch: what 'rewind diff' prints is a patch git apply and
// patch -p1 apply. Over generated trees and changes, a checkpoint's tree
// with the patch of 'rewind diff CP' applied is the tree the patch was taken
// of, file for file (content, symlink target, execute bit); the patch
// between two checkpoints is the same one, and the reverse patch takes the
// later tree back to the earlier. The headers are the ones git writes.
//
// patch(1) takes git's patches but for two things (see patchRefuses): the
// patches that hold them are not given to it, and every other seed's
// changes hold neither.
func TestDiffIsAPatch(t *testing.T) {
	tools := []string{}
	for _, tool := range []string{"git", "patch"} {
		if _, err := exec.LookPath(tool); err == nil {
			tools = append(tools, tool)
		}
	}
	if len(tools) == 0 {
		t.Skip("neither git nor patch is installed")
	}
	ctx := context.Background()
	for seed := range int64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			ownHome(t)
			g := newGen(seed, seed%2 == 1)
			before := g.start()
			after := g.change(before)
			dir := t.TempDir()
			s, _, err := store.Init(dir, layout.ModeGlobal)
			if err != nil {
				t.Fatal(err)
			}
			save := func(what string) *store.Checkpoint {
				t.Helper()
				cp, err := s.Save(ctx, store.SaveOptions{Description: what, Trigger: store.Trigger{Kind: store.TriggerManual}})
				if err != nil {
					t.Fatal(err)
				}
				return cp
			}
			before.write(t, dir)
			cp0 := save("before")
			after.write(t, dir)
			sameTree(t, "the changed tree", readGen(t, dir), after)
			forward := rewindOut(t, dir, "diff", "@0")
			cp1 := save("after")
			if between := rewindOut(t, dir, "diff", cp0.ID, cp1.ID); between != forward {
				t.Errorf("diff CP0 CP1 differs from diff CP0 with the tree CP1 holds:\n%s\nthen\n%s", between, forward)
			}
			reverse := rewindOut(t, dir, "diff", cp1.ID, cp0.ID)
			if gitHeaders := gitPatch(t, before, after); gitHeaders != "" && patchHeaders(forward) != gitHeaders {
				t.Errorf("headers:\n%s\ngit writes:\n%s", patchHeaders(forward), gitHeaders)
			}

			restored := func(cp *store.Checkpoint, want genTree) string {
				t.Helper()
				if _, err := s.Restore(ctx, cp, store.RestoreOptions{Code: true}); err != nil {
					t.Fatal(err)
				}
				sameTree(t, "restored "+cp.Description, readGen(t, dir), want)
				return copyGen(t, dir)
			}
			for _, tool := range tools {
				for _, c := range []struct {
					what     string
					cp       *store.Checkpoint
					from, to genTree
					patch    string
				}{
					{"the checkpoint's tree patched", cp0, before, after, forward},
					{"the later checkpoint's tree patched back", cp1, after, before, reverse},
				} {
					if why := patchRefuses(c.patch, c.from, c.to); tool == "patch" && why != "" {
						t.Logf("%s: not given to patch(1): %s", c.what, why)
						continue
					}
					d := restored(c.cp, c.from)
					applyPatch(t, tool, d, c.patch)
					sameTree(t, tool+": "+c.what, readGen(t, d), c.to)
				}
			}
		})
	}
}

// patchRefuses says why patch(1) (GNU patch 2.7) would refuse the patch
// from tree a to tree b, which git apply takes, git's own as Rewind's: a
// symlink pointed elsewhere ("not a regular file"), and a name with a space
// (git does not quote it) in a file's "diff --git" line with no "---" line
// after it (a change of mode, a new or deleted empty file) to say where one
// name ends.
func patchRefuses(patch string, a, b genTree) string {
	for p, e := range a {
		if f, ok := b[p]; ok && e.link != "" && f.link != "" && e.link != f.link {
			return "a symlink pointed elsewhere: " + p
		}
	}
	for _, f := range strings.Split("\n"+patch, "\ndiff --git ")[1:] {
		head, _, _ := strings.Cut(f, "\n")
		if !strings.HasPrefix(head, `"`) && strings.Count(head, " ") > 1 && !strings.Contains(f, "\n--- ") {
			return "no --- line to tell where a name with a space ends: " + head
		}
	}
	return ""
}

// patchHeaders is a patch's lines but its hunks', each file's apart, in the
// order of their "diff --git" lines (git's order of paths is not Rewind's,
// which puts "a/b" before "a.b").
func patchHeaders(patch string) string {
	var files []string
	for _, f := range strings.SplitAfter(patch, "\n") {
		switch {
		case strings.HasPrefix(f, "diff --git "):
			files = append(files, f)
		case len(files) == 0, f == "", strings.ContainsRune(" +-@\\", rune(f[0])) && !strings.HasPrefix(f, "--- ") && !strings.HasPrefix(f, "+++ "):
		default:
			files[len(files)-1] += f
		}
	}
	slices.SortStableFunc(files, func(a, b string) int {
		return strings.Compare(a[:strings.IndexByte(a, '\n')], b[:strings.IndexByte(b, '\n')])
	})
	return strings.Join(files, "")
}

// gitPatch is the headers (see patchHeaders) of the patch git writes from tree a
// to tree b, "" where git is not installed.
func gitPatch(tb testing.TB, a, b genTree) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return ""
	}
	gitDir := filepath.Join(tb.TempDir(), "git")
	git := func(work string, args ...string) string {
		tb.Helper()
		cmd := exec.Command("git", append([]string{"-c", "core.quotePath=false", "--git-dir", gitDir, "--work-tree", work}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		var errs bytes.Buffer
		cmd.Stderr = &errs
		out, err := cmd.Output()
		if err != nil {
			tb.Fatalf("%s: %v: %s", cmd, err, errs.Bytes())
		}
		return string(out)
	}
	git(".", "init", "-q")
	tree := func(t genTree) string {
		dir := tb.TempDir()
		t.write(tb, dir)
		git(dir, "add", "-A")
		return strings.TrimSpace(git(dir, "write-tree"))
	}
	from, to := tree(a), tree(b)
	var out []string
	for _, l := range strings.SplitAfter(git(".", "diff-tree", "-p", "--no-renames", from, to), "\n") {
		if !strings.HasPrefix(l, "index ") { // (Rewind writes none: see patch)
			out = append(out, l)
		}
	}
	return patchHeaders(strings.Join(out, ""))
}
