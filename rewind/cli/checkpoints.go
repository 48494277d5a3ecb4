package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"

	"rewind.dev/rewind/store"
	"rewind.dev/snap"
)

type initCmd struct {
	common
	mode  string
	force bool
}

func (c *initCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.mode, "mode", "project", "where the store lives: project (.agent/rewind/) or global (~/.rewind/storage/)")
	fs.BoolVar(&c.force, "force", false, "create the store even in / or in your home folder")
}

func (c *initCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "init"); err != nil {
		return err
	}
	mode := store.Mode(c.mode)
	if mode != store.ModeProject && mode != store.ModeGlobal {
		return usageError{"--mode is project or global"}
	}
	dir := c.project
	if dir == "" {
		dir = "."
	}
	project, err := store.FindProject(dir)
	if err != nil {
		return err
	}
	if why := store.TooBroad(project); why != "" && !c.force {
		if _, err := store.Open(project); err != nil {
			return withHint(fmt.Errorf("will not create a store for %s: %s, and every checkpoint would hold everything under it", project, why),
				"run 'rewind init' in a project folder, or add --force to checkpoint this folder all the same (Rewind's and the agents' own folders are left out)")
		}
	}
	s, created, err := store.Init(project, mode)
	if err != nil {
		return err
	}
	if c.json {
		return e.json(map[string]any{"type": "init", "store": s.Dir, "project": s.Project, "mode": s.Mode, "created": created})
	}
	if created {
		fmt.Fprintf(e.stdout, "Created the %s store for %s at %s\n", s.Mode, s.Project, s.Dir)
		fmt.Fprintf(e.stdout, "Next: 'rewind save' takes a checkpoint; the hooks take them automatically ('rewind config --register-hooks').\n")
	} else {
		fmt.Fprintf(e.stdout, "%s already has a %s store at %s\n", s.Project, s.Mode, s.Dir)
	}
	return nil
}

type saveCmd struct {
	common
	transcript, agent, pin string
	full                   bool
}

func (c *saveCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.StringVar(&c.transcript, "transcript", "", "capture this transcript `PATH` (default: the session the hooks recorded)")
	fs.StringVar(&c.agent, "agent", "", "the transcript's agent (claude, droid, …; default: detected)")
	fs.StringVar(&c.pin, "pin", "", "pin the checkpoint with this `LABEL` (gc keeps it)")
	fs.BoolVar(&c.full, "full", false, "write a full snapshot, not a layer over the newest checkpoint")
}

func (c *saveCmd) Exec(ctx context.Context, e *env, args []string) error {
	s, err := c.open(e)
	if err != nil {
		return err
	}
	transcript, err := absPath(c.transcript)
	if err != nil {
		return err
	}
	stop := e.progress("saving a checkpoint")
	cp, err := s.Save(ctx, store.SaveOptions{
		Description: strings.Join(args, " "), Trigger: store.Trigger{Kind: "manual"}, Pin: c.pin,
		TranscriptPath: transcript, Agent: c.agent, UseSession: true, Full: c.full,
	})
	stop()
	if err != nil {
		return err
	}
	if c.json {
		e.warnUnreadable(cp)
		return e.json(checkpointJSON(cp))
	}
	how := fmt.Sprintf("full snapshot, %s compressed", humanBytes(cp.Snapshot.CompressedBytes))
	switch {
	case cp.Snapshot.ReusedFrom != "":
		how = "tree unchanged since " + cp.Snapshot.ReusedFrom
	case cp.Snapshot.Layer:
		how = fmt.Sprintf("%d changed files stored, %s compressed", cp.Snapshot.LayerFiles, humanBytes(cp.Snapshot.CompressedBytes))
	}
	fmt.Fprintf(e.stdout, "Saved %s: %d files, %s (%s)\n", cp.ID, cp.Snapshot.Files, humanBytes(cp.Snapshot.Bytes), how)
	e.warnUnreadable(cp)
	if cp.Transcript != nil {
		if cp.HasTranscript {
			fmt.Fprintf(e.stdout, "Transcript: %s at byte %d\n", cp.Transcript.OriginalPath, cp.Transcript.Cursor.ByteOffsetEnd)
		} else {
			fmt.Fprintf(e.stdout, "Transcript: %s (not written yet)\n", cp.Transcript.OriginalPath)
		}
	}
	return nil
}

