//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"rewind.dev/e2e/fakeapi"
)

// TestClaudeExportImport: a two-prompt session in folder A under one HOME, each prompt editing a
// file; rewind export of the checkpoint after it; rewind import into folder B under another
// HOME. Resuming the imported session there with the real client sends the model exactly the
// exported prompts and the new one and tells it that it works in B; the edit it makes where it
// was told lands on B's file, and B's tree is A's at the checkpoint.
func TestClaudeExportImport(t *testing.T) {
	const (
		p1 = "alpha: write notes.txt"
		p2 = "bravo: change notes.txt"
		p3 = "charlie: change notes.txt again, here"
	)
	script := func(r *fakeapi.Request) fakeapi.Reply {
		if !r.HasTool("Write") {
			return fakeapi.TextReply("side request")
		}
		// The model works where the request says it is.
		notes := filepath.Join(r.Folder(), "notes.txt")
		p := r.LastPrompt()
		switch p {
		case p1:
			if reply, ok := r.Call(0, "Write", map[string]string{"file_path": notes, "content": "one\n"}); ok {
				return reply
			}
		case p2, p3:
			from, to := "one", "two"
			if p == p3 {
				from, to = "two", "three"
			}
			if reply, ok := r.Call(0, "Read", map[string]string{"file_path": notes}); ok {
				return reply
			}
			if reply, ok := r.Call(1, "Edit", map[string]string{"file_path": notes, "old_string": from, "new_string": to}); ok {
				return reply
			}
		}
		return fakeapi.TextReply("done: " + p)
	}
	a := newClaude(t, script)
	b := newClaude(t, script)
	if a.home == b.home || a.proj == b.proj {
		t.Fatal("A and B share a folder")
	}

	if err := os.WriteFile(filepath.Join(a.proj, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.rewind(nil, "rewind", "-C", a.proj, "init")
	id := a.print(p1)
	a.print(p2, "--resume", id)
	if got, _ := os.ReadFile(filepath.Join(a.proj, "notes.txt")); string(got) != "two\n" {
		t.Fatalf("the scripted edits did not run in A: notes.txt = %q", got)
	}
	a.rewind(nil, "rewind", "-C", a.proj, "save", "after two prompts", "--transcript", a.transcript(id), "--agent", "claude")
	archive := filepath.Join(t.TempDir(), "moment.tar")
	var exp struct {
		Checkpoint   string `json:"checkpoint"`
		AgentVersion string `json:"agent_version"`
	}
	if err := json.Unmarshal(a.rewind(nil, "rewind", "-C", a.proj, "export", "@0", "-o", archive, "--json"), &exp); err != nil {
		t.Fatal(err)
	}
	if exp.AgentVersion == "" {
		t.Error("the export does not name the agent's version")
	}
	// The plain tar lists with tar itself.
	if out, err := exec.Command("tar", "tvf", archive).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("tree.tar.gz")) {
		t.Fatalf("tar tvf %s: %v\n%s", archive, err, out)
	}
	want := treeOf(t, a.proj)

	// B: another HOME, another folder.
	var imp struct {
		Dir           string `json:"dir"`
		SessionID     string `json:"session_id"`
		Transcript    string `json:"transcript"`
		Resume        string `json:"resume"`
		ResumeCommand string `json:"resume_command"`
		Checkpoint    string `json:"checkpoint"`
	}
	if err := json.Unmarshal(b.rewind(nil, "rewind", "import", archive, "--into", b.proj, "--json"), &imp); err != nil {
		t.Fatal(err)
	}
	if imp.Dir != b.proj || imp.Resume != "claude --resume "+imp.SessionID || imp.SessionID == id {
		t.Fatalf("import: dir %s session %s resume %q (source session %s)", imp.Dir, imp.SessionID, imp.Resume, id)
	}
	if imp.Transcript != b.transcript(imp.SessionID) {
		t.Errorf("the session was installed at %s, want %s", imp.Transcript, b.transcript(imp.SessionID))
	}
	if got := treeOf(t, b.proj); !equalTrees(got, want) {
		t.Errorf("B's tree differs from A's at the checkpoint:\n got %v\nwant %v", got, want)
	}
	installed, err := os.ReadFile(imp.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(installed, []byte(`"cwd":"`+a.proj+`"`)) || !bytes.Contains(installed, []byte(`"cwd":"`+b.proj+`"`)) {
		t.Error("the installed session's cwd fields were not moved to B")
	}
	if bytes.Contains(installed, []byte(id)) {
		t.Error("the installed session still names the source session's id")
	}
	list := b.rewind(nil, "rewind", "-C", b.proj, "list")
	if !bytes.Contains(list, []byte(imp.Checkpoint)) || !bytes.Contains(list, []byte("import")) {
		t.Errorf("rewind list in B does not show the import's checkpoint:\n%s", list)
	}

	if got := b.print(p3, "--resume", imp.SessionID); got != imp.SessionID {
		t.Errorf("resuming the import reported session %s, want %s", got, imp.SessionID)
	}
	req := b.lastConversation()
	assertPrompts(t, req, p1, p2, p3)
	if got := req.Folder(); got != b.proj {
		t.Errorf("the resumed session tells the model it works in %q, want B's %s", got, b.proj)
	}
	if got, _ := os.ReadFile(filepath.Join(b.proj, "notes.txt")); string(got) != "three\n" {
		t.Errorf("the Edit in B did not change B's notes.txt: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(a.proj, "notes.txt")); string(got) != "two\n" {
		t.Errorf("A's notes.txt changed: %q", got)
	}
	// back works from the imported session in B.
	b.rewind(nil, "rewind", "-C", b.proj, "back", "1", "--both")
	if got, _ := os.ReadFile(filepath.Join(b.proj, "notes.txt")); string(got) != "two\n" {
		t.Errorf("rewind back 1 --both in B: notes.txt = %q, want the imported two", got)
	}
}

// treeOf maps each file, folder and link below root (the store left out) to its content.
func treeOf(t *testing.T, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".agent" {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			tree[rel] = "link:" + l
		case d.IsDir():
			tree[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tree[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
