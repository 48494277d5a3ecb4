package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type exportCmd struct {
	common
	out      string
	force    bool
	redact   bool
	patterns stringList
}

// stringList is a flag that may be given many times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func (c *exportCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.out, "o", "", "write the archive to `FILE` (default: rewind-<checkpoint id>.tar in the current folder, or, inside the project, in the user's exports folder)")
	fs.BoolVar(&c.force, "force", false, "replace FILE when it exists")
	fs.BoolVar(&c.redact, "redact", false, "leave out the files the export.redact patterns match (.env, keys, …) and mask the secrets found in the rest and in the conversation")
	fs.Var(&c.patterns, "redact-pattern", "also leave out (with --redact) or warn about files matching this gitignore-style `PATTERN` (repeatable)")
}

func (c *exportCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "export"); err != nil {
		return err
	}
	s, cp, err := c.openAt(e, args[0])
	if err != nil {
		return err
	}
	out := c.out
	if out == "" {
		wd, _, err := currentDir()
		if err != nil {
			return err
		}
		if out, err = s.ExportPath(cp, wd); err != nil {
			return err
		}
	} else if out, err = absPath(out); err != nil {
		return err
	}
	ctx, stop := e.progress(ctx, "exporting")
	res, err := s.Export(ctx, cp, store.ExportOptions{Out: out, Force: c.force, Redact: c.redact, Patterns: c.patterns})
	stop()
	if err != nil {
		return err
	}
	found := 0
	if !c.redact {
		found = res.Found.Count()
	}
	if len(res.Secrets) > 0 {
		fmt.Fprintf(e.stderr, "%s: warning: the archive holds %s that may hold secrets: %s\n", name, count(len(res.Secrets), "file"), listSome(res.Secrets, 20))
	}
	if found > 0 {
		fmt.Fprintf(e.stderr, "%s: warning: the archive holds %s: %s\n", name, count(found, "secret"), secretsFound(res.Found))
	}
	if len(res.Secrets) > 0 || found > 0 {
		what := "leaves those files out and masks the secrets"
		if found == 0 {
			what = "leaves them out"
		} else if len(res.Secrets) == 0 {
			what = "masks them"
		}
		fmt.Fprintf(e.stderr, "%s: hint: 'rewind export %s --redact' %s\n", name, cmdline.QuoteText(args[0]), what)
	}
	if c.json {
		return e.json(res)
	}
	if len(res.Redacted) > 0 {
		fmt.Fprintf(e.stdout, "Left out (--redact): %s\n", listSome(res.Redacted, 20))
	}
	if m := masked(res); m != "" {
		fmt.Fprintf(e.stdout, "Masked (--redact): %s\n", m)
	}
	conv := "no conversation"
	if res.Agent != "" {
		conv = "the " + cmdline.QuoteText(res.Agent) + " conversation"
		if res.SessionID != "" {
			conv += " (session " + cmdline.QuoteText(res.SessionID) + ")"
		}
	}
	fmt.Fprintf(e.stdout, "Exported %s: %s and %s, %s, to %s\n", cmdline.QuoteText(res.Checkpoint), count(res.Files, "file"), conv, humanBytes(res.Bytes), cmdline.QuotePath(res.Path))
	fmt.Fprintf(e.stdout, "SHA-256: %s\n", res.SHA256)
	fmt.Fprintf(e.stdout, "Next: 'rewind import %s --sha256 %s' on the other machine (or in another folder).\n", cmdline.QuotePath(res.Path), res.SHA256)
	return nil
}

