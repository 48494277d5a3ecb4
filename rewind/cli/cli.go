// Package cli is the rewind command, importable so tests run it
// in-process.
//
//	rewind init [--mode global|project] [--force] [--trust]
//	rewind save [desc] [--transcript PATH] [--agent A] [--pin LABEL] [--full]
//	rewind list [--all] [-n N] [--grep TEXT]
//	rewind show <cp>
//	rewind diff <cp> [<cp2>] [--stat] [-- <path>...]
//	rewind restore <cp> [--code-only|--context-only] [--in-place] [--dry-run] [--yes] [-- <path>...]
//	rewind undo [--dry-run] [--yes]
//	rewind revert <cp> [<cp2>] [--conflicts=refuse|markers] [--dry-run] [--yes]
//	rewind undo-restore | redo [--dry-run] [--yes]
//	rewind back <n> | :/<text> [--both] [--in-place] [--dry-run] [--yes]
//	rewind status | validate | statusline
//	rewind gc [--keep N] [--max-age D] [--max-bytes SIZE] [--dry-run]
//	rewind pin <cp> [label] [--force] | unpin <cp>
//	rewind config [--tier T] [--register-hooks|--unregister-hooks] [--agent A]
//	rewind forks list | show <id>
//	rewind log [--graph] [--all]
//	rewind export <cp> [-o FILE] [--force] [--redact] [--redact-pattern P]...
//	rewind import FILE [--into DIR] [--force] [--sha256 HEX]
//	rewind store [move project|global | attach OLD-FOLDER]
//	rewind help [CMD]
//	rewind completion bash|zsh|fish
//	rewind hook < request.json
//
// A checkpoint is named by @N, the Nth row of 'rewind list' (@0 is the
// newest; restore backups are not counted), :/TEXT (the newest whose prompt
// or description contains TEXT), id, unique id prefix, pin label or
// description (store.Resolve). Paths after "--" are git's pathspecs. Every
// command takes --json and -C DIR. Exit status: 0 ok, 1 failure, 2 usage,
// 10 no store, 11 the store's lock held too long, 12 back past the prompts
// in view, 13 a revert that conflicts, 130 interrupted; under --json a failure is one JSON object on
// stderr. Each command's flags, Exec and help sit in <command>.go.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

const name = "rewind"

// tool is rewind's edge: its hint-of-error switch and its own exit statuses (hints.go).
var tool = &cmdline.Tool{Name: name, Hint: hintOf, Code: exitCode}

// env is what every command writes to.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	colors         bool // stdout is a terminal and NO_COLOR is not set
	// progressAfter and progressEvery pace the progress line (progress.go);
	// 0 means the defaults, a negative progressAfter a line drawn at once.
	progressAfter, progressEvery time.Duration
}

// runner is one command: its flags, what it does, and its help.
type runner interface {
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, e *env, args []string) error
	doc() doc
}

// doc is a command's help: 'rewind help CMD' and 'rewind CMD --help' print
// it, the command list shows its summary.
type doc struct {
	args     string   // what follows the command, e.g. "<cp> [<cp2>]"
	summary  string   // one line, lowercase, no period
	text     string   // paragraphs after the summary; "" for none
	examples []string // command lines, each optionally followed by "  # comment"
}

// command is one entry of the command table.
type command struct {
	name     string
	r        runner
	plumbing bool // for other programs (rewind-hook), listed apart
}

func commands() []command {
	return []command{
		{name: "init", r: &initCmd{}},
		{name: "save", r: &saveCmd{}},
		{name: "list", r: &listCmd{}},
		{name: "show", r: &showCmd{}},
		{name: "diff", r: &diffCmd{}},
		{name: "restore", r: &restoreCmd{}},
		{name: "undo", r: &undoCmd{}},
		{name: "revert", r: &revertCmd{}},
		{name: "undo-restore", r: &undoRestoreCmd{}},
		{name: "redo", r: &undoRestoreCmd{redo: true}},
		{name: "back", r: &backCmd{}},
		{name: "status", r: &statusCmd{}},
		{name: "validate", r: &validateCmd{}},
		{name: "gc", r: &gcCmd{}},
		{name: "pin", r: &pinCmd{}},
		{name: "unpin", r: &pinCmd{unpin: true}},
		{name: "config", r: &configCmd{}},
		{name: "forks", r: &forksCmd{}},
		{name: "log", r: &logCmd{}},
		{name: "export", r: &exportCmd{}},
		{name: "import", r: &importCmd{}},
		{name: "store", r: &storeCmd{}},
		{name: "statusline", r: &statuslineCmd{}},
		{name: "completion", r: &completionCmd{}},
		{name: "hook", r: &hookCmd{}, plumbing: true},
	}
}

