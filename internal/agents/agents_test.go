package agents

import (
	"encoding/json"
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
