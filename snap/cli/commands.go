package cli

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"rewind.dev/internal/cmdline"
	"rewind.dev/snap"
)

type createCmd struct {
	root, out, manifest, parentManifest, parentDir string
	level, maxDepth                                int
	maxBytes                                       int64
	full                                           bool
}

func (c *createCmd) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.root, "root", ".", "the `DIR` of the tree to snapshot")
	fs.StringVar(&c.out, "out", "", "the `FILE.tar.gz` to write")
	fs.StringVar(&c.manifest, "manifest", "", "also write the snapshot's manifest to `FILE`")
	fs.StringVar(&c.parentManifest, "parent-manifest", "", "the previous snapshot's manifest `FILE`: when nothing changed, write no archive")
	fs.StringVar(&c.parentDir, "parent", "", "write a layer over the snapshot in `DIR` (its manifest and snapshot.tar.gz): only what changed")
	fs.BoolVar(&c.full, "full", false, "with --parent: write a full snapshot anyway")
	fs.IntVar(&c.maxDepth, "max-depth", snap.DefaultMaxDepth, "with --parent: past this many layers, write a full snapshot")
	fs.IntVar(&c.level, "level", 1, "gzip level, 1 (fastest) to 9")
	fs.Int64Var(&c.maxBytes, "max-bytes", snap.DefaultLimits.MaxBytes, "refuse a tree holding more file content than this; a limit above the default is recorded in the manifest")
}

func (c *createCmd) Exec(ctx context.Context, e *env, _ []string) error {
	if err := need("out", c.out, "create"); err != nil {
		return err
	}
	if c.level < 1 || c.level > 9 {
		return cmdline.Usagef("--level must be between 1 and 9")
	}
	if c.parentDir != "" && c.parentManifest != "" {
		return cmdline.Usagef("--parent and --parent-manifest exclude each other")
	}
	if c.parentDir != "" && c.manifest == "" {
		return cmdline.Usagef("a layer is only usable with its manifest: add --manifest FILE")
	}
	if c.maxBytes <= 0 {
		return cmdline.Usagef("--max-bytes must be a positive number of bytes")
	}
	opts := snap.CreateOptions{Out: c.out, Level: c.level, MaxDepth: c.maxDepth, Limits: snap.Limits{MaxBytes: c.maxBytes}}
	pm := c.parentManifest
	if c.parentDir != "" {
		pm = filepath.Join(c.parentDir, "manifest")
		opts.Layer = !c.full
	}
	if pm != "" {
		m, err := snap.OpenManifest(pm)
		if err != nil {
			return err
		}
		opts.Parent = m
	}
	if opts.Parent == nil {
		// A full snapshot is archived, and its manifest written, as the tree
		// is walked: not held.
		opts.ManifestTo = c.manifest
		res, err := snap.Create(ctx, c.root, opts)
		if err != nil {
			return err
		}
		return e.out.Encode(res)
	}
	// The tree is compared with the parent as it is walked, not held: a
	// layer over it, or a full snapshot that is written only when
	// something changed (which then writes the manifest itself).
	opts.Walk = snap.WalkOptions{Entries: opts.Parent.Header.Files + opts.Parent.Header.Dirs + opts.Parent.Header.Symlinks}
	if !opts.Layer {
		opts.ManifestTo = c.manifest
		res, err := snap.Create(ctx, c.root, opts)
		if err != nil {
			return err
		}
		if res.Archive == "" && c.manifest != "" { // unchanged: the parent's, with what was touched
			if err := snap.WriteManifestFile(c.manifest, res.Manifest, nil); err != nil {
				return err
			}
		}
		return e.out.Encode(res)
	}
	res, err := snap.Create(ctx, c.root, opts)
	if errors.Is(err, snap.ErrLayerTooBig) {
		// Most of the tree changed: a full snapshot, written as it walks.
		opts.Parent, opts.Layer, opts.ManifestTo = nil, false, c.manifest
		if res, err = snap.Create(ctx, c.root, opts); err != nil {
			return err
		}
		return e.out.Encode(res)
	}
	if err != nil {
		return err
	}
	if c.manifest != "" {
		var parent *snap.Manifest
		if res.Layer {
			parent = opts.Parent
		}
		if err := snap.WriteManifestFile(c.manifest, res.Manifest, parent); err != nil {
			return err
		}
	}
	return e.out.Encode(res)
}

