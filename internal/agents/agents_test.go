package agents

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestManifests: every manifest parses, is named for its agent, and carries both sections.
func TestManifests(t *testing.T) {
	as, err := all()
	if err != nil {
		t.Fatal(err)
	}
	if len(as) < 7 {
		t.Fatalf("%d manifests, want the seven agents at least", len(as))
	}
	for i, a := range as {
		if i > 0 && as[i-1].Name >= a.Name {
			t.Errorf("manifests not sorted by name: %s before %s", as[i-1].Name, a.Name)
		}
		for name, sec := range map[string]json.RawMessage{"dialect": a.Dialect, "hooks": a.Hooks} {
			var o map[string]json.RawMessage
			if err := json.Unmarshal(sec, &o); err != nil || len(o) == 0 {
				t.Errorf("%s: the %s section is not a JSON object: %v", a.Name, name, err)
			}
			if _, ok := o["name"]; ok {
				t.Errorf("%s: the %s section names the agent again; the manifest's name is the one", a.Name, name)
			}
		}
		if got, ok := Lookup(a.Name); !ok || got != a {
			t.Errorf("Lookup(%q) = %v, %v", a.Name, got, ok)
		}
	}
	if _, ok := Lookup("nobody"); ok {
		t.Error("Lookup found an agent that has no manifest")
	}
}

// TestParseRefuses: a manifest of another version, or without a name of one lower-case word,
// is refused.
func TestParseRefuses(t *testing.T) {
	for _, m := range []string{
		`{"version":2,"name":"x","display_name":"X","executable":"x"}`,
		`{"version":1,"name":"X","display_name":"X","executable":"x"}`,
		`{"version":1,"name":"a,b","display_name":"X","executable":"x"}`,
		`{"version":1,"name":"x","executable":"x"}`,
		`{"version":1,"name":"x","display_name":"X"}`,
		`not json`,
	} {
		if _, err := parse([]byte(m)); err == nil {
			t.Errorf("parse(%s) accepted it", m)
		}
	}
}

// TestAgentNamesLiveInManifests: an agent's name is a string literal in at most one code file
// of the project outside its manifest (code where that agent's mechanics differ), so adding or
// changing an agent is its manifest and not a hunt through the modules. Tests and the
// end-to-end suite, which name the agents they drive, are not counted.
func TestAgentNamesLiveInManifests(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Skipf("not in the project's source tree: %v", err)
	}
	names := map[string]bool{}
	for _, a := range All() {
		names[a.Name] = true
	}
	files := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == "e2e" || rel == "internal/agents" || strings.HasPrefix(e.Name(), ".") || e.Name() == "testdata" || e.Name() == "dist" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] && !slices.Contains(files[s], rel) {
					files[s] = append(files[s], rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, fs := range files {
		if len(fs) > 1 {
			t.Errorf("%q is written in %d code files outside its manifest: %v", name, len(fs), fs)
		}
	}
}

// TestEveryAgentShown: every agent with a manifest has its row in the README's agent table,
// its transcripts among the fixtures and an end-to-end test named for it, so that an agent is
// never added as data alone.
func TestEveryAgentShown(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Skipf("not in the project's source tree: %v", err)
	}
	for _, a := range All() {
		if !strings.Contains(string(readme), "\n| "+a.DisplayName+" | ") {
			t.Errorf("README.md's agent table has no row for %s", a.DisplayName)
		}
		if fs, _ := filepath.Glob(filepath.Join(root, "internal", "fixtures", a.Name, "*")); len(fs) == 0 {
			t.Errorf("internal/fixtures/%s/ holds no transcript of %s", a.Name, a.DisplayName)
		}
		if _, err := os.Stat(filepath.Join(root, "e2e", a.Name+"_test.go")); err != nil {
			t.Errorf("%s has no end-to-end test: %v", a.DisplayName, err)
		}
	}
}
