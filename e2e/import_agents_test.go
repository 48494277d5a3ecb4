//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runExportImport drives agent a's real client through an export in one world and
// an import in another: in folder A under HOME A, with Rewind's hooks, the scenario's two
// prompts write notes.txt, then change it and delete gone.txt; rewind save and rewind export
// take that moment. In folder B under HOME B, rewind import installs the conversation as a new
// session of the agent for B, titled [Imported] …, and prints the command that resumes it.
// Resuming it there sends the model exactly the two exported prompts and the new one, tells it
// that it works in B, and the file it writes where it was told lands in B; B's tree is A's at the
// checkpoint; A is left alone; rewind back 1 --both in B forks the session.
func runExportImport(t *testing.T, a *agentE2E) {
	var ha, hb *harness
	ha = newHarness(t, a, scenarioScript(&ha))
	hb = newHarness(t, a, scenarioScript(&hb))
	if ha.home == hb.home || ha.proj == hb.proj {
		t.Fatal("A and B share a folder")
	}
	for _, h := range []*harness{ha, hb} {
		h.bin = installRewind(t, h.home, h.env(), "--yes", "--agents", a.name)
		h.rewind = filepath.Join(h.bin, "rewind")
	}

	envA := ha.env()
	runIn(t, ha.proj, envA, "git", "init", "-q")
	runIn(t, ha.proj, envA, ha.rewind, "init")
	if err := os.WriteFile(filepath.Join(ha.proj, "gone.txt"), []byte("doomed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ha.proj, "keep.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := a.prompt(ha, promptWrite, "")
	a.prompt(ha, promptChange, id)
	if got, _ := ha.file("notes.txt"); got != "two\n" {
		t.Fatalf("the scripted edits did not run in A: notes.txt = %q", got)
	}
	runIn(t, ha.proj, envA, ha.rewind, "save", "after two prompts")
	archive := filepath.Join(t.TempDir(), "moment.tar")
	var exp struct {
		Agent   string `json:"agent"`
		Session string `json:"session_id"`
	}
	ha.rewindJSON(&exp, "export", "@0", "-o", archive)
	if exp.Agent != a.name {
		t.Fatalf("the export names agent %q, want %s", exp.Agent, a.name)
	}
	want := treeOf(t, ha.proj)
	delete(want, ".git") // the snapshot leaves git's folder out
	for k := range want {
		if strings.HasPrefix(k, ".git/") {
			delete(want, k)
		}
	}

	var imp struct {
		Dir        string `json:"dir"`
		SessionID  string `json:"session_id"`
		Transcript string `json:"transcript"`
		Title      string `json:"title"`
		Resume     string `json:"resume"`
		Checkpoint string `json:"checkpoint"`
	}
	// The agent is installed in B as a user has it, on PATH (OpenCode's import runs it).
	envB := append(hb.env(), "PATH="+filepath.Dir(hb.exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out := runIn(t, hb.root, envB, hb.rewind, "import", archive, "--into", hb.proj, "--json")
	if err := json.Unmarshal(out, &imp); err != nil {
		t.Fatalf("rewind import --json: %v\n%s", err, out)
	}
	t.Logf("imported session %s at %s titled %q; resume with: %s", imp.SessionID, imp.Transcript, imp.Title, imp.Resume)
	if imp.Dir != hb.proj || imp.SessionID == "" || imp.SessionID == id || !strings.Contains(imp.Resume, imp.SessionID) {
		t.Fatalf("import: dir %s session %s resume %q (source session %s)", imp.Dir, imp.SessionID, imp.Resume, id)
	}
	if !strings.HasPrefix(imp.Title, "[Imported] ") {
		t.Errorf("the imported session's title is %q", imp.Title)
	}
	if !strings.HasPrefix(imp.Transcript, hb.home+"/") {
		t.Errorf("the session was installed at %s, outside B's home", imp.Transcript)
	}
	if got := treeOf(t, hb.proj); !equalTrees(got, want) {
		t.Errorf("B's tree differs from A's at the checkpoint:\n got %v\nwant %v", got, want)
	}
	installed, err := os.ReadFile(imp.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(installed, []byte("\n")) {
		// Codex's world_state line is what the model was told, and keeps A: Codex tells the
		// model B when it finds them differ (see the assertWorksIn below).
		if a.name == "codex" && bytes.Contains(line, []byte(`"type":"world_state"`)) {
			continue
		}
		if bytes.Contains(line, []byte(`"`+ha.proj+`"`)) {
			t.Errorf("the installed session still has a field naming A's folder: %.300s", line)
			break
		}
	}
	// Gemini's chat file names its folder only by where it is (and a hash of it).
	if a.name != "gemini" && !bytes.Contains(installed, []byte(`"`+hb.proj+`"`)) {
		t.Error("the installed session's folder fields were not moved to B")
	}
	if bytes.Contains(installed, []byte(id)) {
		t.Error("the installed session still names the source session's id")
	}
	if !homeHolds(t, hb.home, "[Imported] ") {
		t.Error("no file of the agent's in B's home holds the [Imported] title")
	}
	var list bytes.Buffer
	list.Write(runIn(t, hb.proj, hb.env(), hb.rewind, "list"))
	if !bytes.Contains(list.Bytes(), []byte(imp.Checkpoint)) {
		t.Errorf("rewind list in B does not show the import's checkpoint:\n%s", list.Bytes())
	}

	n := len(hb.api.Messages())
	if got := a.prompt(hb, promptAfter, imp.SessionID); got != imp.SessionID {
		t.Errorf("resuming the import reported session %s, want %s", got, imp.SessionID)
	}
	req := lastConversationSince(t, hb.api, n)
	assertPrompts(t, req, promptWrite, promptChange, promptAfter)
	assertWorksIn(t, req, hb, ha)
	if !homeHolds(t, hb.home, "[Imported] ") {
		t.Error("after the resume no file of the agent's in B's home holds the [Imported] title")
	}
	if got, _ := hb.file("notes.txt"); got != "two\n" {
		t.Errorf("B's notes.txt after the resume = %q, want two", got)
	}
	if got, _ := ha.file("notes.txt"); got != "two\n" {
		t.Errorf("A's notes.txt changed: %q", got)
	}
	// back works in B from the imported session: a fork before the new prompt.
	var back struct {
		Fork *struct {
			SessionID string `json:"session_id"`
		} `json:"fork"`
	}
	hb.rewindJSON(&back, "back", "1", "--both")
	if back.Fork == nil || back.Fork.SessionID == "" || back.Fork.SessionID == imp.SessionID {
		t.Errorf("rewind back 1 --both in B wrote no fork of the imported session: %+v", back.Fork)
	}
	if got, _ := hb.file("notes.txt"); got != "two\n" {
		t.Errorf("after rewind back 1 --both in B notes.txt = %q, want two", got)
	}
}

// homeHolds reports whether a file below home, Rewind's own folder aside, holds s.
func homeHolds(t *testing.T, home, s string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return nil
		}
		if d.IsDir() && (p == filepath.Join(home, ".rewind") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
				found = true
			}
		}
		return nil
	})
	return found
}

func TestPiExportImport(t *testing.T) { runExportImport(t, piAgent) }

func TestCodexExportImport(t *testing.T) { runExportImport(t, codexAgent) }

func TestGeminiExportImport(t *testing.T) { runExportImport(t, geminiAgent) }

func TestCopilotExportImport(t *testing.T) { runExportImport(t, copilotAgent) }

func TestOpenCodeExportImport(t *testing.T) { runExportImport(t, openCodeAgent) }