type restoreCmd struct {
	root, from, manifest string
	dryRun               bool
	maxBytes             int64
}

func (c *restoreCmd) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.root, "root", ".", "the `DIR` of the tree to restore")
	fs.StringVar(&c.from, "from", "", "the snapshot `FILE.tar.gz`")
	fs.StringVar(&c.manifest, "manifest", "", "restore from the snapshot this manifest `FILE` describes (a full one or a layer chain), reading only files that differ")
	fs.BoolVar(&c.dryRun, "dry-run", false, "change nothing; list what would be written and deleted")
	fs.Int64Var(&c.maxBytes, "max-bytes", 0, "refuse archives holding more file content than this (default: the limit the manifest records, else 8 GiB)")
}

func (c *restoreCmd) Exec(ctx context.Context, e *env, _ []string) error {
	if (c.from == "") == (c.manifest == "") {
		return cmdline.WithHint(cmdline.Usagef("restore needs exactly one of --from and --manifest"), "run 'rewind-snap restore --help'")
	}
	if c.maxBytes < 0 {
		return cmdline.Usagef("--max-bytes must be a positive number of bytes")
	}
	opts := snap.RestoreOptions{DryRun: c.dryRun, Limits: snap.Limits{MaxBytes: c.maxBytes}}
	if c.manifest != "" {
		m, err := snap.OpenManifest(c.manifest) // (compared in walk order: not held)
		if err != nil {
			return err
		}
		opts.Manifest = m
	}
	res, err := snap.Restore(ctx, c.root, c.from, opts)
	if err != nil {
		return err
	}
	defer res.Close()
	return snap.WriteJSON(e.buffered, res) // (its longest lists read from their files as they are written)
}

type diffCmd struct {
	root, from, manifest string
}

func (c *diffCmd) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.root, "root", ".", "the `DIR` of the tree to compare")
	fs.StringVar(&c.from, "from", "", "the snapshot `FILE.tar.gz`; contents are compared byte for byte")
	fs.StringVar(&c.manifest, "manifest", "", "the snapshot's manifest `FILE`; faster, no archive is opened")
}

func (c *diffCmd) Exec(ctx context.Context, e *env, _ []string) error {
	if (c.from == "") == (c.manifest == "") {
		return cmdline.WithHint(cmdline.Usagef("diff needs exactly one of --from and --manifest"), "run 'rewind-snap diff --help'")
	}
	if c.manifest != "" {
		m, err := snap.OpenManifest(c.manifest)
		if err != nil {
			return err
		}
		// (handed on as the tree is walked and m read: neither held)
		return snap.DiffEach(ctx, snap.DiffOptions{From: m, Root: c.root}, func(ch snap.Change) error { return e.out.Encode(&ch) })
	}
	// (handed on as the plan is read back: a plan too big to hold is written to TMPDIR)
	return snap.DiffEach(ctx, snap.DiffOptions{FromArchive: c.from, Root: c.root}, func(ch snap.Change) error { return e.out.Encode(&ch) })
}

type lsCmd struct{ from string }

func (c *lsCmd) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.from, "from", "", "the snapshot `FILE.tar.gz`")
}

type lsEntry struct {
	Type  string `json:"type"`
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Mode  string `json:"mode"`
	Size  int64  `json:"size"`
	MTime string `json:"mtime"`
	Link  string `json:"link,omitempty"`
}

func (c *lsCmd) Exec(ctx context.Context, e *env, _ []string) error {
	if err := need("from", c.from, "ls"); err != nil {
		return err
	}
	if _, err := os.Stat(c.from); err != nil {
		return err
	}
	return snap.List(c.from, func(en *snap.Entry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return e.out.Encode(lsEntry{
			Type: "entry", Path: en.Path, Kind: en.Kind.String(), Mode: modeString(en.Mode), Size: en.Size,
			MTime: time.Unix(0, en.MTime).UTC().Format(time.RFC3339), Link: en.Link,
		})
	})
}

func modeString(m fs.FileMode) string {
	const digits = "01234567"
	p := uint32(m.Perm())
	return string([]byte{'0', digits[p>>6&7], digits[p>>3&7], digits[p&7]})
}
