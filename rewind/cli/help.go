package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"rewind.dev/internal/cmdline"
)

// rootHelp prints the command list.
func rootHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`rewind: checkpoints of code and chat for AI coding agents

USAGE
  rewind <command> [flags] [arguments]

Rewind checkpoints the project tree and the agent's transcript together and
rewinds code, chat or both, without destroying anything: a chat rewind writes
a new forked session, a code restore first takes a backup checkpoint, and
'rewind undo-restore' reverts a restore ('rewind redo' puts it back).
Checkpoints are named by @N, the Nth row of 'rewind list' (@0 is the
newest), :/TEXT (the newest whose prompt or description contains TEXT), id,
unique id prefix, pin label or description.

COMMANDS
`)
	var plumbing []command
	for _, c := range commands() {
		if c.plumbing {
			plumbing = append(plumbing, c)
			continue
		}
		fmt.Fprintf(&b, "  %-13s %s\n", c.name, c.r.doc().summary)
	}
	if len(plumbing) > 0 {
		b.WriteString("\nPLUMBING (run by other programs)\n")
		for _, c := range plumbing {
			fmt.Fprintf(&b, "  %-13s %s\n", c.name, c.r.doc().summary)
		}
	}
	// (A command that prints for something other than a person, such as a
	// status bar or a shell, takes neither.)
	var without []string
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.r.RegisterFlags(fs)
		if fs.Lookup("json") == nil {
			without = append(without, c.name)
		}
	}
	b.WriteString("\nFLAGS (every command")
	if len(without) > 0 {
		last := len(without) - 1
		b.WriteString(" but " + strings.Join(without[:last], ", "))
		if last > 0 {
			b.WriteString(" and ")
		}
		b.WriteString(without[last])
	}
	b.WriteString(`)
  --json        print JSON instead of text (and errors as one JSON object)
  -C DIR        work on the project in DIR
  --version     print the version

Run 'rewind help <command>' for a command's flags and examples; see rewind(1).
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// commandHelp prints one command's usage, text, flags and examples.
func commandHelp(w io.Writer, c command) error {
	d := c.r.doc()
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.r.RegisterFlags(fs)
	var b strings.Builder
	fmt.Fprintf(&b, "rewind %s: %s\n\nUSAGE\n  rewind %s", c.name, d.summary, c.name)
	if hasFlags(fs) {
		b.WriteString(" [flags]")
	}
	if d.args != "" {
		b.WriteString(" " + d.args)
	}
	b.WriteString("\n")
	if d.text != "" {
		b.WriteString("\n" + strings.TrimSpace(d.text) + "\n")
	}
	if hasFlags(fs) {
		b.WriteString("\nFLAGS\n")
		writeFlags(&b, fs)
	}
	if len(d.examples) > 0 {
		b.WriteString("\nEXAMPLES\n")
		for _, ex := range d.examples {
			b.WriteString("  " + ex + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// commonFlags are listed last: every command has them.
var commonFlags = []string{"json", "C"}

// writeFlags lists fs's flags as they are typed: --long, -x for one letter,
// with the value's name and a non-zero default.
func writeFlags(b *strings.Builder, fs *flag.FlagSet) {
	type row struct{ left, usage string }
	var own, shared []row
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		left := flagName(f.Name)
		if value != "" && !isBool(f) {
			left += " " + strings.ToUpper(value)
		}
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && !strings.Contains(usage, "default") {
			usage += " (default " + f.DefValue + ")"
		}
		width = max(width, len(left))
		r := row{left, usage}
		for _, c := range commonFlags {
			if f.Name == c {
				shared = append(shared, r)
				return
			}
		}
		own = append(own, r)
	})
	for _, r := range append(own, shared...) {
		fmt.Fprintf(b, "  %-*s  %s\n", width, r.left, r.usage)
	}
}

func flagName(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

func isBool(f *flag.Flag) bool {
	bf, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && bf.IsBoolFlag()
}

// unknownCommand is the usage error for a command that does not exist, with
// the nearest one as a hint.
func unknownCommand(word string) error {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	err := cmdline.Usagef("unknown command %q", word)
	if s := nearest(word, append(names, "help")); s != "" {
		return cmdline.WithHint(err, fmt.Sprintf("did you mean 'rewind %s'?", s))
	}
	return cmdline.WithHint(err, "run 'rewind help' for the list of commands")
}

// flagError turns the flag package's parse error into a usage error naming
// the command, with the nearest flag when one was misspelt.
func flagError(fs *flag.FlagSet, c command, err error) error {
	msg := err.Error()
	hint := fmt.Sprintf("run 'rewind help %s'", c.name)
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		bad = strings.TrimLeft(bad, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := nearest(bad, names); s != "" {
			hint = fmt.Sprintf("did you mean %s?", flagName(s))
		}
		return cmdline.WithHint(cmdline.Usagef("unknown flag %s for 'rewind %s'", flagName(bad), c.name), hint)
	}
	return cmdline.WithHint(cmdline.Usagef("rewind %s: %s", c.name, msg), hint)
}

// nearest is the candidate closest to word by edit distance, when it is
// close enough to be a slip (at most a third of the word), or a unique
// candidate word starts; "" otherwise.
func nearest(word string, candidates []string) string {
	best, bestD := "", len(word)/3+1
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	var prefixed []string
	for _, c := range candidates {
		if len(word) >= 2 && strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count
// one), the usual measure of a typing slip.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
