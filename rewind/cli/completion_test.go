package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"

	forkcli "rewind.dev/fork/cli"
	hookcli "rewind.dev/hookd/cli"
	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/layout"
	jsonlcli "rewind.dev/jsonl/cli"
	"rewind.dev/rewind/store"
	snapcli "rewind.dev/snap/cli"
)

// toolFlags is every command of every tool and the flags its flag set
// defines, read from the command tables themselves: what the completion
// scripts must hold. The key is "tool command".
func toolFlags(t *testing.T) map[string][]*flag.Flag {
	t.Helper()
	all := map[string][]*flag.Flag{}
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.r.RegisterFlags(fs)
		all[name+" "+c.name] = nil
		fs.VisitAll(func(f *flag.Flag) { all[name+" "+c.name] = append(all[name+" "+c.name], f) })
	}
	for _, tree := range []*ffcli.Command{snapcli.Commands(), jsonlcli.Commands(), forkcli.Commands(), hookcli.Commands()} {
		for _, c := range append([]*ffcli.Command{tree}, tree.Subcommands...) {
			key := tree.Name + " " + c.Name
			if c == tree {
				key = tree.Name + " "
			}
			all[key] = nil
			if c.FlagSet != nil { // (a root without flags of its own gets one from Run)
				c.FlagSet.VisitAll(func(f *flag.Flag) { all[key] = append(all[key], f) })
			}
		}
	}
	return all
}

// Each script holds every command of every tool, every flag each command's
// flag set defines, and the values of the flags that take one of a set.
func TestCompletionScriptsHoldEveryFlag(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range shells {
		s, err := completionScript(sh)
		if err != nil {
			t.Fatal(err)
		}
		scripts[sh] = s
	}
	q := regexp.QuoteMeta
	for key, flags := range toolFlags(t) {
		tool, cmd, _ := strings.Cut(key, " ")
		if cmd != "" {
			if !regexp.MustCompile(`(?m)^\t'` + q(tool) + `'\) echo '([^']* )?` + q(cmd) + `( [^']*)?' ;;$`).MatchString(scripts["bash"]) {
				t.Errorf("bash: %s has no command %s", tool, cmd)
			}
			if !strings.Contains(scripts["zsh"], "\t\t'"+strings.ReplaceAll(cmd, ":", `\:`)+":") {
				t.Errorf("zsh: %s has no command %s", tool, cmd)
			}
			if !strings.Contains(scripts["fish"], "complete -c "+tool+" -n 'not __rewind_cmd >/dev/null' -a '"+cmd+"'") {
				t.Errorf("fish: %s has no command %s", tool, cmd)
			}
		}
		for _, f := range flags {
			n := flagName(f.Name)
			if !regexp.MustCompile(`(?m)^\t'` + q(key) + `'\) echo '([^']* )?` + q(n) + `( [^']*)?' ;;$`).MatchString(scripts["bash"]) {
				t.Errorf("bash: %q has no flag %s", key, n)
			}
			if !regexp.MustCompile(`(?m)^\t'` + q(key) + `'\) reply=\((\n\t\t'[^\n]*)*\n\t\t'` + q(n) + `:`).MatchString(scripts["zsh"]) {
				t.Errorf("zsh: %q has no flag %s", key, n)
			}
			cond := "'not __rewind_cmd >/dev/null'"
			if cmd != "" {
				cond = "'__rewind_using " + cmd + "'"
			}
			opt := "-l " + f.Name
			if len(f.Name) == 1 {
				opt = "-s " + f.Name
			}
			if !strings.Contains(scripts["fish"], "complete -c "+tool+" -n "+cond+" "+opt+" ") {
				t.Errorf("fish: %q has no flag %s", key, n)
			}
			values, list := cmdline.ChoicesOf(f)
			if values == nil {
				continue
			}
			kind := "one"
			if list {
				kind = "list"
			}
			want := fmt.Sprintf("'%s %s') echo '%s %s' ;;", key, n, kind, strings.Join(values, " "))
			if cmd == "" {
				want = fmt.Sprintf("'%s  %s') echo '%s %s' ;;", tool, n, kind, strings.Join(values, " "))
			}
			if !strings.Contains(scripts["bash"], want) {
				t.Errorf("bash: %q %s does not offer %q", key, n, values)
			}
		}
	}
}

