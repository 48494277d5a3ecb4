package fakeapi

import "testing"

// TestFolder: each client's words for the working folder, in the shapes seen in its requests,
// name the folder; where a request says it twice (Codex, resumed elsewhere) the newest counts.
func TestFolder(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"claude", `{"system":[{"type":"text","text":"Here is useful information:\n<env>\nPrimary working directory: /a/b\nIs directory a git repo: Yes\n</env>"}]}`, "/a/b"},
		{"codex", `{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/src/a</cwd>\n  <shell>bash</shell>\n</environment_context>"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/dest/b</cwd>\n</environment_context>"}]}]}`, "/dest/b"},
		{"pi", `{"system":[{"type":"text","text":"Current date: 2026-11-28\nCurrent working directory: /p/q"}]}`, "/p/q"},
		{"copilot", `{"system":[{"type":"text","text":"x"},{"type":"text","text":"* Current working directory: /c/d\n* Git repository root: /c/d"}]}`, "/c/d"},
		{"opencode", `{"system":[{"type":"text","text":"<env>\n  Working directory: /o/p\n  Workspace root folder: /o/p\n</env>"}]}`, "/o/p"},
		{"gemini", `{"contents":[{"role":"user","parts":[{"text":"<session_context>\nMy operating system is: linux\n- **Workspace Directories:**\n  - /g/h\n- **Directory Structure:**\n</session_context>"}]}]}`, "/g/h"},
		{"none", `{"messages":[{"role":"user","content":"where am I?"}]}`, ""},
	} {
		r := &Request{Raw: []byte(tc.body)}
		if got := r.Folder(); got != tc.want {
			t.Errorf("%s: Folder() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
