package snap

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestTrackedFilesInEveryIndexFormat: a tracked file that an ignore pattern
// matches stays in scope whatever form the git index takes — SHA-256 object
// names, a split index (core.splitIndex), a sparse one — read directly or by
// asking git; never silently dropped.
func TestTrackedFilesInEveryIndexFormat(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, tc := range []struct {
		name  string
		init  []string
		setup func(t *testing.T, dir string)
	}{
		{name: "SHA-1", init: []string{"init", "-q"}},
		{name: "SHA-256", init: []string{"init", "-q", "--object-format=sha256"}},
		{name: "split index", init: []string{"init", "-q"}, setup: func(t *testing.T, dir string) {
			git(t, dir, "config", "core.splitIndex", "true")
		}},
		{name: "index version 4", init: []string{"init", "-q"}, setup: func(t *testing.T, dir string) {
			git(t, dir, "config", "index.version", "4")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, tc.init...)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			writeTree(t, dir, map[string]string{".gitignore": "*.log\nbuild/\n", "y.log": "tracked", "z.log": "not tracked",
				"a.go": "a", "build/keep.txt": "tracked", "build/drop.txt": "not tracked", "sub/w.log": "tracked"})
			git(t, dir, "add", ".gitignore", "a.go")
			git(t, dir, "add", "-f", "y.log", "build/keep.txt", "sub/w.log")
			if tc.name == "split index" {
				if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
					t.Fatal(err)
				}
				matches, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
				if len(matches) == 0 {
					t.Fatal("git wrote no shared index: the case tests nothing")
				}
			}
			want := gitFiles(t, dir)
			if got := walkFiles(t, dir); !slices.Equal(got, want) {
				t.Errorf("walk differs from git\n got: %q\nwant: %q", got, want)
			}
			// A root below the repository's top reads the same index.
			sub := filepath.Join(dir, "sub")
			if got := walkFiles(t, sub); !slices.Equal(got, []string{"w.log"}) {
				t.Errorf("walk of sub/ = %q, want the tracked w.log", got)
			}
		})
	}
}

// TestUnknownIndexWithoutGitFails: an index the reader does not know, with
// no git to ask, fails the walk with an error that says so — never a walk
// that silently drops tracked files.
func TestUnknownIndexWithoutGitFails(t *testing.T) {
	gitEnv(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "config", "core.splitIndex", "true")
	writeTree(t, dir, map[string]string{".gitignore": "*.log\n", "y.log": "tracked"})
	git(t, dir, "add", "-f", "y.log")
	gitPath, _ := exec.LookPath("git")
	t.Setenv("PATH", t.TempDir()) // no git
	_, err := Walk(t.Context(), dir, WalkOptions{})
	if err == nil {
		t.Fatalf("walk without git of a split index succeeded (git is at %s)", gitPath)
	}
	t.Log(err)
}

// TestPathListKeepsWhatGitTracksUnderThePrefix: the paths under the prefix,
// relative to it, sorted, once each, whatever order they came in.
func TestPathListKeepsWhatGitTracksUnderThePrefix(t *testing.T) {
	t.Parallel()
	for _, in := range [][]string{
		{"a", "sub/b", "sub/b", "sub/c/d", "sub2/e", "z"},
		{"z", "sub/c/d", "a", "sub/b", "sub2/e", "sub/b"},
	} {
		b := pathListBuilder{prefix: "sub"}
		for _, p := range in {
			b.add([]byte(p))
		}
		l := b.done()
		if got, want := allPaths(l), []string{"b", "c/d"}; !slices.Equal(got, want) {
			t.Errorf("from %q: %q, want %q", in, got, want)
		}
		for s, want := range map[string]string{"": "b", "c": "c/d", "c/d": "c/d", "zz": ""} {
			if got := l.first(s, nil); string(got) != want {
				t.Errorf("first path not before %q: %q, want %q", s, got, want)
			}
		}
	}
}

