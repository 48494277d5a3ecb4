package fork

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// TruncateOptions says which transcript to cut back in place, and where its backup goes.
type TruncateOptions struct {
	From       string
	Checkpoint Checkpoint // the cut; with Inode set, the file must still be that inode
	BackupDir  string     // the verified backup of the whole file is written here first
	// Snapshots, when given, make the check exact: the live bytes [0, offset) must equal the
	// checkpoint's inflated transcript, not only its hashes.
	Snapshots []string
}

// Truncation is what Truncate did; it is printed as JSON.
type Truncation struct {
	Type          string `json:"type"` // "truncate"
	Path          string `json:"path"`
	Backup        string `json:"backup"`
	BytesRemoved  int64  `json:"bytes_removed"`
	EventsRemoved int64  `json:"events_removed"`
	EventsKept    int64  `json:"events_kept"`
	// AppendedBytes counts bytes the agent appended after the check and before the cut: they
	// are in the backup (not in the transcript), and counted in BytesRemoved.
	AppendedBytes int64    `json:"appended_bytes"`
	Warnings      []string `json:"-"`
}

// Test hooks: called just before the cut and just after it (to simulate a writing agent).
var beforeCut, afterCut func(path string)

// Truncate cuts the live transcript back to the checkpoint's offset, in place. It refuses unless
// the file is still the checkpointed one (same inode when known, the prefix as recorded, long
// enough), and only cuts after a backup of the whole file is written atomically to BackupDir and
// read back with the same SHA-256. Bytes the agent appends meanwhile go into the backup too.
// It never leaves a run of NUL bytes where a writer with a stale file position wrote past the
// new end.
func Truncate(ctx context.Context, o TruncateOptions) (Truncation, error) {
	tr, err := openTruncation(ctx, o)
	if tr != nil {
		defer tr.f.Close()
	}
	if err != nil {
		return Truncation{}, err
	}
	cp := o.Checkpoint
	kept, err := countEvents(ctx, tr.f, 0, cp.Offset, nil)
	if err != nil {
		return Truncation{}, fmt.Errorf("count events in %s: %w", o.From, err)
	}
	size := tr.fi.Size()
	if tr.backup, tr.backed, err = writeBackup(ctx, tr.f, o.From, o.BackupDir, size); err != nil {
		return Truncation{}, err
	}
	if beforeCut != nil {
		beforeCut(o.From)
	}
	if err := tr.cut(ctx); err != nil {
		return Truncation{}, err
	}
	if afterCut != nil {
		afterCut(o.From)
	}
	warn, err := closeHole(tr.f, cp.Offset)
	if err != nil {
		return Truncation{}, err
	}
	if err := durable.FaultOr("sync", o.From, func() error { return durable.Sync(tr.f) }); err != nil {
		return Truncation{}, fmt.Errorf("sync %s: %w", o.From, err)
	}
	removed, err := countBackupEvents(ctx, tr.backup, cp.Offset, tr.backed)
	if err != nil {
		return Truncation{}, fmt.Errorf("count events in backup %s: %w", tr.backup, err)
	}
	t := Truncation{
		Type: "truncate", Path: o.From, Backup: tr.backup,
		BytesRemoved: tr.backed - cp.Offset, EventsRemoved: removed, EventsKept: kept,
		AppendedBytes: tr.backed - size,
	}
	if warn != "" {
		t.Warnings = append(t.Warnings, warn)
	}
	if t.AppendedBytes > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("the agent appended %d bytes while truncating; they are in the backup %s", t.AppendedBytes, tr.backup))
	}
	return t, nil
}

// truncation is a transcript being cut in place.
type truncation struct {
	o      TruncateOptions
	f      *os.File    // the transcript, open for writing
	fi     os.FileInfo // as it was when opened
	backup string      // the backup's path, once written
	backed int64       // how many of the transcript's bytes the backup holds
}

