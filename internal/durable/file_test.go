package durable

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCommitLeavesExactlyTheFile: after Commit the folder holds the final file with the bytes
// and mode written, and nothing else; a deferred Abort after it changes nothing.
func TestCommitLeavesExactlyTheFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		flags []Flag
		old   bool // a file is at the name before
	}{
		{"new", nil, false},
		{"replace", nil, true},
		{"no replace", []Flag{NoReplace}, false},
		{"unsynced replace", []Flag{NoSync}, true},
		{"keep owner", []Flag{KeepOwner}, true},
		{"staged", []Flag{Staged}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.json")
			if tt.old {
				os.WriteFile(p, []byte("old"), 0o644)
			}
			f, err := Create(p, 0o640, tt.flags...)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Abort()
			if _, err := f.Write([]byte("new")); err != nil {
				t.Fatal(err)
			}
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
			f.Abort()
			if got := names(t, dir); !slices.Equal(got, []string{"f.json"}) {
				t.Errorf("folder holds %v", got)
			}
			if got := readString(t, p); got != "new" {
				t.Errorf("file holds %q", got)
			}
			want := fs.FileMode(0o640)
			if slices.Contains(tt.flags, Staged) {
				want &^= umask(t)
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != want {
				t.Errorf("mode %v, want %v", st.Mode().Perm(), want)
			}
			if err := f.Commit(); !errors.Is(err, os.ErrClosed) {
				t.Errorf("a second commit: %v", err)
			}
		})
	}
}

func umask(t *testing.T) fs.FileMode {
	p := filepath.Join(t.TempDir(), "m")
	os.WriteFile(p, nil, 0o777)
	st, _ := os.Stat(p)
	return 0o777 &^ st.Mode().Perm()
}

// TestAbortLeavesNothing: an aborted write leaves the folder as it was.
func TestAbortLeavesNothing(t *testing.T) {
	for _, flags := range [][]Flag{nil, {NoReplace}, {NoSync}, {Staged}} {
		t.Run(fmt.Sprint(flags), func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o644)
			p := filepath.Join(dir, "f")
			f, err := Create(p, 0o600, flags...)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("half"))
			f.Abort()
			if got := names(t, dir); !slices.Equal(got, []string{"other"}) {
				t.Errorf("folder holds %v", got)
			}
			if err := f.Commit(); err == nil {
				t.Error("commit after abort succeeded")
			}
		})
	}
}