// warnUnreadable says on stderr which paths a checkpoint could not read,
// and why its snapshot is full when the chain it would have built on is
// damaged.
func (e *env) warnUnreadable(cp *store.Checkpoint) {
	if why := cp.Snapshot.FullBecause; why != "" {
		fmt.Fprintf(e.stderr, "%s: warning: %s; checkpoint %s is a full snapshot, built on nothing ('rewind validate' lists the damage)\n", name, why, cp.ID)
	}
	u := cp.Snapshot.Unreadable
	if len(u) == 0 {
		return
	}
	list := u
	if len(list) > 5 {
		list = append(list[:5:5], fmt.Sprintf("and %d more", len(u)-5))
	}
	fmt.Fprintf(e.stderr, "%s: warning: checkpoint %s could not read %d path%s (no permission, or an I/O error), which it does not hold and its restores leave alone: %s\n",
		name, cp.ID, len(u), plural(len(u)), strings.Join(list, ", "))
}

// checkpointJSON is a checkpoint as commands print it.
func checkpointJSON(c *store.Checkpoint) map[string]any {
	return map[string]any{"type": "checkpoint", "checkpoint": c.Metadata, "path": c.Dir}
}

type listCmd struct {
	common
	all bool
	n   int
}

func (c *listCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.all, "all", false, "list every checkpoint, including restore backups")
	fs.IntVar(&c.n, "n", 20, "list at most `N` checkpoints (0: all)")
}

func (c *listCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "list"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	cps, _, err := s.List()
	if err != nil {
		return err
	}
	if len(cps) == 0 && !c.json {
		return store.ErrNoCheckpoints
	}
	tw := e.table()
	if !c.json {
		fmt.Fprintln(tw, e.color("1", "  \tID\tAGE\tWHAT\tFILES\tSIZE\tCHANGES\tAFTER PROMPT"))
	}
	shown := 0
	for i, cp := range cps {
		if !c.all && cp.Trigger.Kind == "pre-restore" {
			continue
		}
		if c.n > 0 && shown >= c.n {
			break
		}
		shown++
		if c.json {
			if err := e.json(map[string]any{"type": "checkpoint", "n": i, "checkpoint": cp.Metadata}); err != nil {
				return err
			}
			continue
		}
		what := cp.Label()
		if cp.Trigger.Prompt != "" {
			what += " «" + oneLine(cp.Trigger.Prompt, 30) + "»"
		}
		if cp.Pinned != "" {
			what = "📌 " + cp.Pinned + " · " + what
		}
		changes := fmt.Sprintf("+%d ~%d -%d", cp.Changes.Added, cp.Changes.Modified, cp.Changes.Deleted)
		if cp.Snapshot.ReusedFrom != "" {
			changes = "= (unchanged)"
		}
		prompt := ""
		if cp.Transcript != nil {
			prompt = oneLine(cp.Transcript.LastPrompt, 40)
		}
		fmt.Fprintf(tw, "@%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", i, e.color("33", cp.ID), ago(cp.CreatedAt), oneLine(what, 48),
			cp.Snapshot.Files, humanBytes(cp.Snapshot.Bytes), changes, prompt)
	}
	return tw.Flush()
}

type showCmd struct{ common }

func (c *showCmd) RegisterFlags(fs *flag.FlagSet) { c.register(fs) }

func (c *showCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 1, "show"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	cp, err := s.Resolve(args[0])
	if err != nil {
		return err
	}
	if c.json {
		return e.json(checkpointJSON(cp))
	}
	tw := e.table()
	fmt.Fprintf(tw, "Checkpoint\t%s\n", cp.ID)
	fmt.Fprintf(tw, "Created\t%s (%s)\n", cp.CreatedAt.Local().Format("2006-01-02 15:04:05"), ago(cp.CreatedAt))
	fmt.Fprintf(tw, "What\t%s\n", cp.Label())
	if cp.Trigger.Prompt != "" {
		fmt.Fprintf(tw, "Before prompt\t%s\n", oneLine(cp.Trigger.Prompt, 100))
	}
	if cp.Pinned != "" {
		fmt.Fprintf(tw, "Pinned\t%s\n", cp.Pinned)
	}
	fmt.Fprintf(tw, "Tree\t%d files, %d folders, %d symlinks, %s (%s compressed)\n", cp.Snapshot.Files, cp.Snapshot.Dirs, cp.Snapshot.Symlinks,
		humanBytes(cp.Snapshot.Bytes), humanBytes(cp.Snapshot.CompressedBytes))
	fmt.Fprintf(tw, "Tree hash\t%s\n", cp.Snapshot.TreeHash)
	if cp.Snapshot.ReusedFrom != "" {
		fmt.Fprintf(tw, "Snapshot\tshared with %s (tree unchanged)\n", cp.Snapshot.ReusedFrom)
	}
	fmt.Fprintf(tw, "Changes\t+%d ~%d -%d since %s\n", cp.Changes.Added, cp.Changes.Modified, cp.Changes.Deleted, orNone(cp.Changes.Since))
	if t := cp.Transcript; t != nil {
		fmt.Fprintf(tw, "Transcript\t%s (%s)\n", t.OriginalPath, orNone(t.Agent))
		fmt.Fprintf(tw, "Session\t%s\n", orNone(t.SessionID))
		fmt.Fprintf(tw, "Cursor\tbyte %d, last event %s\n", t.Cursor.ByteOffsetEnd, orNone(t.Cursor.LastEventID))
		if t.LastPrompt != "" {
			fmt.Fprintf(tw, "After prompt\t%s\n", oneLine(t.LastPrompt, 100))
		}
	}
	fmt.Fprintf(tw, "Folder\t%s\n", cp.Dir)
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type diffCmd struct {
	common
	stat bool
}

func (c *diffCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.stat, "stat", false, "list the changed paths only, no content")
}

