package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"rewind.dev/internal/fixtures"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// oldKeys are the keys --json prints until the next release beside the
// ones that replaced them (see JSON OUTPUT in rewind(1)): has_transcript's
// camelCase name, and the fields log printed of a checkpoint before it
// printed the object list prints.
var oldKeys = map[string]bool{"hasTranscript": true}

var logOldKeys = []string{"id", "created_at", "trigger", "prompt", "pinned"}

// jsonLines decodes each line of out as one JSON object.
func jsonLines(t *testing.T, what, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%s: %v: %q", what, err, l)
		}
		objs = append(objs, o)
	}
	return objs
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkData walks v: every key is snake_case (but oldKeys), and no text is
// dressed for a person (wrapped in quotes, or cut short with an ellipsis).
func checkData(t *testing.T, what string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !snakeCase.MatchString(k) && !oldKeys[k] {
				t.Errorf("%s: key %q is not snake_case", what, k)
			}
			checkData(t, what+"."+k, x)
		}
	case []any:
		for i, x := range v {
			checkData(t, fmt.Sprintf("%s[%d]", what, i), x)
		}
	case string:
		if strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "«") || strings.HasSuffix(v, "…") {
			t.Errorf("%s: %q is dressed for a person, not data", what, v)
		}
	}
}

// without is o without keys.
func without(o map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range o {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

func keysOf(o map[string]any) []string {
	var ks []string
	for k := range o {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestJSONShapes: list, show, save and log print a checkpoint as one object,
// the same in each (type, n, checkpoint: the metadata whole, path); log and
// status name a session's transcript, id and agent alike; every key is
// snake_case and every text plain data, in all of them and in the other
// commands' (forks, diff, restore, gc, validate, pin, export, config, store).
func TestJSONShapes(t *testing.T) {
	ownHome(t)
	ctx := context.Background()
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeGlobal); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(fixtures.Path("claude/realclient-cc2.1.197-4-prompts-resumed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(os.Getenv("HOME"), ".claude", "projects", "-p")
	os.MkdirAll(sessions, 0o700)
	tr := filepath.Join(sessions, "ebb31263-7b6a-4122-bff9-6eef5ee5652d.jsonl")
	os.WriteFile(tr, fixture[:12941], 0o600)
	run := func(stdin string, args ...string) string {
		t.Helper()
		var out, errs strings.Builder
		if code := Main(ctx, append([]string{"-C", dir}, args...), strings.NewReader(stdin), &out, &errs); code != 0 {
			t.Fatalf("rewind %q: exit %d: %s", args, code, errs.String())
		}
		return out.String()
	}
	write := func(s string) { os.WriteFile(filepath.Join(dir, "f.txt"), []byte(s), 0o644) }

	// A prompt's checkpoint the hook took, a manual one with a description,
	// a fork and a restore's backup (back --both), one taken since.
	write("one\n")
	hook, _ := json.Marshal(map[string]any{"version": 1, "event": "UserPromptSubmit", "agent": "claude", "project_dir": dir,
		"session_id": "ebb31263-7b6a-4122-bff9-6eef5ee5652d", "transcript_path": tr, "prompt": "fix the parser", "checkpoint": "always"})
	run(string(hook), "hook")
	write("two\n")
	run("", "save", "with pem")
	os.WriteFile(tr, fixture, 0o600)
	run("", "back", "1", "--both")
	write("three\n")
	saved := jsonLines(t, "save", run("", "save", "--json", "after the fork"))[0]

	rows := map[string]map[string]any{} // checkpoint id → list's row
	for _, row := range jsonLines(t, "list", run("", "list", "--all", "--json")) {
		checkData(t, "list", row)
		rows[row["checkpoint"].(map[string]any)["id"].(string)] = row
	}
	if len(rows) != 4 {
		t.Fatalf("list --all: %d checkpoints, want 4", len(rows))
	}
	same := func(what string, got map[string]any) {
		t.Helper()
		id, _ := got["checkpoint"].(map[string]any)["id"].(string)
		want, ok := rows[id]
		if !ok {
			t.Errorf("%s: checkpoint %q is not one list prints", what, id)
			return
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%s prints checkpoint %s as\n%s\nlist as\n%s\nkeys %v and %v", what, id, gotJSON, wantJSON, keysOf(got), keysOf(want))
		}
	}
	checkData(t, "save", saved)
	same("save", saved)
	backups := 0
	for id, row := range rows {
		if _, ok := row["n"]; !ok {
			backups++
		}
		shown := jsonLines(t, "show", run("", "show", id, "--json"))[0]
		checkData(t, "show", shown)
		same("show "+id, shown)
	}
	if backups != 1 {
		t.Errorf("%d restore backups (checkpoints without n), want the one back took", backups)
	}

	var logged []map[string]any
	inLog := 0
	for _, se := range jsonLines(t, "log", run("", "log", "--all", "--json")) {
		checkData(t, "log", se)
		logged = append(logged, se)
		for _, c := range se["checkpoints"].([]any) {
			row := c.(map[string]any)
			same("log", without(row, logOldKeys...))
			inLog++
			cp := row["checkpoint"].(map[string]any)
			if row["id"] != cp["id"] || row["created_at"] != cp["created_at"] || row["pinned"] != cp["pinned"] {
				t.Errorf("log's fields of before differ from the checkpoint's: %v", row)
			}
			if cp["description"] == "with pem" && row["prompt"] != "with pem" {
				t.Errorf("log's prompt of a described checkpoint = %q, want its description as it is", row["prompt"])
			}
		}
	}
	if inLog != len(rows) {
		t.Errorf("log --all holds %d checkpoints, list --all %d", inLog, len(rows))
	}

	// The other commands' objects hold data as it is too.
	forks := jsonLines(t, "forks", run("", "forks", "list", "--json"))
	if len(forks) != 1 {
		t.Fatalf("forks list: %d forks, want back's", len(forks))
	}
	sid := forks[0]["fork"].(map[string]any)["session_id"].(string)
	for _, args := range [][]string{
		{"forks", "list"}, {"forks", "show", sid}, {"diff", "@1"}, {"restore", "@1", "--dry-run"},
		{"gc", "--dry-run", "--keep", "1"}, {"validate"}, {"pin", "@0", "release"}, {"unpin", "@0"},
		{"export", "@0", "-o", filepath.Join(t.TempDir(), "x.tar")}, {"config"}, {"store"},
	} {
		for i, o := range jsonLines(t, args[0], run("", append(args, "--json")...)) {
			checkData(t, fmt.Sprintf("%s[%d]", strings.Join(args, " "), i), o)
		}
	}

	// A session: its transcript, id and agent under one name each.
	st := jsonLines(t, "status", run("", "status", "--json"))[0]
	checkData(t, "status", st)
	cur, ok := st["session"].(map[string]any)
	if !ok {
		t.Fatalf("status --json: no session: %v", st)
	}
	var match map[string]any
	for _, se := range logged {
		if se["session_id"] == cur["session_id"] {
			match = se
		}
	}
	if match == nil {
		t.Fatalf("status's session %v is none of log's", cur["session_id"])
	}
	for _, k := range []string{"path", "session_id", "agent"} {
		if _, ok := cur[k]; !ok {
			t.Errorf("status's session has no %s: %v", k, cur)
		}
		if _, ok := match[k]; !ok {
			t.Errorf("log's session has no %s: %v", k, match)
		}
	}
	if cur["agent"] != match["agent"] {
		t.Errorf("agent: status %v, log %v", cur["agent"], match["agent"])
	}
	p1, _ := filepath.EvalSymlinks(cur["path"].(string))
	p2, _ := filepath.EvalSymlinks(match["path"].(string))
	if p1 != p2 {
		t.Errorf("path: status %v, log %v: not one transcript", cur["path"], match["path"])
	}
}
