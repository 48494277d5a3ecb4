package record

import (
	"fmt"
	"strings"
	"time"
)

// A checkpoint id is the time it was made (UTC, to the second) and a count
// within that second: 20261122_143052_001. The store makes them in order
// (see CompareIDs).

// idTime is the layout of an id's time, its first 15 characters.
const idTime = "20060102_150405"

// FormatID is the id of time t (to the second, as it is) and count n.
func FormatID(t time.Time, n int) string {
	return fmt.Sprintf("%s_%03d", t.Format(idTime), n)
}

// IsID reports whether name has the form of a checkpoint id,
// 20261122_143052_001 (a store may hold ids whose count has more digits:
// see CompareIDs).
func IsID(name string) bool {
	if !IDShaped(name) {
		return false
	}
	_, ok := TimeOfID(name)
	return ok
}

// IDShaped reports whether name is digits with an underscore at 8 and 15,
// as an id is (IsID without its time parse).
func IDShaped(name string) bool {
	if len(name) < 19 || name[8] != '_' || name[15] != '_' {
		return false
	}
	for i, c := range name {
		if i != 8 && i != 15 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// TimeOfID is when a checkpoint id was made (from the id alone).
func TimeOfID(id string) (time.Time, bool) {
	if len(id) < 15 {
		return time.Time{}, false
	}
	t, err := time.Parse(idTime, id[:15])
	return t, err == nil
}

// CompareIDs orders checkpoint ids oldest first: by their time, then by
// their count as a number. The ids a store makes sort the same as strings,
// but a store may hold ids made before the count rolled over into the
// seconds, with four digits or more (20261122_143052_1000 after _999):
// wherever ids are ordered or compared, it is by CompareIDs. Names that are
// not ids compare as strings ("" before every id).
func CompareIDs(a, b string) int {
	if len(a) == len(b) || !IDShaped(a) || !IDShaped(b) { // (counts of one width compare as strings)
		return strings.Compare(a, b)
	}
	if c := strings.Compare(a[:15], b[:15]); c != 0 {
		return c
	}
	ca, cb := strings.TrimLeft(a[16:], "0"), strings.TrimLeft(b[16:], "0")
	if len(ca) != len(cb) {
		return len(ca) - len(cb)
	}
	if c := strings.Compare(ca, cb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
