package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// cmdlinePkg holds the variables a release stamps (rewind.dev/internal/cmdline.Version, …).
const cmdlinePkg = "rewind.dev/internal/cmdline"

// goEnv is what the builds take from the go command's own settings.
type goEnv struct {
	GOCACHE, GOMODCACHE, GOPROXY, GOSUMDB, GOVERSION string
}

func readGoEnv(ctx context.Context) (goEnv, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOSUMDB", "GOVERSION").Output()
	if err != nil {
		return goEnv{}, fmt.Errorf("go env: %w", err)
	}
	v := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(v) != 5 {
		return goEnv{}, fmt.Errorf("go env printed %q", out)
	}
	return goEnv{v[0], v[1], v[2], v[3], v[4]}, nil
}

// builder runs the go command on the released module zips, through the module proxy folder,
// in an environment of its own: the settings of this shell and of go env's file (GOFLAGS,
// GOAMD64, GOEXPERIMENT, …) cannot change what is built.
type builder struct {
	work string // where sources are unzipped and the module cache lives
	env  []string
}

func (r *release) newBuilder(ctx context.Context, work, proxy string) (*builder, error) {
	ge, err := readGoEnv(ctx)
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GO") && !strings.HasPrefix(k, "CGO_") {
			env = append(env, kv)
		}
	}
	// The released modules come from proxy; every other module from the go command's own
	// cache where it is there, else from its proxy. A fresh module cache records what the
	// builds needed: collectModules copies it into proxy. The builds check every module against
	// the released go.sum (-mod=readonly), so nothing there comes unverified.
	goproxy := fileURL(proxy) + "," + fileURL(filepath.Join(ge.GOMODCACHE, "cache", "download")) + "," + ge.GOPROXY
	env = append(env,
		"GOENV=off", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
		"GOFLAGS=-mod=readonly -modcacherw",
		"GOCACHE="+ge.GOCACHE,
		"GOPATH="+filepath.Join(work, "gopath"),
		"GOMODCACHE="+filepath.Join(work, "modcache"),
		"GOPROXY="+goproxy,
		"GOSUMDB="+ge.GOSUMDB,
		"GONOSUMDB=rewind.dev",
	)
	r.say("building with %s", ge.GOVERSION)
	return &builder{work: work, env: env}, nil
}

func fileURL(dir string) string { return "file://" + filepath.ToSlash(dir) }

// unzip extracts the zip of released module m into the work folder, once, and returns where.
func (b *builder) unzip(m *wsModule, version, zipPath string) (string, error) {
	dir := filepath.Join(b.work, "src", filepath.FromSlash(m.Rel))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	return dir, modzip.Unzip(dir, module.Version{Path: m.Path, Version: version}, zipPath)
}

// goBuild builds the command name of the module unzipped in dir for p, into out.
func (b *builder) goBuild(ctx context.Context, dir string, p Platform, ldflags, name, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags="+ldflags, "-o", out, "./cmd/"+name)
	cmd.Dir = dir
	cmd.Env = append(b.env, "GOOS="+p.OS, "GOARCH="+p.Arch)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for %s: %v\n%s", name, p, err, output.Bytes())
	}
	return nil
}

// build builds every binary for every platform from the released module zips, and returns the
// folder of each platform's binaries.
func (r *release) build(ctx context.Context, work, proxy string, zips map[string]string) (map[Platform]string, error) {
	b, err := r.newBuilder(ctx, work, proxy)
	if err != nil {
		return nil, err
	}
	// -s -w: no symbol table or DWARF (a third of the size); -buildid=: no build id, which would
	// differ between machines; the version, commit and date --version prints.
	ldflags := fmt.Sprintf("-s -w -buildid= -X %s.Version=%s -X %s.Commit=%s -X %s.Date=%s",
		cmdlinePkg, r.version, cmdlinePkg, r.commit, cmdlinePkg, r.date())
	bins := map[Platform]string{}
	for _, p := range r.platforms {
		started := time.Now()
		out := filepath.Join(work, "bin", p.OS+"_"+p.Arch)
		n := 0
		for _, m := range r.modules {
			if len(m.Binaries) == 0 {
				continue
			}
			dir, err := b.unzip(m, r.modVersion(), zips[m.Path])
			if err != nil {
				return nil, err
			}
			for _, name := range m.Binaries {
				if err := b.goBuild(ctx, dir, p, ldflags, name, filepath.Join(out, p.Exe(name))); err != nil {
					return nil, err
				}
				n++
			}
		}
		r.say("built %d binaries for %s in %s", n, p, time.Since(started).Round(100*time.Millisecond))
		bins[p] = out
	}
	return bins, nil
}

// binaries is the name of every binary a release holds, in the modules' order.
func (r *release) binaries() []string {
	var names []string
	for _, m := range r.modules {
		names = append(names, m.Binaries...)
	}
	sort.Strings(names)
	return names
}

// collectModules copies into proxy every module version the builds fetched into their module
// cache (download is its cache/download folder, in the proxy layout already), but the released
// ones, already there, and returns how many modules it copied.
func (r *release) collectModules(download, proxy string) (int, error) {
	skip := map[string]bool{"sumdb": true}
	for _, m := range r.modules {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return 0, err
		}
		skip[esc] = true
	}
	mods := map[string]bool{}
	err := filepath.WalkDir(download, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(download, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skip[rel] {
				return filepath.SkipDir
			}
			return nil
		}
		modPath, file, ok := strings.Cut(rel, "/@v/")
		if !ok || strings.Contains(file, "/") {
			return nil
		}
		switch {
		case file == "list", strings.HasSuffix(file, ".info"), strings.HasSuffix(file, ".mod"), strings.HasSuffix(file, ".zip"):
		default:
			return nil // .lock, .ziphash, partial downloads
		}
		mods[modPath] = true
		return copyFile(path, filepath.Join(proxy, filepath.FromSlash(rel)))
	})
	return len(mods), err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// completionFiles are the files `rewind completion SHELL` writes for each shell, as each shell
// looks for them: bash-completion's and fish's by command name, zsh's as _<command>.
var completionFiles = []struct{ shell, file string }{
	{"bash", "rewind.bash"},
	{"fish", "rewind.fish"},
	{"zsh", "_rewind"},
}

// completions runs `rewind completion bash|zsh|fish` with a rewind built for this machine, and
// returns each script by file name. When this tree's rewind has no completion command, the
// archives hold no completions, and it says so.
func (r *release) completions(ctx context.Context, work, proxy string, zips map[string]string, bins map[Platform]string) (map[string][]byte, error) {
	host := Platform{runtime.GOOS, runtime.GOARCH}
	rewind := filepath.Join(bins[host], host.Exe("rewind"))
	if bins[host] == "" {
		saved := r.platforms
		r.platforms = []Platform{host}
		hb, err := r.build(ctx, filepath.Join(work, "host"), proxy, zips)
		r.platforms = saved
		if err != nil {
			return nil, err
		}
		rewind = filepath.Join(hb[host], host.Exe("rewind"))
	}
	scripts := map[string][]byte{}
	for _, c := range completionFiles {
		cmd := exec.CommandContext(ctx, rewind, "completion", c.shell)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || len(out) == 0 {
			if c.shell == completionFiles[0].shell {
				msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
				r.say("no shell completions in the archives: this tree's rewind has no completion command (%s)", msg)
				return nil, nil
			}
			return nil, fmt.Errorf("rewind completion %s: %v: %s", c.shell, err, strings.TrimSpace(stderr.String()))
		}
		scripts[c.file] = out
	}
	return scripts, nil
}
