package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

// fakeRepo makes a git repository shaped as Rewind's: a go.work of two modules, rewind.dev/lib
// and rewind.dev/app (which provides cmd/rewind and requires lib at v0.0.0, which go.work
// maps to its folder), with install.sh, README.md, LICENSE and a man page at the top.
func fakeRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	for name, data := range map[string]string{
		"go.work":                "go 1.25.0\n\nuse (\n\t./app\n\t./lib\n)\n\nreplace rewind.dev/lib v0.0.0 => ./lib\n",
		"lib/go.mod":             "module rewind.dev/lib\n\ngo 1.25.0\n",
		"lib/lib.go":             "package lib\n\n// Greeting is what the app says.\nconst Greeting = \"hello from lib\"\n",
		"app/go.mod":             "module rewind.dev/app\n\ngo 1.25.0\n\nrequire rewind.dev/lib v0.0.0\n",
		"app/cmd/rewind/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"rewind.dev/lib\"\n)\n\nfunc main() { fmt.Println(lib.Greeting) }\n",
		"app/testdata/.keep":     "",
		"install.sh":             "#!/bin/sh\necho install\n",
		"README.md":              "# app\n",
		"LICENSE":                "the license\n",
		"man/rewind.1":           ".Dd today\n",
		".gitignore":             "/dist/\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-28T10:00:00Z", "GIT_COMMITTER_DATE=2026-11-28T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	return root
}

func TestReleasedGoMod(t *testing.T) {
	m := &wsModule{Rel: "app", GoMod: []byte("module rewind.dev/app\n\ngo 1.25.0\n\nrequire (\n\trewind.dev/lib v0.0.0\n\tgolang.org/x/sys v0.44.0\n)\n")}
	got, err := releasedGoMod(m, "v1.2.3", func(p string) bool { return p == "rewind.dev/lib" })
	if err != nil {
		t.Fatal(err)
	}
	want := "module rewind.dev/app\n\ngo 1.25.0\n\nrequire (\n\trewind.dev/lib v1.2.3\n\tgolang.org/x/sys v0.44.0\n)\n"
	if string(got) != want {
		t.Errorf("released go.mod:\n%s\nwant:\n%s", got, want)
	}
	m.GoMod = append(m.GoMod, "replace rewind.dev/lib => ../lib\n"...)
	if _, err := releasedGoMod(m, "v1.2.3", func(string) bool { return true }); err == nil || !strings.Contains(err.Error(), "replace directives") {
		t.Errorf("a go.mod with a replace directive: err = %v, want a refusal", err)
	}
}

func TestPlanRefuses(t *testing.T) {
	root := fakeRepo(t)
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Root: root}, "either -version"},
		{Config{Root: root, Version: "1.2.3", Snapshot: true}, "either -version"},
		{Config{Root: root, Version: "1.2"}, "not a semantic version"},
		{Config{Root: root, Version: "1.2.3+build"}, "not a semantic version"},
		{Config{Root: root, Version: "1.2.3", Platforms: "linux"}, "not GOOS/GOARCH"},
	} {
		if tc.c.Platforms == "" {
			tc.c.Platforms = DefaultPlatforms
		}
		_, err := tc.c.plan()
		var u usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &u) {
			t.Errorf("%+v: err = %v, want a usage error saying %q", tc.c, err, tc.want)
		}
	}
	// A release is made from a commit; a snapshot may have changes, and says so.
	if err := os.WriteFile(filepath.Join(root, "lib", "new.go"), []byte("package lib\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Config{Root: root, Version: "1.2.3", Platforms: DefaultPlatforms}).plan(); err == nil || !strings.Contains(err.Error(), "has changes") {
		t.Errorf("a release of a tree with changes: err = %v", err)
	}
	r, err := (&Config{Root: root, Snapshot: true, Platforms: DefaultPlatforms, BaseURL: DefaultBaseURL}).plan()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.version, "0.0.0-20261128100000-") || !strings.HasSuffix(r.commit, "-dirty") {
		t.Errorf("snapshot of a tree with changes: version %q, commit %q", r.version, r.commit)
	}
	if want := "https://example.invalid/rewind/releases/download/v" + r.version + "/"; r.baseURL != want {
		t.Errorf("base URL %q, want %q", r.baseURL, want)
	}
}

