package pathspec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pathspecFiles is the tree the pathspec tests select from.
var pathspecFiles = []string{
	"README.md", "main.go", "main_test.go", "a*b", "Makefile",
	"src/a.go", "src/b.go", "src/b.txt", "src/deep/c.go", "src/deep/d.md",
	"srcx/e.go", "docs/guide.md", "docs/img/logo.png", "Docs/UPPER.md",
	"x/y/z/w.go", "sp ace/f.go", "ü.md",
}

func selected(t *testing.T, specs []string, o Options) []string {
	t.Helper()
	ps, err := Parse(specs, o)
	if err != nil {
		t.Fatalf("Parse(%q, %+v): %v", specs, o, err)
	}
	var out []string
	for _, f := range pathspecFiles {
		if ps.Match(f, false) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

var pathspecCases = []struct {
	cwd   string
	specs []string
}{
	{"", []string{"src"}},
	{"", []string{"src/"}},
	{"", []string{"src/a.go", "docs"}},
	{"", []string{"*.go"}},
	{"", []string{"src/*.go"}},
	{"", []string{"*.md"}},
	{"", []string{"s?c"}},
	{"", []string{"src/[ab].go"}},
	{"", []string{"src/[!a]*"}},
	{"", []string{"."}},
	{"", []string{":(glob)*.go"}},
	{"", []string{":(glob)src/*.go"}},
	{"", []string{":(glob)**/*.go"}},
	{"", []string{":(glob)src/**"}},
	{"", []string{":(literal)a*b"}},
	{"", []string{"a*b"}},
	{"", []string{":(icase)docs"}},
	{"", []string{"src", ":!src/deep"}},
	{"", []string{"src", ":^*.txt"}},
	{"", []string{":(exclude)src"}},
	{"", []string{":!*.go", ":!*.md"}},
	{"", []string{"sp ace"}},
	{"", []string{"src/deep/"}},
	{"", []string{"*/*.go"}},
	{"", []string{":(icase)DOCS/*.MD"}},
	// The one glob engine: classes, and a plain pattern's ? and brackets cross slashes.
	{"", []string{"src/[[:alpha:]].go"}},
	{"", []string{"[[:lower:]]rc/*"}},
	{"", []string{":(glob)src/[[:alpha:]]*"}},
	{"", []string{"src?deep*"}},
	{"", []string{"src[/]*"}},
	{"", []string{"?.md"}},
	{"", []string{"??.md"}},
	{"", []string{"src[[:punct:]]deep/*"}},
	{"", []string{"nothing"}},
	{"src", []string{"deep"}},
	{"src", []string{"*.go"}},
	{"src", []string{".."}},
	{"src", []string{"../docs"}},
	{"src", []string{":/docs"}},
	{"src", []string{":(top)*.md"}},
	{"src/deep", []string{"../a.go", "."}},
	// Absolute paths name the same paths from every folder: $ROOT is the
	// work tree, $LINK a symlink to it.
	{"", []string{"$ROOT/src"}},
	{"src", []string{"$ROOT/src"}},
	{"src/deep", []string{"$ROOT/docs/", "$ROOT/main.go"}},
	{"src", []string{"$ROOT"}},
	{"x/y", []string{"$ROOT/"}},
	{"src", []string{"$ROOT/*.md"}},
	{"src", []string{"$ROOT/src/../docs"}},
	{"src", []string{":(exclude)$ROOT/src/deep", "."}},
	{"src", []string{":!$ROOT/src/deep", "."}}, // (:!/ is exclude and top)
	{"src", []string{"$LINK/src/deep"}},
	{"", []string{"$LINK"}},
}

// The pathspecs select what git ls-files selects with them, from the same
// folder.
func TestLikeGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is the oracle here")
	}
	dir := t.TempDir()
	git := func(cwd string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join(dir, cwd)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("", "init", "-q")
	for _, f := range pathspecFiles {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("", "add", "-A")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range pathspecCases {
		specs := slices.Clone(c.specs)
		for i := range specs {
			specs[i] = strings.NewReplacer("$ROOT", dir, "$LINK", link).Replace(specs[i])
		}
		out := git(c.cwd, append([]string{"-c", "core.quotepath=off", "ls-files", "--full-name", "--"}, specs...)...)
		want := strings.Fields(strings.ReplaceAll(out, "sp ace", "sp\x00ace"))
		for i := range want {
			want[i] = strings.ReplaceAll(want[i], "\x00", " ")
		}
		slices.Sort(want)
		if got := selected(t, specs, Options{Cwd: c.cwd, Root: dir}); !slices.Equal(got, want) {
			t.Errorf("in %q, %q selects\n  %q\ngit selects\n  %q", c.cwd, c.specs, got, want)
		}
	}
}

func TestFolders(t *testing.T) {
	t.Parallel()
	ps, err := Parse([]string{"src/", "docs/guide.md"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		isDir bool
		want  bool
	}{
		{"src", true, true},   // the folder itself: restored with its mode
		{"src", false, false}, // a file named src is not the folder src/
		{"src/a.go", false, true},
		{"docs", true, false}, // a folder above a path named is not selected
		{"docs/guide.md", false, true},
	} {
		if got := ps.Match(c.name, c.isDir); got != c.want {
			t.Errorf("Match(%q, %v) = %v, want %v", c.name, c.isDir, got, c.want)
		}
	}
	if got := ps.Unmatched(); len(got) != 0 {
		t.Errorf("Unmatched() = %q, want none", got)
	}
	ps, _ = Parse([]string{"a", ":!b", "c"}, Options{})
	ps.Match("a/x", false)
	if got := ps.Unmatched(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Unmatched() = %q, want [c]", got)
	}
}

func TestRefused(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, c := range []struct {
		spec, cwd, root, want string
	}{
		{"../x", "", "", "outside the project"},
		{"../../x", "src", "", "outside the project"},
		{"/etc/passwd", "", "", "an absolute path"},
		{"/etc/passwd", "src", "", "an absolute path"},
		{"/etc", "", root, "it is outside the project " + root},
		{"/etc", "src/deep", root, "it is outside the project " + root},
		{":(exclude)/etc", "src", root, "it is outside the project " + root},
		{root + "/../x", "src", root, "it is outside the project"},
		{root + "x/y", "", root, "it is outside the project"},
		{":(attr:x)y", "", "", "magic \"attr:x\" is not known"},
		{":(top", "", "", "no closing parenthesis"},
		{":(literal,glob)x", "", "", "exclude each other"},
	} {
		_, err := Parse([]string{c.spec}, Options{Cwd: c.cwd, Root: c.root})
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q in %q) = %v, want an Error saying %q", c.spec, c.cwd, c.root, err, c.want)
		}
	}
	if _, err := Parse([]string{""}, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("an empty item: %v, want ErrEmpty", err)
	}
}
