package snap

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestRespeltQueueHoldsOnlyWhatItMust: a change is handed on as soon as
// no spelling that could pair with what comes before it can still come;
// a pair stands at the snapshot's spelling; a name out of ASCII waits
// past the names that start as it does (to the end of its folder, or of
// the tree).
func TestRespeltQueueHoldsOnlyWhatItMust(t *testing.T) {
	t.Parallel()
	var out []string
	q := newRespeltQueue(Folding{Case: true, Norm: true}, func(string, string) bool { return true },
		func(e, o *Entry) (Op, error) { return "", nil }, // (the same but for the case of the name: renamed)
		func(ch Change) error {
			out = append(out, string(ch.Op)+" "+ch.Path+" "+ch.TreePath)
			return nil
		})
	step := func(err error, want ...string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, want) {
			t.Fatalf("handed on %q, want %q", out, want)
		}
	}
	file := func(p string) *Entry { return &Entry{Path: p, Kind: KindFile} }
	step(q.change(Change{Op: OpModified, Path: "0"}), "modified 0 ") // nothing waits: handed on
	a := []string{"modified 0 ", "renamed A.txt a.txt", "modified B "}
	step(q.deleted(file("A.txt")), a[0])                    // may be a.txt, yet to come
	step(q.change(Change{Op: OpModified, Path: "B"}), a[0]) // behind it
	step(q.added(file("README")), a[0])                     // may be the snapshot's readme
	step(q.change(Change{Op: OpModified, Path: "Z"}), a[0]) // behind both
	step(q.added(file("a.txt")), a...)                      // paired: README still waits
	step(q.added(file("b/Été")), a...)                      // waits to the end of b/, and behind README
	step(q.change(Change{Op: OpModified, Path: "r"}), a...)
	a = append(a, "modified Z ", "added b/Été ", "modified r ", "renamed readme README")
	step(q.deleted(file("readme")), a...)                        // the pair stands here, after r
	step(q.deleted(file("s/cafe\u0301")), a...)                  // may be s/café, s/CAFÉ…
	step(q.change(Change{Op: OpModified, Path: "s/cafz"}), a...) // behind it
	step(q.change(Change{Op: OpModified, Path: "s/caf\u00e9s"}), a...)
	a = append(a, "deleted s/cafe\u0301 ", "modified s/cafz ", "modified s/caf\u00e9s ", "modified s/cb ")
	step(q.change(Change{Op: OpModified, Path: "s/cb"}), a...) // no spelling of it comes after s/caf…
	step(q.added(file("t/\u00e9t\u00e9")), a...)
	step(q.change(Change{Op: OpModified, Path: "t/\u00e9z"}), a...)
	a = append(a, "added t/\u00e9t\u00e9 ", "modified t/\u00e9z ", "modified u ")
	step(q.change(Change{Op: OpModified, Path: "u"}), a...) // nor after the end of t/
	step(q.added(file("\u00e9")), a...)                     // at the top: waits to the end
	step(q.change(Change{Op: OpModified, Path: "\u00fc"}), a...)
	step(q.finish(), append(a, "added \u00e9 ", "modified \u00fc ")...)
}

// TestLastSpellingBoundsEverySpelling: of random paths spelt from letters
// with many spellings (case, composed and decomposed), every spelling of
// one comes at or before the bound lastSpelling gives it.
func TestLastSpellingBoundsEverySpelling(t *testing.T) {
	t.Parallel()
	// Each letter's spellings; one is drawn for the path, another for the
	// spelling it is compared with.
	letters := [][]string{
		{"a", "A"}, {"e", "E"}, {"f", "F"}, {"z", "Z"}, {"0"}, {"."}, {"/"},
		{"\u00e9", "\u00c9", "e\u0301", "E\u0301"}, {"\u00f6", "\u00d6", "o\u0308", "O\u0308"},
		{"\u03c9", "\u03a9"}, {"\u1f7d", "\u03c9\u0301"}, {"\u00df", "\u1e9e"}, {"\uac00", "\u1100\u1161"}, {"\u65e5"},
	}
	fold := Folding{Case: true, Norm: true}
	rng := rand.New(rand.NewSource(5))
	for range 20000 {
		var word []int
		for range 1 + rng.Intn(7) {
			word = append(word, rng.Intn(len(letters)))
		}
		spell := func() string {
			var b strings.Builder
			for _, l := range word {
				b.WriteString(letters[l][rng.Intn(len(letters[l]))])
			}
			return b.String()
		}
		p := spell()
		if strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
			continue
		}
		last, ok := lastSpelling(fold, p)
		if !ok {
			continue
		}
		for range 8 {
			if q := spell(); fold.Key(q) == fold.Key(p) && comparePaths(q, last) > 0 {
				t.Fatalf("%+q is a spelling of %+q, after its bound %+q", q, p, last)
			}
		}
	}
}