func TestReleased(t *testing.T) {
	mods, err := workspace(fakeRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := released(append(mods, &wsModule{Path: "rewind.dev/harness"}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rel {
		got = append(got, m.Path)
	}
	if strings.Join(got, " ") != "rewind.dev/lib rewind.dev/app" {
		t.Errorf("released %q, want lib before app, and no harness", got)
	}
}

// TestExec makes a release of the fake repository for this machine twice, and checks that the
// two are the same bytes, and that go install works through its goproxy/ alone.
func TestExec(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs through the go command")
	}
	root := fakeRepo(t)
	host := runtime.GOOS + "/" + runtime.GOARCH
	exec1 := func(out string) {
		t.Helper()
		c := &Config{Root: root, Version: "1.2.3", Out: out, Platforms: host, BaseURL: "https://dl.example.invalid/v{version}", Homepage: DefaultHomepage}
		if err := c.Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	exec1(a)
	exec1(b)
	if ta, tb := tree(t, a), tree(t, b); ta != tb {
		t.Errorf("two releases of one commit differ:\n%s\n----\n%s", ta, tb)
	}
	// Replacing a release is allowed; replacing anything else is not.
	exec1(a)
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Config{Root: root, Version: "1.2.3", Out: other, Platforms: host}
	if err := c.Exec(context.Background()); err == nil || !strings.Contains(err.Error(), "not a release folder") {
		t.Errorf("release into a folder of other files: err = %v", err)
	}

	archive := "rewind_1.2.3_" + runtime.GOOS + "_" + runtime.GOARCH
	sums, err := os.ReadFile(filepath.Join(a, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sums), "  "+archive) {
		t.Errorf("checksums.txt:\n%s", sums)
	}
	formula, err := os.ReadFile(filepath.Join(a, "rewind.rb"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		if want := `url "https://dl.example.invalid/v1.2.3/` + archive; !strings.Contains(string(formula), want) {
			t.Errorf("rewind.rb has no %s:\n%s", want, formula)
		}
	}

	// The released go.mod requires lib at the release's version; the go.sum has lib's lines,
	// matching lib's zip.
	proxy := filepath.Join(a, "goproxy")
	gomod, err := os.ReadFile(filepath.Join(proxy, "rewind.dev", "app", "@v", "v1.2.3.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "require rewind.dev/lib v1.2.3\n") {
		t.Errorf("released app/go.mod:\n%s", gomod)
	}
	libHash, err := dirhash.HashZip(filepath.Join(proxy, "rewind.dev", "lib", "@v", "v1.2.3.zip"), dirhash.DefaultHash)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(proxy, "rewind.dev", "app", "@v", "v1.2.3.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(rc)
		rc.Close()
		files[f.Name] = buf.String()
	}
	if !strings.Contains(files["rewind.dev/app@v1.2.3/go.sum"], "rewind.dev/lib v1.2.3 "+libHash+"\n") {
		t.Errorf("app's go.sum has no line for lib's zip (%s):\n%s", libHash, files["rewind.dev/app@v1.2.3/go.sum"])
	}
	if files["rewind.dev/app@v1.2.3/LICENSE"] != "the license\n" {
		t.Errorf("app's zip has no LICENSE from the repository: %q", files["rewind.dev/app@v1.2.3/LICENSE"])
	}

	// go install through goproxy/ alone, with an empty module cache and GOPATH.
	gi := t.TempDir()
	cmd := exec.Command("go", "install", "rewind.dev/app/cmd/rewind@v1.2.3")
	cmd.Dir = gi
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(proxy), "GOSUMDB=off", "GOFLAGS=-modcacherw",
		"GOWORK=off", "GOTOOLCHAIN=local", "GOPATH="+filepath.Join(gi, "gopath"), "GOMODCACHE="+filepath.Join(gi, "modcache"), "GOBIN=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install through the release's goproxy: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(gi, "gopath", "bin", "rewind")).Output()
	if err != nil || string(out) != "hello from lib\n" {
		t.Errorf("the installed rewind: %q, %v", out, err)
	}
}

// tree lists every file under dir with its content's hash.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		sum, err := fileSHA256(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(sum + "  " + filepath.ToSlash(rel) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
