package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type importCmd struct {
	common
	into   string
	force  bool
	sha256 string
}

func (c *importCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.into, "into", "", "restore into `DIR` (default: a new folder named after the export's source folder, here)")
	fs.BoolVar(&c.force, "force", false, "import into a folder that is not empty, after a backup checkpoint ('rewind undo-restore' brings it back)")
	fs.StringVar(&c.sha256, "sha256", "", "refuse the archive unless its SHA-256 is `HEX` (as 'rewind export' printed it)")
}

func (c *importCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "import"); err != nil {
		return err
	}
	file, err := absPath(args[0])
	if err != nil {
		return err
	}
	into, err := absPath(c.into)
	if err != nil {
		return err
	}
	cwd, gone, err := currentDir()
	if err != nil {
		return err
	}
	if gone != "" {
		return &GoneError{Dir: cwd, Project: gone} // (nothing is made in a folder that is gone)
	}
	ctx, stop := e.progress(ctx, "importing")
	res, err := store.Import(ctx, file, store.ImportOptions{Into: into, Cwd: cwd, Force: c.force, SHA256: c.sha256})
	stop()
	if res == nil {
		return err
	}
	if c.json {
		if jerr := e.json(res); jerr != nil {
			return jerr
		}
		return err
	}
	var un *store.UnsupportedAgentError
	if err != nil && !errors.As(err, &un) {
		return err
	}
	if res.Backup != "" {
		fmt.Fprintf(e.stdout, "Backed up %s first: checkpoint %s ('rewind undo-restore' brings it back)\n", cmdline.QuotePath(res.Dir), cmdline.QuoteText(res.Backup))
	}
	// The bundle is data from elsewhere: its ids, folder, title and command
	// are shown through cmdline.QuoteText, paths through cmdline.QuotePath.
	fmt.Fprintf(e.stdout, "Imported %s of %s into %s: %s\n", cmdline.QuoteText(res.From), cmdline.QuotePath(res.Source), cmdline.QuotePath(res.Dir), count(res.Files, "file"))
	if c.sha256 == "" {
		fmt.Fprintf(e.stdout, "SHA-256: %s (compare it with the one 'rewind export' printed, or pass --sha256)\n", res.SHA256)
	}
	if res.Checkpoint != "" {
		fmt.Fprintf(e.stdout, "Checkpoint: %s\n", cmdline.QuoteText(res.Checkpoint))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "%s: warning: %s\n", name, cmdline.QuoteText(w))
	}
	if res.Resume != "" {
		fmt.Fprintf(e.stdout, "Session %s (%s): %s\n", cmdline.QuoteText(res.SessionID), cmdline.QuoteText(res.Title), cmdline.QuotePath(res.Transcript))
		fmt.Fprintf(e.stdout, "Resume it: %s\n", cmdline.QuoteText(res.ResumeCommand))
	}
	return err
}

func (c *importCmd) doc() doc {
	return doc{
		args:    "<file>",
		summary: "restore an exported checkpoint and install its conversation as a new session",
		text: `The archive is checked whole before anything is written: its format
version; every member's size and SHA-256; export.json and checkpoint.json
holding no field this Rewind does not know, every name in them of its
grammar (checkpoint and session ids, an agent Rewind knows, clean absolute
folders), and agreeing with each other; the conversation inflating to
exactly the bytes its cursor says; and the tree passing the checks of a
restore (no absolute paths, "..", links out, devices, hard links, duplicates,
oversized entries), holding as many files as recorded. --sha256 also holds
the archive to the SHA-256 its sender printed: the one check that covers
export.json against a changed archive. The tree goes into
--into DIR, by default a new folder named after the export's source folder in
the current folder; a folder that is not empty is refused unless --force,
which takes a backup checkpoint first ('rewind undo-restore' brings it back).
DIR gets a store if it has none. The conversation becomes a new session of
its agent for DIR, titled "[Imported] …", with its session id and working
folder rewritten; a checkpoint (taken by "import") records both, and the
command to resume the session is printed. Sessions of Claude Code, pi, Codex
CLI, Gemini CLI, Copilot CLI and OpenCode are imported; for Droid, whose
resume needs Factory's servers, the tree is restored and the command says
where the transcript was kept.`,
		examples: []string{
			"rewind import rewind-20261122_143052_001.tar",
			"rewind import handoff.tar --into ~/src/app-copy",
			"rewind import handoff.tar --into . --force   # over an existing project, undoable",
		},
	}
}
