package hookd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzMerge: on any input the settings merge either refuses or returns JSON
// whose Rewind entries are exactly the tier's, is stable on a second run,
// and unregisters back to the input when the input had no Rewind entries
// and no empty hook containers.
func FuzzMerge(f *testing.F) {
	for _, glob := range []string{"testdata/settings/*.json", "testdata/droid-hooks/*.json", "testdata/invalid/*.json"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, false)
			f.Add(b, true)
		}
	}
	want := func(agent string) []Entry {
		tier, _ := LoadTier("aggressive")
		a, _ := LookupAgent(agent)
		es, _ := tier.Entries(a, "/x y/rewind-hook")
		return es
	}
	f.Fuzz(func(t *testing.T, src []byte, topLevel bool) {
		hooksKey, agent := "hooks", "claude"
		if topLevel {
			hooksKey, agent = "", "droid"
		}
		w := want(agent)
		sh := testShape(t, agent, hooksKey)
		out, _, _, err := mergeHooks(src, "s.json", sh, w)
		if err != nil {
			return
		}
		if _, err := parseJSON(out); err != nil {
			t.Fatalf("merge produced invalid JSON: %v\n%s", err, out)
		}
		d, err := parseSettings(out, "s.json", hooksKey)
		if err != nil {
			t.Fatalf("merge output does not parse as settings: %v", err)
		}
		if !sameRegistrations(d.rewindHooks(out, sh), w) {
			t.Fatalf("merge output holds the wrong entries:\n%s", out)
		}
		again, _, _, err := mergeHooks(out, "s.json", sh, w)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("second merge changed the output (%v)", err)
		}
		un, _, err := removeHooks(out, "s.json", sh, emptyHooksObject(src, "s.json", hooksKey))
		if err != nil {
			t.Fatalf("unregister failed on merge output: %v", err)
		}
		if d, err := parseSettings(un, "s.json", hooksKey); err != nil || len(d.rewindHooks(un, sh)) != 0 {
			t.Fatalf("unregister left Rewind entries or broke the file (%v):\n%s", err, un)
		}
		d0, _ := parseSettings(src, "s.json", hooksKey)
		if len(d0.rewindHooks(src, sh)) == 0 && !hasEmptyHookContainer(src, "s.json", hooksKey) && !bytes.Equal(un, src) {
			t.Fatalf("unregister did not restore the input:\n got %q\nwant %q", un, src)
		}
	})
}
