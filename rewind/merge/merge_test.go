package merge

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var labels = Labels{Ours: "ours", Theirs: "theirs"}

// cases are merges whose results are written out, and checked against git
// merge-file too (TestAgainstGit).
var cases = []struct {
	name               string
	base, ours, theirs string
	want               string
	conflicts          int
}{
	{name: "theirs only", base: "a\nb\nc\n", ours: "a\nb\nc\n", theirs: "a\nB\nc\n", want: "a\nB\nc\n"},
	{name: "ours only", base: "a\nb\nc\n", ours: "a\nB\nc\n", theirs: "a\nb\nc\n", want: "a\nB\nc\n"},
	{name: "apart", base: "1\n2\n3\n4\n5\n6\n7\n", ours: "one\n2\n3\n4\n5\n6\n7\n", theirs: "1\n2\n3\n4\n5\n6\nseven\n",
		want: "one\n2\n3\n4\n5\n6\nseven\n"},
	{name: "one line apart", base: "1\n2\n3\n", ours: "one\n2\n3\n", theirs: "1\n2\nthree\n", want: "one\n2\nthree\n"},
	{name: "touching", base: "1\n2\n", ours: "one\n2\n", theirs: "1\ntwo\n",
		want: "<<<<<<< ours\none\n2\n=======\n1\ntwo\n>>>>>>> theirs\n", conflicts: 1},
	{name: "same change", base: "1\n2\n3\n", ours: "1\nTWO\n3\n", theirs: "1\nTWO\n3\n", want: "1\nTWO\n3\n"},
	{name: "overlap", base: "1\n2\n3\n", ours: "1\nours\n3\n", theirs: "1\ntheirs\n3\n",
		want: "1\n<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\n3\n", conflicts: 1},
	{name: "refined", base: "1\n2\n3\n4\n5\n", ours: "1\nx\n3\ny\n5\n", theirs: "1\nx\n3\nz\n5\n",
		want: "1\nx\n3\n<<<<<<< ours\ny\n=======\nz\n>>>>>>> theirs\n5\n", conflicts: 1},
	{name: "insert both same point", base: "a\nb\n", ours: "a\nx\nb\n", theirs: "a\ny\nb\n",
		want: "a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\nb\n", conflicts: 1},
	{name: "delete vs edit", base: "a\nb\nc\n", ours: "a\nc\n", theirs: "a\nB\nc\n",
		want: "a\n<<<<<<< ours\n=======\nB\n>>>>>>> theirs\nc\n", conflicts: 1},
	{name: "no final newline", base: "a\nb", ours: "a\nours", theirs: "a\ntheirs",
		want: "a\n<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\n", conflicts: 1},
	{name: "no final newline, clean", base: "a\nb\nc", ours: "A\nb\nc", theirs: "a\nb\nC", want: "A\nb\nC"},
	{name: "crlf", base: "a\r\nb\r\nc\r\n", ours: "a\r\nx\r\nc\r\n", theirs: "a\r\ny\r\nc\r\n",
		want: "a\r\n<<<<<<< ours\r\nx\r\n=======\r\ny\r\n>>>>>>> theirs\r\nc\r\n", conflicts: 1},
	{name: "empty base", base: "", ours: "x\n", theirs: "y\n",
		want: "<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n", conflicts: 1},
	{name: "both delete all", base: "a\nb\n", ours: "", theirs: "", want: ""},
	{name: "joined across a brace", base: "f {\n1\n}\ng {\n2\n}\n", ours: "f {\nA\n}\ng {\nB\n}\n", theirs: "f {\nC\n}\ng {\nD\n}\n",
		want: "f {\n<<<<<<< ours\nA\n}\ng {\nB\n=======\nC\n}\ng {\nD\n>>>>>>> theirs\n}\n", conflicts: 1},
	{name: "revert a middle step", // the state after the step is the base, ours the tree now, theirs before the step
		base:   "first\nmiddle\nsecond\nthird\n\n\n\nend\n",
		ours:   "first\nmiddle\nsecond\nthird\n\n\n\nend and more\n",
		theirs: "first\nsecond\nthird\n\n\n\nend\n",
		want:   "first\nsecond\nthird\n\n\n\nend and more\n"},
}

func TestText(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Text([]byte(c.base), []byte(c.ours), []byte(c.theirs), labels)
			if string(r.Text) != c.want || r.Conflicts != c.conflicts {
				t.Errorf("got %d conflicts:\n%s\nwant %d:\n%s", r.Conflicts, r.Text, c.conflicts, c.want)
			}
		})
	}
}

