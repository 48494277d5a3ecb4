package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// NewestIDs counts what IDs lists and gives its newest, newest first,
// whatever order the folder reads in.
func TestNewestIDs(t *testing.T) {
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
