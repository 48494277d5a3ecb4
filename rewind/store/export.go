package store

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/secrets"
	"rewind.dev/rewind/store/bundle"
	"rewind.dev/rewind/store/record"
	"rewind.dev/rewind/store/verify"
	"rewind.dev/snap"
	"rewind.dev/snap/gitignore"
)

// ExportOptions say where and how 'rewind export' writes a checkpoint.
type ExportOptions struct {
	Out   string // the archive to write
	Force bool   // replace an existing file at Out
	// Redact leaves out the files the configured export.redact patterns
	// (layout.DefaultRedact when none) and Patterns match, and masks every
	// secret the scan finds (see SecretsFound); without it the files those
	// patterns match are named in Secrets, and kept, and the secrets found
	// are only reported.
	Redact   bool
	Patterns []string
}

// ExportResult is what Export wrote.
type ExportResult struct {
	Type         string   `json:"type"` // "export"
	Path         string   `json:"path"`
	Checkpoint   string   `json:"checkpoint"`
	Agent        string   `json:"agent,omitempty"`
	AgentVersion string   `json:"agent_version,omitempty"`
	SessionID    string   `json:"session_id,omitempty"`
	Files        int      `json:"files"`
	Bytes        int64    `json:"bytes"`
	SHA256       string   `json:"sha256"` // of the archive, as sha256sum prints it
	Redacted     []string `json:"redacted,omitempty"`
	Secrets      []string `json:"secret_paths,omitempty"` // kept, though the redact patterns match them
	// Found is what the scan for secrets found; with Redact, Masked,
	// TranscriptMasked and MaskedFields say what was masked.
	Found            *SecretsFound       `json:"secrets"`
	Masked           []bundle.MaskedFile `json:"masked,omitempty"`
	TranscriptMasked int                 `json:"transcript_masked,omitempty"`
	MaskedFields     []string            `json:"masked_fields,omitempty"`
	Members          []bundle.Member     `json:"members"`
}

// Export writes cp as an export archive (see package bundle) at o.Out,
// which appears whole or not at all. The checkpoint is checked first, as a
// restore checks it; the tree is read from its layer chain, never restored
// anywhere. Before anything is written, the files it keeps, the transcript
// and the checkpoint's text are scanned for secrets (see secrets.go): with
// o.Redact they are masked as they are written, the transcript keeping its
// length.
func (s *Store) Export(ctx context.Context, cp *Checkpoint, o ExportOptions) (*ExportResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	k := s.newChecker(ctx)
	defer k.Save()
	if err := k.Check(cp, verify.All); err != nil {
		return nil, &DamagedError{Err: err}
	}
	e, err := s.prepareExport(ctx, cp, o)
	if err != nil {
		return nil, err
	}
	if !o.Force {
		if _, err := os.Lstat(o.Out); err == nil {
			return nil, &ExistsError{Path: o.Out}
		}
	}
	var flags []durable.Flag
	if !o.Force {
		flags = append(flags, durable.NoReplace)
	}
	out, err := durable.Create(o.Out, layout.FileMode, flags...)
	if err != nil {
		return nil, err
	}
	defer out.Abort()
	info, err := e.write(ctx, out)
	if err != nil {
		return nil, err
	}
	res := e.res
	if res.Bytes, res.SHA256, err = readBack(out.File); err != nil {
		return nil, fmt.Errorf("read back %s: %w", o.Out, err)
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	res.Agent, res.AgentVersion, res.SessionID, res.Files, res.Members = info.Agent, info.AgentVersion, info.SessionID, info.Files, info.Members
	res.TranscriptMasked = info.TranscriptMasked
	return res, nil
}

// export is one Export, once its checkpoint is scanned: what it writes
// and what it found.
type export struct {
	project string // the store's
	cp      *Checkpoint
	o       ExportOptions
	m       *snap.Manifest  // the checkpoint's tree (written out as it is read: not held)
	pats    *gitignore.List // the redact patterns
	x       exportScan
	chain   []string // the transcript's files; nil when it has none
	md      Metadata // cp's, masked with o.Redact (cp's own is not changed)
	res     *ExportResult
}

// prepareExport opens cp's tree and transcript and scans them, and cp's
// text, for secrets.
func (s *Store) prepareExport(ctx context.Context, cp *Checkpoint, o ExportOptions) (*export, error) {
	m, err := snap.OpenManifest(cp.ManifestPath())
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", cp.ID, err)
	}
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	e := &export{project: s.Project, cp: cp, o: o, m: m, md: cp.Metadata, res: &ExportResult{Type: "export", Path: o.Out, Checkpoint: cp.ID},
		pats: gitignore.Lines(append(slices.Clone(cfg.RedactPatterns()), o.Patterns...))}
	if err := e.x.scanTree(ctx, m, func(path string) bool { return !o.Redact || !e.pats.Excludes(path, false) }); err != nil {
		return nil, fmt.Errorf("checkpoint %s: scan for secrets: %w", cp.ID, err)
	}
	if t := cp.Transcript; t != nil && t.Snapshot != "" {
		if e.chain, err = s.TranscriptChain(cp); err != nil {
			return nil, err
		}
		if err := e.x.scanTranscript(ctx, e.chain); err != nil {
			return nil, fmt.Errorf("checkpoint %s: scan its transcript for secrets: %w", cp.ID, err)
		}
	}
	if e.md.Transcript != nil {
		t := *e.md.Transcript
		e.md.Transcript = &t
	}
	e.res.MaskedFields = e.x.scanFields(&e.md, o.Redact)
	e.res.Found = &e.x.found
	return e, nil
}

