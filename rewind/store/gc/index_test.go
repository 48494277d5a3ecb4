package gc

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"rewind.dev/rewind/store/verify"
)

// TestIndexReadsBackWhatItWrote: every kind of line (a checkpoint list
// shows, a backup, a damaged one, a parent that is not a checkpoint's)
// reads back as written; a line that no longer checks, or an index that
// lacks a checkpoint, is not trusted.
func TestIndexReadsBackWhatItWrote(t *testing.T) {
	st := Store{Store: verify.Store{Dir: t.TempDir()}}
	arc := filepath.Join(st.Dir, "layers", "20260101_000000_001.tar.gz")
	idx := map[string]*indexEntry{
		"20260101_000000_001": {created: 1, bytes: 10, archives: []string{arc}},
		"20260101_000000_002": {created: 2, bytes: 20, backup: true, parent: "20260101_000000_001", base: "20260101_000000_001", archives: []string{arc}},
		"20260101_000000_003": {damaged: true},
		"20260101_000000_004": {created: 4, bytes: 40, parent: "/elsewhere/manifest.jsonl"},
	}
	ids := []string{"20260101_000000_001", "20260101_000000_002", "20260101_000000_003", "20260101_000000_004"}
	st.writeIndex(idx)
	got, ok := st.readIndex(ids)
	if !ok || !reflect.DeepEqual(got, idx) {
		t.Fatalf("read back %v (%v), want %v", got, ok, idx)
	}
	if _, ok := st.readIndex(ids[:3]); ok {
		t.Error("an index listing a checkpoint the store lacks was trusted")
	}
	b, _ := os.ReadFile(st.indexPath())
	os.WriteFile(st.indexPath(), []byte(strings.Replace(string(b), "\t20\t", "\t21\t", 1)), 0o600)
	if _, ok := st.readIndex(ids); ok {
		t.Error("a line that no longer checks was trusted")
	}
}

// TestIndexSameAs: a line "=<id>" names the archives of that checkpoint's
// manifest, an archive in its folder read as the one linked into this.
func TestIndexSameAs(t *testing.T) {
	st := Store{Store: verify.Store{Dir: t.TempDir()}}
	a, b := "20260101_000000_001", "20260101_000000_002"
	own := filepath.Join(st.checkpointDir(a), "snapshot.tar.gz")
	shared := filepath.Join(st.Dir, "layers", a+".tar.gz")
	st.writeIndex(map[string]*indexEntry{
		a: {created: 1, bytes: 1, archives: []string{own, shared}},
		b: {created: 2, bytes: 1, sameAs: a},
	})
	got, ok := st.readIndex([]string{a, b})
	if !ok {
		t.Fatal("not read")
	}
	if want := []string{filepath.Join(st.checkpointDir(b), "snapshot.tar.gz"), shared}; !reflect.DeepEqual(got[b].archives, want) {
		t.Errorf("archives of %s: %v, want %v", b, got[b].archives, want)
	}
}
