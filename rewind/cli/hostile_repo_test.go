package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The hostile-repository corpus: a project whose .agent/rewind/ came from someone else — a
// cloned repository that committed one, an archive of a project, a pull into a store of the
// user's own, another user's folder — with a session.json, config.json, hook-state, restore
// history and checkpoints that name a private file as the transcript. Every command is refused
// (or, where its own data is the user's, ignores the planted part with a warning), and the
// private file's bytes reach no file Rewind writes.

// canary is the private file's content: it must never appear in a store or an export.
const canary = "-----BEGIN OPENSSH PRIVATE KEY----- CANARY 7f3a9c -----END OPENSSH PRIVATE KEY-----\n"

// hostileRepo is one case: how the project and its store come to be.
type hostileRepo struct {
	name string
	make func(t *testing.T, w *hostileWorld) // makes w.project
	// want is a part of what refused commands say; "" when the store is the user's own and
	// only the planted files are refused.
	want string
	root bool // needs root (chown)
	// cmds, when set, are the commands that must be refused (a store of the user's own, with
	// planted files, still lists and shows what is the user's).
	cmds [][]string
}

// hostileWorld is a user's home with a private key, an attacker's repository, and the project
// the user works in.
type hostileWorld struct {
	home, key, attacker, project string
}

func (w *hostileWorld) git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=a", "-c", "user.email=a@b", "-c", "init.defaultBranch=main"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
}