// TestNoReplace: with NoReplace, Commit refuses a name that is taken (fs.ErrExist), leaving
// the file there as it was and no temporary file; Staged refuses at Create.
func TestNoReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("mine"), 0o600)
	err := WriteFile(p, []byte("new"), 0o600, NoReplace)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %v", err)
	}
	if _, err := Create(p, 0o600, Staged); !errors.Is(err, fs.ErrExist) {
		t.Errorf("staged: err = %v", err)
	}
	if got := readString(t, p); got != "mine" {
		t.Errorf("file holds %q", got)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"f"}) {
		t.Errorf("folder holds %v", got)
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".f.json.rewind-tmp-123":  true,
		".a.b.rewind-tmp-0":       true,
		"f.json.rewind-tmp-123":   false, // not hidden
		".f.json.rewind-tmp-":     false,
		".f.json.rewind-tmp-12a":  false,
		".f.json.tmp-123":         false, // another program's, or an old Rewind's
		".rewind-tmp-123":         false,
		".notes.rewind-tmp-x1":    false,
		".f.rewind-tmp-1.json":    false,
		".f.rewind-tmp-1.rewind-": false,
	} {
		if IsTemp(name) != want {
			t.Errorf("IsTemp(%q) = %v", name, !want)
		}
	}
	// Create's own names follow the rule.
	f, err := Create(filepath.Join(t.TempDir(), "x.jsonl"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if !IsTemp(filepath.Base(f.Name())) {
		t.Errorf("Create made %s, which IsTemp does not know", f.Name())
	}
}

// helperEnv makes the test binary a writer that creates a durable file, writes half of it,
// says "ready" and waits to be killed (see TestCrashBeforeRename).
const helperEnv = "DURABLE_TEST_WRITER"

func TestMain(m *testing.M) {
	if p := os.Getenv(helperEnv); p != "" {
		f, err := Create(p, 0o600)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		f.Write([]byte("half of the new"))
		fmt.Println("ready")
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

// startWriter runs a writer of p in another process and returns it once its temporary file
// is written.
func startWriter(t *testing.T, p string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("writer: %q", line)
	}
	return cmd
}

func temps(t *testing.T, dir string) []string {
	return slices.DeleteFunc(names(t, dir), func(n string) bool { return !IsTemp(n) })
}

// TestCrashBeforeRename: a writer killed between write and rename leaves the old file whole and
// its temporary file, which the sweep spares while the writer lives (its flock held) and
// removes once it is dead; files that only look alike stay.
func TestCrashBeforeRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "history.json")
	os.WriteFile(p, []byte("old"), 0o644)
	notOurs := []string{".history.json.tmp-123", ".notes.rewind-tmp-x1", "history.json.rewind-tmp-1"}
	for _, n := range notOurs {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	w := startWriter(t, p)
	tmp := temps(t, dir)
	if len(tmp) != 1 {
		t.Fatalf("temporary files: %v", tmp)
	}

	Sweep(dir)
	if got := temps(t, dir); !slices.Equal(got, tmp) {
		t.Errorf("the sweep removed a live writer's temporary file: %v left", got)
	}
	// A write of another run in the same folder sweeps too, and spares it as well.
	if err := WriteFile(filepath.Join(dir, "session.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := temps(t, dir); !slices.Equal(got, tmp) {
		t.Errorf("a write removed a live writer's temporary file: %v left", got)
	}

	w.Process.Signal(syscall.SIGKILL)
	w.Wait()
	if got := readString(t, p); got != "old" {
		t.Errorf("after the crash the file holds %q", got)
	}
	if got := readString(t, filepath.Join(dir, tmp[0])); got != "half of the new" {
		t.Errorf("the dead writer's temporary file holds %q", got)
	}
	Sweep(dir)
	if got := temps(t, dir); len(got) != 0 {
		t.Errorf("the sweep left a dead writer's temporary file: %v", got)
	}
	for _, n := range notOurs {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("the sweep removed %s, which is not a temporary file of ours", n)
		}
	}
	if got := readString(t, p); got != "old" {
		t.Errorf("after the sweep the file holds %q", got)
	}
}

// TestFaultSeam fails each operation a write names, in turn, with EIO: each failure is an
// error carrying the cause and naming the file; no temporary file is left; the name holds the
// old bytes, or (only when the folder sync after the rename failed, and the rename replaced a
// file) the new bytes whole; with NoReplace it holds nothing new.
func TestFaultSeam(t *testing.T) {
	t.Cleanup(func() { FaultAt = nil })
	for _, tt := range []struct {
		name  string
		flags []Flag
		old   bool
		ops   string // the operations a clean run puts through the seam
	}{
		{"replace", nil, true, "create chmod write sync rename syncdir"},
		{"new", []Flag{NoReplace}, false, "create chmod write sync lstat rename syncdir"},
		{"unsynced", []Flag{NoSync}, true, "create chmod write rename"},
		{"staged", []Flag{Staged}, false, "create write sync"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setup := func() (string, string) {
				dir := t.TempDir()
				p := filepath.Join(dir, "f")
				if tt.old {
					os.WriteFile(p, []byte("old"), 0o644)
				}
				return dir, p
			}
			var ops []string
			FaultAt = func(op, path string) error { ops = append(ops, op); return nil }
			_, p := setup()
			if err := WriteFile(p, []byte("new"), 0o644, tt.flags...); err != nil {
				t.Fatal(err)
			}
			FaultAt = nil
			if got := strings.Join(ops, " "); got != tt.ops {
				t.Fatalf("operations %q, want %q", got, tt.ops)
			}
			for n := 1; n <= len(ops); n++ {
				dir, p := setup()
				i := 0
				FaultAt = func(op, path string) error {
					if i++; i == n {
						return syscall.EIO
					}
					return nil
				}
				err := WriteFile(p, []byte("new"), 0o644, tt.flags...)
				FaultAt = nil
				tag := fmt.Sprintf("op %d (%s)", n, ops[n-1])
				if !errors.Is(err, syscall.EIO) {
					t.Errorf("%s: err = %v", tag, err)
					continue
				}
				if msg := err.Error(); !strings.Contains(msg, dir) || strings.Contains(msg, "\n") {
					t.Errorf("%s: error is not one line naming the file: %q", tag, msg)
				}
				if got := temps(t, dir); len(got) != 0 {
					t.Errorf("%s: temporary files left: %v", tag, got)
				}
				got, readErr := os.ReadFile(p)
				switch {
				case tt.old && string(got) == "old":
				case tt.old && ops[n-1] == "syncdir" && string(got) == "new":
				case !tt.old && errors.Is(readErr, fs.ErrNotExist):
				default:
					t.Errorf("%s: the file holds %q (%v)", tag, got, readErr)
				}
			}
		})
	}
}

// TestSyncDirFault: SyncDir names its folder and goes through the seam.
func TestSyncDirFault(t *testing.T) {
	t.Cleanup(func() { FaultAt = nil })
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	FaultAt = func(op, path string) error {
		if op == "syncdir" && path == dir {
			return syscall.ENOSPC
		}
		return nil
	}
	if err := SyncDir(dir); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), dir) {
		t.Errorf("err = %v", err)
	}
	if err := FaultOr("mkdir", dir, func() error { return nil }); err != nil {
		t.Errorf("FaultOr failed an operation FaultAt passes: %v", err)
	}
	var pe *fs.PathError
	if err := Fault("syncdir", dir); !errors.As(err, &pe) || pe.Op != "syncdir" || pe.Path != dir {
		t.Errorf("Fault = %v, want an *fs.PathError", err)
	}
}

// TestReadFromThroughSeam: io.Copy into a File (the kernel's copy) goes through the seam.
func TestReadFromThroughSeam(t *testing.T) {
	t.Cleanup(func() { FaultAt = nil })
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, bytes.Repeat([]byte("x"), 1<<16), 0o644)
	in, _ := os.Open(src)
	defer in.Close()
	f, err := Create(filepath.Join(dir, "dst"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	FaultAt = func(op, path string) error {
		if op == "write" {
			return syscall.ENOSPC
		}
		return nil
	}
	if _, err := f.ReadFrom(in); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("err = %v", err)
	}
}
