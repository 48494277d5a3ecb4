package hookd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"rewind.dev/internal/durable"
)

// TestSettingsFaultSweep fails every file operation of a registration (and
// of recording the tier) in turn, with EIO and ENOSPC: each failure is an
// error carrying the cause; the settings file keeps its bytes (or, when the
// folder sync after its replacement failed, holds the new ones whole); no
// temp file is left; a backup, when one was written, holds the old file whole.
func TestSettingsFaultSweep(t *testing.T) {
	const user = "{\n  \"model\": \"opus\",\n  \"n\": 1.50,\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]}\n}\n"
	cases := []struct {
		name string
		run  func(dir string) (string, error) // returns the file it edits
	}{
		{"register", func(dir string) (string, error) {
			p := filepath.Join(dir, "settings.json")
			_, err := Register(p, "claude", "balanced", "/opt/rewind/rewind-hook")
			return p, err
		}},
		{"unregister", func(dir string) (string, error) {
			p := filepath.Join(dir, "settings.json")
			_, err := Unregister(p, "claude")
			return p, err
		}},
		{"set tier", func(dir string) (string, error) {
			_, err := SetConfigTier(dir, "aggressive")
			return GlobalConfigPath(dir), err
		}},
	}
	total := 0
	for _, c := range cases {
		for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
			t.Run(fmt.Sprintf("%s/%v", c.name, errno), func(t *testing.T) {
				setup := func() string {
					dir := t.TempDir()
					os.WriteFile(filepath.Join(dir, "settings.json"), []byte(user), 0o600)
					if c.name == "unregister" {
						durable.FaultAt = nil
						if _, err := Register(filepath.Join(dir, "settings.json"), "claude", "balanced", "/opt/rewind/rewind-hook"); err != nil {
							t.Fatal(err)
						}
						for _, b := range backups(dir) {
							os.Remove(b)
						}
					}
					os.MkdirAll(filepath.Dir(GlobalConfigPath(dir)), 0o755)
					os.WriteFile(GlobalConfigPath(dir), []byte("{\"version\": 1, \"tier\": \"minimal\", \"x\": [1]}\n"), 0o644)
					return dir
				}
				t.Cleanup(func() { durable.FaultAt = nil })
				var ops []string
				dir := setup()
				durable.FaultAt = func(op, path string) error { ops = append(ops, op+" "+filepath.Base(path)); return nil }
				edited, err := c.run(dir)
				if err != nil {
					t.Fatalf("clean run: %v", err)
				}
				durable.FaultAt = nil
				want, _ := os.ReadFile(edited)
				if len(ops) < 5 {
					t.Fatalf("only %d operations went through the seam: %v", len(ops), ops)
				}
				t.Logf("operations: %v", ops)
				for n := 1; n <= len(ops); n++ {
					total++
					dir := setup()
					file := filepath.Join(dir, "settings.json")
					if c.name == "set tier" {
						file = GlobalConfigPath(dir)
					}
					before, _ := os.ReadFile(file)
					i := 0
					durable.FaultAt = func(op, path string) error {
						if i++; i == n {
							return errno
						}
						return nil
					}
					_, err := c.run(dir)
					durable.FaultAt = nil
					tag := fmt.Sprintf("op %d (%s)", n, ops[n-1])
					if !errors.Is(err, errno) {
						t.Errorf("%s failed with %v; the run returned %v", tag, errno, err)
						continue
					}
					// The last operation is the folder sync after the file's replacing rename:
					// when it fails the new file is in place already (whole), and the error says
					// that the change may not survive a crash.
					last := n == len(ops) && strings.HasPrefix(ops[n-1], "syncdir ")
					if after, _ := os.ReadFile(file); !bytes.Equal(after, before) && !(last && bytes.Equal(after, want)) {
						t.Errorf("%s: %s changed:\n%s", tag, filepath.Base(file), after)
					}
					filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
						if err == nil && durable.IsTemp(de.Name()) {
							t.Errorf("%s: temp file left: %s", tag, p)
						}
						return nil
					})
					for _, b := range backups(dir) {
						if got, _ := os.ReadFile(b); !bytes.Equal(got, before) {
							t.Errorf("%s: backup %s does not hold the old file", tag, filepath.Base(b))
						}
					}
				}
			})
		}
	}
	t.Logf("reliability: fault/settings: runs=%d faults=%d", total, total)
}

func backups(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*.rewind-backup-*"))
	return m
}

// TestStaleTempsAreCleaned: a temp file a killed write left (no flock held)
// goes at the next write in its folder; a live writer's stays.
func TestStaleTempsAreCleaned(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".settings.json.rewind-tmp-123")
	os.WriteFile(stale, []byte("{half"), 0o600)
	notOurs := filepath.Join(dir, ".notes.rewind-tmp-x1")
	os.WriteFile(notOurs, nil, 0o600)
	live, err := durable.Create(filepath.Join(dir, "other.json"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if _, err := Register(filepath.Join(dir, "settings.json"), "claude", "balanced", "/opt/rewind/rewind-hook"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); err == nil {
		t.Error("the stale temp file is still there")
	}
	if _, err := os.Lstat(live.Name()); err != nil {
		t.Errorf("a live writer's temp file was removed: %v", err)
	}
	if _, err := os.Lstat(notOurs); err != nil {
		t.Errorf("a file that is not a temp file was removed: %v", err)
	}
}