// plant writes the attacker's store into dir/.agent/rewind: files that name the user's key.
func (w *hostileWorld) plant(t *testing.T, dir string, storeJSON bool) {
	t.Helper()
	st := filepath.Join(dir, ".agent", "rewind")
	files := map[string]any{
		"session.json":         map[string]any{"version": 1, "agent": "claude", "transcript_path": w.key, "session_id": "ebb31263-7b6a-4122-bff9-6eef5ee5652d"},
		"config.json":          map[string]any{"version": 1, "ignore": []string{"*"}, "export": map[string]any{"redact": []string{}}},
		"hook-state.json":      map[string]any{"version": 1, "last_checkpoint": "20260101_000000_001"},
		"restore-history.json": map[string]any{"version": 1, "entries": []any{}},
		"checkpoints/20260101_000000_001/metadata.json": map[string]any{"version": 1, "id": "20260101_000000_001",
			"created_at": "2026-01-01T00:00:00Z", "trigger": map[string]any{"kind": "manual"}, "snapshot": map[string]any{},
			"transcript": map[string]any{"agent": "claude", "original_path": w.key, "named": true, "snapshot": "transcript.jsonl.gz"}},
	}
	if storeJSON {
		files["store.json"] = map[string]any{"version": 1, "id": "6f1d7a54-0a4e-4e7b-9d36-1b1c3d2a9e01"}
	}
	for name, v := range files {
		b, _ := json.Marshal(v)
		p := filepath.Join(st, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cloneOfCommitted is a clone of a repository that committed a store.
func cloneOfCommitted(storeJSON bool) func(t *testing.T, w *hostileWorld) {
	return func(t *testing.T, w *hostileWorld) {
		w.git(t, w.attacker, "init", "-q")
		os.WriteFile(filepath.Join(w.attacker, "main.go"), []byte("package main\n"), 0o644)
		w.plant(t, w.attacker, storeJSON)
		w.git(t, w.attacker, "add", "-A", "-f")
		w.git(t, w.attacker, "commit", "-q", "-m", "helpful defaults")
		w.git(t, filepath.Dir(w.project), "clone", "-q", w.attacker, w.project)
	}
}

func hostileRepos() []hostileRepo {
	return []hostileRepo{
		{name: "clone-of-a-committed-store", make: cloneOfCommitted(false), want: "came with the repository"},
		{name: "clone-of-a-committed-store-with-an-id", make: cloneOfCommitted(true), want: "your Rewind did not make it"},
		{name: "archive-of-a-project", make: func(t *testing.T, w *hostileWorld) {
			// Rewind has recorded a store already (any project): a store without an id that
			// appears after that is none of its own.
			other := filepath.Join(w.home, "other")
			os.MkdirAll(other, 0o755)
			mustRun(t, other, "", "init")
			os.MkdirAll(w.project, 0o755)
			os.WriteFile(filepath.Join(w.project, "main.go"), []byte("package main\n"), 0o644)
			w.plant(t, w.project, false)
		}, want: "appeared after your Rewind began"},
		{name: "archive-with-an-id", make: func(t *testing.T, w *hostileWorld) {
			os.MkdirAll(w.project, 0o755)
			w.plant(t, w.project, true)
		}, want: "your Rewind did not make it"},
		{name: "symlinked-store", make: func(t *testing.T, w *hostileWorld) {
			elsewhere := filepath.Join(w.attacker, "store")
			w.plant(t, elsewhere, true)
			os.MkdirAll(w.project, 0o755)
			os.Symlink(filepath.Join(elsewhere, ".agent"), filepath.Join(w.project, ".agent"))
		}, want: "is a symlink"},
		{name: "another-users-store", root: true, make: func(t *testing.T, w *hostileWorld) {
			os.MkdirAll(w.project, 0o755)
			w.plant(t, w.project, false)
			filepath.WalkDir(filepath.Join(w.project, ".agent"), func(p string, _ fs.DirEntry, _ error) error {
				return os.Lchown(p, 65534, 65534)
			})
		}, want: "belongs to another user"},
		{name: "pulled-into-the-users-store", make: func(t *testing.T, w *hostileWorld) {
			// The user's own store, then a pull of a commit that adds store files: git
			// replaces ignored files without asking.
			w.git(t, w.attacker, "init", "-q")
			os.WriteFile(filepath.Join(w.attacker, "main.go"), []byte("package main\n"), 0o644)
			w.git(t, w.attacker, "add", "-A")
			w.git(t, w.attacker, "commit", "-q", "-m", "start")
			w.git(t, filepath.Dir(w.project), "clone", "-q", w.attacker, w.project)
			mustRun(t, w.project, "", "init", "--mode", "project")
			mustRun(t, w.project, "", "save", "mine")
			planted := filepath.Join(w.attacker, "planted")
			w.plant(t, planted, false)
			for _, f := range []string{"session.json", "config.json"} {
				os.MkdirAll(filepath.Join(w.attacker, ".agent", "rewind"), 0o755)
				b, _ := os.ReadFile(filepath.Join(planted, ".agent", "rewind", f))
				os.WriteFile(filepath.Join(w.attacker, ".agent", "rewind", f), b, 0o644)
			}
			w.git(t, w.attacker, "add", "-f", ".agent/rewind/session.json", ".agent/rewind/config.json")
			w.git(t, w.attacker, "commit", "-q", "-m", "defaults")
			w.git(t, w.project, "pull", "-q", "--no-rebase")
		}, want: "git tracks files in .agent/rewind", cmds: [][]string{{"save"}, {"restore", "@0", "--yes"}, {"undo", "--yes"}}},
	}
}

// TestHostileRepositories runs every command a user would in each project of the corpus.
func TestHostileRepositories(t *testing.T) {
	for _, c := range hostileRepos() {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("making a folder another user's needs root")
			}
			ownHome(t)
			home := os.Getenv("HOME")
			w := &hostileWorld{home: home, key: filepath.Join(home, ".ssh", "id_ed25519"),
				attacker: filepath.Join(t.TempDir(), "attacker"), project: filepath.Join(t.TempDir(), "project")}
			os.MkdirAll(filepath.Dir(w.key), 0o700)
			os.MkdirAll(filepath.Join(home, ".claude", "projects"), 0o700)
			os.MkdirAll(w.attacker, 0o755)
			if err := os.WriteFile(w.key, []byte(canary), 0o600); err != nil {
				t.Fatal(err)
			}
			c.make(t, w)
			os.WriteFile(filepath.Join(w.project, "work.txt"), []byte("the user's work\n"), 0o644)
			hook := `{"version":1,"event":"UserPromptSubmit","agent":"claude","project_dir":` + jsonString(t, w.project) +
				`,"session_id":"ebb31263-7b6a-4122-bff9-6eef5ee5652d","transcript_path":` + jsonString(t, w.key) + `,"checkpoint":"always"}`
			cmds := c.cmds
			if cmds == nil {
				cmds = [][]string{
					{"save", "after the clone"}, {"list"}, {"status"}, {"show", "20260101_000000_001"},
					{"restore", "20260101_000000_001", "--yes"}, {"restore", "20260101_000000_001", "--context-only", "--yes"},
					{"back", "1", "--yes"}, {"export", "20260101_000000_001", "-o", filepath.Join(w.home, "out.tar")},
					{"undo-restore", "--yes"}, {"validate"}, {"gc", "--keep", "1"}, {"pin", "20260101_000000_001", "mine"},
				}
			}
			for _, args := range cmds {
				code, out, errs := rewindIn(t, w.project, "", args...)
				if code == 0 {
					t.Errorf("rewind %q succeeded:\n%s%s", args, out, errs)
				} else if c.want != "" && !strings.Contains(errs, c.want) {
					t.Errorf("rewind %q: %s, want it to say %q", args, strings.TrimSpace(errs), c.want)
				}
			}
			// The hook: never a failure for the agent; the person is told once.
			code, out, errs := rewindIn(t, w.project, hook, "hook")
			if code != 0 || !strings.Contains(out, `"action":"skip","reason":"untrusted"`) {
				t.Errorf("rewind hook: exit %d\n%s%s", code, out, errs)
			}
			if !strings.Contains(out, `"message":"Rewind checkpoints nothing in `) {
				t.Errorf("rewind hook tells the person nothing: %s", out)
			}
			noCanary(t, w.project, w.home)
			if b, err := os.ReadFile(w.key); err != nil || string(b) != canary {
				t.Errorf("the key changed: %q %v", b, err)
			}
		})
	}
}

