package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

// completeCommand is the hidden command the completion scripts run for a
// command's arguments: 'rewind __complete WORD…' (completion.go).
const completeCommand = "__complete"

// How the word at the cursor is completed: the first line of what
// 'rewind __complete' prints.
const (
	completeWords = "words" // the lines that follow, each a word, a tab and what it names
	completeFiles = "files" // the shell's file names
	completeDirs  = "dirs"  // the shell's folder names
)

// refsShown is how many @N (and ids, with what they name) a completion offers
// unless more of them are typed: the rows 'rewind list' shows.
const refsShown = listDefault

// complete is 'rewind __complete WORD…': WORDs are the command line after
// "rewind", as typed, up to the word at the cursor (the last, "" for a new
// one), which is an argument of a command, not a flag (the scripts complete
// those from the flags they hold). It prints how to complete that word, then
// for completeWords one candidate a line, with a tab and what it names where
// that helps: checkpoint references (@N, ids, pin labels, ":/") read from
// the store, the words a command takes (forks list, store move global),
// fork session ids. It never fails and says nothing on stderr: without a
// store, or with words it cannot read, there is nothing to offer.
func complete(e *env, words []string) error {
	e = &env{stdin: e.stdin, stdout: e.stdout, stderr: io.Discard, getenv: e.getenv}
	for i, w := range words {
		words[i] = unquoteWord(w)
	}
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	before := hoistCommon(words[:len(words)-1])
	out := &completions{cur: cur}
	switch {
	case len(before) == 0, before[0] == "help" && len(before) == 1:
		for _, c := range commands() {
			out.word(c.name, c.r.doc().summary)
		}
	default:
		c, ok := lookup(before[0])
		if !ok {
			break
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		c.r.RegisterFlags(fs)
		args, project := positional(fs, before[1:])
		_, paths := c.r.(pathTaker)
		if paths && slices.Contains(args, "--") {
			out.kind = completeFiles
			break
		}
		for _, a := range parseArgs(c.r.doc().args).next(args) {
			out.arg(e, a, project)
		}
	}
	return out.write(e.stdout)
}

// completions collects what the word at the cursor, cur, may become.
type completions struct {
	cur   string
	kind  string
	lines []string
	seen  map[string]bool
}

// word offers w, naming what it is (desc, shown by zsh and fish), when it
// starts with what is typed. A word that would have to be escaped to be
// shown (a control character, from a damaged history) is not offered.
func (o *completions) word(w, desc string) {
	if !strings.HasPrefix(w, o.cur) || o.seen[w] || cmdline.QuoteText(w) != w {
		return
	}
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	o.seen[w] = true
	if desc != "" {
		w += "\t" + oneLine(cmdline.QuoteText(desc), 60)
	}
	o.lines = append(o.lines, w)
}

// arg offers what the argument a of the command's grammar may be.
func (o *completions) arg(e *env, a string, project string) {
	switch {
	case a == "--": // (offered as a flag is, once typed: not among the names)
	case a == "<cp>" || a == "<cp2>":
		o.refs(e, project)
	case a == "<session-id>":
		o.forks(e, project)
	case a == "<path>" || a == "<file>":
		o.kind = completeFiles
	case a == "<old-folder>":
		o.kind = completeDirs
	case strings.HasPrefix(a, store.SearchPrefix): // :/<text>
		o.word(store.SearchPrefix, "the newest prompt that has the text that follows")
	case strings.HasPrefix(a, "<"): // words of the person's own: a description, a label, a count
	default:
		for _, w := range strings.Split(a, "|") {
			o.word(w, "")
		}
	}
}

// write prints the kind of completion, then the words. Words win over
// file names where a command takes either (diff @0 <cp2> or --).
func (o *completions) write(w io.Writer) error {
	kind := o.kind
	if kind == "" || len(o.lines) > 0 {
		kind = completeWords
	}
	var b strings.Builder
	b.WriteString(kind + "\n")
	if kind == completeWords {
		for _, l := range o.lines {
			b.WriteString(l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// refs offers the checkpoint references that start with what is typed:
// @N for the newest rows of 'rewind list' (more when a larger N is being
// typed), ids once a digit is typed, ":/" and the pin labels. Only the
// metadata of the checkpoints offered with @N is read, and of the pinned
// ones (Store.Pinned: a pin may be old).
func (o *completions) refs(e *env, project string) {
	s, err := (&common{project: project}).open(e)
	if err != nil {
		return
	}
	ids, err := s.IDs()
	if err != nil || len(ids) == 0 {
		return
	}
	shown := refsShown
	if n, err := strconv.Atoi(strings.TrimPrefix(o.cur, "@")); err == nil && strings.HasPrefix(o.cur, "@") && n >= shown {
		shown = n + 1
	}
	switch {
	case strings.HasPrefix(o.cur, "@"), o.cur == "":
		n := 0
		for i := len(ids) - 1; i >= 0 && n < shown; i-- {
			cp, err := s.Load(ids[i])
			if err != nil || cp.Backup() {
				continue
			}
			o.word(fmt.Sprintf("@%d", n), refText(cp))
			n++
		}
		if o.cur != "" {
			return
		}
	case o.cur[0] >= '0' && o.cur[0] <= '9':
		for i := len(ids) - 1; i >= 0; i-- {
			if !strings.HasPrefix(ids[i], o.cur) {
				continue
			}
			desc := ""
			if len(o.lines) < shown {
				if cp, err := s.Load(ids[i]); err == nil {
					desc = refText(cp)
				}
			}
			o.word(ids[i], desc)
		}
		return
	}
	o.word(store.SearchPrefix, "the newest checkpoint whose prompt has the text that follows")
	pinned, _ := s.Pinned()
	for _, cp := range pinned {
		o.word(cp.Pinned, refText(cp))
	}
}

// refText says which checkpoint a completion offers: its age (first: what
// follows may be cut) and its prompt, as list shows it.
func refText(cp *store.Checkpoint) string {
	return strings.TrimSpace(ago(cp.CreatedAt) + ": " + promptText(cp))
}

// forks offers the session ids of the forks Rewind wrote.
func (o *completions) forks(e *env, project string) {
	s, err := (&common{project: project}).open(e)
	if err != nil {
		return
	}
	h, err := s.History()
	if err != nil {
		return
	}
	for _, f := range h.Forks() {
		o.word(f.SessionID, f.Title)
	}
}

// positional returns the arguments among words, the flags and their values
// taken out as the command's flag set would take them ("--" kept, and what
// follows it), and the -C folder.
func positional(fs *flag.FlagSet, words []string) (args []string, project string) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			return append(args, words[i:]...), project
		}
		if len(w) < 2 || w[0] != '-' {
			args = append(args, w)
			continue
		}
		nameOnly, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		f := fs.Lookup(nameOnly)
		if f == nil || isBool(f) {
			continue
		}
		if !hasValue && i+1 < len(words) {
			i++
			value = words[i]
		}
		if nameOnly == "C" {
			project = value
		}
	}
	return args, project
}

// unquoteWord is a word as the shell passes it to the command: bash hands
// the completion its words as typed, quotes and backslashes included.
func unquoteWord(w string) string {
	if !strings.ContainsAny(w, `'"\`) {
		return w
	}
	var b strings.Builder
	var quote rune
	escaped := false
	for _, r := range w {
		switch {
		case escaped:
			b.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped = true
		case quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case r == quote:
			quote = 0
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// argGrammar is a command's arguments as doc.args writes them, e.g.
// "<cp> [<cp2>] [-- <path>...]", "list | show <session-id>",
// "[move project|global | attach <old-folder>]": literal words, placeholders
// in angle brackets, "a|b" for one of two words, "[…]" for what may be left
// out, " | " between alternatives, "..." after what may be repeated. It is
// held as every sequence of arguments it allows.
type argGrammar [][]argTerm

// argTerm is one argument of a sequence: a literal word ("list",
// "project|global", "--"), a placeholder ("<cp>") or ":/<text>".
type argTerm struct {
	word   string
	repeat bool // "<path>...": any number of them ends the sequence
}

// parseArgs reads doc.args (see argGrammar). Brackets that do not pair are
// read as closed at the end.
func parseArgs(s string) argGrammar {
	g, _ := parseAlts(strings.Fields(strings.NewReplacer("[", " [ ", "]", " ] ").Replace(s)))
	return g
}

// parseAlts reads alternatives separated by "|" up to a "]" or the end, and
// returns what is left after it.
func parseAlts(toks []string) (argGrammar, []string) {
	var all argGrammar
	for {
		seqs, rest := parseSeq(toks)
		all = append(all, seqs...)
		if len(rest) == 0 || rest[0] != "|" {
			return all, rest
		}
		toks = rest[1:]
	}
}

// parseSeq reads terms and bracketed options up to a "|", a "]" or the end.
func parseSeq(toks []string) (argGrammar, []string) {
	seqs := argGrammar{nil}
	for len(toks) > 0 && toks[0] != "|" && toks[0] != "]" {
		var opts argGrammar
		if toks[0] == "[" {
			inner, rest := parseAlts(toks[1:])
			if len(rest) > 0 && rest[0] == "]" {
				rest = rest[1:]
			}
			opts, toks = append(inner, nil), rest
		} else {
			w, repeat := strings.CutSuffix(toks[0], "...")
			opts, toks = argGrammar{{{word: w, repeat: repeat}}}, toks[1:]
		}
		var next argGrammar
		for _, s := range seqs {
			for _, o := range opts {
				next = append(next, append(slices.Clip(s), o...))
			}
		}
		seqs = next
	}
	return seqs, toks
}

// next returns the terms that may follow the arguments typed, over every
// sequence they begin.
func (g argGrammar) next(typed []string) []string {
	var out []string
	for _, seq := range g {
		i := 0
		ok := true
		for _, w := range typed {
			if i == len(seq) || !seq[i].matches(w) {
				ok = false
				break
			}
			if !seq[i].repeat {
				i++
			}
		}
		if ok && i < len(seq) && !slices.Contains(out, seq[i].word) {
			out = append(out, seq[i].word)
		}
	}
	return out
}

func (t argTerm) matches(w string) bool {
	switch {
	case strings.HasPrefix(t.word, store.SearchPrefix):
		return strings.HasPrefix(w, store.SearchPrefix)
	case strings.HasPrefix(t.word, "<"):
		return w != "--"
	}
	return slices.Contains(strings.Split(t.word, "|"), w)
}
