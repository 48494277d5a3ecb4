package store

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"rewind.dev/rewind/store/record"
)

// A checkpoint id is the time it was made (UTC, to the second) and a count
// within that second: 20261122_143052_001 (its form is package record's).
// Ids are made in order: each sorts after every id the store has used, as a
// string and by CompareIDs, whatever the clock says (see newID).

// maxCount is the largest count newID writes: three digits keep every id it
// makes 19 characters long, so that ids sort as strings.
const maxCount = 999

// newID returns an id after every id the store has used (checkpoints, and
// layer archives that outlive theirs), so "newest" is always the largest,
// even after gc. Order never rests on the clock going forward: when the
// clock is behind the newest id (it stepped back, or a checkpoint was taken
// while it ran ahead), the new id takes the newest id's time and the next
// count; and where the count would pass 999 the time moves on a second and
// the count starts again at 001. An id's time is thus never earlier than
// the clock's when it was made, and at most one second later per 999
// checkpoints made while the clock was behind. Call it under the lock.
func (s *Store) newID(now time.Time) string {
	last := ""
	ids, _ := s.IDs()
	if len(ids) > 0 {
		last = ids[len(ids)-1]
	}
	if des, err := os.ReadDir(s.layersDir()); err == nil {
		for _, de := range des {
			if id, ok := strings.CutSuffix(de.Name(), ".tar.gz"); ok && isID(id) && CompareIDs(id, last) > 0 {
				last = id
			}
		}
	}
	t, n := now.UTC().Truncate(time.Second), 1
	if lastT, ok := TimeOfID(last); ok && !lastT.Before(t) {
		t, n = lastT, 1
		if c, err := strconv.Atoi(last[16:]); err == nil {
			n = c + 1
		}
		if n > maxCount { // (an id made before the count rolled over may hold more than three digits)
			t, n = t.Add(time.Second), 1
		}
	}
	return record.FormatID(t, n)
}

// isID reports whether name has the form of a checkpoint id (record.IsID).
func isID(name string) bool { return record.IsID(name) }

// TimeOfID is when a checkpoint id was made (from the id alone).
func TimeOfID(id string) (time.Time, bool) { return record.TimeOfID(id) }

// CompareIDs orders checkpoint ids oldest first (see record.CompareIDs):
// wherever ids are ordered or compared, it is by CompareIDs.
func CompareIDs(a, b string) int { return record.CompareIDs(a, b) }

// maxID is the newer of two ids (CompareIDs).
func maxID(a, b string) string {
	if CompareIDs(a, b) < 0 {
		return b
	}
	return a
}

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
		if !record.IDShaped(name) {
			continue
		}
		count++
		if len(newest) == n && CompareIDs(name, newest[n-1]) < 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(newest, name, func(a, b string) int { return CompareIDs(b, a) })
		newest = slices.Insert(newest, i, name)
		if len(newest) > n {
			newest = newest[:n]
		}
	}
	return count, newest, nil
}