// secretsFound says what the scan found, place by place, each secret by
// its gitleaks rule: "in the tree, 2 aws-access-token in 2 files (a.go,
// b.sh); in the conversation, 1 github-pat".
func secretsFound(f *store.SecretsFound) string {
	var places []string
	if len(f.Tree) > 0 {
		var rules []string
		n, files := map[string]int{}, map[string][]string{}
		for _, s := range f.Tree {
			if n[s.Rule] == 0 {
				rules = append(rules, s.Rule)
			}
			n[s.Rule]++
			if !slices.Contains(files[s.Rule], s.Path) {
				files[s.Rule] = append(files[s.Rule], s.Path)
			}
		}
		var each []string
		for _, r := range rules {
			each = append(each, fmt.Sprintf("%d %s in %s (%s)", n[r], r, count(len(files[r]), "file"), listSome(files[r], 5)))
		}
		places = append(places, "in the tree, "+strings.Join(each, ", "))
	}
	byRule := func(rules []string) string {
		var order []string
		n := map[string]int{}
		for _, r := range rules {
			if n[r] == 0 {
				order = append(order, r)
			}
			n[r]++
		}
		var each []string
		for _, r := range order {
			each = append(each, fmt.Sprintf("%d %s", n[r], r))
		}
		return strings.Join(each, ", ")
	}
	if len(f.Transcript) > 0 {
		var rules []string
		for _, s := range f.Transcript {
			rules = append(rules, s.Rule)
		}
		places = append(places, "in the conversation, "+byRule(rules))
	}
	var fields []string
	rules := map[string][]string{}
	for _, s := range f.Checkpoint {
		if rules[s.Field] == nil {
			fields = append(fields, s.Field)
		}
		rules[s.Field] = append(rules[s.Field], s.Rule)
	}
	for _, fl := range fields {
		places = append(places, "in the checkpoint's "+strings.ReplaceAll(fl, "_", " ")+", "+byRule(rules[fl]))
	}
	return strings.Join(places, "; ")
}

// masked says what --redact masked: "3 secrets in 2 files (a.go, b.sh),
// 2 in the conversation, and the checkpoint's prompt", "" for nothing.
func masked(res *store.ExportResult) string {
	var parts []string
	if len(res.Masked) > 0 {
		n := 0
		var paths []string
		for _, m := range res.Masked {
			n += m.Count
			paths = append(paths, m.Path)
		}
		parts = append(parts, fmt.Sprintf("%s in %s (%s)", count(n, "secret"), count(len(paths), "file"), listSome(paths, 20)))
	}
	if res.TranscriptMasked > 0 {
		parts = append(parts, count(res.TranscriptMasked, "secret")+" in the conversation")
	}
	for _, f := range res.MaskedFields {
		parts = append(parts, "the checkpoint's "+strings.ReplaceAll(f, "_", " "))
	}
	return strings.Join(parts, ", ")
}

// listSome lists at most n of names, each as git shows a name
// (cmdline.QuotePath), saying how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return quotePaths(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", quotePaths(names[:n], ", "), len(names)-n)
}

func (c *exportCmd) doc() doc {
	return doc{
		args:    "<cp>",
		summary: "write a checkpoint's tree and conversation to one archive, to import elsewhere",
		text: `The archive is a plain tar (tar tvf lists it) of one folder,
rewind-export-<id>/: tree.tar.gz (the whole tree at the checkpoint, a full
snapshot as rewind-snap writes), transcript.jsonl.gz (the conversation up to
the checkpoint), checkpoint.json (its metadata) and export.json (format
version, agent and its version, source folder, and the size and SHA-256 of
every other member). It appears whole or not at all, and never replaces a
file without --force.

Without -o it is written as rewind-<id>.tar into the current folder when that
lies outside the project's tree; inside it, where the next save would capture
it, into the user's exports folder ($XDG_DATA_HOME/rewind/exports, else
~/.local/share/rewind/exports; on macOS ~/Library/Application
Support/rewind/exports). It says where it wrote.

Files that commonly hold secrets (the store's "export": {"redact": […]} in
config.json; by default .env, .env.*, *.pem, *.key, id_rsa*, .npmrc, .netrc,
…) are named on stderr; --redact leaves them out.

The files kept, the conversation and the checkpoint's prompts are scanned
for secrets by gitleaks' rules (cloud keys, private keys, API tokens; binary
files and files over 10 MiB are skipped, and counted): what is found is
counted on stderr, and listed under "secrets" in --json. --redact masks each
secret, byte for byte, with '*' (line breaks, quotes and escapes are kept):
the conversation keeps its length and its lines stay JSON, so the archive
imports as any other.`,
		examples: []string{
			"rewind export @0",
			"rewind export @2 -o /tmp/handoff.tar --redact",
			"rewind export @0 --redact --redact-pattern 'secrets/'",
		},
	}
}
