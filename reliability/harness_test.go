//go:build unix

package reliability

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// binDir holds the real binaries, built once by TestMain.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rewind-reliability-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability: error:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // some tests run the binaries as another user
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, "reliability: error:", err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// buildBinaries builds every tool from the workspace into dir, so the tests
// run the same programs a user installs (not the race-instrumented test
// binary).
func buildBinaries(dir string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", dir,
		"./rewind/cmd/rewind", "./hookd/cmd/rewind-hook", "./fork/cmd/rewind-fork",
		"./snap/cmd/rewind-snap", "./jsonl/cmd/rewind-jsonl", "./rewind/internal/genstore")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the binaries in %s: %v\n%s", root, err, out)
	}
	return nil
}

// repoRoot is the folder holding go.work, found upwards from here.
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fmt.Errorf("no go.work above %s", d)
		}
		d = p
	}
}

// bin is the path of the built binary name (or name itself when absolute).
func bin(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(binDir, name)
}

// result is one finished (or killed) process.
type result struct {
	code     int // -1 when killed by a signal
	stdout   string
	stderr   string
	dur      time.Duration
	maxRSSKB int64
	killed   bool
	// signaled: runSignalAfter's signal was sent while it ran; afterSignal
	// is how long it took to end after that.
	signaled    bool
	afterSignal time.Duration
	diedOf      syscall.Signal // the signal that ended it, if one did
}

// proc describes a process to run.
type proc struct {
	name  string   // binary name in binDir
	args  []string //
	dir   string
	env   []string // added to a clean base environment
	stdin []byte
	uid   uint32 // run as this user when not 0 (the suite runs as root)
}

func (p proc) command(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin(p.name), p.args...)
	cmd.Dir = p.dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "NO_COLOR=1", "LANG=C"}, p.env...)
	if p.stdin != nil {
		cmd.Stdin = bytes.NewReader(p.stdin)
	}
	cmd.WaitDelay = 5 * time.Second
	if p.uid != 0 {
		cmd.SysProcAttr = asUser(p.uid)
	}
	return cmd
}

// run runs p to the end, bounded by a generous deadline (a hang is a
// failure, never a slow machine).
func run(t testing.TB, p proc) result {
	t.Helper()
	return runKillAfter(t, p, -1)
}

// runKillAfter runs p and sends SIGKILL after d (d < 0: never).
func runKillAfter(t testing.TB, p proc, d time.Duration) result {
	t.Helper()
	return runSignalAfter(t, p, d, syscall.SIGKILL)
}

// runSignalAfter runs p and sends sig after d (d < 0: never); the result's
// signaled says whether it was sent before the process ended, and
// afterSignal how long the process took to end after it.
func runSignalAfter(t testing.TB, p proc, d time.Duration, sig syscall.Signal) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := p.command(ctx)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	var timer *time.Timer
	var sent atomic.Int64 // when the signal went, in ns since start; 0: not sent
	if d >= 0 {
		timer = time.AfterFunc(d, func() {
			if cmd.Process.Signal(sig) == nil {
				sent.Store(int64(time.Since(start)) | 1)
			}
		})
	}
	err := cmd.Wait()
	if timer != nil {
		timer.Stop()
	}
	r := result{stdout: so.String(), stderr: se.String(), dur: time.Since(start)}
	if at := sent.Load(); at != 0 {
		r.signaled, r.afterSignal = true, r.dur-time.Duration(at)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not finish within 2 minutes (hang)", p.name, strings.Join(p.args, " "))
	}
	if ps := cmd.ProcessState; ps != nil {
		r.code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.killed = ws.Signal() == syscall.SIGKILL
			r.diedOf = ws.Signal()
		}
		r.maxRSSKB = peakRSSKB(ps)
	} else if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "fatal error:") {
		t.Errorf("%s %s panicked:\n%s", p.name, strings.Join(p.args, " "), r.stderr)
	}
	return r
}