// write writes the archive into out, and returns its export.json.
func (e *export) write(ctx context.Context, out bundle.File) (*bundle.Info, error) {
	info := &bundle.Info{Type: bundle.Format, Version: bundle.Version, CreatedAt: time.Now().UTC(), RewindVersion: cmdline.VersionString(),
		SourceFolder: e.project, Checkpoint: e.cp.ID, TakenAt: e.cp.CreatedAt, Description: e.md.Description, Prompt: e.md.Trigger.Prompt,
		TreeHash: e.cp.Snapshot.TreeHash, MaskedFields: e.res.MaskedFields}
	w := bundle.NewWriter(out, info)
	cpJSON, err := record.Encode(&e.md)
	if err != nil {
		return nil, err
	}
	if err := w.Add(bundle.CheckpointName, cpJSON); err != nil {
		return nil, fmt.Errorf("write %s: %w", e.o.Out, err)
	}
	if t := e.cp.Transcript; t != nil && t.Snapshot != "" {
		info.Agent, info.SessionID, info.Transcript = t.Agent, t.SessionID, t.OriginalPath
		info.TranscriptBytes, info.PrefixSHA256, info.TailSHA256 = t.Cursor.ByteOffsetEnd, t.Cursor.PrefixSHA256, t.Cursor.TailSHA256
		info.AgentVersion = agentVersion(e.chain)
		if err := w.Stream(bundle.TranscriptName, func(w io.Writer) error { return e.writeTranscript(ctx, w, info) }); err != nil {
			return nil, fmt.Errorf("write %s: %w", e.o.Out, err)
		}
	}
	err = w.Stream(bundle.TreeName, func(w io.Writer) error {
		n, err := snap.WriteFull(ctx, w, e.m, e.treeOptions())
		info.Files = n
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", e.o.Out, err)
	}
	info.Redacted, info.Masked = e.res.Redacted, e.res.Masked
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", e.o.Out, err)
	}
	return info, nil
}

