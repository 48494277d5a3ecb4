package retention

import (
	"slices"
	"testing"
	"time"
)

// TestPolicyJudge: the policy counts the checkpoints list shows, and the
// restore backups follow their own rules.
func TestPolicyJudge(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	// v: a checkpoint list shows, b: a restore's backup; oldest first,
	// an hour apart, 10 bytes each.
	store := func(kinds ...string) []Item {
		var items []Item
		for i, k := range kinds {
			items = append(items, Item{ID: k, Created: now.Add(time.Duration(i-len(kinds)) * time.Hour), Bytes: 10, Backup: k[0] == 'b'})
		}
		return items
	}
	none := func(string) bool { return false }
	for _, tt := range []struct {
		name            string
		p               Policy
		items           []Item
		kept            func(string) bool
		goes, protected []string
	}{
		{"keep 1: the newest listed, and the backup after it", Policy{Keep: 1}, store("v1", "v2", "b1", "v3", "b2"), none,
			[]string{"b1", "v1", "v2"}, nil},
		{"keep 2: the backups since the older of the two stay", Policy{Keep: 2}, store("v1", "v2", "b1", "v3", "b2"), none,
			[]string{"v1"}, nil},
		{"backups never take a place among the kept", Policy{Keep: 2}, store("v1", "b1", "b2", "b3", "v2", "b4", "b5", "b6"), none,
			nil, nil},
		{"the backups undo-restore needs stay", Policy{Keep: 1}, store("b0", "v1", "v2", "b1", "v3", "b2"), func(id string) bool { return id == "b0" || id == "b1" },
			[]string{"v1", "v2"}, []string{"b0", "b1"}},
		{"pinned and needed stay, the rest of the count holds", Policy{Keep: 1}, store("v1", "v2", "v3"), func(id string) bool { return id == "v1" },
			[]string{"v2"}, []string{"v1"}},
		{"max-bytes: backups first, oldest first", Policy{MaxBytes: 30}, store("v1", "b1", "v2", "b2", "v3", "b3"), none,
			[]string{"b1", "b2", "v1"}, nil},
		{"max-bytes: never the newest, nor the newest listed", Policy{MaxBytes: 1}, store("v1", "b1", "v2", "b2"), none,
			[]string{"b1", "v1"}, nil},
		{"max-age: backups and listed alike", Policy{MaxAge: 210 * time.Minute}, store("b1", "v1", "b2", "v2", "v3"), none,
			[]string{"b1", "v1"}, nil},
		{"max-age: the newest listed stays however old", Policy{MaxAge: time.Minute}, store("v1", "v2", "b1"), none,
			[]string{"v1"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			goes, protected := tt.p.Judge(tt.items, 10*int64(len(tt.items)), now, tt.kept)
			if !slices.Equal(goes, tt.goes) || !slices.Equal(protected, tt.protected) {
				t.Errorf("goes %v, protected %v; want %v, %v", goes, protected, tt.goes, tt.protected)
			}
		})
	}
}
