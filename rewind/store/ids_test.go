package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// NewestIDs counts what IDs lists and gives its newest, newest first,
// whatever order the folder reads in.
func TestNewestIDs(t *testing.T) {
	t.Parallel()
	s := project(t)
	var want []string
	for _, id := range []string{"20261123_101010_002", "20261123_101010_010", "20261122_235959_001", "20261123_101010_001", "20261123_090000_003"} {
		os.MkdirAll(s.checkpointDir(id), 0o755)
		want = append(want, id)
	}
	os.MkdirAll(filepath.Join(s.checkpointsDir(), ".gc-20261123_101010_011"), 0o755) // not a checkpoint
	slices.Sort(want)
	slices.Reverse(want)
	for _, n := range []int{1, 3, 5, 8} {
		count, got, err := s.NewestIDs(n)
		if err != nil || count != 5 || !slices.Equal(got, want[:min(n, 5)]) {
			t.Errorf("NewestIDs(%d) = %d, %v, %v; want 5, %v", n, count, got, err, want[:min(n, 5)])
		}
	}
	ids, _ := s.IDs()
	if len(ids) != 5 {
		t.Errorf("IDs lists %d, NewestIDs counts 5", len(ids))
	}
}

// Ids stay unique, fixed-width and in the order they were made, as
// strings, whatever the clock does: ahead of it (the newest id was made
// while the clock ran ahead) and after it steps back a day, past 999 ids
// in one second (a hundred past: the counter rolls over into the next
// second in both cases).
func TestNewIDWhenTheClockIsBehind(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 11, 22, 14, 30, 52, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		first string        // the store's newest id before the run
		step  time.Duration // how the clock moves after the first id
	}{
		{"newest ahead of the clock", "20261123_000000_998", 0},
		{"clock steps back a day", "", -24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := project(t)
			prev := tc.first
			if prev != "" {
				os.MkdirAll(s.checkpointDir(prev), 0o755)
			}
			var made []string
			for i := range 1100 {
				now := clock
				if i > 0 {
					now = clock.Add(tc.step)
				}
				id := s.newID(now)
				if len(id) != 19 || !isID(id) || id <= prev {
					t.Fatalf("id %d is %q after %q: want a 19-character id that sorts after it", i, id, prev)
				}
				if err := os.Mkdir(s.checkpointDir(id), 0o755); err != nil {
					t.Fatalf("id %d, %s, is taken: %v", i, id, err)
				}
				made, prev = append(made, id), id
			}
			ids, _ := s.IDs()
			want := made
			if tc.first != "" {
				want = append([]string{tc.first}, made...)
			}
			if !slices.Equal(ids, want) {
				t.Errorf("IDs lists %d ids out of the order they were made in", len(ids))
			}
			if _, newest, _ := s.NewestIDs(2); !slices.Equal(newest, []string{made[len(made)-1], made[len(made)-2]}) {
				t.Errorf("NewestIDs = %v, want the last two made", newest)
			}

			// Real checkpoints on top, with the clock still behind: @0 is the
			// newest, and list shows them newest first.
			s.Now = func() time.Time { return clock.Add(tc.step) }
			a := save(t, s, SaveOptions{Description: "a"})
			write(t, s.Project, "x", "1")
			b := save(t, s, SaveOptions{Description: "b"})
			if a.ID <= prev || b.ID <= a.ID {
				t.Fatalf("saves made %s then %s after %s", a.ID, b.ID, prev)
			}
			if c, err := s.Resolve("@0"); err != nil || c.ID != b.ID {
				t.Errorf("@0 is %v, %v; want %s", c, err, b.ID)
			}
			if c, err := s.Resolve("@1"); err != nil || c.ID != a.ID {
				t.Errorf("@1 is %v, %v; want %s", c, err, a.ID)
			}
			cps, _, _ := s.List()
			if len(cps) != 2 || cps[0].ID != b.ID || cps[1].ID != a.ID {
				t.Errorf("list is not newest first: %v", cps)
			}
		})
	}
}

// A store may hold ids made before the counter rolled over into the
// seconds — 20261122_143052_1000 after _999 — : they sort by their count,
// @0 names the newest, and the next id sorts after them.
func TestIDsPastACountOf999(t *testing.T) {
	t.Parallel()
	s := project(t)
	a := save(t, s, SaveOptions{Description: "a"})
	write(t, s.Project, "x", "1")
	b := save(t, s, SaveOptions{Description: "b"})
	const base = "20991122_143052" // (after the ids of the saves' layers)
	for c, id := range map[*Checkpoint]string{a: base + "_999", b: base + "_1000"} {
		if err := os.Rename(c.Dir, s.checkpointDir(id)); err != nil {
			t.Fatal(err)
		}
		c.ID, c.Dir = id, s.checkpointDir(id)
		if err := writeMetadata(c.Dir, &c.Metadata); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(s.checkpointDir(base+"_998"), 0o755)
	want := []string{base + "_998", base + "_999", base + "_1000"}
	if ids, _ := s.IDs(); !slices.Equal(ids, want) {
		t.Errorf("IDs = %v, want %v", ids, want)
	}
	if _, newest, _ := s.NewestIDs(2); !slices.Equal(newest, []string{want[2], want[1]}) {
		t.Errorf("NewestIDs = %v, want %v", newest, []string{want[2], want[1]})
	}
	for name, id := range map[string]string{"@0": want[2], "@1": want[1], "b": want[2]} {
		if c, err := s.Resolve(name); err != nil || c.ID != id {
			t.Errorf("Resolve(%q) = %v, %v; want %s", name, c, err, id)
		}
	}
	if id := s.newID(time.Date(2099, 11, 22, 14, 30, 52, 0, time.UTC)); id != "20991122_143053_001" {
		t.Errorf("the id after %s is %s, want 20991122_143053_001", want[2], id)
	}
}
