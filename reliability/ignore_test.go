//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// git runs git in dir, isolated from the machine's configuration by env.
func git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v %s", args, dir, err, stderr.String())
	}
	return string(out)
}

// gitListing is what git lists in dir's repository (ls-files -co
// --exclude-standard) and, inside each nested repository it meets, what
// git lists there.
func gitListing(t testing.TB, dir string, env []string) []string {
	t.Helper()
	var out []string
	for _, f := range strings.Split(git(t, dir, env, "ls-files", "-z", "-co", "--exclude-standard"), "\x00") {
		if f == "" {
			continue
		}
		if sub, ok := strings.CutSuffix(f, "/"); ok {
			for _, g := range gitListing(t, filepath.Join(dir, sub), env) {
				out = append(out, sub+"/"+g)
			}
			continue
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestIgnoreRulesMatchGit builds trees whose ignore rules come from every
// source git reads — .gitignore files, .git/info/exclude, core.excludesFile
// (global and a nested repository's own), a nested repository's
// info/exclude and .gitignore, a symlinked .gitignore git does not follow —
// and checks that a checkpoint holds exactly what git lists; then empties
// every rule outside the tree and restores: nothing the checkpoint's rules
// ignored is deleted.
func TestIgnoreRulesMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is the oracle here, and it is not installed")
	}
	exts := []string{"log", "tmp", "bak", "key", "txt", "go", "lock"}
	runs, failures := 0, 0
	for round := range ignoreRounds {
		runs++
		rng := rand.New(rand.NewPCG(uint64(round), 33))
		root := workDir(t)
		home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
		env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
		os.MkdirAll(home, 0o755)
		git(t, root, env, "init", "-q", project)
		nested := []string{"vendor/lib", "tools"}[:1+rng.IntN(2)]
		for _, n := range nested {
			os.MkdirAll(filepath.Join(project, n), 0o755)
			git(t, project, env, "init", "-q", n)
		}
		for i := range 60 {
			dir := []string{"", "src", "src/deep", nested[0], nested[0] + "/sub", nested[len(nested)-1]}[rng.IntN(6)]
			writeFile(t, filepath.Join(project, dir, fmt.Sprintf("f%d.%s", i, exts[rng.IntN(len(exts))])), []byte(fmt.Sprint(i)), 0o644)
		}
		pat := func() string { return "*." + exts[rng.IntN(len(exts))] + "\n" }
		rules := map[string]string{
			".gitignore":                                 pat(),
			".git/info/exclude":                          pat(),
			"global-ignore":                              pat(),
			nested[0] + "/.gitignore":                    pat(),
			nested[0] + "/.git/info/exclude":             pat(),
			nested[0] + "/own-ignore":                    pat(),
			"src/symlinked-rules":                        pat(),
			nested[len(nested)-1] + "/.git/info/exclude": pat(),
		}
		for p, text := range rules {
			if p == "global-ignore" {
				writeFile(t, filepath.Join(home, p), []byte(text), 0o644)
				continue
			}
			writeFile(t, filepath.Join(project, p), []byte(text), 0o644)
		}
		os.Symlink("symlinked-rules", filepath.Join(project, "src/.gitignore"))
		git(t, project, env, "config", "--global", "core.excludesFile", filepath.Join(home, "global-ignore"))
		git(t, filepath.Join(project, nested[0]), env, "config", "core.excludesFile", filepath.Join(project, nested[0], "own-ignore"))
		// A file the nested repository tracks though its rules ignore it.
		tracked := nested[0] + "/tracked.log"
		writeFile(t, filepath.Join(project, tracked), []byte("tracked"), 0o644)
		writeFile(t, filepath.Join(project, nested[0], ".gitignore"), []byte(rules[nested[0]+"/.gitignore"]+"tracked.log\n"), 0o644)
		git(t, filepath.Join(project, nested[0]), env, "add", "-f", "tracked.log")

		mustRun(t, proc{name: "rewind", args: []string{"init", "--mode", "project", "-C", project}, env: env})
		want := gitListing(t, project, env) // after init: the store is in info/exclude
		mustRun(t, proc{name: "rewind", args: []string{"save", "rules", "-C", project}, env: env})
		ids := checkpoints(t, project, env)
		var errs []string
		got := archiveFiles(t, filepath.Join(project, ".agent/rewind/checkpoints", ids[0], "snapshot.tar.gz"))
		if !slices.Equal(got, want) {
			errs = append(errs, fmt.Sprintf("the checkpoint holds other files than git lists:\n\tonly in the checkpoint: %v\n\tonly in git's list: %v", minus(got, want), minus(want, got)))
		}
		// Every rule outside the tree goes: what they ignored comes into
		// scope, and a restore must spare it.
		before := treeDigest(t, project)
		os.WriteFile(filepath.Join(project, ".git/info/exclude"), []byte("/.agent/rewind/\n"), 0o644)
		os.WriteFile(filepath.Join(home, "global-ignore"), nil, 0o644)
		for _, n := range nested {
			os.WriteFile(filepath.Join(project, n, ".git/info/exclude"), nil, 0o644)
		}
		os.WriteFile(filepath.Join(project, nested[0], "own-ignore"), nil, 0o644)
		if r := run(t, proc{name: "rewind", args: []string{"restore", ids[0], "--code-only", "--yes", "-C", project}, env: env}); r.code != 0 {
			errs = append(errs, fmt.Sprintf("restore: exit %d: %s", r.code, strings.TrimSpace(r.stderr)))
		}
		after := treeDigest(t, project)
		for p := range before {
			if _, ok := after[p]; !ok && !strings.Contains(p, ".git/") {
				errs = append(errs, fmt.Sprintf("the restore deleted %s, which the checkpoint's rules ignored", p))
			}
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", round, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "ignore-rules-match-git", runs, runs*9, failures)
}

// archiveFiles lists the files and symlinks of an archive (rewind-snap ls).
func archiveFiles(t testing.TB, archive string) []string {
	t.Helper()
	r := mustRun(t, proc{name: "rewind-snap", args: []string{"ls", "--from", archive}})
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e struct{ Path, Kind string }
		if json.Unmarshal([]byte(l), &e) == nil && e.Kind != "dir" {
			out = append(out, e.Path)
		}
	}
	slices.Sort(out)
	return out
}

// minus is what a holds and b does not.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
