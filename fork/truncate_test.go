package fork

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"testing"
)

func TestTruncate(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (src string, orig []byte, off int64, backups string) {
		src = place(t, "claude/realclient-cc2.1.197-4-prompts-resumed.jsonl", "s.jsonl")
		orig, _ = os.ReadFile(src)
		return src, orig, back1(t, src), filepath.Join(t.TempDir(), "transcript-backup")
	}

	t.Run("cuts behind a verified backup", func(t *testing.T) {
		src, orig, off, backups := setup(t)
		fi, _ := os.Stat(src)
		cp := cursorAt(t, orig, off)
		cp.Inode = inode(fi)
		tr, err := Truncate(ctx, TruncateOptions{From: src, Checkpoint: cp, BackupDir: backups})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(src)
		back, _ := os.ReadFile(tr.Backup)
		if !bytes.Equal(got, orig[:off]) || !bytes.Equal(back, orig) || filepath.Dir(tr.Backup) != backups {
			t.Fatalf("file %d bytes, backup %d bytes at %s", len(got), len(back), tr.Backup)
		}
		after, _ := os.Stat(src)
		if !os.SameFile(fi, after) {
			t.Error("the transcript was replaced, not truncated in place")
		}
		if tr.Type != "truncate" || tr.BytesRemoved != int64(len(orig))-off || tr.EventsKept != statsEvents(t, orig[:off]) ||
			tr.EventsRemoved != statsEvents(t, orig)-statsEvents(t, orig[:off]) || tr.AppendedBytes != 0 || len(tr.Warnings) != 0 {
			t.Errorf("truncation = %+v", tr)
		}
	})

	for _, tc := range []struct {
		name   string
		mutate func(src string, cp *Checkpoint)
		opts   func(o *TruncateOptions)
		want   string
	}{
		{"other inode", func(src string, cp *Checkpoint) { cp.Inode++ }, nil, "not the checkpointed file"},
		{"prefix changed", func(src string, cp *Checkpoint) {
			data, _ := os.ReadFile(src)
			data[5] ^= 1
			os.WriteFile(src, data, 0o600)
		}, nil, "changed since the checkpoint"},
		{"shorter", func(src string, cp *Checkpoint) { os.Truncate(src, cp.Offset-1) }, nil, "shorter"},
		{"no backup dir", nil, func(o *TruncateOptions) { o.BackupDir = "" }, "no backup directory"},
		{"snapshot differs", nil, func(o *TruncateOptions) {
			data, _ := os.ReadFile(o.From)
			data[3] ^= 1
			o.Snapshots = []string{gzipMembers(t, data)}
		}, "differs from the snapshot"},
	} {
		t.Run("refuses: "+tc.name, func(t *testing.T) {
			src, orig, off, backups := setup(t)
			fi, _ := os.Stat(src)
			cp := cursorAt(t, orig, off)
			cp.Inode = inode(fi)
			if tc.mutate != nil {
				tc.mutate(src, &cp)
			}
			before, _ := os.ReadFile(src)
			o := TruncateOptions{From: src, Checkpoint: cp, BackupDir: backups}
			if tc.opts != nil {
				tc.opts(&o)
			}
			_, err := Truncate(ctx, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if after, _ := os.ReadFile(src); !bytes.Equal(before, after) {
				t.Error("the transcript changed although truncate refused")
			}
		})
	}

	t.Run("matching snapshot", func(t *testing.T) {
		src, orig, off, backups := setup(t)
		_, err := Truncate(ctx, TruncateOptions{From: src, Checkpoint: Checkpoint{Offset: off}, BackupDir: backups, Snapshots: []string{gzipMembers(t, orig[:off+10])}})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("agent appends while truncating", func(t *testing.T) {
		src, orig, off, backups := setup(t)
		extra := []byte(`{"type":"user","uuid":"late"}` + "\n")
		beforeCut = func(p string) {
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.Write(extra)
			f.Close()
		}
		defer func() { beforeCut = nil }()
		tr, err := Truncate(ctx, TruncateOptions{From: src, Checkpoint: Checkpoint{Offset: off}, BackupDir: backups})
		if err != nil {
			t.Fatal(err)
		}
		back, _ := os.ReadFile(tr.Backup)
		got, _ := os.ReadFile(src)
		if !bytes.Equal(back, append(orig, extra...)) || !bytes.Equal(got, orig[:off]) {
			t.Errorf("backup lacks the appended bytes (%d bytes) or file wrong (%d)", len(back), len(got))
		}
		if tr.AppendedBytes != int64(len(extra)) || tr.BytesRemoved != int64(len(orig)+len(extra))-off || len(tr.Warnings) == 0 {
			t.Errorf("truncation = %+v", tr)
		}
	})

	t.Run("writer with a stale position leaves no hole", func(t *testing.T) {
		src, orig, off, backups := setup(t)
		late := []byte(`{"type":"assistant","uuid":"stale"}` + "\n")
		afterCut = func(p string) {
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt(late, int64(len(orig))) // where a non-append writer thought the end was
			f.Close()
		}
		defer func() { afterCut = nil }()
		tr, err := Truncate(ctx, TruncateOptions{From: src, Checkpoint: Checkpoint{Offset: off}, BackupDir: backups})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(src)
		if bytes.IndexByte(got, 0) >= 0 || !bytes.Equal(got, append(orig[:off:off], late...)) {
			t.Errorf("file after the cut: %d bytes, NUL at %d", len(got), bytes.IndexByte(got, 0))
		}
		if len(tr.Warnings) == 0 {
			t.Error("no warning about the hole")
		}
	})
}
