package store

import (
	"context"
	"fmt"
	"os"

	"rewind.dev/fork"
	"rewind.dev/internal/agents"
	"rewind.dev/jsonl"
)

// restoreContext forks (or truncates) cp's transcript at its cursor.
func (s *Store) restoreContext(ctx context.Context, cp *Checkpoint, how ContextMode, res *RestoreResult, entry *HistoryEntry) error {
	// The live transcript is a regular file (checked without blocking)
	// before the fork opens it.
	path, err := checkpointTranscript(cp)
	if err != nil {
		return err
	}
	live, err := jsonl.Open(path, nil)
	if err != nil {
		return err
	}
	live.Close()
	chain, err := s.TranscriptChain(cp)
	if err != nil {
		return err
	}
	t := cp.Transcript
	ck := fork.Checkpoint{Offset: t.Cursor.ByteOffsetEnd, PrefixSHA256: t.Cursor.PrefixSHA256, TailSHA256: t.Cursor.TailSHA256, Agent: t.Agent}
	return s.cutTranscript(ctx, path, t.Agent, ck, chain, how, res, entry)
}

// cutTranscript writes a fork of path at ck, or truncates path in place
// behind a verified backup, and records which in entry.
func (s *Store) cutTranscript(ctx context.Context, path, agent string, ck fork.Checkpoint, chain []string, how ContextMode, res *RestoreResult, entry *HistoryEntry) error {
	switch how {
	case ContextFork:
		f, err := fork.Create(ctx, fork.CreateOptions{From: path, Checkpoint: ck, Snapshots: chain, Agent: agent, SourceTitle: s.forkTitle(path)})
		if err != nil {
			return &CutError{Err: fmt.Errorf("fork transcript %s: %w", path, err)}
		}
		res.Fork = &f
		res.Warnings = append(res.Warnings, f.Warnings...)
		res.Resume = ResumeHint(agent, f.SessionID)
		entry.Fork = &ForkRecord{Path: f.Path, SessionID: f.SessionID, Agent: agent, ParentTranscript: path, Offset: ck.Offset,
			ParentFirstLine: f.ReplacedFirstLine, ParentSessionID: f.ReplacedID, Title: f.Title, Method: f.Method}
	case ContextInPlace:
		tr, err := fork.Truncate(ctx, fork.TruncateOptions{From: path, Checkpoint: ck, BackupDir: s.backupDir(), Snapshots: chain})
		if err != nil {
			return &CutError{InPlace: true, Err: fmt.Errorf("truncate transcript %s: %w", path, err)}
		}
		res.Truncate = &tr
		res.Warnings = append(res.Warnings, tr.Warnings...)
		entry.Truncate = &TruncateRecord{Path: path, Backup: tr.Backup, Offset: ck.Offset, BytesRemoved: tr.BytesRemoved}
	default:
		return fmt.Errorf("unknown context restore %q", how)
	}
	return nil
}

// planCut checks what a cut of path at ck can check without writing, and
// says where it would go.
func (s *Store) planCut(ctx context.Context, path, agent string, ck fork.Checkpoint, chain []string, how ContextMode) (*Cut, error) {
	c := &Cut{Transcript: path, Agent: agent, How: how, Offset: ck.Offset}
	if fi, err := os.Stat(path); err == nil {
		c.Size = fi.Size()
	}
	if how == ContextInPlace {
		chain = nil // a cut in place needs the live file to hold the bytes
	}
	f, err := fork.Create(ctx, fork.CreateOptions{From: path, Checkpoint: ck, Snapshots: chain, Agent: agent, DryRun: true})
	if err != nil {
		return nil, &CutError{InPlace: how == ContextInPlace, Err: err}
	}
	if how == ContextFork {
		c.Fork, c.Method = f.Path, f.Method
	}
	return c, nil
}

// ResumeHint says how to open a session in its agent (the dialect's resume command).
func ResumeHint(agent, session string) string {
	if agent == "" {
		agent = agents.Unnamed
	}
	if d, err := jsonl.LookupDialect(agent); err == nil {
		if cmd := d.ResumeCommand(session); cmd != "" {
			return cmd
		}
	}
	return agent + ": open session " + session
}
