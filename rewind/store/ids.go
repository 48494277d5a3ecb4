package store

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// NewestIDs counts the checkpoint folders and returns the newest n ids,
// newest first, reading only the folder's names: the status line runs on
// every refresh of the agent's screen, and a month's store holds 10,000
// checkpoints that IDs would sort.
func (s *Store) NewestIDs(n int) (count int, newest []string, err error) {
	f, err := os.Open(s.checkpointsDir())
	if err != nil {
		return 0, nil, fmt.Errorf("read checkpoints of %s: %w", s.Dir, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, nil, fmt.Errorf("read checkpoints of %s: %w", s.Dir, err)
	}
	for _, name := range names {
		if len(name) < 19 || name[8] != '_' || name[15] != '_' { // (isID's shape, without its time parse)
			continue
		}
		count++
		if len(newest) == n && name < newest[n-1] {
			continue
		}
		i, _ := slices.BinarySearchFunc(newest, name, func(a, b string) int { return strings.Compare(b, a) })
		newest = slices.Insert(newest, i, name)
		if len(newest) > n {
			newest = newest[:n]
		}
	}
	return count, newest, nil
}
