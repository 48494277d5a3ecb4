// Package cli is the rewind command, importable so tests run it
// in-process.
//
//	rewind init [--mode project|global] [--force]
//	rewind save [desc] [--transcript PATH] [--agent A] [--pin LABEL] [--full]
//	rewind list [--all] [-n N]
//	rewind show <cp>
//	rewind diff <cp> [<cp2>] [--stat]
//	rewind restore <cp> [--code-only|--context-only] [--in-place] [--dry-run] [--yes]
//	rewind undo [--dry-run]
//	rewind undo-restore
//	rewind back <n> [--both] [--in-place] [--dry-run] [--yes]
//	rewind status | validate | statusline
//	rewind gc [--keep N] [--max-age D] [--max-bytes SIZE] [--dry-run]
//	rewind pin <cp> [label] | unpin <cp>
//	rewind config [--tier T] [--register-hooks|--unregister-hooks] [--agent A]
//	rewind forks list | show <id>
//
// A checkpoint is named by id, unique id prefix, or @N (@0 is the newest).
// Every command takes --json and -C DIR. Exit status: 0 ok, 1 failure,
// 2 usage, 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

// Version is set at build time (-X rewind.dev/rewind/cli.Version=…).
var Version string

const name = "rewind"

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }

func withHint(err error, hint string) error { return hintError{err, hint} }

// env is what every command writes to.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// runner is one subcommand.
type runner interface {
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, e *env, args []string) error
}

type subcommand struct {
	name, usage, help string
	r                 runner
	hidden            bool
}

func subcommands() []subcommand {
	return []subcommand{
		{"init", "[--mode project|global] [--force]", "create the checkpoint store", &initCmd{}, false},
		{"save", "[description] [--transcript PATH] [--agent A] [--pin LABEL] [--full]", "take a checkpoint of the tree and the transcript", &saveCmd{}, false},
		{"list", "[--all] [-n N]", "list checkpoints, newest first", &listCmd{}, false},
		{"show", "<cp>", "show a checkpoint's metadata", &showCmd{}, false},
		{"diff", "<cp> [<cp2>] [--stat]", "changes between a checkpoint and the tree (or two checkpoints)", &diffCmd{}, false},
		{"restore", "<cp> [--code-only|--context-only] [--in-place] [--dry-run] [--yes]", "restore code and/or chat from a checkpoint", &restoreCmd{}, false},
		{"undo", "[--dry-run]", "undo the step the agent just took (code)", &undoCmd{}, false},
		{"undo-restore", "", "revert the last restore, tree and transcript", &undoRestoreCmd{}, false},
		{"back", "<n> [--both] [--in-place] [--dry-run] [--yes]", "rewind the chat to before the nth-most-recent prompt", &backCmd{}, false},
		{"status", "", "installation, store, session and hooks", &statusCmd{}, false},
		{"validate", "", "check the store end to end", &validateCmd{}, false},
		{"gc", "[--keep N] [--max-age D] [--max-bytes SIZE] [--dry-run]", "delete old checkpoints", &gcCmd{}, false},
		{"pin", "<cp> [label]", "keep a checkpoint through gc", &pinCmd{}, false},
		{"unpin", "<cp>", "let gc delete a checkpoint again", &pinCmd{unpin: true}, false},
		{"config", "[--tier T] [--register-hooks|--unregister-hooks] [--agent A]", "show or change the configuration", &configCmd{}, false},
		{"forks", "list | show <id>", "forks Rewind created", &forksCmd{}, false},
		{"statusline", "", "one line for an agent's status bar (reads session JSON on stdin)", &statuslineCmd{}, false},
		{"hook", "", "apply a rewind-hook request (JSON on stdin); used by rewind-hook", &hookCmd{}, true},
	}
}