// mustRun runs p and fails the test unless it exits 0.
func mustRun(t testing.TB, p proc) result {
	t.Helper()
	r := run(t, p)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\n%s%s", p.name, strings.Join(p.args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// --- trees ---------------------------------------------------------------

// genTree writes n files (and a few empty folders, symlinks and
// executables) under dir.
func genTree(t testing.TB, dir string, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d/s%d/f%04d.txt", i%40, i%7, i))
		writeFile(t, p, randomContent(rng, i), 0o644)
	}
	for i := range 5 {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("empty%d/inner", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "bin/run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	if err := os.Symlink("d00/s0/f0000.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
}

func randomContent(rng *rand.Rand, i int) []byte {
	var b bytes.Buffer
	lines := 1 + rng.IntN(40)
	for l := range lines {
		fmt.Fprintf(&b, "file %d line %d %s\n", i, l, strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(90)))
	}
	return b.Bytes()
}

// mutateTree turns a genTree tree into a different state: modifies, deletes
// and adds files, changes a mode, retargets the symlink, and replaces a
// folder by a file.
func mutateTree(t testing.TB, dir string, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(p, "/.agent/") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for i, p := range files {
		switch rng.IntN(10) {
		case 0, 1:
			writeFile(t, p, randomContent(rng, 100000+i), 0o644)
		case 2:
			os.Remove(p)
		}
	}
	for i := range len(files) / 10 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("new%02d/f%04d.go", i%13, i)), randomContent(rng, 200000+i), 0o644)
	}
	os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o644)
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("d01/s1/f0001.txt", filepath.Join(dir, "link"))
	os.RemoveAll(filepath.Join(dir, "empty0"))
	writeFile(t, filepath.Join(dir, "empty0"), []byte("now a file\n"), 0o644)
}

func writeFile(t testing.TB, p string, data []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// digest is a tree's content, one line per entry: path, kind, exec bit,
// content hash or link target. Rewind's store (.agent/) and .git are left
// out, as are restore staging folders (checked separately).
type digest map[string]string

func (d digest) sum() string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\n", k, d[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// diff names a few entries that differ, for error messages.
func (d digest) diff(o digest) string {
	var out []string
	for k, v := range d {
		if o[k] != v {
			out = append(out, fmt.Sprintf("%s: %q vs %q", k, v, o[k]))
		}
	}
	for k, v := range o {
		if _, ok := d[k]; !ok {
			out = append(out, fmt.Sprintf("%s: missing vs %q", k, v))
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("… %d more", len(out)-5))
	}
	return strings.Join(out, "; ")
}

func treeDigest(t testing.TB, root string) digest {
	t.Helper()
	d := digest{}
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if rel == ".agent/rewind" || rel == ".git" || stagingFolder(p) {
			return filepath.SkipDir
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			d[rel] = "link " + target
		case fi.IsDir():
			d[rel] = "dir"
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			d[rel] = fmt.Sprintf("file %v %x", fi.Mode()&0o111 != 0, sha256.Sum256(b))
		default:
			d[rel] = "other " + fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("digest %s: %v", root, err)
	}
	return d
}

// --- transcripts -----------------------------------------------------------

// genTranscript writes a Claude Code transcript of about size bytes: user
// prompts and assistant answers, each line whole.
func genTranscript(t testing.TB, path string, size int, seed uint64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	appendTurns(&b, size, seed, "s1")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendTurns appends whole lines to b until it has grown by size bytes.
func appendTurns(b *bytes.Buffer, size int, seed uint64, session string) {
	rng := rand.New(rand.NewPCG(seed, 13))
	start := b.Len()
	for n := 0; b.Len()-start < size; n++ {
		typ := "assistant"
		if n%3 == 0 {
			typ = "user"
		}
		line, _ := json.Marshal(map[string]any{
			"type": typ, "uuid": fmt.Sprintf("%08x-%04x-4000-8000-%012x", seed, n, rng.Uint64()&0xffffffffffff),
			"sessionId": session, "isSidechain": false,
			"message": map[string]any{"role": typ, "content": fmt.Sprintf("turn %d %s", n, strings.Repeat("w", 50+rng.IntN(3000)))},
		})
		b.Write(line)
		b.WriteByte('\n')
	}
}

// wholeJSONL reports the first line of data that is not one whole JSON
// value ending in a newline.
func wholeJSONL(data []byte) error {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return fmt.Errorf("last line has no newline")
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(data) == 0 {
			break
		}
		if !json.Valid(l) {
			return fmt.Errorf("line %d is not JSON (%.60q)", i+1, l)
		}
	}
	return nil
}

// --- the store, seen from outside -----------------------------------------

type listed struct {
	Checkpoint struct {
		ID       string                `json:"id"`
		Trigger  struct{ Kind string } `json:"trigger"`
		Snapshot struct {
			TreeHash string `json:"tree_hash"`
		} `json:"snapshot"`
	} `json:"checkpoint"`
}

// checkpoints lists every checkpoint id in project's store (newest first).
func checkpoints(t testing.TB, project string, env []string) []string {
	t.Helper()
	var ids []string
	for _, c := range listCheckpoints(t, project, env) {
		ids = append(ids, c.Checkpoint.ID)
	}
	return ids
}

// storeOwner is who runs rewind to look into project's store: its owner, where the tests run as
// root and another user made it (Rewind uses only a store of its own user's), else the caller.
func storeOwner(project string) uint32 {
	fi, err := os.Stat(project)
	if err != nil || os.Geteuid() != 0 {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return 0
}

// listCheckpoints is rewind list --all --json.
func listCheckpoints(t testing.TB, project string, env []string) []listed {
	t.Helper()
	r := mustRun(t, proc{name: "rewind", args: []string{"list", "--all", "-n", "0", "--json", "-C", project}, env: env, uid: storeOwner(project)})
	var out []listed
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l == "" {
			continue
		}
		var c listed
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("rewind list --json: %v: %q", err, l)
		}
		if c.Checkpoint.ID != "" {
			out = append(out, c)
		}
	}
	return out
}