func lookup(cmdName string) (command, bool) {
	for _, c := range commands() {
		if c.name == cmdName {
			return c, true
		}
	}
	return command{}, false
}

// Main runs rewind with args (without the program name) and returns the
// exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	e.colors = os.Getenv("NO_COLOR") == "" && isTerminal(stdout)
	err := run(ctx, e, hoistCommon(args))
	return tool.Report(ctx, stderr, err, wantsJSON(args))
}

// run picks the command and runs it. Help is printed on stdout when asked
// for ('rewind', 'rewind help [CMD]', '--help' anywhere before "--").
func run(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return rootHelp(e.stdout)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			return rootHelp(e.stdout)
		}
		if len(args) > 2 {
			return cmdline.Usagef("help takes one command; run 'rewind help'")
		}
		c, ok := lookup(args[1])
		if !ok {
			return unknownCommand(args[1])
		}
		return commandHelp(e.stdout, c)
	case completeCommand:
		return complete(e, args[1:])
	case "-version", "--version":
		if len(args) > 1 {
			return cmdline.Usagef("--version takes no arguments")
		}
		return tool.PrintVersion(e.stdout)
	}
	c, ok := lookup(args[0])
	if !ok {
		if strings.HasPrefix(args[0], "-") {
			return cmdline.WithHint(cmdline.Usagef("unknown flag %s before the command", args[0]), "flags other than -C and --json follow the command; run 'rewind help'")
		}
		return unknownCommand(args[0])
	}
	fs := flag.NewFlagSet(name+" "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c.r.RegisterFlags(fs)
	_, paths := c.r.(pathTaker)
	if err := fs.Parse(permute(fs, args[1:], paths)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return commandHelp(e.stdout, c)
		}
		return flagError(fs, c, err)
	}
	return c.r.Exec(ctx, e, fs.Args())
}

// wantsJSON reports whether args ask for JSON (--json before any "--"),
// looked at before parsing so that a usage error is JSON too.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-json", "--json", "-json=true", "--json=true", "-json=1", "--json=1":
			return true
		}
	}
	return false
}

// hoistCommon lets the flags every command takes come before the command,
// as in 'rewind -C ~/proj list' (git's habit): they are moved after it.
func hoistCommon(args []string) []string {
	var lead []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-C" || a == "--C":
			if len(args) < 2 {
				return append(lead, args...)
			}
			lead, args = append(lead, a, args[1]), args[2:]
			continue
		case strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--C=") || a == "-json" || a == "--json":
			lead, args = append(lead, a), args[1:]
			continue
		}
		break
	}
	if len(lead) == 0 || len(args) == 0 {
		return append(lead, args...)
	}
	return append(append([]string{args[0]}, lead...), args[1:]...)
}

// permute moves flags that follow positional arguments in front of them, so
// 'rewind restore @0 --code-only' works like 'rewind restore --code-only @0'.
// A "--" ends flags: what follows it is positional, whatever it looks like.
// With keepDash (a command that takes paths after "--") the "--" stays among
// the positional arguments, for the command to split them at.
func permute(fs *flag.FlagSet, args []string, keepDash bool) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if keepDash {
				pos = append(pos, a)
			}
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		nameOnly := strings.TrimLeft(a, "-")
		if strings.Contains(nameOnly, "=") {
			continue
		}
		if f := fs.Lookup(nameOnly); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	if len(pos) == 0 {
		return flags
	}
	// "--" keeps a positional argument that starts with "-" (rewind save --
	// -x) from being read as a flag.
	return append(append(flags, "--"), pos...)
}

// common holds the flags every command takes.
type common struct {
	json    bool
	project string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "print JSON instead of text")
	fs.StringVar(&c.project, "C", "", "work on the project in `DIR` (default: found from the current folder)")
}

