package hookd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func codexTrust(t *testing.T) *TrustRule {
	t.Helper()
	a, err := LookupAgent("codex")
	if err != nil || a.Trust == nil {
		t.Fatalf("codex profile without a trust rule: %v", err)
	}
	return a.Trust
}

// TestTrustHash: the hashes match what Codex 0.169.0's app-server (hooks/list) reported for
// the 13 hooks of testdata/codex-trust/q2-hooks.json (matcher kept only where Codex keeps it,
// SessionEnd and Interrupt clamped to 3 s), and for one Stop hook without a matcher.
func TestTrustHash(t *testing.T) {
	tr := codexTrust(t)
	src, err := os.ReadFile("testdata/codex-trust/q2-hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for event, groups := range doc.Hooks {
		for gi, g := range groups {
			for hi, h := range g.Hooks {
				e := Entry{Event: event, Command: h.Command, Timeout: h.Timeout}
				if g.Matcher != nil {
					e.Matcher = *g.Matcher
				}
				got[snakeCase(event)+":"+itoa(gi)+":"+itoa(hi)] = tr.hash(e)
			}
		}
	}
	f, err := os.Open("testdata/codex-trust/q2-hooks.list")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		key, want, _ := strings.Cut(sc.Text(), " ")
		suffix := strings.TrimPrefix(key, "/work/notes/codex/homes/q2/.codex/hooks.json:")
		if got[suffix] != want {
			t.Errorf("%s: hash %s, Codex says %s", suffix, got[suffix], want)
		}
	}
	if n != 13 {
		t.Errorf("%d hooks listed, want 13", n)
	}
	if h := tr.hash(Entry{Event: "Stop", Command: "echo hi", Timeout: 30}); h != "sha256:90fbfd513a94547d730a1340e0f075543d8dee965aef652211b6882e121d64f7" {
		t.Errorf("Stop echo hi: %s", h)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func (tr *TrustRule) mustDecode(t *testing.T, src []byte) map[string]any {
	t.Helper()
	doc, err := tr.decode(src, "test")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// codexRecords are the trust records of the balanced tier's entries merged into the hook file
// at /home/u/.codex/hooks.json holding src.
func codexRecords(t *testing.T, src []byte, tier string) (merged []byte, recs []trustRecord) {
	t.Helper()
	tr := codexTrust(t)
	a, _ := LookupAgent("codex")
	ti, err := LoadTier(tier)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ti.Entries(a, testHook)
	if err != nil {
		t.Fatal(err)
	}
	const hooksPath = "/home/u/.codex/hooks.json"
	sh := a.shape(hooksPath)
	merged, _, _, err = mergeHooks(src, hooksPath, sh, want)
	if err != nil {
		t.Fatal(err)
	}
	recs, err = tr.records(merged, hooksPath, sh)
	if err != nil {
		t.Fatal(err)
	}
	return merged, recs
}

// TestTrustGolden: for every testdata/codex-config/*.toml, writing the trust records of the
// balanced tier's entries (merged into testdata/codex-hooks/user-hooks.json) gives the
// .registered golden file, doing it again changes nothing, switching to the aggressive tier
// replaces Rewind's records only, and taking them out gives back the input byte for byte.
func TestTrustGolden(t *testing.T) {
	tr := codexTrust(t)
	hooks, err := os.ReadFile("testdata/codex-hooks/user-hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	_, balanced := codexRecords(t, hooks, "balanced")
	_, aggressive := codexRecords(t, hooks, "aggressive")
	_, minimal := codexRecords(t, hooks, "minimal")
	const keyPath = "/home/u/.codex/hooks.json"
	inputs, _ := filepath.Glob("testdata/codex-config/*.toml")
	if len(inputs) < 5 {
		t.Fatalf("inputs: %v", inputs)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			reg, added, removed, err := tr.editTrust(src, in, keyPath, nil, balanced)
			if err != nil {
				t.Fatal(err)
			}
			if added != len(balanced) || removed != 0 {
				t.Errorf("added %d removed %d, want %d 0", added, removed, len(balanced))
			}
			if !bytes.HasPrefix(reg, bytes.TrimSuffix(src, []byte("\n"))) {
				t.Error("the input is not kept at the start of the file")
			}
			golden(t, strings.TrimSuffix(in, ".toml")+".registered", reg)
			again, added, removed, err := tr.editTrust(reg, in, keyPath, balanced, balanced)
			if err != nil || !bytes.Equal(again, reg) || added+removed != 0 {
				t.Errorf("a second edit changed the file (added %d removed %d, %v)", added, removed, err)
			}
			// Tier changes keep the records of entries that stay where they were.
			agg, added, _, err := tr.editTrust(reg, in, keyPath, balanced, aggressive)
			if err != nil || added == 0 {
				t.Fatalf("to aggressive: added %d, %v", added, err)
			}
			if fresh, _, _, _ := tr.editTrust(src, in, keyPath, nil, aggressive); !reflect.DeepEqual(tr.state(tr.mustDecode(t, agg)), tr.state(tr.mustDecode(t, fresh))) {
				t.Errorf("balanced then aggressive trusts other hooks than aggressive alone:\n%s", agg)
			}
			min, _, removed, err := tr.editTrust(agg, in, keyPath, aggressive, minimal)
			if err != nil || removed == 0 {
				t.Fatalf("to minimal: removed %d, %v", removed, err)
			}
			un, _, removed, err := tr.editTrust(min, in, keyPath, minimal, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(un, src) || removed != len(minimal) {
				t.Errorf("taking Rewind's records out (%d) did not give back the input:\n%q\nwant:\n%q", removed, un, src)
			}
		})
	}
}

// TestTrustRefuses: invalid TOML, a record of another hook under a key Rewind needs, and an
// edit that would reach into a multi-line string are refused, naming the file.
func TestTrustRefuses(t *testing.T) {
	tr := codexTrust(t)
	hooks, _ := os.ReadFile("testdata/codex-hooks/user-hooks.json")
	_, recs := codexRecords(t, hooks, "balanced")
	const keyPath = "/home/u/.codex/hooks.json"

	if _, _, _, err := tr.editTrust([]byte("model = \n"), "c.toml", keyPath, nil, recs); err == nil || !strings.Contains(err.Error(), "c.toml is not valid TOML") {
		t.Errorf("invalid TOML: %v", err)
	}
	foreign := []byte("[hooks.state." + tomlString(recs[0].Key) + "]\ntrusted_hash = \"sha256:" + strings.Repeat("1", 64) + "\"\n")
	var ce *TrustConflictError
	if _, _, _, err := tr.editTrust(foreign, "c.toml", keyPath, nil, recs); !errors.As(err, &ce) {
		t.Errorf("a foreign record under Rewind's key: %v", err)
	}
	// The record's exact text inside a multi-line string is not a record.
	inString := []byte("x = \"\"\"\n[hooks.state." + tomlString(recs[0].Key) + "]\ntrusted_hash = " + tomlString(recs[0].Hash) + "\n\n[y]\"\"\"\n")
	if _, _, _, err := tr.editTrust(inString, "c.toml", keyPath, recs, nil); err == nil || !strings.Contains(err.Error(), "more than them") {
		t.Errorf("a record inside a string: %v", err)
	}
	// Rewind's record with a member added by someone else is left alone.
	extended := tr.appendBlocks([]byte("model = \"o3\"\n"), recs[:1])
	extended = append(extended, "enabled = true\n"...)
	if out, _, removed, err := tr.editTrust(extended, "c.toml", keyPath, recs, nil); err != nil || removed != 0 || !bytes.Equal(out, extended) {
		t.Errorf("a record someone added to: removed %d, %v", removed, err)
	}
}

// TestRegisterCodex: Register writes hooks.json and the trust records of exactly its entries
// in config.toml; a second run changes nothing; a tier change swaps Rewind's records;
// Unregister leaves config.toml as it was and removes the hooks.json it created. A missing
// config.toml is created and goes again. Nothing is written when config.toml is not TOML.
func TestRegisterCodex(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	dir := filepath.Join(home, ".codex")
	os.MkdirAll(dir, 0o755)
	config := filepath.Join(dir, "config.toml")
	orig, _ := os.ReadFile("testdata/codex-config/offline.toml")
	os.WriteFile(config, orig, 0o600)
	hooks, err := SettingsPath(home, "codex")
	if err != nil || hooks != filepath.Join(dir, "hooks.json") {
		t.Fatalf("SettingsPath = %s, %v", hooks, err)
	}

	c, err := Register(hooks, "codex", "balanced", testHook)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Changed || c.Trust == nil || !c.Trust.Changed || c.Trust.Added != c.Added || c.Trust.Path != config {
		t.Fatalf("register: %+v trust %+v", c, c.Trust)
	}
	got, _ := os.ReadFile(config)
	tr := codexTrust(t)
	a, _ := LookupAgent("codex")
	hsrc, _ := os.ReadFile(hooks)
	recs, _ := tr.records(hsrc, hooks, a.shape(hooks))
	if want, _, _, _ := tr.editTrust(orig, config, hooks, nil, recs); !bytes.Equal(got, want) {
		t.Errorf("config.toml:\n%s\nwant:\n%s", got, want)
	}
	for _, r := range recs {
		if !strings.HasPrefix(r.Key, hooks+":") {
			t.Errorf("key %s does not name %s", r.Key, hooks)
		}
	}
	if c2, err := Register(hooks, "codex", "balanced", testHook); err != nil || c2.Changed || c2.Trust.Changed {
		t.Errorf("second register: %+v %+v %v", c2, c2.Trust, err)
	}
	if c3, err := Register(hooks, "codex", "aggressive", testHook); err != nil || !c3.Trust.Changed || c3.Trust.Added == 0 {
		t.Errorf("tier change: %+v %v", c3.Trust, err)
	}
	if c4, err := Register(hooks, "codex", "minimal", testHook); err != nil || !c4.Trust.Changed || c4.Trust.Removed == 0 {
		t.Errorf("tier change: %+v %v", c4.Trust, err)
	}
	u, err := Unregister(hooks, "codex")
	if err != nil || !u.RemovedFile || u.Trust == nil || !u.Trust.Changed {
		t.Fatalf("unregister: %+v %+v %v", u, u.Trust, err)
	}
	if after, _ := os.ReadFile(config); !bytes.Equal(after, orig) {
		t.Errorf("config.toml after unregister:\n%s", after)
	}
	if fileExists(hooks) {
		t.Error("the hooks.json Rewind created is still there")
	}
	if u2, err := Unregister(hooks, "codex"); err != nil || u2.Changed || u2.Trust.Changed {
		t.Errorf("second unregister: %+v %v", u2, err)
	}

	// No config.toml: created with the records, removed with them.
	os.Remove(config)
	if _, err := Register(hooks, "codex", "minimal", testHook); err != nil {
		t.Fatal(err)
	}
	if !fileExists(config) || !fileExists(config+createdMarker) {
		t.Fatal("config.toml not created (with its marker)")
	}
	if _, err := Unregister(hooks, "codex"); err != nil {
		t.Fatal(err)
	}
	if fileExists(config) || fileExists(hooks) {
		t.Error("the files Rewind created are still there")
	}

	// Invalid TOML: refused before anything is written.
	os.WriteFile(config, []byte("model = \n"), 0o600)
	if _, err := Register(hooks, "codex", "balanced", testHook); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Errorf("register with a broken config.toml: %v", err)
	}
	if fileExists(hooks) {
		t.Error("hooks.json written although config.toml could not be")
	}
}

// TestTrustKeyPath: under CODEX_HOME Codex names the hook file with the symlinks of that path
// resolved; under ~/.codex as it is.
func TestTrustKeyPath(t *testing.T) {
	tr := codexTrust(t)
	root := t.TempDir()
	real := filepath.Join(root, "real")
	os.MkdirAll(real, 0o755)
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", "")
	if got := tr.keyPath(filepath.Join(link, "hooks.json")); got != filepath.Join(link, "hooks.json") {
		t.Errorf("without CODEX_HOME: %s", got)
	}
	t.Setenv("CODEX_HOME", link)
	if got := tr.keyPath(filepath.Join(link, "hooks.json")); got != filepath.Join(real, "hooks.json") {
		t.Errorf("CODEX_HOME through a symlink: %s", got)
	}
}

// TestCodexSessionFromEnv: commands Codex runs see CODEX_THREAD_ID (its hooks see none), which
// names the session rewind run by the agent works on.
func TestCodexSessionFromEnv(t *testing.T) {
	env := map[string]string{"CODEX_THREAD_ID": "01a208bf-2200-7023-aa24-86c8df00e8d2"}
	if agent, id := SessionFromEnv(func(k string) string { return env[k] }); agent != "codex" || id != env["CODEX_THREAD_ID"] {
		t.Errorf("SessionFromEnv = %s %s", agent, id)
	}
}
