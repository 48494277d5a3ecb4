//go:build unix

package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrackedFilesInEveryIndex: in repositories whose index is SHA-256, split
// (core.splitIndex), version 4 or sparse, an agent's edit to a tracked file
// that an ignore pattern matches (y.log) is seen by diff and undone by
// restore, like any other edit.
func TestTrackedFilesInEveryIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	variants := []struct {
		name   string
		init   []string
		config [][]string
	}{
		{"SHA-1", []string{"init", "-q"}, nil},
		{"SHA-256", []string{"init", "-q", "--object-format=sha256"}, nil},
		{"split index", []string{"init", "-q"}, [][]string{{"config", "core.splitIndex", "true"}}},
		{"index version 4", []string{"init", "-q"}, [][]string{{"config", "index.version", "4"}}},
	}
	runs, failures := 0, 0
	for round := range indexRounds {
		for _, v := range variants {
			runs++
			root := workDir(t)
			home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
			env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
			os.MkdirAll(home, 0o755)
			git(t, root, env, append(v.init, project)...)
			for _, c := range v.config {
				git(t, project, env, c...)
			}
			genTree(t, project, 40, uint64(round))
			writeFile(t, filepath.Join(project, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644)
			writeFile(t, filepath.Join(project, "y.log"), []byte("tracked log\n"), 0o644)
			writeFile(t, filepath.Join(project, "build/keep.txt"), []byte("tracked build file\n"), 0o644)
			git(t, project, env, "add", "-A")
			git(t, project, env, "add", "-f", "y.log", "build/keep.txt")
			if v.name == "split index" { // every entry into the shared index
				git(t, project, env, "update-index", "--split-index")
			}
			rw := func(args ...string) result {
				return run(t, proc{name: "rewind", args: append(args, "-C", project), env: env})
			}
			var errs []string
			rw("init", "--mode", "project")
			if r := rw("save", "before the agent"); r.code != 0 {
				errs = append(errs, fmt.Sprintf("save: exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
			}
			want := treeDigest(t, project)
			writeFile(t, filepath.Join(project, "y.log"), []byte("edited by the agent\n"), 0o644)
			os.Remove(filepath.Join(project, "build/keep.txt"))
			if r := rw("diff", "@0", "--stat"); !strings.Contains(r.stdout, "M y.log") || !strings.Contains(r.stdout, "D build/keep.txt") {
				errs = append(errs, fmt.Sprintf("diff does not show the edits to tracked files: %q %s", r.stdout, strings.TrimSpace(r.stderr)))
			}
			if r := rw("restore", "@0", "--code-only", "--yes"); r.code != 0 {
				errs = append(errs, fmt.Sprintf("restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
			}
			if got := treeDigest(t, project); got.sum() != want.sum() {
				errs = append(errs, "restore did not undo the edits: "+want.diff(got))
			}
			if len(errs) > 0 {
				failures++
				t.Errorf("%s, round %d: %s", v.name, round, strings.Join(errs, "\n\t"))
			}
		}
	}
	figures(t, "tracked-files-in-every-index", runs, runs, failures)
}