// The bash script passes shellcheck.
func TestCompletionShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		t.Skip("shellcheck is not installed (apt-get install shellcheck)")
	}
	s, err := completionScript("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("shellcheck", "-s", "bash", "-")
	cmd.Stdin = strings.NewReader(s)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

func TestArgGrammar(t *testing.T) {
	for _, tt := range []struct {
		args  string
		typed []string
		want  []string
	}{
		{"", nil, nil},
		{"<cp>", nil, []string{"<cp>"}},
		{"<cp>", []string{"@0"}, nil},
		{"<cp> [<cp2>]", []string{"@0"}, []string{"<cp2>"}},
		{"<cp> [<cp2>] [-- <path>...]", []string{"@0"}, []string{"<cp2>", "--"}},
		{"<cp> [<cp2>] [-- <path>...]", []string{"@0", "@1"}, []string{"--"}},
		{"<cp> [<cp2>] [-- <path>...]", []string{"@0", "--", "a", "b"}, []string{"<path>"}},
		{"<n> | :/<text>", nil, []string{"<n>", ":/<text>"}},
		{"list | show <session-id>", nil, []string{"list", "show"}},
		{"list | show <session-id>", []string{"show"}, []string{"<session-id>"}},
		{"list | show <session-id>", []string{"list"}, nil},
		{"[move project|global | attach <old-folder>]", nil, []string{"move", "attach"}},
		{"[move project|global | attach <old-folder>]", []string{"move"}, []string{"project|global"}},
		{"[move project|global | attach <old-folder>]", []string{"attach"}, []string{"<old-folder>"}},
		{"[move project|global | attach <old-folder>]", []string{"move", "global"}, nil},
		{"<cp> [<label>]", []string{"@2"}, []string{"<label>"}},
		{"bash|zsh|fish", nil, []string{"bash|zsh|fish"}},
	} {
		if got := parseArgs(tt.args).next(tt.typed); !slices.Equal(got, tt.want) {
			t.Errorf("parseArgs(%q).next(%q) = %q, want %q", tt.args, tt.typed, got, tt.want)
		}
	}
}

// Every command's arguments read as a grammar whose placeholders completion
// knows, or knows to leave to the person.
func TestEveryCommandsArgsParse(t *testing.T) {
	known := regexp.MustCompile(`^(<(cp|cp2|path|file|old-folder|session-id|n|description|label)>|:/<text>|--|[a-z-]+(\|[a-z-]+)*)$`)
	for _, c := range commands() {
		for _, seq := range parseArgs(c.r.doc().args) {
			for _, term := range seq {
				if !known.MatchString(term.word) {
					t.Errorf("%s: argument %q in %q: completion knows nothing of it", c.name, term.word, c.r.doc().args)
				}
			}
		}
	}
}

func TestUnquoteWord(t *testing.T) {
	for in, want := range map[string]string{
		`@0`:                    "@0",
		`"before the refactor"`: "before the refactor",
		`'it''s'`:               "its",
		`a\ b`:                  "a b",
		`"a\"b"`:                `a"b`,
		`'a\b'`:                 `a\b`,
		`":/add the`:            ":/add the",
	} {
		if got := unquoteWord(in); got != want {
			t.Errorf("unquoteWord(%q) = %q, want %q", in, got, want)
		}
	}
}

// rewind __complete offers the references of the project's checkpoints, the
// words a command takes, and says when file names are wanted; without a
// store it offers nothing, and says nothing on stderr, with exit status 0.
func TestComplete(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	t.Chdir(dir)
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		code := Main(context.Background(), append([]string{completeCommand}, args...), strings.NewReader(""), &stdout, &stderr)
		if code != 0 || stderr.Len() > 0 {
			t.Errorf("__complete %q: exit %d, stderr %q", args, code, stderr.String())
		}
		return stdout.String()
	}
	words := func(out string) []string {
		var w []string
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines[1:] {
			w = append(w, strings.Split(l, "\t")[0])
		}
		return w
	}
	if got := run("restore", ""); got != "words\n" {
		t.Errorf("no store: %q, want only words", got)
	}

	s, _, err := store.Init(dir, layout.ModeProject)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, desc := range []string{"first", "second \x1b[2J", "third"} {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := store.SaveOptions{Description: desc}
		if i == 0 {
			opts.Pin = "release-1"
		}
		cp, err := s.Save(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cp.ID)
	}
	out := run("restore", "")
	if got, want := words(out), []string{"@0", "@1", "@2", ":/", "release-1"}; !slices.Equal(got, want) {
		t.Errorf("restore '': %q, want %q", got, want)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a description reached the terminal unquoted: %q", out)
	}
	if !regexp.MustCompile(`\n@2\t\d+s ago: \[pinned: release-1\] "first"\n`).MatchString(out) {
		t.Errorf("@2 is not described by its prompt: %q", out)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"restore", "@"}, []string{"@0", "@1", "@2"}},
		{[]string{"restore", "@1"}, []string{"@1"}},
		{[]string{"restore", ids[1][:len(ids[1])-1]}, nil}, // (filled below: the ids it starts)
		{[]string{"restore", "rel"}, []string{"release-1"}},
		{[]string{"restore", ":"}, []string{":/"}},
		{[]string{"diff", "@0", "@"}, []string{"@0", "@1", "@2"}},
		{[]string{"revert", "@0", "@1", ""}, nil},
		{[]string{"back", ""}, []string{":/"}},
		{[]string{"store", ""}, []string{"move", "attach"}},
		{[]string{"store", "move", "g"}, []string{"global"}},
		{[]string{"forks", ""}, []string{"list", "show", "prune"}},
		{[]string{"completion", ""}, shells},
		{[]string{"help", "un"}, []string{"undo", "undo-restore", "unpin"}},
		{[]string{"pin", "--force", "@"}, []string{"@0", "@1", "@2"}},
		{[]string{"save", ""}, nil},
		{[]string{"nonsense", ""}, nil},
	} {
		want := tt.want
		if tt.args[0] == "restore" && strings.HasPrefix(tt.args[1], "2") {
			for i := len(ids) - 1; i >= 0; i-- {
				if strings.HasPrefix(ids[i], tt.args[1]) {
					want = append(want, ids[i])
				}
			}
		}
		if got := words(run(tt.args...)); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", tt.args, got, want)
		}
	}
	for _, args := range [][]string{{"restore", "@0", "--", ""}, {"diff", "@0", "--", "a", "b"}, {"import", ""}} {
		if got := run(args...); got != "files\n" {
			t.Errorf("%q: %q, want files", args, got)
		}
	}
	if got := run("store", "attach", ""); got != "dirs\n" {
		t.Errorf("store attach: %q, want dirs", got)
	}
	// A flag's value is not an argument; -C given on the line is the project.
	if got := words(run("restore", "--yes", "@")); len(got) != 3 {
		t.Errorf("restore --yes @: %q", got)
	}
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{completeCommand, "-C", t.TempDir(), "restore", "@"}, 0},
		{[]string{completeCommand, "-C", dir, "restore", "@"}, 3},
		{[]string{completeCommand, "restore", "-C", dir, "@"}, 3},
		{[]string{completeCommand, "restore", "-C=" + dir, "@"}, 3},
	} {
		var stdout strings.Builder
		Main(context.Background(), tt.args, strings.NewReader(""), &stdout, &stdout)
		if got := words(stdout.String()); len(got) != tt.want {
			t.Errorf("%q: %q, want %d words", tt.args, got, tt.want)
		}
	}
}
