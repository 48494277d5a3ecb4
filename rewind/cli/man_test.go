package cli

import (
	"bufio"
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"

	forkcli "rewind.dev/fork/cli"
	hookcli "rewind.dev/hookd/cli"
	jsonlcli "rewind.dev/jsonl/cli"
	snapcli "rewind.dev/snap/cli"
)

// Every flag a command accepts is in its man page and its --help, and
// nothing else is: no flag is documented that the command does not accept.
// For each binary the command table is walked and each command's flag set
// built; the page's SYNOPSIS entry for the command must show exactly those
// flags (rewind's --json and -C, which every command takes, are said once
// in DESCRIPTION), and any flag the page names elsewhere — rewind's
// Commands list, the plumbing pages' OPTIONS, a sentence — must be one that
// the commands it is said of accept.
func TestManPagesHoldEveryFlag(t *testing.T) {
	t.Run("rewind", func(t *testing.T) {
		page := readMan(t, name)
		accepted := map[string][]string{}
		for _, c := range commands() {
			fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
			c.r.RegisterFlags(fs)
			accepted[c.name] = flagSet(fs)
		}
		accepted["help"] = nil

		// The flags every command takes, and the commands said not to.
		except := page.everyCommandBut(t)
		for cmd, flags := range accepted {
			if cmd == "help" {
				continue
			}
			hasCommon := slices.Contains(flags, "C") && slices.Contains(flags, "json")
			switch {
			case slices.Contains(except, cmd) && (slices.Contains(flags, "C") || slices.Contains(flags, "json")):
				t.Errorf("rewind(1) says %s takes neither --json nor -C; it takes %q", cmd, flags)
			case !slices.Contains(except, cmd) && !hasCommon:
				t.Errorf("rewind(1) says every command takes --json and -C, but %s takes %q (name it after \"Every command but\")", cmd, flags)
			}
		}
		common := func(cmd string, flags []string) []string {
			if slices.Contains(except, cmd) {
				return flags
			}
			return slices.DeleteFunc(slices.Clone(flags), func(f string) bool { return slices.Contains(commonFlags, f) })
		}
		page.checkSynopsis(t, accepted, common)
		page.checkMentions(t, accepted, []string{"version", "help", "h"})
		for cmd, flags := range accepted {
			if cmd == "help" {
				continue
			}
			var stdout, stderr strings.Builder
			if code := Main(context.Background(), []string{cmd, "--help"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
				t.Fatalf("rewind %s --help: exit %d: %s", cmd, code, stderr.String())
			}
			checkHelp(t, "rewind "+cmd, stdout.String(), flags)
		}
	})
	for _, tree := range []*ffcli.Command{snapcli.Commands(), jsonlcli.Commands(), forkcli.Commands(), hookcli.Commands()} {
		t.Run(tree.Name, func(t *testing.T) {
			page := readMan(t, tree.Name)
			accepted := map[string][]string{"": append(flagSet(tree.FlagSet), "version")}
			for _, c := range tree.Subcommands {
				accepted[c.Name] = flagSet(c.FlagSet)
			}
			page.checkSynopsis(t, accepted, func(_ string, flags []string) []string { return flags })
			page.checkMentions(t, accepted, []string{"help", "h"})
			main := map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{
				"rewind-snap": snapcli.Main, "rewind-jsonl": jsonlcli.Main, "rewind-fork": forkcli.Main, "rewind-hook": hookcli.Main,
			}[tree.Name]
			for cmd, flags := range accepted {
				var stdout, stderr strings.Builder
				args := []string{"--help"}
				if cmd != "" {
					args = []string{cmd, "--help"}
				}
				main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
				checkHelp(t, strings.TrimSpace(tree.Name+" "+cmd), stderr.String(), flags)
			}
		})
	}
}

// flagSet is the names of fs's flags, sorted.
func flagSet(fs *flag.FlagSet) []string {
	var n []string
	if fs != nil {
		fs.VisitAll(func(f *flag.Flag) { n = append(n, f.Name) })
	}
	sort.Strings(n)
	return n
}

// checkHelp holds what --help prints to the command's flags: its FLAGS
// section lists each exactly, and its examples use no other.
func checkHelp(t *testing.T, cmd, help string, flags []string) {
	t.Helper()
	listed := map[string]bool{}
	section := ""
	line := regexp.MustCompile(`^  --?([A-Za-z][\w-]*)`)
	for _, l := range strings.Split(help, "\n") {
		if l != "" && l[0] != ' ' {
			section = l
			continue
		}
		switch section {
		case "FLAGS":
			if m := line.FindStringSubmatch(l); m != nil {
				listed[m[1]] = true
			}
		case "EXAMPLES":
			words := strings.Fields(strings.Split(l, "#")[0])
			if len(words) < 2 || words[0]+" "+words[1] != cmd {
				continue
			}
			for _, w := range words[2:] {
				if w == "--" || w == "|" || w == ";" || w == "&&" {
					break
				}
				if n, ok := strings.CutPrefix(w, "-"); ok && len(n) > 0 {
					n, _, _ = strings.Cut(strings.TrimPrefix(n, "-"), "=")
					if !slices.Contains(flags, n) {
						t.Errorf("%s --help: example %q uses %s, which it does not take", cmd, strings.TrimSpace(l), w)
					}
				}
			}
		}
	}
	for _, f := range flags {
		if !listed[f] && f != "version" {
			t.Errorf("%s --help does not list %s", cmd, flagName(f))
		}
		delete(listed, f)
	}
	for f := range listed {
		t.Errorf("%s --help lists %s, which it does not take", cmd, flagName(f))
	}
}

// manPage is a page's macro lines, each with the section it is in.
type manPage struct {
	name  string
	lines []manLine
}

type manLine struct {
	n            int
	sh, ss       string // the .Sh and .Ss it is under
	macro        string // the line's macro ("Nm", "It", "Op"…), "" for text
	words        []string
	text         string
	inSynopsisOf []string // SYNOPSIS: the commands of the entry it is in ("" for the tool itself)
}

func readMan(t *testing.T, tool string) *manPage {
	t.Helper()
	f, err := os.Open("../../man/" + tool + ".1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &manPage{name: tool + "(1)"}
	sh, ss := "", ""
	// A SYNOPSIS entry begins at .Nm; the words of the .Cm that opens it are
	// its commands (".Cm undo-restore | redo", going on on the next line after
	// a "|"); an entry that opens with a flag, or whose commands are optional
	// (.Oo), is also the tool's own ("").
	var entry []string
	opening := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := manLine{n: n, text: sc.Text()}
		if strings.HasPrefix(l.text, ".") && !strings.HasPrefix(l.text, `.\"`) {
			l.words = macroWords(l.text[1:])
			if len(l.words) > 0 {
				l.macro = l.words[0]
			}
		}
		switch l.macro {
		case "Sh":
			sh, ss = strings.Join(l.words[1:], " "), ""
		case "Ss":
			ss = strings.Join(l.words[1:], " ")
		}
		l.sh, l.ss = sh, ss
		if sh == "SYNOPSIS" {
			switch {
			case l.macro == "Nm":
				entry, opening = nil, true
			case opening && l.macro == "Oo":
				entry = append(entry, "")
			case opening && l.macro == "Cm":
				for _, w := range l.words[1:] {
					if w != "|" {
						entry = append(entry, w)
					}
				}
				opening = strings.HasSuffix(l.text, "|")
			case opening:
				if entry == nil {
					entry = []string{""}
				}
				opening = false
			}
			l.inSynopsisOf = entry
		}
		p.lines = append(p.lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// macroWords splits a macro line into words, as mdoc does: at blanks,
// with "…" one word.
func macroWords(s string) []string {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.Index(s[1:], `"`)
			if end < 0 {
				end = len(s) - 1
			}
			words = append(words, s[1:end+1])
			s = s[min(end+2, len(s)):]
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		words = append(words, s[:i])
		s = s[i:]
	}
	return words
}

// mdocMacros are the macros that end the arguments of the one before them.
var mdocMacros = map[string]bool{}

func init() {
	for _, m := range strings.Fields("Ad An Ap Ar At Bsx Bx Cd Cm Dq Dv Em Er Ev Fa Fl Fn Ft Fx Ic Lk Li Ms Mt Nm No Ns Nx Oc Oo Op Ox Pa Pc Pf Po Pq Qc Ql Qo Qq Sc So Sq Sx Sy Ta Tn Ux Va Xc Xo Xr Bro Brc Oo It") {
		mdocMacros[m] = true
	}
}

// flags returns the flags a macro line names (the arguments of Fl, without
// the dash Fl adds: "Fl -mode" is --mode, "mode"), each with the command a
// ".Cm save Fl -pin" on the same line says it is of ("" for none).
func (l manLine) flags() (names, of []string) {
	inFl, cmd := false, ""
	for i, w := range l.words {
		if mdocMacros[w] || i == 0 && l.macro != "" {
			inFl = w == "Fl"
			if w == "Cm" && i+1 < len(l.words) {
				cmd = l.words[i+1]
			}
			continue
		}
		if !inFl || strings.Trim(w, `|,;:.()[]`) == "" || w == `\-` || w == `\(en` {
			continue
		}
		names = append(names, strings.TrimPrefix(strings.ReplaceAll(w, `\-`, "-"), "-"))
		of = append(of, cmd)
	}
	return names, of
}

// everyCommandBut is the commands rewind(1)'s "Every command but … takes"
// names: those that take neither --json nor -C.
func (p *manPage) everyCommandBut(t *testing.T) []string {
	for i, l := range p.lines {
		if !strings.HasPrefix(l.text, "Every command") {
			continue
		}
		var but []string
		for _, m := range p.lines[i:] {
			if strings.HasPrefix(m.text, "takes") || strings.HasPrefix(m.text, "Every command takes") {
				return but
			}
			if m.macro == "Cm" {
				but = append(but, m.words[1])
			}
		}
	}
	t.Fatalf("%s: no sentence says which commands take --json and -C (\"Every command …\")", p.name)
	return nil
}

// checkSynopsis holds each command's SYNOPSIS entry to the flags it
// accepts (as own says of them: those not said once for all), and makes sure
// every command has one.
func (p *manPage) checkSynopsis(t *testing.T, accepted map[string][]string, own func(cmd string, flags []string) []string) {
	t.Helper()
	shown := map[string][]string{}
	for _, l := range p.lines {
		for _, cmd := range l.inSynopsisOf {
			if _, ok := shown[cmd]; !ok {
				shown[cmd] = []string{}
			}
			names, _ := l.flags()
			for _, n := range names {
				if !slices.Contains(shown[cmd], n) {
					shown[cmd] = append(shown[cmd], n)
				}
			}
		}
	}
	for cmd, flags := range accepted {
		want := own(cmd, flags)
		got, ok := shown[cmd]
		what := "rewind " + cmd
		if p.name != "rewind(1)" {
			what = strings.TrimSpace(strings.TrimSuffix(p.name, "(1)") + " " + cmd)
		}
		switch {
		case !ok && cmd == "" && len(want) == 1 && want[0] == "version":
			t.Errorf("%s: SYNOPSIS has no entry for %s --version", p.name, what)
		case !ok:
			t.Errorf("%s: SYNOPSIS has no entry for %s", p.name, what)
		default:
			sort.Strings(got)
			sort.Strings(want)
			for _, f := range want {
				if !slices.Contains(got, f) {
					t.Errorf("%s: SYNOPSIS does not show %s %s", p.name, what, flagName(f))
				}
			}
			for _, f := range got {
				if !slices.Contains(flags, f) {
					t.Errorf("%s: SYNOPSIS shows %s %s, which it does not take", p.name, what, flagName(f))
				}
			}
		}
		delete(shown, cmd)
	}
	for cmd := range shown {
		t.Errorf("%s: SYNOPSIS shows a command %q the tool does not have", p.name, cmd)
	}
}

// checkMentions holds every flag the page names outside SYNOPSIS to the
// commands it is said of: after ".Cm save" on its line, save; in a list item
// of commands (.It Cm save), those commands; an option's item (.It Fl
// -manifest, under OPTIONS) is said of every command its text names with
// .Cm; elsewhere, any command. anywhere are the flags every command takes
// without its flag set (--help).
func (p *manPage) checkMentions(t *testing.T, accepted map[string][]string, anywhere []string) {
	t.Helper()
	takes := func(f string, cmds ...string) bool {
		if slices.Contains(anywhere, f) {
			return true
		}
		if len(cmds) == 0 {
			for cmd := range accepted {
				cmds = append(cmds, cmd)
			}
		}
		for _, cmd := range cmds {
			if slices.Contains(accepted[cmd], f) {
				return true
			}
		}
		return false
	}
	isCommand := func(w string) bool { _, ok := accepted[w]; return ok && w != "" }
	var item []string  // the commands of the list item the line is in
	var option string  // the flag of the OPTIONS item the line is in
	var optionLine int // (where it is)
	var optionOf []string
	endOption := func() {
		for _, cmd := range optionOf {
			if !takes(option, cmd) {
				t.Errorf("%s:%d: %s is said of %s, which does not take it", p.name, optionLine, flagName(option), cmd)
			}
		}
		option, optionOf = "", nil
	}
	for _, l := range p.lines {
		if l.sh == "SYNOPSIS" {
			continue
		}
		switch l.macro {
		case "It", "Sh", "Ss", "El":
			endOption()
			item = nil
			if l.macro == "It" && len(l.words) > 2 && l.words[1] == "Cm" {
				for i, w := range l.words[1:] {
					if l.words[i] == "Cm" && isCommand(w) {
						item = append(item, w)
					}
				}
			}
			if l.macro == "It" && len(l.words) > 2 && l.words[1] == "Fl" && l.sh == "OPTIONS" {
				names, _ := l.flags()
				option, optionLine = names[0], l.n
			}
		}
		if option != "" {
			for i, w := range l.words {
				if i > 0 && l.words[i-1] == "Cm" && isCommand(w) && !slices.Contains(optionOf, w) {
					optionOf = append(optionOf, w)
				}
			}
		}
		names, of := l.flags()
		for i, f := range names {
			var ok bool
			switch {
			case isCommand(of[i]):
				ok = takes(f, of[i])
			case len(item) > 0:
				ok = takes(f, item...)
			default:
				ok = takes(f)
			}
			if !ok {
				what := "no command"
				if len(item) > 0 {
					what = strings.Join(item, ", ")
				} else if isCommand(of[i]) {
					what = of[i]
				}
				t.Errorf("%s:%d: %s is named where %s does not take it: %s", p.name, l.n, flagName(f), what, l.text)
			}
		}
	}
	endOption()
}

// Every page fits a terminal of 80 columns as mandoc sets it: a word it
// cannot break (a long literal, a line of an example) would run off the
// screen. (What groff says of the pages at that width, scripts/test asks it.)
func TestManPagesFit80Columns(t *testing.T) {
	if _, err := exec.LookPath("mandoc"); err != nil {
		t.Skip("mandoc is not installed (apt-get install mandoc)")
	}
	pages, err := filepath.Glob("../../man/*.1")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no man pages: %v", err)
	}
	overstrike := regexp.MustCompile(".\x08")
	for _, page := range pages {
		out, err := exec.Command("mandoc", "-T", "utf8", "-O", "width=80", page).Output()
		if err != nil {
			t.Fatalf("mandoc %s: %v", page, err)
		}
		for i, line := range strings.Split(overstrike.ReplaceAllString(string(out), ""), "\n") {
			if w := termColumns(line); w > 80 {
				t.Errorf("%s: line %d of the page is %d columns wide: %s", filepath.Base(page), i+1, w, strings.TrimSpace(line))
			}
		}
	}
}

// termColumns is how wide line is on a terminal, tabs set every 8 columns.
func termColumns(line string) int {
	w := 0
	for _, r := range line {
		if r == '\t' {
			w += 8 - w%8
		} else {
			w++
		}
	}
	return w
}
