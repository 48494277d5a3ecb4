//go:build linux

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// openPTY opens a pseudo-terminal: what is written to master is read from
// slave, a terminal, and the other way round.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// On a terminal, undo-restore and redo show what they would change and ask;
// "n" changes nothing, "y" goes ahead.
func TestRevertAsksOnATerminal(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(stdin io.Reader, stderr io.Writer, args ...string) (int, string) {
		var out strings.Builder
		code := Main(context.Background(), append([]string{"-C", dir}, args...), stdin, &out, stderr)
		return code, out.String()
	}
	write("a.txt", "one\n")
	write("c.txt", "extra\n")
	if code, out := run(strings.NewReader(""), io.Discard, "save"); code != 0 {
		t.Fatal(out)
	}
	os.Remove(filepath.Join(dir, "c.txt"))
	write("a.txt", "two\n")
	if code, out := run(strings.NewReader(""), io.Discard, "save"); code != 0 {
		t.Fatal(out)
	}
	// Without a terminal restore does not ask.
	if code, out := run(strings.NewReader("n\n"), io.Discard, "restore", "@1", "--code-only"); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, out)
	}

	master, slave := openPTY(t)
	var screen syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&screen, master); close(copied) }()

	master.Write([]byte("n\n"))
	code, out := run(slave, slave, "undo-restore")
	if code != 1 || out != "" {
		t.Errorf("undo-restore answered n: exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err != nil {
		t.Errorf("undo-restore answered n changed the tree: %v", err)
	}
	master.Write([]byte("y\n"))
	if code, out = run(slave, slave, "undo-restore"); code != 0 || !strings.Contains(out, "  delete c.txt\n") {
		t.Errorf("undo-restore answered y: exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Error("undo-restore answered y left c.txt")
	}
	master.Write([]byte("y\n"))
	if code, out = run(slave, slave, "redo"); code != 0 || !strings.Contains(out, "Redid restore to ") {
		t.Errorf("redo answered y: exit %d, stdout %q", code, out)
	}
	// --yes does not ask.
	if code, out = run(slave, slave, "undo-restore", "--yes"); code != 0 {
		t.Errorf("undo-restore --yes: exit %d, stdout %q", code, out)
	}
	slave.Close() // the master then reads EIO, after the rest
	<-copied
	s := screen.String()
	for _, want := range []string{
		"Would undo restore to ",
		"  delete c.txt",
		"Undo restore to ",
		"? A backup checkpoint is taken first. [y/N] ",
		"rewind: error: undo-restore cancelled; nothing was changed",
		"Would redo restore to ",
		"Redo restore to ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "[y/N]"); n != 3 {
		t.Errorf("asked %d times, want 3 (--yes does not ask):\n%s", n, s)
	}
}

// On a terminal, restore shows its plan as a plan (not as a dry run's
// result: nothing was changed yet, and it asks to change it) and asks; with
// --json it does not ask, and refuses without --yes, changing nothing.
func TestRestoreAsksOnATerminal(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(stdin io.Reader, stderr io.Writer, args ...string) (int, string) {
		var out strings.Builder
		code := Main(context.Background(), append([]string{"-C", dir}, args...), stdin, &out, stderr)
		return code, out.String()
	}
	if code, out := run(strings.NewReader(""), io.Discard, "save"); code != 0 {
		t.Fatal(out)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two\n"), 0o644)

	master, slave := openPTY(t)
	var screen syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&screen, master); close(copied) }()

	master.Write([]byte("y\n")) // (not read: --json does not ask)
	if code, out := run(slave, slave, "restore", "@0", "--json"); code != 2 || out != "" {
		t.Errorf("restore --json on a terminal: exit %d, stdout %q; want exit 2, no output", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "two\n" {
		t.Errorf("restore --json on a terminal changed the tree: a.txt holds %q", b)
	}
	if code, out := run(slave, slave, "restore", "@0", "--dry-run", "--json"); code != 0 || !strings.Contains(out, `"dry_run":true`) {
		t.Errorf("restore --dry-run --json on a terminal: exit %d, stdout %q", code, out)
	}
	if code, out := run(slave, slave, "restore", "@0"); code != 0 || !strings.Contains(out, "Restored the tree to ") {
		t.Errorf("restore answered y: exit %d, stdout %q", code, out)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("three\n"), 0o644)
	if code, out := run(slave, slave, "restore", "@0", "--json", "--yes"); code != 0 || !strings.Contains(out, `"dry_run":false`) {
		t.Errorf("restore --json --yes on a terminal: exit %d, stdout %q", code, out)
	}
	slave.Close()
	<-copied
	s := screen.String()
	for _, want := range []string{
		`{"type":"error","message":"--json does not ask on a terminal: add --yes to go ahead",`,
		"Would restore the tree to ",
		"? A backup checkpoint is taken first. [y/N] ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Dry run") {
		t.Errorf("the question is introduced as a dry run:\n%s", s)
	}
	if n := strings.Count(s, "[y/N]"); n != 1 {
		t.Errorf("asked %d times, want 1 (--json does not ask):\n%s", n, s)
	}
}

// On a terminal a long save shows one progress line, redrawn in place and
// cleared at the end; off a terminal it shows nothing (the testscripts check
// '! stderr .').
func TestProgressOnATerminal(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), bytes.Repeat([]byte{byte(i)}, 64<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	master, slave := openPTY(t)
	var screen syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&screen, master); close(copied) }()
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: slave, getenv: os.Getenv,
		progressAfter: -1, progressEvery: time.Millisecond}
	if err := run(context.Background(), e, []string{"save", "--full", "-C", dir}); err != nil {
		t.Fatal(err)
	}
	// A restore knows, once planned, how many files it writes: the line
	// counts them against that total, the share done and no more.
	for i := range 200 {
		os.Remove(filepath.Join(dir, fmt.Sprintf("f%03d", i)))
	}
	if err := run(context.Background(), e, []string{"restore", "@0", "--yes", "-C", dir}); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	<-copied
	s := screen.String()
	if !strings.Contains(s, "\r\x1b[Krewind: saving") {
		t.Errorf("no progress line:\n%q", s)
	}
	// (200 files of 64 KiB: 12.5 MiB; no thousands separators, as the result prints numbers)
	if !regexp.MustCompile(`rewind: saving: \d+ of 200 files, \d+\.\d of 12\.5 MiB \(\d+%\), \d+\.\d MiB/s`).MatchString(s) {
		t.Errorf("no counts in the progress line:\n%q", s)
	}
	if !regexp.MustCompile(`rewind: restoring: \d+ of 200 files, \d+\.\d of 12\.5 MiB \(\d+%\)`).MatchString(s) {
		t.Errorf("no counts against the total in the restore's progress line:\n%q", s)
	}
	if m := regexp.MustCompile(`rewind: restoring: (\d+) of 200 files`).FindAllStringSubmatch(s, -1); len(m) == 0 || m[len(m)-1][1] != "200" {
		t.Errorf("the restore's progress line stops short of its total:\n%q", s)
	}
	if !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("the progress line is not cleared at the end:\n%q", s)
	}
}

