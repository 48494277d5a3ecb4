package store

import (
	"errors"
	"slices"
	"testing"
)

// A label that could never name its checkpoint is refused, saying why.
func TestCheckLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		label string
		want  LabelProblem // 0: taken
	}{
		{"release-1", 0},
		{"before the refactor", 0},
		{"v1.2", 0},
		{"déjà vu", 0},
		{DefaultLabel, 0},
		{"2026-11-22", 0}, // (no id starts with it)
		{"123_", 0},
		{"a@b", 0},
		{"a:/b", 0},
		{"", LabelEmpty},
		{"   ", LabelEmpty},
		{"\t", LabelEmpty},
		{"a\tb", LabelControl},
		{" release", LabelSpaced},
		{"release ", LabelSpaced},
		{"two\nlines", LabelControl},
		{"red\x1b[31m", LabelControl},
		{"csi\u009b", LabelControl},
		{"\xff", LabelControl},
		{"-x", LabelOption},
		{"--force", LabelOption},
		{"@0", LabelPosition},
		{"@release", LabelPosition},
		{":/with", LabelSearch},
		{"2", LabelID},
		{"1999", LabelID},
		{"20261122", LabelID},
		{"20261122_", LabelID},
		{"20261122_1430", LabelID},
		{"20261122_143052_001", LabelID},
		{"20261122_143052_1000", LabelID},
	} {
		err := CheckLabel(c.label)
		var le *LabelError
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("CheckLabel(%q) = %v, want it taken", c.label, err)
		case c.want != 0 && (!errors.As(err, &le) || le.Problem != c.want):
			t.Errorf("CheckLabel(%q) = %v, want problem %d", c.label, err, c.want)
		case c.want != 0 && le.Error() == "":
			t.Errorf("CheckLabel(%q): no message", c.label)
		}
	}
}

// A label never takes a name from another checkpoint: not its description,
// and not its label unless Force moves it (that one stays pinned). Save's
// --pin follows the same rules.
func TestPinTakesNoOtherName(t *testing.T) {
	t.Parallel()
	s := project(t)
	a := save(t, s, SaveOptions{Description: "first"})
	write(t, s.Project, "x", "1")
	b := save(t, s, SaveOptions{Description: "second"})
	write(t, s.Project, "x", "2")
	c := save(t, s, SaveOptions{})
	refused := func(err error, p LabelProblem, holder string) {
		t.Helper()
		var le *LabelError
		if !errors.As(err, &le) || le.Problem != p || le.Holder != holder {
			t.Errorf("got %v, want problem %d naming %s", err, p, holder)
		}
	}
	names := func(name, id string) {
		t.Helper()
		if got, err := s.Resolve(name); err != nil || got.ID != id {
			t.Errorf("%q names %v, %v; want %s", name, got, err, id)
		}
	}
	pin := func(cp *Checkpoint, o PinOptions) ([]string, error) {
		cp, err := s.Load(cp.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s.Pin(ctx, cp, o)
	}

	_, err := pin(b, PinOptions{Label: "first"})
	refused(err, LabelDescription, a.ID)
	names("first", a.ID)
	if _, err := pin(a, PinOptions{Label: "first"}); err != nil { // its own description
		t.Errorf("pin a as its own description: %v", err)
	}
	if _, err := pin(c, PinOptions{Label: "rel"}); err != nil {
		t.Fatal(err)
	}
	_, err = pin(b, PinOptions{Label: "rel"})
	refused(err, LabelTaken, c.ID)
	names("rel", c.ID)
	if moved, err := pin(c, PinOptions{Label: "rel"}); err != nil || moved != nil { // again: nothing moves
		t.Errorf("pin c as rel again: %v, %v", moved, err)
	}
	_, err = pin(b, PinOptions{Label: "@0"})
	refused(err, LabelPosition, "")

	moved, err := pin(b, PinOptions{Label: "rel", Force: true})
	if err != nil || !slices.Equal(moved, []string{c.ID}) {
		t.Fatalf("pin --force: moved %v, %v; want from %s", moved, err, c.ID)
	}
	names("rel", b.ID)
	if got, _ := s.Load(c.ID); got.Pinned != DefaultLabel {
		t.Errorf("the checkpoint the label left is pinned as %q, want %q", got.Pinned, DefaultLabel)
	}
	if _, err := pin(a, PinOptions{Label: DefaultLabel}); err != nil { // the default is anyone's
		t.Errorf("pin a as %s beside c: %v", DefaultLabel, err)
	}

	ids, _ := s.IDs()
	_, err = s.Save(ctx, SaveOptions{Pin: "rel"})
	refused(err, LabelTaken, b.ID)
	_, err = s.Save(ctx, SaveOptions{Pin: "second"})
	refused(err, LabelDescription, b.ID)
	_, err = s.Save(ctx, SaveOptions{Pin: ":/x"})
	refused(err, LabelSearch, "")
	if after, _ := s.IDs(); len(after) != len(ids) {
		t.Errorf("a refused save made a checkpoint: %d, then %d", len(ids), len(after))
	}
	d := save(t, s, SaveOptions{Description: "third", Pin: "third"})
	names("third", d.ID)
}

// Pinned finds every pinned checkpoint, newest first, and only those: text
// that reads "pinned": in a description is not a label.
func TestPinned(t *testing.T) {
	t.Parallel()
	s := project(t)
	a := save(t, s, SaveOptions{Description: `"pinned": "no"`, Pin: "release-1"})
	write(t, s.Project, "x", "1")
	save(t, s, SaveOptions{Description: `"pinned": "no"`})
	write(t, s.Project, "x", "2")
	c := save(t, s, SaveOptions{Pin: DefaultLabel})
	pinned, err := s.Pinned()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pinned {
		got = append(got, p.ID+" "+p.Pinned)
	}
	if want := []string{c.ID + " " + DefaultLabel, a.ID + " release-1"}; !slices.Equal(got, want) {
		t.Errorf("Pinned: %q, want %q", got, want)
	}
}
