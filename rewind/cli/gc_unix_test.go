//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// nobody is the unprivileged user the test runs rewind as, the store's
// owner; root, the owner of the checkpoint a 'sudo rewind save' left.
const nobody = 65534

// A checkpoint another user owns (root's, from a save run with sudo) does
// not stop gc, nor retention at a hook: they delete the rest as the policy
// says, keep it and what it builds on, and say whose it is and the command
// that gives it back. Its owner's files are as Rewind writes them (only
// root may read them), or readable by all: then what it builds on is
// known, and the rest goes.
func TestGCPastAnotherUsersCheckpoint(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: there is no second user to be (the store's TestGCGoesOnPastACheckpointItMayNotRemove refuses a removal instead)")
	}
	exe := userBinary(t)
	for _, readable := range []bool{false, true} {
		t.Run(map[bool]string{false: "unreadable", true: "readable"}[readable], func(t *testing.T) {
			home, dir := t.TempDir(), t.TempDir()
			env := []string{"HOME=" + home, "REWIND_HOME=" + filepath.Join(home, ".rewind"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
			for _, kv := range env[:3] {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			s, _, err := store.Init(dir, layout.ModeProject)
			if err != nil {
				t.Fatal(err)
			}
			big := make([]byte, 64<<10)
			rand.New(rand.NewSource(1)).Read(big) // (a base the small layers do not outgrow: they stay layers)
			if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
				t.Fatal(err)
			}
			step := 0
			edit := func() {
				step++
				if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("x", step)), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(filepath.Join(dir, "a.txt"), nobody, nobody); err != nil {
					t.Fatal(err)
				}
			}
			// v1-v3 by the user, then root's, then v5 and v6 by the user,
			// who cannot read root's (when only root may) and so layers on v3.
			var ids []string
			for range 4 {
				edit()
				out := mustRun(t, dir, "", "save", "--json")
				ids = append(ids, savedID(t, out))
			}
			giveTo(t, nobody, home, dir)
			root := ids[3]
			rootDir := filepath.Join(s.Dir, layout.CheckpointsDir, root)
			for _, p := range []string{rootDir, filepath.Join(s.Dir, "layers", root+".tar.gz")} {
				if out, err := exec.Command("chown", "-R", "0:0", p).CombinedOutput(); err != nil {
					t.Fatalf("chown: %v %s", err, out)
				}
				if readable {
					exec.Command("chmod", "-R", "a+rX", p).Run()
				}
			}
			as := func(stdin string, args ...string) (int, string, string) {
				t.Helper()
				cmd := &exec.Cmd{Path: exe, Args: append([]string{"rewind", "-C", dir}, args...), Env: env, Dir: dir, Stdin: strings.NewReader(stdin)}
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
				var out, errs strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errs
				err := cmd.Run()
				code := cmd.ProcessState.ExitCode()
				if err != nil && code < 0 {
					t.Fatalf("rewind %q: %v", args, err)
				}
				return code, out.String(), errs.String()
			}
			for range 2 {
				edit()
				code, out, errs := as("", "save", "--json")
				if code != 0 {
					t.Fatalf("save as nobody: %d %s%s", code, out, errs)
				}
				ids = append(ids, savedID(t, out))
			}

			code, out, errs := as("", "gc", "--keep", "1", "--json")
			if code != 0 {
				t.Fatalf("gc: exit %d: %s%s", code, out, errs)
			}
			var res store.GCResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			want := []string{ids[4]} // v5; v1-v3 older than one gc cannot read
			if readable {
				want = []string{ids[0], ids[1], ids[4]} // v3 stays: root's builds on it
			}
			slices.SortFunc(res.Removed, store.CompareIDs)
			if !slices.Equal(res.Removed, want) {
				t.Errorf("gc removed %v, want %v", res.Removed, want)
			}
			if len(res.Unremovable) != 1 || res.Unremovable[0].ID != root || res.Unremovable[0].UID != 0 || res.Unremovable[0].Readable != readable {
				t.Errorf("unremovable: %+v, want root's %s", res.Unremovable, root)
			}
			if _, err := os.Stat(rootDir); err != nil {
				t.Errorf("root's checkpoint: %v", err)
			}

			// In words: whose it is, and the command that gives it back; not damage.
			edit()
			as("", "save")
			code, _, errs = as("", "gc", "--keep", "1")
			fix := "sudo chown -R nobody " + s.Dir
			if code != 0 || !strings.Contains(errs, "warning: checkpoint "+root+" belongs to root (uid 0), not to you") || !strings.Contains(errs, fix) || strings.Contains(errs, "damaged") {
				t.Errorf("gc: exit %d, stderr:\n%s\nwant root's checkpoint named, and %q", code, errs, fix)
			}

			// Retention at a hook: the same, in the response's warnings.
			os.WriteFile(filepath.Join(s.Dir, "config.json"), []byte(`{"version":1,"retention":{"max_checkpoints":1}}`), 0o600)
			os.Chown(filepath.Join(s.Dir, "config.json"), nobody, nobody)
			edit()
			as("", "save")
			code, out, errs = as(`{"version":1,"event":"SessionStart","project_dir":`+jsonString(t, dir)+`,"retention":true,"retention_budget_ms":10000}`, "hook")
			var resp struct {
				Removed  int
				Warnings []string
			}
			json.Unmarshal([]byte(out), &resp)
			if code != 0 || resp.Removed != 1 || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], root+" belongs to root") || !strings.Contains(resp.Warnings[0], fix) {
				t.Errorf("hook: exit %d, %s%s; want one removed, and a warning naming root's checkpoint and %q", code, out, errs, fix)
			}
		})
	}
}

// savedID is the id save --json printed.
func savedID(t *testing.T, out string) string {
	t.Helper()
	var c struct{ Checkpoint struct{ ID string } }
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.Checkpoint.ID == "" {
		t.Fatalf("save --json: %v: %s", err, out)
	}
	return c.Checkpoint.ID
}

// userBinary is this test binary, where another user may run it, named so
// that it runs rewind (TestMain).
func userBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	giveTo(t, nobody, dir)
	exe := filepath.Join(dir, "rewind")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return exe
}

// giveTo gives the folders, and all in them, to uid, and lets all through
// the folders above them.
func giveTo(t *testing.T, uid int, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, uid), d).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
		for p := filepath.Dir(d); p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}
