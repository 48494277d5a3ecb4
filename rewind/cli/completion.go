package cli

import (
	"context"
	"embed"
	"flag"
	"io"
	"slices"
	"strings"
	"text/template"

	"github.com/peterbourgon/ff/v3/ffcli"

	forkcli "rewind.dev/fork/cli"
	hookcli "rewind.dev/hookd/cli"
	"rewind.dev/internal/cmdline"
	jsonlcli "rewind.dev/jsonl/cli"
	snapcli "rewind.dev/snap/cli"
)

// completionScripts are the scripts, one a shell, filled in from the command
// table and every command's flag set (completionTools).
//
//go:embed completion/*.tmpl
var completionScripts embed.FS

// shells are the shells 'rewind completion' writes a script for.
var shells = []string{"bash", "zsh", "fish"}

type completionCmd struct{}

func (c *completionCmd) RegisterFlags(fs *flag.FlagSet) {}

func (c *completionCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "completion"); err != nil {
		return err
	}
	if !slices.Contains(shells, args[0]) {
		return cmdline.Usagef("no completion for %q: %s", args[0], strings.Join(shells, ", "))
	}
	script, err := completionScript(args[0])
	if err != nil {
		return err
	}
	_, err = io.WriteString(e.stdout, script)
	return err
}

func (c *completionCmd) doc() doc {
	return doc{
		args:    strings.Join(shells, "|"),
		summary: "print the shell completion script for bash, zsh or fish",
		text: `Prints a script that completes the commands, flags and flag values of rewind
and its plumbing tools, and the checkpoints a command takes (@N, ids, pin
labels, :/), read from the project's store as you press tab. install.sh
installs it for each shell; to load it by hand:

  bash  source <(rewind completion bash), or write it to
        ~/.local/share/bash-completion/completions/rewind
  zsh   write it to _rewind in a folder on fpath, e.g.
        ~/.local/share/zsh/site-functions/_rewind with
        fpath=(~/.local/share/zsh/site-functions $fpath) before compinit in
        ~/.zshrc; or source <(rewind completion zsh) after compinit
  fish  rewind completion fish > ~/.config/fish/completions/rewind.fish`,
		examples: []string{
			"source <(rewind completion bash)",
			"rewind completion fish > ~/.config/fish/completions/rewind.fish",
		},
	}
}

// completionScript is the completion script for shell.
func completionScript(shell string) (string, error) {
	t, err := template.New(shell+".tmpl").Funcs(template.FuncMap{
		"names":        toolNames,
		"commandNames": commandNames,
		"flagNames":    flagNames,
		"takes":        compFlag.takes,
		"sq":           shellQuote1,
		"fq":           fishQuote,
		"described":    described,
		"fishFlag":     compFlag.fish,
	}).ParseFS(completionScripts, "completion/"+shell+".tmpl")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, completionTools()); err != nil {
		return "", err
	}
	return b.String(), nil
}

// compTool is one binary as the completion scripts know it.
type compTool struct {
	Name     string
	Root     []compFlag // the flags before a command
	Commands []compCommand
}

// compCommand is one command and its flags.
type compCommand struct {
	Name, Summary string
	Flags         []compFlag
}

// compFlag is one flag: its name as help shows it (--mode, -C), what it does
// in a few words, and what its value is.
type compFlag struct {
	Name, Desc string
	// Takes is "" for a flag that takes no value, else "dir" or "file"
	// (completed from the file system), "one" or "list" (one of Values, or a
	// comma-separated list of them), or "text" (anything: nothing to offer).
	Takes  string
	Values []string
}

// completionTools are rewind and its plumbing tools, from their command
// tables and flag sets.
func completionTools() []compTool {
	root := flag.NewFlagSet(name, flag.ContinueOnError)
	(&common{}).register(root)
	rw := compTool{Name: name, Root: append(flagsOf(root),
		compFlag{Name: "--version", Desc: "print the version"},
		compFlag{Name: "--help", Desc: "print the commands"})}
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.r.RegisterFlags(fs)
		rw.Commands = append(rw.Commands, compCommand{Name: c.name, Summary: c.r.doc().summary, Flags: flagsOf(fs)})
	}
	rw.Commands = append(rw.Commands, compCommand{Name: "help", Summary: "print the commands, or a command's flags and examples"})
	tools := []compTool{rw}
	for _, tree := range []*ffcli.Command{snapcli.Commands(), jsonlcli.Commands(), forkcli.Commands(), hookcli.Commands()} {
		t := compTool{Name: tree.Name, Root: append(flagsOf(tree.FlagSet),
			compFlag{Name: "--version", Desc: "print the version"},
			compFlag{Name: "--help", Desc: "print the usage"})}
		for _, c := range tree.Subcommands {
			t.Commands = append(t.Commands, compCommand{Name: c.Name, Summary: c.ShortHelp, Flags: flagsOf(c.FlagSet)})
		}
		tools = append(tools, t)
	}
	return tools
}