// projectDir is -C, else $REWIND_PROJECT_DIR (set in agent shells by the
// hooks), else found from the current folder — or, when a restore removed
// it, from the path it had (currentDir), saying so on e's stderr.
func (c *common) projectDir(e *env) (string, error) {
	dir := c.project
	if dir == "" {
		dir = os.Getenv("REWIND_PROJECT_DIR")
	}
	if dir != "" {
		return store.FindProject(dir)
	}
	wd, project, err := currentDir()
	if err != nil {
		return "", err
	}
	if project != "" {
		again := ""
		if fi, err := os.Stat(wd); err == nil && fi.IsDir() {
			again = "; 'cd " + cmdline.ShellQuote(wd) + "' enters it as it is now" // (undo-restore made it again)
		}
		fmt.Fprintf(e.stderr, "%s: warning: the current folder (%s) was removed; working on its project, %s%s\n", name, cmdline.QuotePath(wd), cmdline.QuotePath(project), cmdline.QuoteText(again))
		return project, nil
	}
	return store.FindProject(wd)
}

// openAt opens the project's store and finds the checkpoint name names
// (an id, a unique prefix, @N, :/TEXT, a pin label or a description).
func (c *common) openAt(e *env, name string) (*store.Store, *store.Checkpoint, error) {
	s, err := c.open(e)
	if err != nil {
		return nil, nil, err
	}
	cp, err := s.Resolve(name)
	if err != nil {
		return nil, nil, err
	}
	return s, cp, nil
}

// open opens the project's store. $REWIND_LOCK_WAIT (a duration, e.g.
// 10s) bounds the wait for its lock instead of store.DefaultLockWait;
// waiting, it says on e's stderr who holds the lock.
func (c *common) open(e *env) (*store.Store, error) {
	p, err := c.projectDir(e)
	if err != nil {
		return nil, err
	}
	s, err := store.Open(p)
	if err != nil {
		return nil, err
	}
	if v := os.Getenv("REWIND_LOCK_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, cmdline.Usagef("REWIND_LOCK_WAIT=%q is not a duration such as 30s", v)
		}
		s.LockWait = d
	}
	s.Waiting = func(holder string) {
		fmt.Fprintf(e.stderr, "%s: waiting for the store's lock, held by %s\n", name, cmdline.QuoteText(holder))
	}
	return s, nil
}

// json writes v on stdout as one line of JSON; the longest lists a
// restore reports are read from their files as they are written (see
// snap.WriteJSON).
func (e *env) json(v any) error { return snap.WriteJSON(e.stdout, v) }

func (e *env) table() *tabwriter.Writer { return tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0) }

// color wraps s in an ANSI colour (an SGR code such as "33") when e.colors.
func (e *env) color(code, s string) string {
	if code == "" || !e.colors {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// absPath makes a --transcript path absolute ("" stays ""): checkpoints
// record it, later runs from other folders read it, and checkpoints of one
// transcript are found by comparing it.
func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("transcript path %s: %w", p, err)
	}
	return a, nil
}

// count is n and the noun, plural unless n is 1: "1 file", "2 files".
func count(n int, noun string) string {
	return fmt.Sprintf("%d %s%s", n, noun, plural(n))
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// pronoun is "it" for one thing, else "they".
func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "they"
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// quoted is s in double quotes for a person, as %q puts it but with
// cmdline.QuotePath's escapes: a title or a label quoted in a sentence.
func quoted(s string) string {
	if q := cmdline.QuotePath(s); strings.HasPrefix(q, `"`) {
		return q
	}
	return `"` + s + `"`
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// checkAgent refuses an --agent that names no transcript dialect: left
// alone, a misspelt one would silently fall back to detection.
func checkAgent(agent string) error {
	if agent == "" {
		return nil
	}
	if _, err := jsonl.LookupDialect(agent); err != nil {
		return cmdline.Usagef("unknown agent %q for --agent: %s", agent, strings.Join(jsonl.DialectNames(), ", "))
	}
	return nil
}

func needArgs(args []string, lo, hi int, sub string) error {
	if len(args) >= lo && len(args) <= hi {
		return nil
	}
	usage := name + " " + sub
	if c, ok := lookup(sub); ok && c.r.doc().args != "" {
		usage += " " + c.r.doc().args
	}
	return cmdline.WithHint(cmdline.Usagef("wrong number of arguments for '%s %s' (%d)", name, sub, len(args)),
		fmt.Sprintf("usage: %s; 'rewind help %s' says more", usage, sub))
}

func executableDir() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Dir(p)
}
