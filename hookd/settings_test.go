package hookd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const testHook = "/opt/rewind/bin/rewind-hook"

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func balancedEntries(t *testing.T, agent string) []Entry {
	t.Helper()
	tier, err := LoadTier("balanced")
	if err != nil {
		t.Fatal(err)
	}
	a, err := LookupAgent(agent)
	if err != nil {
		t.Fatal(err)
	}
	es, err := tier.Entries(a, testHook)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestMergeGolden: for every testdata/settings/*.json (Claude layout) and
// testdata/droid-hooks/*.json (Droid's hooks.json layout), registering gives
// the .registered golden file, registering again changes nothing, and
// unregistering gives the .unregistered golden file — the input itself when
// the input held no Rewind entries and no empty hook lists.
func TestMergeGolden(t *testing.T) {
	for _, c := range []struct{ dir, agent, hooksKey string }{
		{"testdata/settings", "claude", "hooks"},
		{"testdata/droid-hooks", "droid", ""},
		{"testdata/copilot-hooks", "copilot", "hooks"},
		{"testdata/codex-hooks", "codex", "hooks"},
		{"testdata/gemini-settings", "gemini", "hooks"},
	} {
		inputs, _ := filepath.Glob(filepath.Join(c.dir, "*.json"))
		if len(inputs) == 0 {
			t.Fatalf("no inputs in %s", c.dir)
		}
		for _, in := range inputs {
			t.Run(filepath.Base(in), func(t *testing.T) {
				src, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				want := balancedEntries(t, c.agent)
				sh := testShape(t, c.agent, c.hooksKey)
				reg, added, _, err := mergeHooks(src, in, sh, want)
				if err != nil {
					t.Fatal(err)
				}
				if added != len(want) {
					t.Errorf("added %d entries, want %d", added, len(want))
				}
				golden(t, strings.TrimSuffix(in, ".json")+".registered", reg)
				if _, err := parseJSON(reg); err != nil {
					t.Fatalf("registered file is not JSON: %v", err)
				}
				again, added2, removed2, err := mergeHooks(reg, in, sh, want)
				if err != nil || !bytes.Equal(again, reg) || added2 != 0 || removed2 != 0 {
					t.Errorf("second register changed the file (added %d, removed %d, err %v):\n%s", added2, removed2, err, again)
				}
				d, _ := parseSettings(reg, in, c.hooksKey)
				var got []Entry
				for _, f := range d.rewindHooks(reg, sh) {
					got = append(got, f.entry)
				}
				if !sameRegistrations(d.rewindHooks(reg, sh), want) {
					t.Errorf("registered entries = %+v, want %+v", got, want)
				}
				un, _, err := removeHooks(reg, in, sh, emptyHooksObject(src, in, c.hooksKey))
				if err != nil {
					t.Fatal(err)
				}
				golden(t, strings.TrimSuffix(in, ".json")+".unregistered", un)
				d0, _ := parseSettings(src, in, c.hooksKey)
				if len(d0.rewindHooks(src, sh)) == 0 && !hasEmptyHookContainer(src, in, c.hooksKey) && !bytes.Equal(un, src) {
					t.Errorf("unregister did not restore the input bytes:\n got:\n%s\nwant:\n%s", un, src)
				}
			})
		}
	}
}

// hasEmptyHookContainer: an empty root or event list, which Register fills
// and Unregister then removes. (An empty "hooks" object is the user's, and
// Unregister leaves it: see emptyHooksObject.)
func hasEmptyHookContainer(src []byte, path, hooksKey string) bool {
	d, err := parseSettings(src, path, hooksKey)
	if err != nil {
		return false
	}
	if len(d.root.elems) == 0 {
		w := string(src[d.root.start+1 : d.root.end-1])
		closing := lineIndent(src, d.root.start)
		return w == "\n"+closing || w == "\r\n"+closing // "{\n}" comes back as "{}"
	}
	if d.hooks == nil {
		return false
	}
	for _, e := range d.hooks.elems {
		if e.val.kind == '[' && len(e.val.elems) == 0 {
			return true
		}
	}
	return false
}

// emptyHooksObject reports whether src has an empty hooks object: Register
// marks it the user's (userHooksMarker), and Unregister keeps it.
func emptyHooksObject(src []byte, path, hooksKey string) bool {
	d, err := parseSettings(src, path, hooksKey)
	return err == nil && hooksKey != "" && d.hooks != nil && len(d.hooks.elems) == 0
}

// TestInvalidSettings: files that are not strict JSON objects are refused
// with file:line:column, and Register leaves them byte for byte alone.
func TestInvalidSettings(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/invalid/*.json")
	sort.Strings(inputs)
	var report bytes.Buffer
	for _, in := range inputs {
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Register(p, "claude", "balanced", testHook)
		if err == nil {
			t.Errorf("%s: Register accepted it", in)
			continue
		}
		report.WriteString(filepath.Base(in) + ": " + strings.ReplaceAll(err.Error(), dir+"/", "") + "\n")
		after, _ := os.ReadFile(p)
		if !bytes.Equal(after, src) {
			t.Errorf("%s: Register changed the refused file", in)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: Register left files behind: %v", in, ents)
		}
		// A wrong-typed event list is only an error where Register must write.
		if _, err := Unregister(p, "claude"); err == nil && !strings.HasPrefix(filepath.Base(in), "event-") {
			t.Errorf("%s: Unregister accepted it", in)
		}
	}
	golden(t, "testdata/invalid/errors.golden", report.Bytes())
}

func TestIsRewindCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/opt/rewind/bin/rewind-hook pre-tool-use --agent claude": true,
		"'/home/a b/.rewind/system/bin/rewind-hook' stop":         true,
		"rewind-hook": true,
		"~/.claude/hooks/smart-checkpoint.sh pre-edit":  true,
		"bash /opt/smart-checkpoint/smart-checkpoint x": true,
		"env FOO=1 /x/rewind-hook":                      true,
		"echo rewind-hook":                              false,
		"say done && /x/rewind-hook":                    false,
		"/usr/bin/rewind-hook-helper":                   false,
		"jq . >> ~/log && echo rewind-hook > /dev/null": false,
		"": false,
	} {
		if got := IsRewindCommand(cmd); got != want {
			t.Errorf("IsRewindCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// testShape is agent's hook shape with the events under hooksKey.
func testShape(t testing.TB, agent, hooksKey string) shape {
	t.Helper()
	a, err := LookupAgent(agent)
	if err != nil {
		t.Fatal(err)
	}
	return shape{hooksKey: hooksKey, HookFile: a.HookFile}
}
