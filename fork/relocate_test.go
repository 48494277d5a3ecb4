package fork

import (
	"bytes"
	"testing"
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
