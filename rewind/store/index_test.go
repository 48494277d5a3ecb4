package store

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"rewind.dev/rewind/store/gc"
)

// indexAgrees: the store's index says what reading every checkpoint says.
func indexAgrees(t *testing.T, s *Store) {
	t.Helper()
	if err := gc.CheckIndex(ctx, s.forGC()); err != nil {
		t.Fatal(err)
	}
}

// TestRetentionFromTheIndex: saves keep the index a new store starts with;
// retention under a budget plans from it in rounds, keeps it current, and
// leaves every survivor whole and no archive that only the deleted read.
func TestRetentionFromTheIndex(t *testing.T) {
	t.Parallel()
	s, cps, holds := batchStore(t, 20)
	indexAgrees(t, s)
	for run := 0; ; run++ {
		res, err := s.GC(ctx, GCOptions{Keep: 3, Budget: time.Nanosecond, Round: 4})
		if err != nil {
			t.Fatal(err)
		}
		checkSurvivors(t, s, cps, holds)
		indexAgrees(t, s)
		if !res.Partial {
			break
		}
		if run > 10 {
			t.Fatal("retention does not catch up")
		}
	}
	if ids, _ := s.IDs(); len(ids) != 3 {
		t.Fatalf("%d checkpoints left, want 3", len(ids))
	}
	for _, key := range verifiedKeys(t, s) {
		if _, err := os.Stat(filepath.Join(s.Dir, filepath.FromSlash(key))); err != nil {
			t.Errorf("the verified file still names %s, which retention deleted", key)
		}
	}
	if freed, err := s.sweepLayers(); err != nil || freed != 0 {
		t.Fatalf("a whole sweep after retention freed %d bytes (%v): retention left archives only the deleted read", freed, err)
	}
}

// TestRetentionDistrustsTheIndex: an index that is damaged, lacks a
// checkpoint or says of a checkpoint what reading it does not is not used
// to delete: retention reads the store as gc does (or, finding the lie only
// when it reads, deletes nothing and drops the index), and writes it anew.
func TestRetentionDistrustsTheIndex(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		change func(t *testing.T, s *Store, b string) string
	}{
		{"a byte flipped", func(t *testing.T, s *Store, b string) string {
			i := strings.Index(b, "\n") + 5
			return b[:i] + "x" + b[i+1:]
		}},
		{"a line lost", func(t *testing.T, s *Store, b string) string {
			i := strings.LastIndex(strings.TrimSuffix(b, "\n"), "\n")
			return b[:i+1]
		}},
		{"an index of version 1, which does not say which are restore backups", func(t *testing.T, s *Store, b string) string {
			return strings.Replace(b, `"version":2`, `"version":1`, 1)
		}},
		{"a backup that is not", func(t *testing.T, s *Store, b string) string {
			return editIndexLine(t, s, b, func(f []string) { f[3] = "b" })
		}},
		{"a time that is not the checkpoint's", func(t *testing.T, s *Store, b string) string {
			return editIndexLine(t, s, b, func(f []string) {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				f[1] = strconv.FormatInt(n+1, 10)
			})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, cps, holds := batchStore(t, 8)
			b, err := os.ReadFile(s.indexPath())
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(s.indexPath(), []byte(tt.change(t, s, string(b))), 0o600)
			for range 2 {
				if _, err := s.GC(ctx, GCOptions{Keep: 2, Budget: time.Minute}); err != nil {
					t.Fatal(err)
				}
				checkSurvivors(t, s, cps, holds)
			}
			if ids, _ := s.IDs(); len(ids) != 2 {
				t.Fatalf("%d checkpoints left, want 2", len(ids))
			}
			indexAgrees(t, s)
		})
	}
}

// TestRetentionStopsAtDamage: a checkpoint retention would delete whose
// metadata does not read stops it, as it stops gc: nothing older goes.
func TestRetentionStopsAtDamage(t *testing.T) {
	t.Parallel()
	s, cps, _ := batchStore(t, 8)
	os.WriteFile(cps[3].Dir+"/metadata.json", []byte("{"), 0o644)
	if _, err := s.GC(ctx, GCOptions{Keep: 2, Budget: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cps[:4] {
		if _, err := os.Stat(c.Dir); err != nil {
			t.Errorf("%s, older than a damaged checkpoint, was deleted", c.ID)
		}
	}
}

// editIndexLine is the index b with the last line of the oldest checkpoint
// changed by edit, given its tab-separated fields without the check it
// ends in (see package gc), and that check made anew: a line that reads,
// but says what reading the checkpoint does not.
func editIndexLine(t *testing.T, s *Store, b string, edit func(f []string)) string {
	t.Helper()
	ids := mustIDs(t, s)
	lines := strings.SplitAfter(b, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		body, _, ok := strings.Cut(strings.TrimSuffix(lines[i], "\n"), "\t#")
		f := strings.Split(body, "\t")
		if !ok || f[0] != ids[0] {
			continue
		}
		edit(f)
		body = strings.Join(f, "\t")
		lines[i] = fmt.Sprintf("%s\t#%08x\n", body, crc32.ChecksumIEEE([]byte(body)))
		return strings.Join(lines, "")
	}
	t.Fatalf("no index line of %s", ids[0])
	return ""
}

// verifiedKeys lists the files the store's verified file names (see
// package verify): a header line, then one line per file, its path the
// fourth field, quoted.
func verifiedKeys(t *testing.T, s *Store) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "verified"))
	if err != nil {
		return nil
	}
	_, rest, _ := strings.Cut(string(b), "\n")
	var keys []string
	for line := range strings.Lines(rest) {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("verified file line %q", line)
		}
		key, err := strconv.Unquote(f[3])
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	return keys
}
