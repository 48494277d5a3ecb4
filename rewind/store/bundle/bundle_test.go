package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind.dev/rewind/store/record"
)

// write writes the archive of a checkpoint of a tree of one file, with no
// conversation, at name; edit, when set, changes its bytes after.
func write(t *testing.T, name string, edit func([]byte) []byte) {
	t.Helper()
	var tree bytes.Buffer
	zw := gzip.NewWriter(&tree)
	tw := tar.NewWriter(zw)
	body := "hello\n"
	if err := tw.WriteHeader(&tar.Header{Name: "a.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	tw.Close()
	zw.Close()
	at := time.Date(2026, 11, 22, 14, 30, 52, 0, time.UTC)
	md := record.Metadata{Version: 1, ID: "20261122_143052_001", CreatedAt: at, Description: "one file", Snapshot: record.Snapshot{Files: 1, TreeHash: "h"}}
	cpJSON, err := record.Encode(&md)
	if err != nil {
		t.Fatal(err)
	}
	info := &Info{Type: Format, Version: Version, CreatedAt: at, SourceFolder: "/src/project", Checkpoint: md.ID, TakenAt: at,
		Description: md.Description, TreeHash: "h"}
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWriter(f, info)
	if err := w.Add(CheckpointName, cpJSON); err != nil {
		t.Fatal(err)
	}
	err = w.Stream(TreeName, func(w io.Writer) error {
		info.Files = 1
		_, err := w.Write(tree.Bytes())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, edit(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// What a Writer writes, Open takes back whole; changed by a byte, it is
// refused as an *Error, and no copy is left behind either way.
func TestWriteThenOpen(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	name := filepath.Join(t.TempDir(), "x.tar")
	write(t, name, nil)
	a, err := Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if a.Info.Checkpoint != a.Checkpoint.ID || a.Info.Files != 1 || a.Transcript != "" || len(a.SHA256) != 64 {
		t.Errorf("opened %+v", a)
	}
	if got := len(a.Info.Members); got != 2 {
		t.Errorf("export.json lists %d members, want 2", got)
	}
	a.Close()

	write(t, name, func(b []byte) []byte { return bytes.Replace(b, []byte("one file"), []byte("one fils"), 1) })
	_, err = Open(context.Background(), name)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "SHA-256 differs") {
		t.Errorf("a changed archive: %v, want an *Error saying its SHA-256 differs", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left %d entries in the temporary folder", len(left))
	}
}