// allPaths lists l's paths, in its order.
func allPaths(l *pathList) []string {
	var out []string
	for p := l.first("", nil); p != nil; p = l.first(string(p)+"\x00", nil) {
		out = append(out, string(p))
	}
	return out
}

// TestPathListFindsWhatASortedSliceFinds: a list of many paths sharing
// their starts (blocks of them, in and out of order as given) holds every
// path once, in order, and finds for any string the first path not before
// it, as a search of the sorted paths does.
func TestPathListFindsWhatASortedSliceFinds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	var paths []string
	for range 2000 {
		var b strings.Builder
		for d := range 1 + rng.Intn(4) {
			if d > 0 {
				b.WriteByte('/')
			}
			b.WriteString([]string{"a", "ab", "b", "b.c", "src", "x-y", strings.Repeat("long", 80), "\u00e9"}[rng.Intn(8)])
		}
		paths = append(paths, b.String())
	}
	for _, shuffled := range []bool{false, true} {
		in := slices.Clone(paths)
		if shuffled {
			rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		} else {
			slices.Sort(in)
		}
		var b pathListBuilder
		for _, p := range in {
			b.add([]byte(p))
		}
		l := b.done()
		want := slices.Compact(slices.Sorted(slices.Values(paths)))
		if got := allPaths(l); !slices.Equal(got, want) {
			t.Fatalf("shuffled %v: the list holds %d paths, want %d", shuffled, len(got), len(want))
		}
		for range 3000 {
			s := want[rng.Intn(len(want))]
			s = s[:rng.Intn(len(s)+1)] + []string{"", "\x00", "/", "b", "\xff"}[rng.Intn(5)]
			i, _ := slices.BinarySearch(want, s)
			wantFirst := ""
			if i < len(want) {
				wantFirst = want[i]
			}
			if got := l.first(s, nil); string(got) != wantFirst {
				t.Fatalf("first path not before %q: %q, want %q", s, got, wantFirst)
			}
		}
	}
}

// TestIndexReadAsItGoes reads real git indexes (versions 2, 3 with
// extended flags, and 4) as they stream past, with paths longer than the
// reader's buffer: every path git lists, in its order; and every index cut
// short is told damaged, never read as a shorter list.
func TestIndexReadAsItGoes(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, version := range []string{"2", "3", "4"} {
		t.Run("version "+version, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			git(t, dir, "config", "index.version", version)
			long := strings.Repeat("d", 200) + "/" + strings.Repeat("e", 200) + "/" + strings.Repeat("f", 200)
			files := map[string]string{"a.go": "a", "b/c.go": "c", "b/d/e.go": "e", long + "/x": "x", long + "/y": "y"}
			for i := 0; i < 300; i++ {
				files[fmt.Sprintf("many/%03d/file.txt", i)] = "m"
			}
			writeTree(t, dir, files)
			git(t, dir, "add", ".")
			if version == "3" {
				git(t, dir, "update-index", "--skip-worktree", "a.go") // an extended flag
			}
			want := strings.Fields(git(t, dir, "ls-files"))
			b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			read := func(b []byte) ([]string, string) {
				var got []string
				why := readIndex(iotest.OneByteReader(bytes.NewReader(b)), int64(len(b)), 20, func(int) {}, func(p []byte) { got = append(got, string(p)) })
				return got, why
			}
			if got, why := read(b); why != "" || !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("read path %d as %.80q, git lists %.80q (%s)", i, got[i], want[i], why)
					}
				}
				t.Fatalf("read %d paths (%s), git lists %d", len(got), why, len(want))
			}
			for cut := 0; cut < len(b)-20; cut += 1 + cut/50 {
				// (the checksum at the end is not read: an index cut there still reads)
				if got, why := read(b[:cut]); why == "" && len(got) < len(want) {
					t.Fatalf("index cut at %d of %d read as %d paths, no damage told", cut, len(b), len(got))
				}
			}
		})
	}
}