// TestAgainstGit compares every case, and random ones, with git merge-file
// (git's default merge level and style, no configuration read).
func TestAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	for _, c := range cases {
		checkGit(t, c.name, c.base, c.ours, c.theirs)
	}
	rnd := rand.New(rand.NewSource(1))
	n := 300
	if testing.Short() {
		n = 40
	}
	for i := range n {
		base := randomText(rnd, 1+rnd.Intn(30))
		ours, theirs := mutate(rnd, base, "o"), mutate(rnd, base, "t")
		if i%5 == 0 {
			theirs = mutate(rnd, ours, "t") // overlapping more often
		}
		checkGit(t, fmt.Sprintf("random %d", i), base, ours, theirs)
	}
}

var unique int

// randomText is n distinct lines, so that every diff is unambiguous and
// git's and ours must agree line for line.
func randomText(rnd *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		unique++
		fmt.Fprintf(&b, "line %d\n", unique)
		if rnd.Intn(8) == 0 {
			unique++
			fmt.Fprintf(&b, "}\n%d\n", unique) // lines without a letter, between others
		}
	}
	return b.String()
}

func mutate(rnd *rand.Rand, text, side string) string {
	ls := strings.SplitAfter(text, "\n")
	ls = ls[:len(ls)-1]
	var out []string
	for _, l := range ls {
		switch rnd.Intn(10) {
		case 0: // delete
		case 1: // replace
			unique++
			out = append(out, fmt.Sprintf("%s changed %d\n", side, unique))
		case 2: // insert before
			unique++
			out = append(out, fmt.Sprintf("%s added %d\n", side, unique), l)
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func checkGit(t *testing.T, name, base, ours, theirs string) {
	t.Helper()
	dir := t.TempDir()
	for f, s := range map[string]string{"base": base, "ours": ours, "theirs": theirs} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", "ours", "base", "theirs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	out, err := cmd.Output()
	conflicts := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		conflicts = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r := Text([]byte(base), []byte(ours), []byte(theirs), labels)
	if !bytes.Equal(r.Text, out) || r.Conflicts != conflicts {
		t.Errorf("%s: differs from git merge-file\nbase:\n%s\nours:\n%s\ntheirs:\n%s\ngit (%d conflicts):\n%s\nours (%d conflicts):\n%s",
			name, base, ours, theirs, conflicts, out, r.Conflicts, r.Text)
	}
}

func TestDiffIsAnEditScript(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	for range 500 {
		a, b := randomInts(rnd), randomInts(rnd)
		hs := diff(a, b)
		var got []int
		i := 0
		for _, h := range hs {
			got = append(got, a[i:h.a0]...)
			got = append(got, b[h.b0:h.b1]...)
			i = h.a1
		}
		got = append(got, a[i:]...)
		if fmt.Sprint(got) != fmt.Sprint(b) {
			t.Fatalf("diff(%v, %v) = %v does not make b", a, b, hs)
		}
		if lcs := lcsLen(a, b); len(a)+len(b)-2*lcs != edits(hs) {
			t.Fatalf("diff(%v, %v) = %v is not shortest (%d edits, want %d)", a, b, hs, edits(hs), len(a)+len(b)-2*lcs)
		}
	}
}

func randomInts(rnd *rand.Rand) []int {
	out := make([]int, rnd.Intn(12))
	for i := range out {
		out[i] = rnd.Intn(4)
	}
	return out
}

func edits(hs []hunk) int {
	n := 0
	for _, h := range hs {
		n += h.a1 - h.a0 + h.b1 - h.b0
	}
	return n
}

func lcsLen(a, b []int) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

func TestBinary(t *testing.T) {
	if Binary([]byte("text\n")) || !Binary([]byte("a\x00b")) || Binary(append(bytes.Repeat([]byte("a"), BinarySniff), 0)) {
		t.Error("Binary is not git's rule (a NUL in the first 8000 bytes)")
	}
}

func FuzzText(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")
	f.Add("", "x", "y\r\n")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		r := Text([]byte(base), []byte(ours), []byte(theirs), labels)
		if r.Conflicts == 0 {
			// Merging the same change twice changes nothing more.
			if again := Text([]byte(base), r.Text, []byte(theirs), labels); again.Conflicts == 0 && !bytes.Equal(again.Text, r.Text) && ours == base {
				t.Errorf("merge of theirs into itself differs")
			}
		}
		if ours == theirs && (r.Conflicts != 0 || string(r.Text) != ours) {
			t.Errorf("equal sides: %d conflicts, %q", r.Conflicts, r.Text)
		}
		if ours == base && string(r.Text) != theirs || theirs == base && string(r.Text) != ours {
			t.Errorf("one side unchanged, but the result is not the other: %q", r.Text)
		}
	})
}