// flagsOf is fs's flags, the ones every command takes (-C, --json) last, as
// help lists them.
func flagsOf(fs *flag.FlagSet) []compFlag {
	var own, shared []compFlag
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		cf := compFlag{Name: flagName(f.Name), Desc: shortUsage(usage)}
		values, list := cmdline.ChoicesOf(f)
		switch {
		case isBool(f):
		case values != nil && list:
			cf.Takes, cf.Values = "list", values
		case values != nil:
			cf.Takes, cf.Values = "one", values
		default:
			cf.Takes = valueKind(f)
		}
		if slices.Contains(commonFlags, f.Name) {
			shared = append(shared, cf)
		} else {
			own = append(own, cf)
		}
	})
	return append(own, shared...)
}

// valueKind is how a flag's value is completed, going by the name its usage
// gives the value: DIR a folder; FILE, PATH, TRANSCRIPT or a .gz a file;
// anything else (N, TEXT, LABEL) is the person's to type.
func valueKind(f *flag.Flag) string {
	v, _ := flag.UnquoteUsage(f)
	v = strings.ToUpper(v)
	switch {
	case strings.HasSuffix(v, "DIR") || strings.HasSuffix(v, "FOLDER"):
		return "dir"
	case strings.Contains(v, "FILE") || strings.Contains(v, "PATH") || strings.Contains(v, "TRANSCRIPT") || strings.HasSuffix(v, ".GZ"):
		return "file"
	}
	return "text"
}

// shortUsage is a flag's usage up to its first pause: what zsh and fish show
// beside it.
func shortUsage(usage string) string {
	for _, sep := range []string{"; ", ": ", " ("} {
		if i := strings.Index(usage, sep); i > 0 {
			usage = usage[:i]
		}
	}
	return oneLine(usage, 70)
}

// takes is what the scripts' __rewind_takes says of the flag: its kind, and
// for "one" and "list" the values after it.
func (f compFlag) takes() string {
	return strings.Join(append([]string{f.Takes}, f.Values...), " ")
}

// fish is the flag's part of fish's complete command: its name, what its
// value takes, and its description.
func (f compFlag) fish() string {
	var b strings.Builder
	n := strings.TrimLeft(f.Name, "-")
	if len(n) == 1 {
		b.WriteString("-s " + n)
	} else {
		b.WriteString("-l " + n)
	}
	switch f.Takes {
	case "dir":
		b.WriteString(" -x -a '(__fish_complete_directories (commandline -ct))'")
	case "file":
		b.WriteString(" -r -F")
	case "text":
		b.WriteString(" -x")
	case "one": // (each value with an empty description: else fish shows the flag's beside it)
		b.WriteString(" -x -a " + fishQuote(strings.Join(f.Values, `\t `)+`\t`))
	case "list":
		b.WriteString(" -x -a " + fishQuote("(__rewind_list "+strings.Join(f.Values, " ")+")"))
	}
	if f.Desc != "" {
		b.WriteString(" -d " + fishQuote(f.Desc))
	}
	return b.String()
}

func toolNames(tools []compTool) string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return strings.Join(n, " ")
}

func commandNames(t compTool) string {
	var n []string
	for _, c := range t.Commands {
		n = append(n, c.Name)
	}
	return strings.Join(n, " ")
}

func flagNames(flags []compFlag) string {
	var n []string
	for _, f := range flags {
		n = append(n, f.Name)
	}
	return strings.Join(n, " ")
}

// described is name:desc, as zsh's _describe takes it (a colon in the name
// escaped).
func described(name, desc string) string {
	name = strings.ReplaceAll(name, ":", `\:`)
	if desc == "" {
		return name
	}
	return name + ":" + desc
}

// shellQuote1 quotes s in single quotes for bash and zsh, always.
func shellQuote1(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s in single quotes for fish, which escapes \ and ' inside
// them.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
