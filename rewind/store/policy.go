package store

import (
	"slices"
	"time"
)

// The policy gc applies (GCOptions) speaks of the checkpoints a person sees:
// the ones list shows, numbered by @N. A restore's backup is not one of
// them, and never takes a place among them:
//
//   - --keep N keeps the newest N checkpoints list shows; a checkpoint goes
//     when N that list shows are newer than it — a backup too, so the
//     backups taken since the oldest of those N stay with them;
//   - --max-age deletes what is older than the age, backups too;
//   - --max-bytes deletes restore backups first, oldest first, then the
//     checkpoints list shows, oldest first, until the store fits.
//
// Never deleted: the newest checkpoint, the newest that list shows, pinned
// ones, and the backups undo-restore and redo need within their reach
// (History.inReach, UndoReach) — nor, by gc's other rules, anything older
// than a checkpoint it cannot read, or what a checkpoint that stays needs
// and cannot be read.

// gcItem is a checkpoint as the policy judges it.
type gcItem struct {
	id      string
	created time.Time
	bytes   int64 // its folder's, as max_bytes counts them
	backup  bool
}

// judge decides by the policy which of items (the checkpoints that read,
// oldest first) go, given the bytes the store holds (total; max_bytes
// only). It returns them oldest first, and, sorted, the ones the policy
// would delete that stay because kept says so.
func (o GCOptions) judge(items []gcItem, total int64, now time.Time, kept func(id string) bool) (goes, protected []string) {
	newer := make([]int, len(items)) // how many that list shows are newer than each
	newestShown, shown := -1, 0
	for i := len(items) - 1; i >= 0; i-- {
		newer[i] = shown
		if !items[i].backup {
			shown++
			if newestShown < 0 {
				newestShown = i
			}
		}
	}
	// Backups first, so that max_bytes deletes them before any checkpoint
	// list shows; each kind oldest first.
	order := make([]int, 0, len(items))
	for _, backups := range []bool{true, false} {
		for i, it := range items {
			if it.backup == backups {
				order = append(order, i)
			}
		}
	}
	left := total
	for _, i := range order {
		it := items[i]
		if i == len(items)-1 || i == newestShown {
			continue
		}
		byKeep := o.Keep > 0 && newer[i] >= o.Keep
		byAge := o.MaxAge > 0 && now.Sub(it.created) > o.MaxAge
		byBytes := o.MaxBytes > 0 && left > o.MaxBytes
		if !byKeep && !byAge && !byBytes {
			continue
		}
		if kept(it.id) {
			protected = append(protected, it.id)
			continue
		}
		goes = append(goes, it.id)
		left -= it.bytes
	}
	slices.Sort(goes)
	slices.Sort(protected)
	return goes, protected
}
