package fork

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"rewind.dev/internal/fixtures"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/forks.txt from what Create writes now")

// goldenID names every fork in TestForkGolden (an --out named by a UUID is the fork's id), so
// that what Create writes depends on the source and the cut only.
const goldenID = "0b7c1a9e-0000-4000-8000-00000000f0c5"

// volatile are the values a fork draws anew on every run: the entry id and the time of the
// line it appends (pi's session_info). They are masked in a file's last line before hashing.
var volatile = regexp.MustCompile(`"(id|timestamp)":"[^"]*"`)

// TestForkGolden pins what Create writes — every file of the fork, byte for byte, and its
// report — for every fixture of every dialect that forks by writing a file (OpenCode's fork is
// an import), cut at several line ends, both from the live file (prefix copy) and from a
// checkpoint's transcript.jsonl.gz (snapshot). The golden file was written by the fork as it
// was before its copy was made faster; the faster one must write the same bytes.
func TestForkGolden(t *testing.T) {
	var files []string
	root := fixtures.Dir()
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".jsonl") && !strings.Contains(p, "opencode") {
			files = append(files, p)
		}
		return err
	})
	if len(files) < 40 {
		t.Fatalf("only %d fixtures found", len(files))
	}
	lines := make([]string, len(files))
	t.Run("forks", func(t *testing.T) {
		for i, p := range files {
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			t.Run(rel, func(t *testing.T) {
				t.Parallel() // each fork waits on its fsyncs
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				agent, _, _ := strings.Cut(rel, "/")
				var b strings.Builder
				for _, off := range goldenCuts(data) {
					for _, method := range []string{MethodPrefixCopy, MethodSnapshot} {
						fmt.Fprintf(&b, "%s %d %s %s\n", rel, off, method, goldenFork(t, p, agent, data, off, method))
					}
				}
				lines[i] = b.String()
			})
		}
	})
	var got bytes.Buffer
	for _, l := range lines {
		got.WriteString(l)
	}
	golden := filepath.Join("testdata", "golden", "forks.txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestForkGolden -update)", err)
	}
	gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		g, w := "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("fork differs from golden:\n got %s\nwant %s", g, w)
		}
	}
}

// goldenCuts are the line ends nearest 0, ⅓, ⅔, 9/10 of data, and its end.
func goldenCuts(data []byte) []int64 {
	var cuts []int64
	for _, frac := range [][2]int{{0, 1}, {1, 3}, {2, 3}, {9, 10}, {1, 1}} {
		at := len(data) * frac[0] / frac[1]
		if at > 0 && at < len(data) {
			if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
				at += i + 1
			} else {
				at = len(data)
			}
		}
		if !slices.Contains(cuts, int64(at)) {
			cuts = append(cuts, int64(at))
		}
	}
	return cuts
}

// goldenFork forks the fixture at p (placed at its own name in a fresh folder, or gone and
// given as a snapshot) at off, and describes the result in one line: the report's fields and a
// SHA-256 over every file the fork wrote, or the error.
func goldenFork(t *testing.T, p, agent string, data []byte, off int64, method string) string {
	t.Helper()
	dir := t.TempDir()
	from := filepath.Join(dir, "src", filepath.Base(filepath.Dir(p)), filepath.Base(p))
	o := CreateOptions{From: from, Checkpoint: Checkpoint{Offset: off}, Agent: agent, Out: filepath.Join(dir, "out", goldenID+".jsonl")}
	if err := os.MkdirAll(filepath.Dir(from), 0o700); err != nil {
		t.Fatal(err)
	}
	if method == MethodPrefixCopy {
		if err := os.WriteFile(from, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// A sidecar beside the source goes with the fork (Droid's settings).
		side := strings.TrimSuffix(p, ".jsonl") + ".settings.json"
		if b, err := os.ReadFile(side); err == nil {
			os.WriteFile(strings.TrimSuffix(from, ".jsonl")+".settings.json", b, 0o600)
		}
	} else {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		gz := filepath.Join(dir, "transcript.jsonl.gz")
		if err := os.WriteFile(gz, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		o.Snapshots = []string{gz}
	}
	f, err := Create(context.Background(), o)
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), dir, "$DIR")
	}
	h := sha256.New()
	filepath.WalkDir(filepath.Join(dir, "out"), func(q string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(q)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(q, dir), len(b))
		last := bytes.LastIndexByte(bytes.TrimSuffix(b, []byte("\n")), '\n') + 1
		h.Write(b[:last])
		h.Write(volatile.ReplaceAll(b[last:], []byte(`"$1":"…"`)))
		return nil
	})
	return fmt.Sprintf("bytes=%d events=%d method=%s title=%q replaced_id=%q replaced_first=%d warnings=%q sha256=%x",
		f.Bytes, f.EventsKept, f.Method, f.Title, f.ReplacedID, len(f.ReplacedFirstLine), f.Warnings, h.Sum(nil))
}
