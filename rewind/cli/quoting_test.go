package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

// Names that would act on a terminal, and how a person is shown them: as git quotes them
// (cmdline.QuotePath).
var hostileNames = map[string]string{
	"evil\x1b]0;pwned\x07.txt": `"evil\033]0;pwned\a.txt"`,
	"clear\x1b[2J.go":          `"clear\033[2J.go"`,
	"cr\rover.txt":             `"cr\rover.txt"`,
	"nl\nname.txt":             `"nl\nname.txt"`,
	"bidi\u202etxt.exe":        `"bidi\342\200\256txt.exe"`,
	"csi\u009b31m.txt":         `"csi\302\23331m.txt"`,
	".env.\x1b[8m":             `".env.\033[8m"`, // (export names it among the files that may hold secrets)
}

// Prompts, descriptions and labels that would act on a terminal, and how a person is shown them
// (cmdline.QuoteText).
const (
	evilPrompt    = "fix the \x1b[2J bug"
	evilPromptOut = `fix the \033[2J bug`
	evilDesc      = "before \x1b]0;pwned\x07 it"
	evilDescOut   = `before \033]0;pwned\a it`
	evilLabel     = "rel\x1b[31m"
	evilLabelOut  = `rel\033[31m`
)

// rawControl is the first thing in out that would reach a terminal raw: a control byte other
// than a line's end, DEL, bytes that are not UTF-8, a C1 or bidirectional control.
func rawControl(out string) (string, bool) {
	if !utf8.ValidString(out) {
		return "bytes that are not UTF-8", true
	}
	for i, r := range out {
		if r == '\n' {
			continue
		}
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return strings.TrimSpace(out[max(0, i-20):min(len(out), i+20)]), true
		}
	}
	return "", false
}

