// Package retention is the policy gc applies: which checkpoints go by
// --keep, --max-age and --max-bytes (or the configured retention). It is
// pure: it judges a list of checkpoints as the store describes them, and
// reads and deletes nothing. What must stay whatever the policy says
// (pinned ones, the backups undo-restore needs, what a damaged checkpoint
// might read) the store decides, and tells Judge.
package retention

import (
	"slices"
	"time"
)

// The policy speaks of the checkpoints a person sees: the ones list shows,
// numbered by @N. A restore's backup is not one of them, and never takes a
// place among them:
//
//   - --keep N keeps the newest N checkpoints list shows; a checkpoint goes
//     when N that list shows are newer than it — a backup too, so the
//     backups taken since the oldest of those N stay with them;
//   - --max-age deletes what is older than the age, backups too;
//   - --max-bytes deletes restore backups first, oldest first, then the
//     checkpoints list shows, oldest first, until the store fits.
//
// Never deleted: the newest checkpoint and the newest that list shows. The
// store keeps more (see Judge's kept): pinned ones, and the backups
// undo-restore and redo need within their reach — nor, by gc's other
// rules, anything older than a checkpoint it cannot read, or what a
// checkpoint that stays needs and cannot be read.

// Policy is a retention policy. Zero fields do not limit.
type Policy struct {
	Keep     int           // keep the newest Keep checkpoints list shows
	MaxAge   time.Duration // delete checkpoints older than this
	MaxBytes int64         // delete the oldest, restore backups first, until the store uses at most this
}

// Item is a checkpoint as the policy judges it.
type Item struct {
	ID      string
	Created time.Time
	Bytes   int64 // its folder's, as max_bytes counts them
	Backup  bool  // a restore's backup, which list does not show
}

// Judge decides by the policy which of items (the checkpoints that read,
// oldest first) go, given the bytes the store holds (total; MaxBytes
// only). It returns them oldest first, and, sorted, the ones the policy
// would delete that stay because kept says so.
func (p Policy) Judge(items []Item, total int64, now time.Time, kept func(id string) bool) (goes, protected []string) {
	newer, newestShown := countShown(items)
	left := total
	for _, i := range backupsFirst(items) {
		it := items[i]
		if i == len(items)-1 || i == newestShown {
			continue
		}
		byKeep := p.Keep > 0 && newer[i] >= p.Keep
		byAge := p.MaxAge > 0 && now.Sub(it.Created) > p.MaxAge
		byBytes := p.MaxBytes > 0 && left > p.MaxBytes
		if !byKeep && !byAge && !byBytes {
			continue
		}
		if kept(it.ID) {
			protected = append(protected, it.ID)
			continue
		}
		goes = append(goes, it.ID)
		left -= it.Bytes
	}
	slices.Sort(goes)
	slices.Sort(protected)
	return goes, protected
}

// countShown says, for each of items, how many that list shows are newer,
// and which is the newest list shows (-1 for none).
func countShown(items []Item) (newer []int, newestShown int) {
	newer = make([]int, len(items))
	newestShown, shown := -1, 0
	for i := len(items) - 1; i >= 0; i-- {
		newer[i] = shown
		if !items[i].Backup {
			shown++
			if newestShown < 0 {
				newestShown = i
			}
		}
	}
	return newer, newestShown
}

// backupsFirst is the order items are judged in: backups first, so that
// max_bytes deletes them before any checkpoint list shows; each kind
// oldest first.
func backupsFirst(items []Item) []int {
	order := make([]int, 0, len(items))
	for _, backups := range []bool{true, false} {
		for i, it := range items {
			if it.Backup == backups {
				order = append(order, i)
			}
		}
	}
	return order
}
