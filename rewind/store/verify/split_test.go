package verify

import (
	"slices"
	"testing"
)

// TestSplitByWork: runs of about equal work, every checkpoint in exactly
// one, none empty while there are checkpoints enough.
func TestSplitByWork(t *testing.T) {
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = string(rune('a' + i%26))
	}
	cases := []struct {
		name  string
		parts int
		work  func(i int) int64
		want  []int
	}{
		{"even", 2, func(int) int64 { return 1 }, []int{0, 50, 100}},
		{"even in 4", 4, func(int) int64 { return 1 }, []int{0, 25, 50, 75, 100}},
		// Work growing with the index (transcripts captured whole again,
		// each larger): the first run takes more checkpoints.
		{"growing", 2, func(i int) int64 { return int64(i) }, []int{0, 71, 100}},
		// All the work in the last checkpoint: the runs still split the ids.
		{"one heavy", 2, func(i int) int64 { return map[bool]int64{true: 1000, false: 0}[i == 99] }, []int{0, 99, 100}},
	}
	for _, c := range cases {
		w := make([]int64, len(ids))
		for i := range w {
			w[i] = c.work(i)
		}
		got := splitByWork(ids, c.parts, w)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: bounds %v, want %v", c.name, got, c.want)
		}
	}
	if got := splitByWork(ids[:1], 2, []int64{5}); !slices.Equal(got, []int{0, 1, 1}) {
		t.Errorf("one checkpoint in 2 runs: %v", got)
	}
}
