package snap

import (
	"slices"
	"testing"
)

// TestRespeltQueueHoldsOnlyWhatItMust: a change is handed on as soon as
// no spelling that could pair with what comes before it can still come;
// a pair stands at the snapshot's spelling; a name out of ASCII waits to
// the end.
func TestRespeltQueueHoldsOnlyWhatItMust(t *testing.T) {
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
	step(q.added(file("b/Été")), a...)                      // waits to the end
	step(q.change(Change{Op: OpModified, Path: "r"}), a...)
	step(q.deleted(file("readme")), append(a, "modified Z ")...) // the pair stands here, after r
	step(q.change(Change{Op: OpModified, Path: "zz"}), append(a, "modified Z ")...)
	step(q.finish(), append(a, "modified Z ", "added b/Été ", "modified r ", "renamed readme README", "modified zz ")...)
}
