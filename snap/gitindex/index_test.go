package gitindex

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

// TestPathsKeepWhatGitTracksUnderThePrefix: the paths under the prefix,
// relative to it, sorted, once each, whatever order they came in.
func TestPathsKeepWhatGitTracksUnderThePrefix(t *testing.T) {
	t.Parallel()
	for _, in := range [][]string{
		{"a", "sub/b", "sub/b", "sub/c/d", "sub2/e", "z"},
		{"z", "sub/c/d", "a", "sub/b", "sub2/e", "sub/b"},
	} {
		b := pathsBuilder{prefix: "sub"}
		for _, p := range in {
			b.add([]byte(p))
		}
		l := b.done()
		if got, want := allPaths(l), []string{"b", "c/d"}; !slices.Equal(got, want) {
			t.Errorf("from %q: %q, want %q", in, got, want)
		}
		if !l.Has("b") || l.Has("c") || !l.AnyUnder("c") || l.AnyUnder("b") || l.AnyUnder("c/d") {
			t.Errorf("from %q: Has or AnyUnder disagrees with %q", in, allPaths(l))
		}
		for s, want := range map[string]string{"": "b", "c": "c/d", "c/d": "c/d", "zz": ""} {
			if got := l.first(s, nil); string(got) != want {
				t.Errorf("first path not before %q: %q, want %q", s, got, want)
			}
		}
	}
}

// allPaths lists l's paths, in its order.
func allPaths(l *Paths) []string {
	var out []string
	for p := l.first("", nil); p != nil; p = l.first(string(p)+"\x00", nil) {
		out = append(out, string(p))
	}
	return out
}

// TestPathsFindWhatASortedSliceFinds: a list of many paths sharing
// their starts (blocks of them, in and out of order as given) holds every
// path once, in order, and finds for any string the first path not before
// it, as a search of the sorted paths does.
func TestPathsFindWhatASortedSliceFinds(t *testing.T) {
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
		var b pathsBuilder
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
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is the oracle here")
	}
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

// git runs git in dir, away from the developer's configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "XDG_CONFIG_HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