// Every text a command prints names files, prompts, descriptions and labels that came from
// data with their control characters escaped, paths quoted as git quotes them; --json prints
// them exactly.
func TestHumanOutputQuotesControlCharacters(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (code int, stdout, stderr string) {
		t.Helper()
		var out, errs strings.Builder
		code = Main(context.Background(), append([]string{"-C", dir}, args...), strings.NewReader(stdin), &out, &errs)
		return code, out.String(), errs.String()
	}
	must := func(stdin string, args ...string) (stdout, stderr string) {
		t.Helper()
		code, out, errs := run(stdin, args...)
		if code != 0 {
			t.Fatalf("rewind %q: exit %d\n%s%s", args, code, out, errs)
		}
		return out, errs
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A Claude transcript of two prompts, the newer one hostile and written after the first
	// checkpoint, as an agent writes it.
	sessions := t.TempDir()
	transcript := filepath.Join(sessions, "s\x1b]2;title\x07.jsonl")
	line := func(v map[string]any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	prompt := func(uuid, text string) string {
		return line(map[string]any{"type": "user", "isSidechain": false, "uuid": uuid, "sessionId": "s-1", "cwd": dir,
			"message": map[string]any{"role": "user", "content": text}})
	}
	reply := func(uuid string) string {
		return line(map[string]any{"type": "assistant", "uuid": uuid, "sessionId": "s-1",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "ok"}}}})
	}
	if err := os.WriteFile(transcript, []byte(prompt("u1", "start \x1b[5m")+reply("a1")), 0o644); err != nil {
		t.Fatal(err)
	}

	write("plain.txt", "one\n")
	must("", "save", evilDesc, "--transcript", transcript, "--agent", "claude")
	oldLabel(t, dir, evilLabel)
	for name := range hostileNames {
		write(name, "two\n")
	}
	write("plain.txt", "two\n")
	hook := func(event, extra string) {
		t.Helper()
		must(`{"version":1,"event":"`+event+`","agent":"claude","project_dir":`+jsonString(t, dir)+
			`,"session_id":"s-1","transcript_path":`+jsonString(t, transcript)+`,"checkpoint":"always"`+extra+`}`, "hook")
	}
	hook("UserPromptSubmit", `,"prompt":`+jsonString(t, evilPrompt))
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(prompt("u2", evilPrompt) + reply("a2")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	write("clear\x1b[2J.go", "three\n")
	hook("PreToolUse", `,"tool":"Edit","file":`+jsonString(t, filepath.Join(dir, "clear\x1b[2J.go")))

	// An export to, and an import into, folders named with control characters too.
	bundle := filepath.Join(t.TempDir(), "b\x1b[2J.tar")
	bundleOut := filepath.Dir(bundle) + `/b\033[2J.tar"`
	into := filepath.Join(t.TempDir(), "copy\x1b[2J")
	intoOut := filepath.Dir(into) + `/copy\033[2J"`

	checks := []struct {
		args []string
		want []string // what stdout must hold, escaped
	}{
		{[]string{"diff", "--stat", evilLabel}, names()},
		{[]string{"diff", evilLabel}, headers()},
		{[]string{"diff", evilLabel, "@0", "--stat"}, names()},
		{[]string{"list"}, []string{evilPromptOut, evilLabelOut, evilDescOut, `before edit "clear\033[2J.go"`}},
		{[]string{"list", "--all", "--grep", "fix the"}, []string{evilPromptOut}},
		{[]string{"log"}, []string{evilPromptOut, evilDescOut}},
		{[]string{"log", "--graph"}, []string{evilPromptOut, `before edit "clear\033[2J.go"`}},
		{[]string{"show", evilLabel}, []string{evilDescOut, evilLabelOut, `s\033]2;title\a.jsonl"`}},
		{[]string{"show", "@1"}, []string{evilPromptOut}},
		{[]string{"show", "@0"}, []string{`before edit "clear\033[2J.go"`}},
		{[]string{"restore", evilLabel, "--dry-run", "--code-only"}, append(names(), "Dry run")},
		{[]string{"restore", evilLabel, "--dry-run", "--", "*.txt"}, []string{`"evil\033]0;pwned\a.txt"`}},
		{[]string{"undo", "--dry-run"}, []string{`write  "clear\033[2J.go"`}},
		{[]string{"revert", "@1", "--dry-run"}, []string{evilPromptOut, `"clear\033[2J.go"`}},
		{[]string{"back", "1", "--dry-run", "--transcript", transcript}, []string{"«" + evilPromptOut + "»"}},
		// (The hooks named a transcript Rewind will not read from a hook: one with control
		// characters in its name. Only the save that named it by hand holds the conversation.)
		{[]string{"back", "1", "--both", "--dry-run", "--transcript", transcript}, []string{"«" + evilPromptOut + "»", `delete "clear\033[2J.go"`}},
		{[]string{"validate"}, []string{"checked"}},
		{[]string{"gc", "--keep", "1", "--dry-run"}, []string{"Would delete"}},
		{[]string{"export", "@0", "-o", bundle}, []string{`to "` + bundleOut}},
		{[]string{"import", bundle, "--into", into}, []string{`into "` + intoOut}},
	}
	for _, c := range checks {
		out, errs := must("", c.args...)
		for what, s := range map[string]string{"stdout": out, "stderr": errs} {
			if bad, ok := rawControl(s); ok {
				t.Errorf("rewind %q: %s holds a raw control character: %q", c.args, what, bad)
			}
		}
		if c.args[0] == "export" && !strings.Contains(errs, `".env.\033[8m"`) {
			t.Errorf("rewind %q: stderr names no secret file, escaped: %s", c.args, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("rewind %q: stdout lacks %s:\n%s", c.args, w, out)
			}
		}
	}

	// A fork made from the hostile transcript, and the restore history that records it.
	must("", "back", "1", "--transcript", transcript)
	out, _ := must("", "forks", "list", "--json")
	var fk struct {
		Fork struct {
			SessionID string `json:"session_id"`
		}
	}
	if err := json.Unmarshal([]byte(out), &fk); err != nil || fk.Fork.SessionID == "" {
		t.Fatalf("forks list --json: %v: %s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"forks", "list"}, `"s\033]2;title\a.jsonl"`},
		{[]string{"forks", "show", fk.Fork.SessionID}, `[Fork] start \033[5m`},
		{[]string{"log"}, `start \033[5m`},
		{[]string{"undo-restore", "--dry-run"}, "Dry run"},
	} {
		args := c.args
		out, errs := must("", args...)
		if !strings.Contains(out, c.want) {
			t.Errorf("rewind %q: stdout lacks %s:\n%s", args, c.want, out)
		}
		for what, s := range map[string]string{"stdout": out, "stderr": errs} {
			if bad, ok := rawControl(s); ok {
				t.Errorf("rewind %q: %s holds a raw control character: %q", args, what, bad)
			}
		}
	}

	// A label with control characters is refused now, named escaped.
	if code, _, errs := run("", "pin", "@0", evilLabel+"2"); code != 2 || !strings.Contains(errs, "control character") {
		t.Errorf("rewind pin @0 %q: exit %d, %s; want it refused (2)", evilLabel+"2", code, errs)
	} else if bad, ok := rawControl(errs); ok {
		t.Errorf("rewind pin: the error holds a raw control character: %q", bad)
	}

	// An error naming a hostile folder (with %s, as os's errors do): escaped on stderr, exact
	// under --json.
	nowhere := filepath.Join(dir, "no\x1b[2Jwhere")
	for _, asJSON := range []bool{false, true} {
		args := []string{"-C", nowhere, "status"}
		if asJSON {
			args = append(args, "--json")
		}
		var out, errs strings.Builder
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errs)
		switch {
		case code == 0:
			t.Errorf("rewind %q: exit 0", args)
		case asJSON:
			var e struct{ Message string }
			if err := json.Unmarshal([]byte(errs.String()), &e); err != nil || !strings.Contains(e.Message, nowhere) {
				t.Errorf("rewind %q: error %q (%v), want the folder named exactly", args, errs.String(), err)
			}
		case !strings.Contains(errs.String(), `no\033[2Jwhere`):
			t.Errorf("rewind %q: stderr %q, want the folder named escaped", args, errs.String())
		}
		if bad, ok := rawControl(errs.String()); ok && !asJSON {
			t.Errorf("rewind %q: error line holds a raw control character: %q", args, bad)
		}
	}

	// --json keeps every name, prompt, description and label exactly.
	out, _ = must("", "diff", "--stat", evilLabel, "--json")
	got := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ch snap.Change
		if err := json.Unmarshal(sc.Bytes(), &ch); err != nil {
			t.Fatalf("diff --json: %v: %s", err, sc.Text())
		}
		got[ch.Path] = true
	}
	for name := range hostileNames {
		if !got[name] {
			t.Errorf("diff --json lacks %q exactly: %v", name, got)
		}
	}
	out, _ = must("", "list", "--json")
	for _, w := range []string{evilPrompt, evilDesc, evilLabel} {
		if j := jsonString(t, w); !strings.Contains(out, j[1:len(j)-1]) { // (inside a longer string)
			t.Errorf("list --json lacks %q exactly:\n%s", w, out)
		}
	}
	out, _ = must("", "log", "--json")
	if !strings.Contains(out, `"trigger":"before edit clear\u001b[2J.go"`) {
		t.Errorf("log --json: want the trigger's file exactly:\n%s", out)
	}
}

