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
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
)

const name = "rewind-hook"

// hookFailure marks an error of a hook action: it was logged already, and is said on one line
// (an agent shows it), whatever it wraps.
type hookFailure struct{ err error }

func (e hookFailure) Error() string { return oneLine(e.err.Error()) }
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
			fmt.Fprintf(stderr, "%s: error: internal error: %s\n", name, cmdline.QuoteText(fmt.Sprint(r)))
			code = failStatus(args, 1)
		}
	}()
	out := json.NewEncoder(stdout)
	out.SetEscapeHTML(false)
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, out: out, getenv: os.Getenv}
	tool := &cmdline.Tool{Name: name, Hint: hint(settingsRun(args))}
	return failStatus(args, tool.Run(ctx, commands(tool, e), args, stdout, stderr))
}

// Commands is the command tree Main runs, for what reads it without running it: rewind's
// shell completions and the test that holds the man page to the flags.
func Commands() *ffcli.Command {
	out := json.NewEncoder(io.Discard)
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, out: out, getenv: os.Getenv}
	return commands(&cmdline.Tool{Name: name}, e)
}

func commands(tool *cmdline.Tool, e *env) *ffcli.Command {
	rootFS := flag.NewFlagSet(name, flag.ContinueOnError)
	dispatch := &hookCmd{}
	dispatch.RegisterFlags(rootFS)
	var subs []*ffcli.Command
	for _, action := range hookd.Actions() {
		event, _ := hookd.EventForAction(action)
		subs = append(subs, command(tool, e, action, "[--agent AGENT] [--dry-run] < hook.json",
			"handle the agent's "+event+" hook", &hookCmd{action: action}))
	}
	subs = append(subs,
		command(tool, e, "register", "[--agents claude,droid|all|none] [--tier T] [--hook PATH] [--settings FILE]",
			"register rewind-hook in the agents' settings and record the tier", &registerCmd{}),
		command(tool, e, "unregister", "[--agents claude,droid|all] [--settings FILE]",
			"remove Rewind's hooks from the agents' settings", &unregisterCmd{}),
	)
	return &ffcli.Command{
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
			if len(args) > 0 {
				return cmdline.Usagef("unknown action %q; run '%s --help'", args[0], name)
			}
			return dispatch.Exec(ctx, e, nil)
		},
	}
}

// settingsRun: args run register or unregister, for a person; anything else is a hook action,
// which an agent may have run.
func settingsRun(args []string) bool {
	return len(args) > 0 && (args[0] == "register" || args[0] == "unregister")
}

// hint is rewind-hook's hint-of-error switch. A hook action's error is one line, without a
// hint: an agent shows it, or logs it.
func hint(settings bool) func(error) string {
	return func(err error) string {
		if !settings {
			return ""
		}
		return cmdline.HintOf(err)
	}
}

// failStatus is the exit status of a failed run that would otherwise exit
// with code. register and unregister keep it. Anything an agent may have
// run never exits 2, which blocks the tool or prompt in Claude Code, Codex
// and Gemini CLI, and exits 0 when --agent names an agent that fails closed
// (Copilot CLI denies the tool on any non-zero exit): the failure is in
// hook.log and on stderr. Only the command word and --agent decide.
func failStatus(args []string, code int) int {
	if settingsRun(args) {
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

func command(t *cmdline.Tool, e *env, sub, usage, help string, r runner) *ffcli.Command {
	return t.Command(cmdline.Command{Name: sub, Args: usage, Help: help, Flags: r.RegisterFlags,
		Exec: func(ctx context.Context, args []string) error { return r.Exec(ctx, e, args) }})
}