// validate (and gc) count checkpoints on the progress line.
func TestCountedProgressOnATerminal(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	s, _, err := store.Init(dir, layout.ModeProject)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for j := range 50 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", j)), bytes.Repeat([]byte{byte(i + j)}, 64<<10), 0o644)
		}
		if _, err := s.Save(context.Background(), store.SaveOptions{Full: true}); err != nil {
			t.Fatal(err)
		}
	}
	master, slave := openPTY(t)
	var screen syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&screen, master); close(copied) }()
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: slave, getenv: os.Getenv,
		progressAfter: -1, progressEvery: time.Millisecond}
	if err := run(context.Background(), e, []string{"validate", "-C", dir}); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	<-copied
	if s := screen.String(); !regexp.MustCompile(`rewind: checking every checkpoint(…|: \d of 3 checkpoints)`).MatchString(s) {
		t.Errorf("no progress line:\n%q", s)
	}
}

func TestProgressLine(t *testing.T) {
	for _, tt := range []struct {
		c    counts
		took time.Duration
		want string
	}{
		{counts{}, time.Second, "rewind: saving…"},
		{counts{files: 1, bytes: 1 << 20}, time.Second, "rewind: saving: 1 file, 1.0 MiB, 1.0 MiB/s"},
		// Numbers as the result prints them: no thousands separators.
		{counts{files: 12345, bytes: 300 << 20}, 2 * time.Second, "rewind: saving: 12345 files, 300.0 MiB, 150.0 MiB/s"},
		// A known total: the share done (of the bytes) and the time left.
		{counts{files: 0, totalFiles: 15036, totalBytes: 400 << 20}, 0, "rewind: saving: 0 of 15036 files, 0.0 of 400.0 MiB (0%), 0.0 MiB/s"},
		{counts{files: 3000, bytes: 100 << 20, totalFiles: 15036, totalBytes: 400 << 20}, 10 * time.Second,
			"rewind: saving: 3000 of 15036 files, 100.0 of 400.0 MiB (25%), 10.0 MiB/s, 30s left"},
		{counts{files: 15036, bytes: 400 << 20, totalFiles: 15036, totalBytes: 400 << 20}, 40 * time.Second,
			"rewind: saving: 15036 of 15036 files, 400.0 of 400.0 MiB (100%), 10.0 MiB/s, 0s left"},
		{counts{files: 10, bytes: 10 << 20, totalFiles: 1000, totalBytes: 1000 << 20}, 100 * time.Second,
			"rewind: saving: 10 of 1000 files, 10.0 of 1000.0 MiB (1%), 0.1 MiB/s, 2h45m left"},
		// Not a second yet: no guess.
		{counts{files: 1, bytes: 1 << 20, totalFiles: 2, totalBytes: 2 << 20}, 500 * time.Millisecond,
			"rewind: saving: 1 of 2 files, 1.0 of 2.0 MiB (50%), 2.0 MiB/s"},
	} {
		if got := progressLine("saving", tt.c, tt.took); got != tt.want {
			t.Errorf("progressLine(%+v, %v) = %q, want %q", tt.c, tt.took, got, tt.want)
		}
	}
	if got, want := countLine("deleting old checkpoints", 1234, 9900), "rewind: deleting old checkpoints: 1234 of 9900 checkpoints"; got != want {
		t.Errorf("countLine = %q, want %q", got, want)
	}
}
