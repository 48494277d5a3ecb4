package cli

import (
	"context"
	"flag"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
)

// TruncateConfig is `rewind-fork truncate`.
type TruncateConfig struct {
	*streams
	cp        checkpointFlags
	backupDir string
	inode     uint64
}

func (c *TruncateConfig) name() string { return "truncate" }
func (c *TruncateConfig) usage() string {
	return "--from TRANSCRIPT (--offset N | < boundary-or-cursor.json) --backup-dir DIR [--snapshot transcript.jsonl.gz] [--inode N]"
}
func (c *TruncateConfig) help() string {
	return "cut the live transcript back to a boundary, behind a verified backup"
}

// RegisterFlags registers truncate's flags.
func (c *TruncateConfig) RegisterFlags(fs *flag.FlagSet) {
	c.cp.register(fs)
	fs.StringVar(&c.backupDir, "backup-dir", "", "write the verified backup of the whole transcript into `DIR` first (required)")
	fs.Uint64Var(&c.inode, "inode", 0, "refuse unless the transcript is still inode `N` (also read from stdin's \"inode\")")
}

// Exec truncates and prints {"type":"truncate",…}.
func (c *TruncateConfig) Exec(ctx context.Context, _ []string) error {
	cp, err := c.cp.checkpoint(c.stdin)
	if err != nil {
		return err
	}
	if c.backupDir == "" {
		return cmdline.Usagef("--backup-dir DIR is required: truncate never runs without a verified backup")
	}
	if c.inode != 0 {
		cp.Inode = c.inode
	}
	t, err := fork.Truncate(ctx, fork.TruncateOptions{
		From: c.cp.from, Checkpoint: cp, BackupDir: c.backupDir, Snapshots: c.cp.snapshots,
	})
	if err != nil {
		return err
	}
	c.warn(t.Warnings)
	return c.printJSON(t)
}
