package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"rewind.dev/hookd"
	"rewind.dev/internal/cmdline"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store"
)

type backCmd struct {
	common
	confirmation
	both, inPlace     bool
	transcript, agent string
}

func (c *backCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.both, "both", false, "also restore the code to the newest checkpoint taken before that prompt")
	fs.BoolVar(&c.inPlace, "in-place", false, "cut the live transcript back (behind a verified backup) instead of forking")
	fs.StringVar(&c.transcript, "transcript", "", "the transcript `PATH` (default: the session the hooks recorded, else the one the newest checkpoint recorded)")
	cmdline.ChoiceVar(fs, &c.agent, "agent", "", jsonl.DialectNames(), "the transcript's `AGENT` (default: detected)")
	c.registerConfirm(fs)
}

func (c *backCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "back"); err != nil {
		return err
	}
	text, byWords := strings.CutPrefix(args[0], store.SearchPrefix)
	if !byWords {
		text = ""
	}
	n, err := strconv.Atoi(args[0])
	switch {
	case byWords && strings.TrimSpace(text) == "":
		return cmdline.Usagef("back %s takes words to search the prompts for, as in ':/add the cache'", store.SearchPrefix)
	case !byWords && (err != nil || n < 1):
		return cmdline.WithHint(cmdline.Usagef("back takes a number of prompts ≥ 1, got %q", args[0]),
			"or :/TEXT, the newest prompt containing TEXT, as in rewind back ':/add the cache'")
	}
	if err := checkAgent(c.agent); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	transcript, err := absPath(c.transcript)
	if err != nil {
		return err
	}
	agent, inAgent := c.agent, false
	if transcript == "" {
		// Run by the agent itself: its session, not the newest one the hooks saw.
		if a, id := hookd.SessionFromEnv(e.getenv); id != "" {
			if p, ag, ok := s.SessionTranscript(id); ok {
				transcript, inAgent = p, true
				if agent == "" {
					agent = cmp.Or(ag, a)
				}
			}
		}
	}
	o := store.BackOptions{N: n, Text: text, Both: c.both, InPlace: c.inPlace, DryRun: c.dryRun, TranscriptPath: transcript, Agent: agent, InAgent: inAgent}
	if ask, err := c.asks(e, c.json); err != nil {
		return err
	} else if ask {
		plan := o
		plan.DryRun = true
		p, err := s.Back(ctx, plan)
		if err != nil {
			return err
		}
		if err := confirmRestore(e, p, fmt.Sprintf("Go back to before the %s most recent prompt?", ordinal(p.Cut.N))); err != nil {
			return err
		}
	}
	ctx, stop := e.progress(ctx, "going back")
	res, err := s.Back(ctx, o)
	stop()
	if res != nil && (err == nil || res.Backup != "") {
		e.printRestore(res, c.json, err != nil)
	}
	return err
}

func (c *backCmd) doc() doc {
	return doc{
		args:    "<n> | :/<text>",
		summary: "rewind the chat to before the nth-most-recent prompt",
		text: `Writes a fork of the conversation that ends before the nth-most-recent
prompt (or cuts the transcript in place), and with --both also restores the
code to the newest checkpoint taken before that prompt. On a terminal it shows
where it would cut and what it would write, and asks first; --dry-run only
shows it. Prompts before a compaction count too: the agent keeps those lines,
and a fork cut before the compaction resumes with the whole conversation, not
the summary.

Without --transcript it goes back in the session the hooks recorded last, or
without hooks the one the newest checkpoint recorded.

:/TEXT names the prompt by its words instead: the newest prompt containing
TEXT (any case; spaces and line breaks count as one), the prompts a fork holds
from the sessions it was forked from included. Every session the project's
checkpoints recorded is searched, the hooks' last (or the agent's own, run by
it) first, then the others newest first; the session found is gone back in,
with its agent.`,
		examples: []string{
			"rewind back 1   # drop the last prompt from the chat",
			"rewind back 2 --both --dry-run",
			"rewind back ':/add the cache' --both   # before the newest prompt saying so",
		},
	}
}
