package fork

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"rewind.dev/internal/fixtures"
	"rewind.dev/jsonl"
)

func TestFolderRewriter(t *testing.T) {
	in := `{"type":"user","cwd":"/a/proj","message":{"content":"see /a/proj/x"}}
{"type":"user","cwd":"/a/proj/sub","sessionId":"s"}
{"type":"user","cwd":"/a/project"}
{"type":"summary"}
not json "cwd"
{"cwd":"/a/proj"}`
	want := `{"type":"user","cwd":"/b/new place","message":{"content":"see /a/proj/x"}}
{"type":"user","cwd":"/b/new place/sub","sessionId":"s"}
{"type":"user","cwd":"/a/project"}
{"type":"summary"}
not json "cwd"
{"cwd":"/b/new place"}`
	var out bytes.Buffer
	r := &folderRewriter{w: &out, fields: []string{"cwd"}, from: "/a/proj", to: "/b/new place"}
	// Written in small pieces, so lines straddle writes.
	for i := 0; i < len(in); i += 7 {
		if _, err := r.Write([]byte(in[i:min(i+7, len(in))])); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if r.n != 3 {
		t.Errorf("rewrote %d fields, want 3", r.n)
	}
}

// Dotted and array paths reach fields below the line's top (Codex's payload.cwd and its
// workspace roots), keeping every other byte.
func TestFolderRewriterNested(t *testing.T) {
	in := `{"type":"session_meta","payload":{"id":"x","cwd":"/a/proj","runtime_workspace_roots":["/a/proj","/elsewhere","/a/proj/sub"]}}
{"type":"turn_context","payload": {"cwd" : "/a/proj/w"}, "cwd":"/a/proj"}
{"type":"world_state","payload":{"state":{"environments":{"environments":{"local":{"cwd":"/a/proj"}}}}}}
{"type":"event_msg","payload":["/a/proj"]}
{"type":"response_item","payload":{"content":[{"text":"<cwd>/a/proj</cwd>"}]}}
`
	want := `{"type":"session_meta","payload":{"id":"x","cwd":"/b","runtime_workspace_roots":["/b","/elsewhere","/b/sub"]}}
{"type":"turn_context","payload": {"cwd" : "/b/w"}, "cwd":"/a/proj"}
{"type":"world_state","payload":{"state":{"environments":{"environments":{"local":{"cwd":"/b"}}}}}}
{"type":"event_msg","payload":["/a/proj"]}
{"type":"response_item","payload":{"content":[{"text":"<cwd>/a/proj</cwd>"}]}}
`
	var out bytes.Buffer
	r := &folderRewriter{w: &out, fields: []string{"payload.cwd", "payload.runtime_workspace_roots.[]", "payload.state.environments.environments.local.cwd"}, from: "/a/proj", to: "/b"}
	if _, err := r.Write([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if r.n != 5 {
		t.Errorf("rewrote %d fields, want 5", r.n)
	}
}

// TestCodexImportFields: an import of a real Codex session moves the folder fields Codex files
// the session under and works in (session_meta, turn_context, thread_settings), and leaves what
// the model was told — the world_state line and the <environment_context> message — naming the
// old folder: Codex compares its world_state with the folder it runs in, and tells the model
// the new folder in the resumed session's first request.
func TestCodexImportFields(t *testing.T) {
	d, err := jsonl.LookupDialect("codex")
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(fixtures.Path("codex/realclient-codex0.169.0-2-prompts-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const from, to = "/tmp/cx-proj-q2", "/dest/b"
	var out bytes.Buffer
	r := &folderRewriter{w: &out, fields: d.Fork.CwdFields, from: from, to: to}
	if _, err := r.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := r.flush(); err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type           string `json:"type"`
				Cwd            string `json:"cwd"`
				ThreadSettings *struct {
					Cwd string `json:"cwd"`
				} `json:"thread_settings"`
				State *struct {
					Environments struct {
						Environments struct {
							Local struct {
								Cwd string `json:"cwd"`
							} `json:"local"`
						} `json:"environments"`
					} `json:"environments"`
				} `json:"state"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch {
		case l.Type == "session_meta" || l.Type == "turn_context":
			if l.Payload.Cwd != to {
				t.Errorf("%s cwd = %q, want %s", l.Type, l.Payload.Cwd, to)
			}
		case l.Payload.ThreadSettings != nil:
			if l.Payload.ThreadSettings.Cwd != to {
				t.Errorf("thread_settings cwd = %q, want %s", l.Payload.ThreadSettings.Cwd, to)
			}
		case l.Type == "world_state":
			if got := l.Payload.State.Environments.Environments.Local.Cwd; got != from {
				t.Errorf("world_state cwd = %q, want the folder the model was told, %s", got, from)
			}
		}
	}
	if !bytes.Contains(out.Bytes(), []byte(`<cwd>`+from+`</cwd>`)) {
		t.Error("the environment_context message no longer says what the model was told")
	}
}
