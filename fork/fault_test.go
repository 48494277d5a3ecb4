package fork

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fixtures"
)

// failAt makes the nth file operation fail with errno (n < 1: none fail) and counts the
// operations, recording each.
type failAt struct {
	n, count int
	errno    syscall.Errno
	ops      []string
}

func (f *failAt) install(t *testing.T) {
	t.Cleanup(func() { durable.FaultAt = nil })
	durable.FaultAt = func(op, path string) error {
		f.count++
		f.ops = append(f.ops, op+" "+filepath.Base(path))
		if f.count == f.n {
			return f.errno
		}
		return nil
	}
}

// TestFaultSweep fails every file operation of a fork and a truncation in turn, with EIO
// and ENOSPC: each failure must give one error naming what failed, leave no temporary or
// partial file, and leave the transcript as it was (or cut, with a backup holding all of it).
func TestFaultSweep(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		fixture string
		prepare func(src string)
		run     func(src string, off int64, backups string) (out string, err error)
		cuts    bool
	}{
		{"create claude", "claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", nil, func(src string, off int64, _ string) (string, error) {
			f, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: off}})
			return f.Path, err
		}, false},
		{"create droid with sidecar", "droid/realclient-droid0.225.2-text-only.jsonl", func(src string) {
			os.WriteFile(strings.TrimSuffix(src, ".jsonl")+".settings.json", []byte(`{"model":"m"}`), 0o600)
		}, func(src string, off int64, _ string) (string, error) {
			f, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: off}})
			return f.Path, err
		}, false},
		{"create from snapshot", "claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", func(src string) {
			gzipFile(t, src)
			os.WriteFile(src, []byte("{\"type\":\"user\"}\n"), 0o600) // the live file moved on
		}, func(src string, off int64, _ string) (string, error) {
			f, err := Create(ctx, CreateOptions{From: src, Checkpoint: Checkpoint{Offset: off}, Snapshots: []string{src + ".gz"}})
			return f.Path, err
		}, false},
		{"truncate", "claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", nil, func(src string, off int64, backups string) (string, error) {
			tr, err := Truncate(ctx, TruncateOptions{From: src, Checkpoint: Checkpoint{Offset: off}, BackupDir: backups})
			return tr.Backup, err
		}, true},
	}
	total := 0
	for _, c := range cases {
		for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
			t.Run(fmt.Sprintf("%s/%v", c.name, errno), func(t *testing.T) {
				// A clean run counts the operations.
				counter := &failAt{}
				counter.install(t)
				dir := t.TempDir()
				src := placeIn(t, c.fixture, dir)
				off := back1(t, src)
				if c.prepare != nil {
					c.prepare(src)
				}
				if _, err := c.run(src, off, filepath.Join(dir, "backups")); err != nil {
					t.Fatalf("clean run: %v", err)
				}
				if counter.count < 5 {
					t.Fatalf("only %d file operations went through the seam: %v", counter.count, counter.ops)
				}
				for n := 1; n <= counter.count; n++ {
					total++
					dir := t.TempDir()
					src := placeIn(t, c.fixture, dir)
					if c.prepare != nil {
						c.prepare(src)
					}
					orig, _ := os.ReadFile(src)
					backups := filepath.Join(dir, "backups")
					f := &failAt{n: n, errno: errno}
					f.install(t)
					out, err := c.run(src, off, backups)
					durable.FaultAt = nil
					op := counter.ops[n-1]
					if err == nil {
						// Only the Droid sidecar copy, after the fork is published (its folder
						// synced), may fail without failing the fork: it is a warning.
						published := slices.IndexFunc(counter.ops, func(s string) bool { return strings.HasPrefix(s, "syncdir") })
						if !strings.Contains(c.name, "sidecar") || n <= published+1 {
							t.Errorf("op %d (%s) failed with %v, yet the run succeeded (%s)", n, op, errno, out)
						} else if b, _ := os.ReadFile(out); wholeLines(b) != nil {
							t.Errorf("op %d (%s): the fork is not whole: %v", n, op, wholeLines(b))
						}
						continue
					}
					if !errors.Is(err, errno) {
						t.Errorf("op %d (%s): the error does not carry the cause %v: %v", n, op, errno, err)
					}
					if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "/") {
						t.Errorf("op %d (%s): error is not one line naming a path: %q", n, op, msg)
					}
					checkNoPartial(t, fmt.Sprintf("op %d (%s)", n, op), dir, src, orig, off, c.cuts)
				}
			})
		}
	}
	t.Logf("reliability: fault/fork: runs=%d faults=%d", total, total)
}

// checkNoPartial: only the transcript (as it was, or cut with a whole backup), its sidecar,
// and whole backups remain in dir.
func checkNoPartial(t *testing.T, tag, dir, src string, orig []byte, off int64, cuts bool) {
	t.Helper()
	got, _ := os.ReadFile(src)
	switch {
	case bytes.Equal(got, orig):
	case cuts && bytes.Equal(got, orig[:off]):
		if !dirHolds(filepath.Join(dir, "backups"), orig) {
			t.Errorf("%s: transcript cut without a whole backup", tag)
		}
	default:
		t.Errorf("%s: transcript changed (%d bytes, had %d)", tag, len(got), len(orig))
	}
	filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || p == src || strings.HasSuffix(p, ".gz") ||
			p == strings.TrimSuffix(src, ".jsonl")+".settings.json" {
			return nil
		}
		if filepath.Base(filepath.Dir(p)) == "backups" {
			if b, _ := os.ReadFile(p); !bytes.Equal(b, orig) {
				t.Errorf("%s: partial backup left: %s", tag, p)
			}
			return nil
		}
		t.Errorf("%s: left behind: %s", tag, p)
		return nil
	})
}

func dirHolds(dir string, data []byte) bool {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if b, err := os.ReadFile(filepath.Join(dir, de.Name())); err == nil && bytes.Equal(b, data) {
			return true
		}
	}
	return false
}

func placeIn(t *testing.T, fixture, dir string) string {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path(fixture))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "11111111-2222-4333-8444-555555555555.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStaleTempsAreCleaned: a temp file a killed run left (no flock held) goes at the next
// create in that folder; one a live writer holds stays.
func TestStaleTempsAreCleaned(t *testing.T) {
	dir := t.TempDir()
	src := placeIn(t, "claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", dir)
	stale := filepath.Join(dir, ".dead.jsonl.rewind-tmp-123456")
	os.WriteFile(stale, []byte("half"), 0o600)
	notOurs := filepath.Join(dir, ".notes.tmp-abc")
	os.WriteFile(notOurs, nil, 0o600)
	live, err := durable.Create(filepath.Join(dir, "live.jsonl"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if _, err := Create(context.Background(), CreateOptions{From: src, Checkpoint: Checkpoint{Offset: back1(t, src)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Error("the stale temp file is still there")
	}
	if _, err := os.Lstat(live.Name()); err != nil {
		t.Errorf("a live writer's temp file was removed: %v", err)
	}
	if _, err := os.Lstat(notOurs); err != nil {
		t.Errorf("a file that is not a fork temp was removed: %v", err)
	}
}

// gzipFile writes path's bytes as path.gz (a checkpoint's transcript.jsonl.gz).
func gzipFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	out := path + ".gz"
	if err := os.WriteFile(out, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func wholeLines(b []byte) error {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return errors.New("does not end in a newline")
	}
	return nil
}