// diffLimit bounds the files diff shows content of.
const diffLimit = 1 << 20

func (c *diffCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 1, 2, "diff"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	from, err := s.Resolve(args[0])
	if err != nil {
		return err
	}
	old, err := snap.ReadManifest(from.ManifestPath())
	if err != nil {
		return err
	}
	cfg, err := s.Config()
	if err != nil {
		return err
	}
	var to *store.Checkpoint
	var changes []snap.Change
	if len(args) == 2 {
		if to, err = s.Resolve(args[1]); err != nil {
			return err
		}
		cur, err := snap.ReadManifest(to.ManifestPath())
		if err != nil {
			return err
		}
		changes = snap.DiffManifests(old, cur)
	} else if changes, err = snap.DiffManifest(ctx, s.Project, old, snap.WalkOptions{Ignore: cfg.Ignore}); err != nil {
		return err
	}
	if c.json {
		for i := range changes {
			if err := e.json(changes[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(changes) == 0 {
		fmt.Fprintln(e.stdout, "No changes.")
		return nil
	}
	if c.stat {
		for _, ch := range changes {
			fmt.Fprintf(e.stdout, "%s %s\n", opLetter(ch.Op), ch.Path)
		}
		return nil
	}
	return c.unified(e, s, from, to, changes)
}

func opLetter(op string) string {
	switch op {
	case "added":
		return "A"
	case "deleted":
		return "D"
	case "modified":
		return "M"
	}
	return "m" // mode
}

// unified prints each changed text file as a unified diff.
func (c *diffCmd) unified(e *env, s *store.Store, from, to *store.Checkpoint, changes []snap.Change) error {
	want := map[string]bool{}
	for _, ch := range changes {
		if ch.Kind == "file" && ch.Op != "added" {
			want[ch.Path] = true
		}
	}
	oldData, err := readSnapshot(from, want)
	if err != nil {
		return err
	}
	var newData map[string][]byte
	if to != nil {
		want = map[string]bool{}
		for _, ch := range changes {
			if ch.Kind == "file" && ch.Op != "deleted" {
				want[ch.Path] = true
			}
		}
		if newData, err = readSnapshot(to, want); err != nil {
			return err
		}
	}
	toLabel := "now"
	if to != nil {
		toLabel = to.ID
	}
	for _, ch := range changes {
		if ch.Kind != "file" || ch.Op == "mode" {
			fmt.Fprintf(e.stdout, "%s %s (%s)\n", opLetter(ch.Op), ch.Path, ch.Kind)
			continue
		}
		var a, b []byte
		if ch.Op != "added" {
			a = oldData[ch.Path]
		}
		if ch.Op != "deleted" {
			if to != nil {
				b = newData[ch.Path]
			} else {
				b, _ = os.ReadFile(filepath.Join(s.Project, filepath.FromSlash(ch.Path)))
			}
		}
		if !isText(a) || !isText(b) {
			fmt.Fprintf(e.stdout, "Binary or large file %s differs\n", ch.Path)
			continue
		}
		d := udiff.Unified("a/"+ch.Path+" ("+from.ID+")", "b/"+ch.Path+" ("+toLabel+")", string(a), string(b))
		fmt.Fprint(e.stdout, colorDiff(e, d))
	}
	return nil
}

func readSnapshot(c *store.Checkpoint, want map[string]bool) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(want) == 0 {
		return out, nil
	}
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	err = snap.ReadFiles(m, want, diffLimit, func(p string, data []byte) error {
		out[p] = data
		return nil
	})
	return out, err
}

func isText(b []byte) bool {
	return len(b) <= diffLimit && bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

func colorDiff(e *env, d string) string {
	if os.Getenv("NO_COLOR") != "" || !isTerminal(e.stdout) {
		return d
	}
	lines := strings.SplitAfter(d, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			lines[i] = e.color("1", l)
		case strings.HasPrefix(l, "+"):
			lines[i] = e.color("32", l)
		case strings.HasPrefix(l, "-"):
			lines[i] = e.color("31", l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = e.color("36", l)
		}
	}
	return strings.Join(lines, "")
}