// openTruncation opens the transcript and checks that it may be cut at the checkpoint: it is
// the file the checkpoint read, unchanged up to the cut, and the same as the checkpoint's
// snapshots. The returned truncation's file is open even when err is not nil: the caller
// closes it.
func openTruncation(ctx context.Context, o TruncateOptions) (*truncation, error) {
	if o.From == "" {
		return nil, ErrNoTranscript
	}
	if o.BackupDir == "" {
		return nil, ErrNoBackupDir
	}
	cp := o.Checkpoint
	if err := cp.validate(); err != nil {
		return nil, err
	}
	if d, err := jsonl.LookupDialect(cp.Agent); err == nil && d.Fork.Method != "copy" {
		// OpenCode's session is in its database; the file is Rewind's mirror of it.
		return nil, &MirrorError{Agent: d.Name, Path: o.From}
	}
	f, err := openFile(o.From, os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	tr := &truncation{o: o, f: f}
	if tr.fi, err = f.Stat(); err != nil {
		return tr, fmt.Errorf("stat transcript %s: %w", o.From, err)
	}
	if !tr.fi.Mode().IsRegular() {
		return tr, fmt.Errorf("transcript %s is not a regular file", o.From)
	}
	if cp.Inode != 0 && inode(tr.fi) != cp.Inode {
		return tr, &ReplacedError{Path: o.From, Inode: inode(tr.fi), Want: cp.Inode}
	}
	reason, err := cp.mismatch(f, tr.fi.Size())
	if err != nil {
		return tr, fmt.Errorf("read transcript %s: %w", o.From, err)
	}
	if reason != "" {
		return tr, &ChangedError{Path: o.From, Offset: cp.Offset, Reason: reason, InPlace: true}
	}
	if len(o.Snapshots) > 0 {
		if err := sameAsSnapshots(ctx, f, o.Snapshots, cp.Offset); err != nil {
			return tr, err
		}
	}
	return tr, nil
}

// settle puts the bytes appended since the backup was read into the backup, and repeats until
// the size holds still. Each round appends only the new bytes, so it converges as long as the
// agent writes slower than the disk; an agent that never pauses gets an error after maxTopUps
// rounds, with nothing cut.
func (tr *truncation) settle(ctx context.Context) error {
	from := tr.o.From
	for round := 0; ; round++ {
		if err := sameInode(from, tr.fi); err != nil {
			return err
		}
		now, err := tr.f.Stat()
		if err != nil {
			return fmt.Errorf("stat transcript %s: %w", from, err)
		}
		if now.Size() <= tr.backed {
			return nil
		}
		if round == maxTopUps {
			return &GrowingError{Path: from, Rounds: maxTopUps}
		}
		if tr.backed, err = topUpBackup(ctx, tr.f, tr.backup, tr.backed, now.Size()); err != nil {
			return err
		}
	}
}

// cut settles the backup and truncates the transcript at the checkpoint.
//
// A write landing between the last look and the cut would be cut off and lost. A write lease
// closes that window for writers that open the file for each append (as the reliability
// suite's agent does; whether a given agent keeps its transcript open is not established):
// while it is held their open(2) waits, so the last look and the cut are one step, and their
// append lands after the new end. Where no lease can be had (another process holds the file
// open, or the file system has none) the window stays, microseconds wide.
func (tr *truncation) cut(ctx context.Context) error {
	if err := tr.settle(ctx); err != nil {
		return err
	}
	from, offset := tr.o.From, tr.o.Checkpoint.Offset
	release := writeLease(tr.f)
	defer release()
	if err := tr.settle(ctx); err != nil {
		return err
	}
	if err := durable.FaultOr("truncate", from, func() error { return tr.f.Truncate(offset) }); err != nil {
		return fmt.Errorf("truncate %s: %w", from, err)
	}
	return nil
}

func inode(fi os.FileInfo) uint64 { return fileid.Inode(fi) }

// sameInode checks that path still names the file that was opened.
func sameInode(path string, opened os.FileInfo) error {
	fi, err := os.Stat(path)
	if err != nil || !os.SameFile(fi, opened) {
		return &ReplacedError{Path: path}
	}
	return nil
}

// writeBackup copies the transcript's first size bytes (at least; bytes appended meanwhile come
// along) into a new file in dir, atomically, and checks the file read back has the SHA-256 of
// the bytes read. It returns the backup's path and how many bytes it holds. The backup is
// readable by its owner alone (layout.FileMode, as everything in a store), whatever the
// transcript's mode: a transcript of 0444 would leave a backup that cannot be topped up.
func writeBackup(ctx context.Context, f *os.File, from, dir string, size int64) (string, int64, error) {
	if err := durable.FaultOr("mkdir", dir, func() error { return os.MkdirAll(dir, layout.DirMode) }); err != nil {
		return "", 0, fmt.Errorf("create backup directory: %w", err)
	}
	name := fmt.Sprintf("%s.%s.jsonl", strings.TrimSuffix(filepath.Base(from), ".jsonl"), time.Now().UTC().Format("20060102T150405.000000000Z"))
	return copyVerified(ctx, f, filepath.Join(dir, name), size)
}

// maxTopUps bounds how often Truncate tops the backup up with bytes the agent appended.
const maxTopUps = 100

// topUpBackup appends the transcript's bytes [from, to) (at least; more when it grew) to the
// backup, fsyncs it, and checks the appended part reads back with the same SHA-256. It returns
// how many bytes of the transcript the backup now holds. A run killed meanwhile leaves a backup
// holding more than it says, never less, and nothing cut.
func topUpBackup(ctx context.Context, f *os.File, backup string, from, to int64) (int64, error) {
	b, err := openFile(backup, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return 0, fmt.Errorf("top up backup: %w", err)
	}
	defer b.Close()
	if st, err := b.Stat(); err != nil || st.Size() != from {
		return 0, fmt.Errorf("backup %s changed under us (size %d, expected %d): %v", backup, st.Size(), from, err)
	}
	h := sha256.New()
	w := io.MultiWriter(faultWriter{b, backup}, h)
	n, err := io.Copy(w, ctxio.Reader{Ctx: ctx, R: io.NewSectionReader(f, from, to-from)})
	if err != nil {
		return 0, fmt.Errorf("top up backup %s: %w", backup, err)
	}
	if n < to-from {
		return 0, fmt.Errorf("transcript shrank to %d bytes while backing it up", from+n)
	}
	if err := durable.FaultOr("sync", backup, func() error { return durable.Sync(b) }); err != nil {
		return 0, fmt.Errorf("sync backup %s: %w", backup, err)
	}
	h2 := sha256.New()
	if err := durable.Fault("read", backup); err != nil {
		return 0, fmt.Errorf("verify backup: %w", err)
	}
	r, err := os.Open(backup)
	if err != nil {
		return 0, fmt.Errorf("verify backup: %w", err)
	}
	defer r.Close()
	if _, err := io.Copy(h2, io.NewSectionReader(r, from, n)); err != nil {
		return 0, fmt.Errorf("verify backup %s: %w", backup, err)
	}
	if !bytes.Equal(h.Sum(nil), h2.Sum(nil)) {
		return 0, fmt.Errorf("backup %s does not read back as written (SHA-256 differs)", backup)
	}
	return from + n, nil
}

// faultWriter is a writer through the fault seam.
type faultWriter struct {
	w    io.Writer
	path string
}

func (fw faultWriter) Write(p []byte) (int, error) {
	if err := durable.Fault("write", fw.path); err != nil {
		return 0, err
	}
	return fw.w.Write(p)
}

func copyVerified(ctx context.Context, f *os.File, path string, size int64) (string, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	p, err := durable.Create(path, layout.FileMode, durable.NoReplace)
	if err != nil {
		return "", 0, err
	}
	defer p.Abort()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(p, h), ctxio.Reader{Ctx: ctx, R: io.NewSectionReader(f, 0, max(size, fi.Size()))})
	if err != nil {
		return "", 0, fmt.Errorf("write backup %s: %w", path, err)
	}
	if n < size {
		return "", 0, fmt.Errorf("transcript shrank to %d bytes while backing it up", n)
	}
	if err := p.Commit(); err != nil {
		return "", 0, err
	}
	back, err := openFile(path, os.O_RDONLY)
	if err != nil {
		return "", 0, fmt.Errorf("verify backup: %w", err)
	}
	defer back.Close()
	h2 := sha256.New()
	if _, err := io.Copy(h2, back); err != nil {
		return "", 0, fmt.Errorf("verify backup %s: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), h2.Sum(nil)) {
		return "", 0, fmt.Errorf("backup %s does not read back as written (SHA-256 differs)", path)
	}
	return path, n, nil
}

// countBackupEvents counts the events the cut removed, from the backup (which holds them all,
// appended ones included).
func countBackupEvents(ctx context.Context, path string, from, to int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return countEvents(ctx, f, from, to, nil)
}

// closeHole removes a run of NUL bytes right after the cut: a writer that kept its old file
// position (not append mode) writes past the new end and leaves a hole. The bytes after the
// hole are moved down to the cut.
func closeHole(f *os.File, offset int64) (string, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() <= offset {
		return "", err
	}
	rest := make([]byte, fi.Size()-offset)
	if _, err := f.ReadAt(rest, offset); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	trimmed := bytes.TrimLeft(rest, "\x00")
	if len(trimmed) == len(rest) {
		return fmt.Sprintf("the agent appended %d bytes after the cut; they stay in the transcript", len(rest)), nil
	}
	if err := durable.FaultOr("write", f.Name(), func() error { _, err := f.WriteAt(trimmed, offset); return err }); err != nil {
		return "", fmt.Errorf("close hole in %s: %w", f.Name(), err)
	}
	if err := durable.FaultOr("truncate", f.Name(), func() error { return f.Truncate(offset + int64(len(trimmed))) }); err != nil {
		return "", fmt.Errorf("close hole in %s: %w", f.Name(), err)
	}
	return fmt.Sprintf("a writer wrote %d bytes past the cut leaving a hole of %d NUL bytes; the hole was removed", len(trimmed), len(rest)-len(trimmed)), nil
}

// sameAsSnapshots checks that the live bytes [0, offset) equal the inflated snapshots'.
func sameAsSnapshots(ctx context.Context, f *os.File, paths []string, offset int64) error {
	r, err := OpenSnapshots(paths)
	if err != nil {
		return err
	}
	defer r.Close()
	a := make([]byte, 1<<20)
	b := make([]byte, 1<<20)
	for off := int64(0); off < offset; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(a)), offset-off)
		if _, err := io.ReadFull(r, b[:n]); err != nil {
			return &SnapshotError{Offset: offset, Short: true, Held: -1, Err: err}
		}
		if _, err := f.ReadAt(a[:n], off); err != nil {
			return fmt.Errorf("read transcript: %w", err)
		}
		if !bytes.Equal(a[:n], b[:n]) {
			return &ChangedError{Path: f.Name(), Offset: offset, Reason: "snapshot", InPlace: true}
		}
		off += n
	}
	return nil
}

// openFile is os.OpenFile through the fault seam.
func openFile(path string, flag int) (*os.File, error) {
	if err := durable.Fault("open", path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, flag, 0)
}