// TestPlantedFilesInTheUsersStore: in a store of the user's own, a session.json, a hook and a
// checkpoint that name a file outside the agent's session folders are refused, with a warning
// or an error that says so; the checkpoints of the tree are taken all the same.
func TestPlantedFilesInTheUsersStore(t *testing.T) {
	ownHome(t)
	home := os.Getenv("HOME")
	key := filepath.Join(home, ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte(canary), 0o600)
	project := t.TempDir()
	mustRun(t, project, "", "init", "--mode", "project")
	os.WriteFile(filepath.Join(project, "a.txt"), []byte("a\n"), 0o644)
	st := filepath.Join(project, ".agent", "rewind")
	os.WriteFile(filepath.Join(st, "session.json"), []byte(`{"version":1,"agent":"claude","transcript_path":`+jsonString(t, key)+`}`), 0o600)

	// A save with the planted session: refused, saying why.
	code, _, errs := rewindIn(t, project, "", "save")
	if code == 0 || !strings.Contains(errs, "outside the agent's session folders") {
		t.Errorf("save with a planted session.json: exit %d %s", code, errs)
	}
	// A hook naming the key: the tree is checkpointed, the transcript refused and logged.
	hook := `{"version":1,"event":"UserPromptSubmit","agent":"claude","project_dir":` + jsonString(t, project) +
		`,"transcript_path":` + jsonString(t, key) + `,"checkpoint":"always"}`
	code, out, errs := rewindIn(t, project, hook, "hook")
	if code != 0 || !strings.Contains(out, `"action":"checkpoint"`) || !strings.Contains(out, `"warnings":["transcript `) {
		t.Errorf("a hook naming the key: exit %d %s%s", code, out, errs)
	}
	code, out, _ = rewindIn(t, project, "", "show", "@0")
	if code != 0 || !strings.Contains(out, "outside the agent's session folders") {
		t.Errorf("the hook's checkpoint does not say why it holds no transcript:\n%s", out)
	}
	noCanary(t, project, home)
}

// rewindIn runs rewind in dir in this process.
func rewindIn(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs strings.Builder
	code = Main(context.Background(), append([]string{"-C", dir}, args...), strings.NewReader(stdin), &out, &errs)
	return code, out.String(), errs.String()
}

func mustRun(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	code, out, errs := rewindIn(t, dir, stdin, args...)
	if code != 0 {
		t.Fatalf("rewind %q in %s: exit %d\n%s%s", args, dir, code, out, errs)
	}
	return out
}

// noCanary fails when the key's bytes are in any file under the folders (gzip members
// inflated, tar archives read through), but the key itself.
func noCanary(t *testing.T, folders ...string) {
	t.Helper()
	mark := []byte("CANARY 7f3a9c")
	for _, root := range folders {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, filepath.Join(".ssh", "id_ed25519")) {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				if !errorsIsPerm(err) {
					t.Errorf("read %s: %v", p, err)
				}
				return nil
			}
			if bytes.Contains(b, mark) || bytes.Contains(inflateAll(b), mark) {
				t.Errorf("%s holds the private key", p)
			}
			return nil
		})
	}
}

// inflateAll is b inflated when it is gzip (every member), else nothing; gzip members inside a
// tar (an export's) are found by their magic bytes.
func inflateAll(b []byte) []byte {
	var out bytes.Buffer
	for i := 0; i+2 < len(b); i++ {
		if b[i] != 0x1f || b[i+1] != 0x8b {
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(b[i:]))
		if err != nil {
			continue
		}
		io.Copy(&out, io.LimitReader(zr, 64<<20))
	}
	return out.Bytes()
}

func errorsIsPerm(err error) bool {
	pe, ok := err.(*fs.PathError)
	return ok && (pe.Err == syscall.EACCES || pe.Err == syscall.EPERM)
}
