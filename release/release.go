package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// release is a Config checked against the tree: what is released, from which commit.
type release struct {
	root      string
	version   string // "0.4.0"
	commit    string // the full hash; "-dirty" appended when a snapshot's tree has changes
	time      time.Time
	modules   []*wsModule // released, each after those it requires
	platforms []Platform
	baseURL   string // with {version} replaced
	homepage  string
	stderr    io.Writer
}

// modVersion is the version of the released modules: "v0.4.0".
func (r *release) modVersion() string { return "v" + r.version }

// date is the commit's date, YYYY-MM-DD in UTC.
func (r *release) date() string { return r.time.UTC().Format(time.DateOnly) }

func (r *release) say(format string, args ...any) {
	fmt.Fprintf(r.stderr, "release: "+format+"\n", args...)
}

// git runs git in the repository and returns its output.
func (r *release) git(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", r.root}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// plan checks c against the tree.
func (c *Config) plan() (*release, error) {
	r := &release{root: c.Root, homepage: c.Homepage, stderr: c.Stderr}
	if r.stderr == nil {
		r.stderr = io.Discard
	}
	if (c.Version == "") == !c.Snapshot {
		return nil, usageError{"give either -version VERSION (e.g. 0.4.0) or -snapshot"}
	}
	var err error
	if r.platforms, err = parsePlatforms(c.Platforms); err != nil {
		return nil, err
	}
	if r.root == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			return nil, fmt.Errorf("not in a git work tree (give -C with the repository): %v", err)
		}
		r.root = strings.TrimSpace(string(out))
	}
	if r.root, err = filepath.Abs(r.root); err != nil {
		return nil, err
	}
	out, err := r.git("rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	r.commit = strings.TrimSpace(out)
	status, err := r.git("status", "--porcelain")
	if err != nil {
		return nil, err
	}
	if status != "" {
		if !c.Snapshot {
			return nil, fmt.Errorf("the work tree has changes (git status): a release is made from a commit; commit or stash them, or make a -snapshot")
		}
		r.commit += "-dirty"
	}
	// SOURCE_DATE_EPOCH, the reproducible-builds convention, else the commit's time.
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if out, err = r.git("log", "-1", "--format=%ct", "HEAD"); err != nil {
			return nil, err
		}
		epoch = strings.TrimSpace(out)
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a count of seconds", epoch)
	}
	r.time = time.Unix(secs, 0).UTC()
	if c.Snapshot {
		// A pseudo-version, as go names an untagged commit: valid wherever a module version is.
		r.version = strings.TrimPrefix(module.PseudoVersion("v0", "", r.time, r.commit[:12]), "v")
	} else {
		r.version = strings.TrimPrefix(c.Version, "v")
		if v := "v" + r.version; !semver.IsValid(v) || semver.Canonical(v) != v {
			return nil, usageError{fmt.Sprintf("version %q is not a semantic version such as 0.4.0 or 1.0.0-rc.1", c.Version)}
		}
	}
	r.baseURL = strings.ReplaceAll(c.BaseURL, "{version}", r.version)
	if !strings.HasSuffix(r.baseURL, "/") {
		r.baseURL += "/"
	}
	mods, err := workspace(r.root)
	if err != nil {
		return nil, err
	}
	if r.modules, err = released(mods); err != nil {
		return nil, err
	}
	return r, nil
}

// Exec writes the release into c.Out.
func (c *Config) Exec(ctx context.Context) error {
	r, err := c.plan()
	if err != nil {
		return err
	}
	out, err := filepath.Abs(c.Out)
	if err != nil {
		return err
	}
	if err := replaceable(out); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	// Everything is written into a temporary folder beside out, which takes out's place at the
	// end: an interrupted release leaves the previous one as it was.
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work, err := os.MkdirTemp("", "rewind-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	started := time.Now()
	r.say("%s (commit %.12s, %s), %d modules, %d platforms", r.version, r.commit, r.date(), len(r.modules), len(r.platforms))
	proxy := filepath.Join(tmp, "goproxy")
	zips, err := r.stageModules(proxy)
	if err != nil {
		return err
	}
	bins, err := r.build(ctx, work, proxy, zips)
	if err != nil {
		return err
	}
	others, err := r.collectModules(filepath.Join(work, "modcache", "cache", "download"), proxy)
	if err != nil {
		return err
	}
	completions, err := r.completions(ctx, work, proxy, zips, bins)
	if err != nil {
		return err
	}
	var archives []string
	for _, p := range r.platforms {
		name, err := r.writeArchive(tmp, p, bins[p], completions)
		if err != nil {
			return err
		}
		archives = append(archives, name)
	}
	if err := writeChecksums(tmp, archives); err != nil {
		return err
	}
	if err := r.writeFormula(tmp, archives, completions); err != nil {
		return err
	}
	if err := swap(tmp, out); err != nil {
		return err
	}
	r.say("wrote %s in %s: archives: %d, checksums.txt, rewind.rb, goproxy/ (Rewind modules: %d, others: %d)",
		c.Out, time.Since(started).Round(time.Second), len(archives), len(r.modules), others)
	if c.Stdout == nil {
		return nil
	}
	return json.NewEncoder(c.Stdout).Encode(struct {
		Type     string   `json:"type"`
		Version  string   `json:"version"`
		Commit   string   `json:"commit"`
		Date     string   `json:"date"`
		Out      string   `json:"out"`
		Archives []string `json:"archives"`
	}{"release", r.version, r.commit, r.date(), out, archives})
}

// replaceable says whether out may be replaced by a release: it is absent or empty, or it is a
// release this tool wrote (checksums.txt and goproxy/ in it). Nothing else is ever deleted.
func replaceable(out string) error {
	entries, err := os.ReadDir(out)
	if os.IsNotExist(err) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	_, errSums := os.Stat(filepath.Join(out, "checksums.txt"))
	_, errProxy := os.Stat(filepath.Join(out, "goproxy"))
	if errSums != nil || errProxy != nil {
		return fmt.Errorf("%s is not a release folder (no checksums.txt and goproxy/ in it): it is not replaced; remove it, or give -out another folder", out)
	}
	return nil
}

// swap puts the folder tmp in out's place, and removes the release out held.
func swap(tmp, out string) error {
	old := ""
	if _, err := os.Stat(out); err == nil {
		d, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".old-")
		if err != nil {
			return err
		}
		old = filepath.Join(d, "release")
		if err := os.Rename(out, old); err != nil {
			os.Remove(d)
			return err
		}
		defer os.RemoveAll(d)
	}
	if err := os.Rename(tmp, out); err != nil {
		if old != "" {
			os.Rename(old, out)
		}
		return err
	}
	return os.Chmod(out, 0o755)
}
