package cli

import (
	"context"
	"flag"
	"fmt"
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
	fs.StringVar(&c.out, "o", "", "write the archive to `FILE` (default: rewind-<checkpoint id>.tar in the current folder)")
	fs.BoolVar(&c.force, "force", false, "replace FILE when it exists")
	fs.BoolVar(&c.redact, "redact", false, "leave out the files the export.redact patterns match (.env, keys, …) and say which")
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
		out = store.ExportName(cp)
	}
	if out, err = absPath(out); err != nil {
		return err
	}
	ctx, stop := e.progress(ctx, "exporting")
	res, err := s.Export(ctx, cp, store.ExportOptions{Out: out, Force: c.force, Redact: c.redact, Patterns: c.patterns})
	stop()
	if err != nil {
		return err
	}
	if len(res.Secrets) > 0 {
		fmt.Fprintf(e.stderr, "%s: warning: the archive holds %s that may hold secrets: %s\n", name, count(len(res.Secrets), "file"), listSome(res.Secrets, 20))
		fmt.Fprintf(e.stderr, "%s: hint: 'rewind export %s --redact' leaves them out\n", name, cmdline.QuoteText(args[0]))
	}
	if c.json {
		return e.json(res)
	}
	if len(res.Redacted) > 0 {
		fmt.Fprintf(e.stdout, "Left out (--redact): %s\n", listSome(res.Redacted, 20))
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

Files that commonly hold secrets (the store's "export": {"redact": […]} in
config.json; by default .env, .env.*, *.pem, *.key, id_rsa*, .npmrc, .netrc,
…) are named on stderr; --redact leaves them out. The conversation itself is
not redacted.`,
		examples: []string{
			"rewind export @0",
			"rewind export @2 -o /tmp/handoff.tar --redact",
			"rewind export @0 --redact --redact-pattern 'secrets/'",
		},
	}
}
