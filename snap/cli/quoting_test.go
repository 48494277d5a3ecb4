package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/snap"
)

// rewind-snap prints JSON only: names holding control characters are in it exactly. Its errors,
// for a person, name them escaped (cmdline.Report); under no flag do raw control bytes reach
// stderr.
func TestControlCharactersInNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "proj")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errs strings.Builder
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	manifest := filepath.Join(dir, "m")
	if code, _, errs := run("create", "--root", root, "--out", filepath.Join(dir, "s.tar.gz"), "--manifest", manifest); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	evil := "evil\x1b]0;pwned\x07\n.txt"
	if err := os.WriteFile(filepath.Join(root, evil), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run("diff", "--root", root, "--manifest", manifest)
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, errs)
	}
	var paths []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ch snap.Change
		if err := json.Unmarshal(sc.Bytes(), &ch); err != nil {
			t.Fatalf("diff: %v: %s", err, sc.Text())
		}
		paths = append(paths, ch.Path)
	}
	if len(paths) != 1 || paths[0] != evil {
		t.Errorf("diff lists %q, want exactly %q", paths, evil)
	}

	missing := filepath.Join(dir, "gone\x1b[2J.tar.gz")
	code, _, errs = run("restore", "--root", root, "--from", missing)
	if code == 0 || !strings.Contains(errs, `gone\033[2J.tar.gz`) || strings.ContainsRune(errs, '\x1b') {
		t.Errorf("restore --from a missing hostile name: exit %d, stderr %q; want it named escaped", code, errs)
	}
}