// Main runs rewind with args (without the program name) and returns the
// exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	rootFS := flag.NewFlagSet(name, flag.ContinueOnError)
	rootFS.SetOutput(stderr)
	version := rootFS.Bool("version", false, "print the version and exit")
	var subs []*ffcli.Command
	byName := map[string]*flag.FlagSet{}
	for _, sc := range subcommands() {
		sc := sc
		fs := flag.NewFlagSet(name+" "+sc.name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		sc.r.RegisterFlags(fs)
		byName[sc.name] = fs
		cmd := &ffcli.Command{
			Name: sc.name, ShortUsage: name + " " + sc.name + " " + sc.usage, ShortHelp: sc.help, FlagSet: fs,
			Exec: func(ctx context.Context, args []string) error { return sc.r.Exec(ctx, e, args) },
		}
		if sc.hidden {
			cmd.ShortHelp = ""
		}
		subs = append(subs, cmd)
	}
	root := &ffcli.Command{
		Name:       name,
		ShortUsage: name + " <command> [flags]",
		ShortHelp:  "checkpoints of code and chat for AI coding agents",
		LongHelp: strings.TrimSpace(`
Rewind checkpoints the project tree and the agent's transcript together and
rewinds code, chat or both, without destroying anything: a chat rewind writes a
new forked session, a code restore first takes a backup, and 'rewind
undo-restore' reverts any restore. Checkpoints are named by id, a unique id
prefix, or @N (@0 is the newest). See rewind(1).`),
		FlagSet:     rootFS,
		Subcommands: subs,
		Exec: func(ctx context.Context, args []string) error {
			if *version {
				fmt.Fprintf(stdout, "%s %s\n", name, versionString())
				return nil
			}
			if len(args) > 0 {
				return usageError{fmt.Sprintf("unknown command %q; run '%s --help'", args[0], name)}
			}
			return flag.ErrHelp
		},
	}
	args = hoistCommon(args)
	if len(args) > 0 {
		if fs := byName[args[0]]; fs != nil {
			args = append([]string{args[0]}, permute(fs, args[1:])...)
		}
	}
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
		return 2
	}
	err := root.Run(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 2
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		// Interrupted (SIGINT, SIGTERM): whatever error the cut-short work
		// returned, the run ends as interrupted.
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return 130
	}
	return report(stderr, err)
}

func report(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
	var h hintError
	var sh *store.HintError
	var le *snap.LimitError
	var ie *snap.IndexError
	switch {
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "%s: hint: install git (it is asked for the index forms Rewind does not read), or run git there without them (git update-index --no-split-index)\n", name)
	case errors.As(err, &le):
		fmt.Fprintf(stderr, "%s: hint: leave it out with a pattern in a .rewindignore file, or raise \"limits\": {\"%s\": …} in the store's config.json (checkpoints record the limits they need)\n", name, le.Limit)
	case errors.As(err, &h):
		fmt.Fprintf(stderr, "%s: hint: %s\n", name, h.hint)
	case errors.As(err, &sh):
		fmt.Fprintf(stderr, "%s: hint: %s\n", name, sh.Hint)
	case errors.Is(err, store.ErrNoStore):
		fmt.Fprintf(stderr, "%s: hint: run 'rewind init' in the project first\n", name)
	case errors.Is(err, store.ErrNoCheckpoints):
		fmt.Fprintf(stderr, "%s: hint: run 'rewind save' or install the hooks ('rewind config --register-hooks')\n", name)
	}
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
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
// A "--" ends flags.
func permute(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
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
	return append(flags, pos...)
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
// hooks), else found from the current folder.
func (c *common) projectDir() (string, error) {
	dir := c.project
	if dir == "" {
		dir = os.Getenv("REWIND_PROJECT_DIR")
	}
	if dir == "" {
		dir = "."
	}
	return store.FindProject(dir)
}

// open opens the project's store; waiting for its lock, it says on e's
// stderr who holds it.
func (c *common) open(e *env) (*store.Store, error) {
	p, err := c.projectDir()
	if err != nil {
		return nil, err
	}
	s, err := store.Open(p)
	if err != nil {
		return nil, err
	}
	s.Waiting = func(holder string) {
		fmt.Fprintf(e.stderr, "%s: waiting for the store's lock, held by %s\n", name, holder)
	}
	return s, nil
}

func (e *env) json(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (e *env) table() *tabwriter.Writer { return tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0) }

// color wraps s in an ANSI colour on a terminal, never with NO_COLOR.
func (e *env) color(code, s string) string {
	if os.Getenv("NO_COLOR") != "" || !isTerminal(e.stdout) {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress says msg on stderr when work takes over a second on a terminal.
func (e *env) progress(msg string) (stop func()) {
	if !isTerminal(e.stderr) {
		return func() {}
	}
	t := time.AfterFunc(time.Second, func() { fmt.Fprintf(e.stderr, "%s: %s…\n", name, msg) })
	return func() { t.Stop() }
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

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func needArgs(args []string, lo, hi int, sub string) error {
	if len(args) < lo || len(args) > hi {
		return usageError{fmt.Sprintf("wrong number of arguments; run '%s %s --help'", name, sub)}
	}
	return nil
}

func versionString() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return s.Value[:12]
			}
		}
	}
	return "dev"
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
