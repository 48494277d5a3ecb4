// Package cli is the rewind-hook command, importable so tests (and the
// rewind porcelain's tests) run it in-process.
//
//	rewind-hook [--agent AGENT] [--dry-run]                        (dispatch on hook_event_name)
//	rewind-hook session-start|user-prompt-submit|pre-tool-use|post-tool-use|stop|pre-compact|session-end
//	            [--agent AGENT] [--dry-run]
//	rewind-hook register   [--agents claude,droid|all|none] [--tier T] [--hook PATH] [--settings FILE]
//	rewind-hook unregister [--agents claude,droid|all] [--settings FILE]
//
// As a hook it reads the agent's JSON on stdin, decides what the event
// calls for under the tier, appends the session's exports to the agent's
// env file at SessionStart, and hands the store work to the rewind binary
// beside it. It never exits 2 (which would block the agent), prints nothing
// on stdout, and logs every run to ~/.rewind/logs/hook.log. Exit status: 0
// ok, 1 an internal error (one line on stderr), 2 usage (register and
// unregister only), 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/hookd"
)

// Version is set at build time (-X rewind.dev/hookd/cli.Version=…).
var Version string

const name = "rewind-hook"

// usageError is bad command-line input: exit status 2 — except for hook
// actions, which must never return 2 to an agent.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// hintError carries a hint for the person at the terminal.
type hintError struct {
	err  error
	hint string
}

func (e hintError) Error() string { return e.err.Error() }
func (e hintError) Unwrap() error { return e.err }

func withHint(err error, hint string) error { return hintError{err, hint} }

// hookFailure marks an error of a hook action: it was logged already and
// exits 1, whatever it wraps.
type hookFailure struct{ err error }

func (e hookFailure) Error() string { return e.err.Error() }
func (e hookFailure) Unwrap() error { return e.err }

type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	out            *json.Encoder
	getenv         func(string) string
}

// Main runs rewind-hook with args (without the program name) and returns
// the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// A panic would exit 2, which blocks the agent's tool: report it as a
	// failure instead.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s: error: internal error: %v\n", name, r)
			code = failStatus(args, 1)
		}
	}()
	out := json.NewEncoder(stdout)
	out.SetEscapeHTML(false)
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, out: out, getenv: os.Getenv}

	rootFS := flag.NewFlagSet(name, flag.ContinueOnError)
	rootFS.SetOutput(stderr)
	version := rootFS.Bool("version", false, "print the version and exit")
	dispatch := &hookCmd{}
	dispatch.RegisterFlags(rootFS)
	var subs []*ffcli.Command
	for _, action := range hookd.Actions() {
		event, _ := hookd.EventForAction(action)
		subs = append(subs, command(e, action, "[--agent AGENT] [--dry-run] < hook.json",
			"handle the agent's "+event+" hook", &hookCmd{action: action}))
	}
	subs = append(subs,
		command(e, "register", "[--agents claude,droid|all|none] [--tier T] [--hook PATH] [--settings FILE]",
			"register rewind-hook in the agents' settings and record the tier", &registerCmd{}),
		command(e, "unregister", "[--agents claude,droid|all] [--settings FILE]",
			"remove Rewind's hooks from the agents' settings", &unregisterCmd{}),
	)
	root := &ffcli.Command{
		Name:       name,
		ShortUsage: name + " [action] [--agent AGENT] [--dry-run] < hook.json",
		ShortHelp:  "Rewind's hook for coding agents: " + strings.Join(hookd.AgentNames(), ", "),
		LongHelp: strings.TrimSpace(`
Reads the agent's hook JSON on stdin; without an action it dispatches on
hook_event_name. Checkpoints follow the tier in ~/.rewind/config.json (a
project's .agent/rewind/config.json may override it); the store work is done
by the rewind binary installed beside rewind-hook. See rewind-hook(1).`),
		FlagSet:     rootFS,
		Subcommands: subs,
		Exec: func(ctx context.Context, args []string) error {
			if *version {
				fmt.Fprintf(stdout, "%s %s\n", name, versionString())
				return nil
			}
			if len(args) > 0 {
				return usageError{fmt.Sprintf("unknown action %q; run '%s --help'", args[0], name)}
			}
			return dispatch.Exec(ctx, e, nil)
		},
	}
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
		return failStatus(args, 2)
	}
	err := root.Run(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return failStatus(args, 130)
	}
	var hf hookFailure
	if errors.As(err, &hf) {
		fmt.Fprintf(stderr, "%s: error: %s\n", name, oneLine(err.Error()))
		return failStatus(args, 1)
	}
	fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
	var h hintError
	if errors.As(err, &h) {
		fmt.Fprintf(stderr, "%s: hint: %s\n", name, h.hint)
	}
	var u usageError
	if errors.As(err, &u) {
		return failStatus(args, 2)
	}
	return failStatus(args, 1)
}

// failStatus is the exit status of a failed run that would otherwise exit
// with code. register and unregister keep it. Anything an agent may have
// run never exits 2, which blocks the tool or prompt in Claude Code, Codex
// and Gemini CLI, and exits 0 when --agent names an agent that fails closed
// (Copilot CLI denies the tool on any non-zero exit): the failure is in
// hook.log and on stderr. Only the command word and --agent decide.
func failStatus(args []string, code int) int {
	if len(args) > 0 && (args[0] == "register" || args[0] == "unregister") {
		return code
	}
	for i, a := range args {
		agent, ok := strings.CutPrefix(a, "--agent=")
		if !ok && (a == "--agent" || a == "-agent") && i+1 < len(args) {
			agent, ok = args[i+1], true
		}
		if ok {
			if p, err := hookd.LookupAgent(agent); err == nil && p.FailsClosed {
				return 0
			}
		}
	}
	if code == 2 {
		return 1
	}
	return code
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// runner is one subcommand's configuration.
type runner interface {
	RegisterFlags(fs *flag.FlagSet)
	Exec(ctx context.Context, e *env, args []string) error
}

func command(e *env, sub, usage, help string, r runner) *ffcli.Command {
	fs := flag.NewFlagSet(name+" "+sub, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	r.RegisterFlags(fs)
	return &ffcli.Command{
		Name:       sub,
		ShortUsage: name + " " + sub + " " + usage,
		ShortHelp:  help,
		FlagSet:    fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("%s takes no arguments, got %q; run '%s %s --help'", sub, args[0], name, sub)}
			}
			return r.Exec(ctx, e, args)
		},
	}
}

func versionString() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	return "dev"
}