// validate runs rewind validate and returns the problems it reports,
// leaving aside leftover staging entries (separately checked: they must be
// gone after the next run).
func validate(t testing.TB, project string, env []string) (problems []string, staging bool) {
	t.Helper()
	r := run(t, proc{name: "rewind", args: []string{"validate", "--json", "-C", project}, env: env, uid: storeOwner(project)})
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var p struct{ Type, What, Issue string }
		if json.Unmarshal([]byte(l), &p) != nil || p.Type != "problem" {
			continue
		}
		if strings.Contains(p.Issue, "leftover staging") {
			staging = true
			continue
		}
		problems = append(problems, p.What+": "+p.Issue)
	}
	if r.code != 0 && len(problems) == 0 && !staging {
		problems = append(problems, fmt.Sprintf("validate exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
	}
	return problems, staging
}

// leftovers lists temporary and staging files under dirs: anything a
// finished run must not leave behind.
func leftovers(dirs ...string) []string {
	var out []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			b := de.Name()
			switch {
			case stagingFolder(p),
				strings.Contains(b, ".tmp-"), strings.Contains(b, ".rewind-tmp-"),
				strings.HasSuffix(b, ".rewind-undo"), strings.HasSuffix(b, ".grown"):
				out = append(out, p)
				if de.IsDir() {
					return filepath.SkipDir
				}
			case de.IsDir() && b == "staging":
				if des, _ := os.ReadDir(p); len(des) > 0 {
					out = append(out, p+"/"+des[0].Name())
				}
				return filepath.SkipDir
			}
			return nil
		})
	}
	return out
}

// stagingFolder reports whether p is a restore's staging folder, by the
// proof rewind-snap itself uses: named .rewind-restore-<24 hex digits><their
// checksum>, holding a lock file that says what it is and the token, or
// nothing but an empty lock file (a user's folder may have the prefix).
func stagingFolder(p string) bool {
	const magic = "rewind-snap restore staging folder"
	token, ok := strings.CutPrefix(filepath.Base(p), ".rewind-restore-")
	if !ok || len(token) != 32 {
		return false
	}
	if sum := sha256.Sum256([]byte(magic + token[:24])); hex.EncodeToString(sum[:4]) != token[24:] {
		return false
	}
	des, _ := os.ReadDir(p)
	b, err := os.ReadFile(filepath.Join(p, "lock"))
	return len(des) == 0 || err == nil && (len(b) == 0 && len(des) == 1 || string(b) == magic+"\n"+token+"\n")
}

// copyTree copies src to dst (cp -a: links, modes and times kept).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		// A read-only leftover from an earlier run: make it writable.
		exec.Command("chmod", "-R", "u+w", dst).Run()
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v: %s", src, dst, err, out)
	}
}

// workDir is a fresh folder for a test's worlds: on tmpfs (/dev/shm) when
// there is one. A SIGKILL ends a process, not the machine: the page cache
// survives it, so what a killed run leaves is the same on any file system,
// and creating thousands of files is thirty times faster there than on
// this machine's disk. $REWIND_RELIABILITY_DIR overrides.
func workDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv("REWIND_RELIABILITY_DIR")
	if base == "" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && writable("/dev/shm") {
			base = "/dev/shm"
		}
	}
	if base == "" {
		return t.TempDir()
	}
	d, err := os.MkdirTemp(base, "rewind-reliability-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("chmod", "-R", "u+w", d).Run()
		os.RemoveAll(d)
	})
	return d
}

func writable(dir string) bool { return syscall.Access(dir, 2) == nil }

// figures prints one line of the README table's figures.
func figures(t testing.TB, property string, runs, faults, failures int) {
	t.Helper()
	msg := fmt.Sprintf("reliability: %s: runs=%d faults=%d failures=%d", property, runs, faults, failures)
	t.Log(msg)
	fmt.Fprintln(os.Stderr, msg)
}