// names is how diff and restore show hostileNames.
func names() []string {
	var out []string
	for _, q := range hostileNames {
		out = append(out, q)
	}
	return out
}

// headers is the +++ line of each of hostileNames in a diff against the tree.
func headers() []string {
	var out []string
	for _, q := range hostileNames {
		out = append(out, `+++ "b/`+q[1:]+"\n")
	}
	return out
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A rename (on a file system that folds names) shows each of its two names quoted once.
func TestRestoreQuotesRenames(t *testing.T) {
	ownHome(t)
	var out strings.Builder
	r := &store.RestoreResult{Kind: store.KindRestore, Checkpoint: "20261122_143052_001", TreeChange: store.TreeChange{DryRun: true,
		Code: &snap.RestoreResult{Renamed: 1, RenamedList: []snap.Rename{{From: "evil\x1b[2J.txt", To: "EVIL\x1b[2J.txt"}}}}}
	writeRestore(&out, r, false)
	if want := `  rename "evil\033[2J.txt" -> "EVIL\033[2J.txt"` + "\n"; !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant a line %q", out.String(), want)
	}
}

// oldLabel gives the newest checkpoint of the store in dir a label no
// command takes any more, as a store written before labels were checked
// may hold: its metadata.json rewritten without the checksum, as one
// written before checksums were.
func oldLabel(t *testing.T, dir, label string) {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Resolve("@0")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(c.Dir, store.MetadataFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	md["pinned"] = label
	delete(md, "sum")
	if b, err = json.Marshal(md); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