// writeTranscript writes the transcript into w. The captures, one gzip
// member after another, are one gzip stream of the transcript's bytes up
// to the cursor: copied as they are, unless secrets are masked in them.
// Masked, they keep their length; the hashes export.json records (info's)
// are the masked bytes'.
func (e *export) writeTranscript(ctx context.Context, w io.Writer, info *bundle.Info) error {
	if !e.o.Redact || len(e.x.transcript) == 0 {
		return ctxio.Concat(w, e.chain...)
	}
	sum := (*record.TranscriptSum)(nil).Clone()
	defer sum.Recycle()
	if err := e.x.writeMasked(ctx, w, e.chain, sum); err != nil {
		return err
	}
	c, want := sum.Cursor(), e.cp.Transcript.Cursor.ByteOffsetEnd
	if c.ByteOffsetEnd != want {
		return fmt.Errorf("the transcript holds %d bytes, its cursor says %d", c.ByteOffsetEnd, want)
	}
	info.PrefixSHA256, info.TailSHA256 = c.PrefixSHA256, c.TailSHA256
	info.TranscriptMasked = len(e.x.transcript)
	return nil
}

// treeOptions say which of the tree's entries the archive keeps, and with
// o.Redact how a file's secrets are masked; they record both in res.
func (e *export) treeOptions() snap.WriteOptions {
	o := snap.WriteOptions{Keep: e.keep}
	if e.o.Redact {
		o.Rewrite = e.rewrite
	}
	return o
}

// keep says whether the archive keeps entry en: one the redact patterns
// match (or, with o.Redact, a file a secret is named in) is left out with
// o.Redact, else kept and named in res.Secrets.
func (e *export) keep(en *snap.Entry) bool {
	if !e.pats.Excludes(en.Path, en.Kind == snap.KindDir) && !(e.o.Redact && e.x.named[en.Path]) {
		return true
	}
	if e.o.Redact {
		e.res.Redacted = append(e.res.Redacted, strings.Clone(en.Path)) // (the pass's: see snap.WriteFull)
		return false
	}
	if en.Kind != snap.KindDir {
		e.res.Secrets = append(e.res.Secrets, strings.Clone(en.Path))
	}
	return true
}

// rewrite masks the secrets of file en, if it holds any.
func (e *export) rewrite(en *snap.Entry) func([]byte) {
	fs := e.x.tree[en.Path]
	if len(fs) == 0 {
		return nil
	}
	e.res.Masked = append(e.res.Masked, bundle.MaskedFile{Path: strings.Clone(en.Path), Count: len(fs)})
	return func(b []byte) { secrets.Mask(b, fs) }
}

// readBack is the size of the archive f holds, from its start to where it
// is, and its SHA-256, for its receiver to check (rewind import --sha256):
// the one hash that covers export.json too.
func readBack(f *os.File) (int64, string, error) {
	n, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, "", err
	}
	whole := sha256.New()
	if _, err := io.Copy(whole, f); err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(whole.Sum(nil)), nil
}

// ExistsError is an output file that is there already.
type ExistsError struct{ Path string }

func (e *ExistsError) Error() string { return "output " + e.Path + " already exists" }

// agentVersion is the agent's version as its transcript records it (a
// "version" field of its lines: Claude Code's, Droid's session_start), read
// from the first MiB; "" when none says.
func agentVersion(chain []string) string {
	r, err := fork.OpenSnapshots(chain)
	if err != nil {
		return ""
	}
	defer r.Close()
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	v := ""
	for sc.Scan() {
		var line struct {
			Version any `json:"version"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			if s, ok := line.Version.(string); ok && s != "" {
				v = s
			}
		}
	}
	return v
}

// exportName is the default name of cp's export archive, in dir.
func exportName(dir string, cp *Checkpoint) string {
	return filepath.Join(dir, "rewind-"+cp.ID+".tar")
}

// ExportPath is where cp's export archive goes when the user names no
// file: into wd, the current folder, when it lies outside the project's
// tree; inside it the next save would capture the archive, so it goes into
// the user's exports folder (Homes.Exports) instead, made if need be.
func (s *Store) ExportPath(cp *Checkpoint, wd string) (string, error) {
	if !underDir(realPath(wd), realPath(s.Project)) {
		return exportName(wd, cp), nil
	}
	dir, err := s.Homes.exportsDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, layout.DirMode); err != nil {
		return "", fmt.Errorf("exports folder: %w", err)
	}
	return exportName(dir, cp), nil
}

// underDir reports whether path is dir or lies inside it (both clean and
// absolute).
func underDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
