package store

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"rewind.dev/fork"
	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/secrets"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
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
	Found            *SecretsFound  `json:"secrets"`
	Masked           []MaskedFile   `json:"masked,omitempty"`
	TranscriptMasked int            `json:"transcript_masked,omitempty"`
	MaskedFields     []string       `json:"masked_fields,omitempty"`
	Members          []BundleMember `json:"members"`
}

// Export writes cp as an export archive (see bundle.go) at o.Out, which
// appears whole or not at all. The checkpoint is checked first, as a
// restore checks it; the tree is read from its layer chain, never
// restored anywhere. Before anything is written, the files it keeps, the
// transcript and the checkpoint's text are scanned for secrets (see
// secrets.go): with o.Redact they are masked as they are written, the
// transcript keeping its length.
func (s *Store) Export(ctx context.Context, cp *Checkpoint, o ExportOptions) (*ExportResult, error) {
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	k := s.newChecker(ctx, false)
	defer k.save()
	if err := k.check(cp, partAll); err != nil {
		return nil, &DamagedError{Err: err}
	}
	m, err := snap.OpenManifest(cp.ManifestPath()) // (written out as it is read: not held)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", cp.ID, err)
	}
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	pats := snap.ParsePatterns(append(slices.Clone(cfg.RedactPatterns()), o.Patterns...))
	res := &ExportResult{Type: "export", Path: o.Out, Checkpoint: cp.ID}
	var x exportScan
	if err := x.scanTree(ctx, m, func(path string) bool { return !o.Redact || !pats.Match(path, false) }); err != nil {
		return nil, fmt.Errorf("checkpoint %s: scan for secrets: %w", cp.ID, err)
	}
	var chain []string
	if t := cp.Transcript; t != nil && t.Snapshot != "" {
		if chain, err = s.TranscriptChain(cp); err != nil {
			return nil, err
		}
		if err := x.scanTranscript(ctx, chain); err != nil {
			return nil, fmt.Errorf("checkpoint %s: scan its transcript for secrets: %w", cp.ID, err)
		}
	}
	md := cp.Metadata // (masked, with o.Redact: the checkpoint's own is not changed)
	if md.Transcript != nil {
		t := *md.Transcript
		md.Transcript = &t
	}
	res.MaskedFields = x.scanFields(&md, o.Redact)
	res.Found = &x.found
	keep := func(e *snap.Entry) bool {
		if !pats.Match(e.Path, e.Kind == snap.KindDir) && !(o.Redact && x.named[e.Path]) {
			return true
		}
		if o.Redact {
			res.Redacted = append(res.Redacted, strings.Clone(e.Path)) // (the pass's: see snap.WriteFull)
			return false
		}
		if e.Kind != snap.KindDir {
			res.Secrets = append(res.Secrets, strings.Clone(e.Path))
		}
		return true
	}
	var rewrite func(e *snap.Entry) func([]byte)
	if o.Redact {
		rewrite = func(e *snap.Entry) func([]byte) {
			fs := x.tree[e.Path]
			if len(fs) == 0 {
				return nil
			}
			res.Masked = append(res.Masked, MaskedFile{Path: strings.Clone(e.Path), Count: len(fs)})
			return func(b []byte) { secrets.Mask(b, fs) }
		}
	}
	var flags []durable.Flag
	if !o.Force {
		flags = append(flags, durable.NoReplace)
	}
	if !o.Force {
		if _, err := os.Lstat(o.Out); err == nil {
			return nil, &ExistsError{Path: o.Out}
		}
	}
	out, err := durable.Create(o.Out, layout.FileMode, flags...)
	if err != nil {
		return nil, err
	}
	defer out.Abort()

	top := "rewind-export-" + cp.ID
	info := BundleInfo{Type: BundleFormat, Version: BundleVersion, CreatedAt: time.Now().UTC(), RewindVersion: cmdline.VersionString(),
		SourceFolder: s.Project, Checkpoint: cp.ID, TakenAt: cp.CreatedAt, Description: md.Description, Prompt: md.Trigger.Prompt,
		TreeHash: cp.Snapshot.TreeHash, MaskedFields: res.MaskedFields}
	tw := tar.NewWriter(out)
	mtime := time.Now()
	add := func(name string, data []byte) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: top + "/" + name, Size: int64(len(data)), Mode: int64(layout.FileMode), ModTime: mtime, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		if name != BundleManifest {
			info.Members = append(info.Members, BundleMember{Name: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		}
		return nil
	}
	cpJSON, err := record.Encode(&md)
	if err != nil {
		return nil, err
	}
	if err := add(BundleCheckpoint, cpJSON); err != nil {
		return nil, fmt.Errorf("write %s: %w", o.Out, err)
	}
	// A member whose size is known only once written: its header is
	// reserved, the content streamed after it, then the header written.
	stream := func(name string, write func(w io.Writer) error) error {
		if err := tw.Flush(); err != nil {
			return err
		}
		at, err := out.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		if _, err := out.Write(make([]byte, 512)); err != nil {
			return err
		}
		h := sha256.New()
		cw := &ctxio.CountingWriter{W: io.MultiWriter(out, h)}
		bw := bufio.NewWriterSize(cw, 1<<20)
		if err := write(bw); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if pad := (512 - cw.N%512) % 512; pad > 0 {
			if _, err := out.Write(make([]byte, pad)); err != nil {
				return err
			}
		}
		var hb bytes.Buffer
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: top + "/" + name, Size: cw.N, Mode: int64(layout.FileMode), ModTime: mtime, Format: tar.FormatUSTAR}
		if err := tar.NewWriter(&hb).WriteHeader(hdr); err != nil {
			return err
		}
		if hb.Len() != 512 {
			return fmt.Errorf("tar header of %s is %d bytes", name, hb.Len())
		}
		if _, err := out.WriteAt(hb.Bytes(), at); err != nil {
			return err
		}
		info.Members = append(info.Members, BundleMember{Name: name, Size: cw.N, SHA256: hex.EncodeToString(h.Sum(nil))})
		return nil
	}
	if t := cp.Transcript; t != nil && t.Snapshot != "" {
		info.Agent, info.SessionID, info.Transcript = t.Agent, t.SessionID, t.OriginalPath
		info.TranscriptBytes, info.PrefixSHA256, info.TailSHA256 = t.Cursor.ByteOffsetEnd, t.Cursor.PrefixSHA256, t.Cursor.TailSHA256
		info.AgentVersion = agentVersion(chain)
		// The captures, one gzip member after another, are one gzip stream of
		// the transcript's bytes up to the cursor: copied as they are, unless
		// secrets are masked in them. Masked, they keep their length; the
		// hashes export.json records are the masked bytes'.
		err = stream(BundleTranscript, func(w io.Writer) error {
			if o.Redact && len(x.transcript) > 0 {
				sum := (*record.TranscriptSum)(nil).Clone()
				defer sum.Recycle()
				if err := x.writeMasked(ctx, w, chain, sum); err != nil {
					return err
				}
				c := sum.Cursor()
				if c.ByteOffsetEnd != t.Cursor.ByteOffsetEnd {
					return fmt.Errorf("the transcript holds %d bytes, its cursor says %d", c.ByteOffsetEnd, t.Cursor.ByteOffsetEnd)
				}
				info.PrefixSHA256, info.TailSHA256 = c.PrefixSHA256, c.TailSHA256
				info.TranscriptMasked = len(x.transcript)
				return nil
			}
			for _, f := range chain {
				r, err := os.Open(f)
				if err != nil {
					return err
				}
				_, err = io.Copy(w, r)
				r.Close()
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", o.Out, err)
		}
	}
	err = stream(BundleTree, func(w io.Writer) error {
		n, err := snap.WriteFull(ctx, w, m, snap.WriteOptions{Keep: keep, Rewrite: rewrite})
		info.Files = n
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", o.Out, err)
	}
	info.Redacted, info.Masked = res.Redacted, res.Masked
	ij, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := add(BundleManifest, append(ij, '\n')); err != nil {
		return nil, fmt.Errorf("write %s: %w", o.Out, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", o.Out, err)
	}
	if res.Bytes, err = out.Seek(0, io.SeekCurrent); err != nil {
		return nil, err
	}
	// The archive's SHA-256, for its receiver to check (rewind import --sha256):
	// the one hash that covers export.json too.
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	whole := sha256.New()
	if _, err := io.Copy(whole, out.File); err != nil {
		return nil, fmt.Errorf("read back %s: %w", o.Out, err)
	}
	res.SHA256 = hex.EncodeToString(whole.Sum(nil))
	if err := out.Commit(); err != nil {
		return nil, err
	}
	res.Agent, res.AgentVersion, res.SessionID, res.Files, res.Members = info.Agent, info.AgentVersion, info.SessionID, info.Files, info.Members
	res.TranscriptMasked = info.TranscriptMasked
	return res, nil
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
// the user's exports folder (ExportsDir) instead, made if need be.
func (s *Store) ExportPath(cp *Checkpoint, wd string) (string, error) {
	if !underDir(realPath(wd), realPath(s.Project)) {
		return exportName(wd, cp), nil
	}
	dir, err := ExportsDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, layout.DirMode); err != nil {
		return "", fmt.Errorf("exports folder: %w", err)
	}
	return exportName(dir, cp), nil
}

// ExportsDir is the user's folder for the exports of checkpoints taken
// inside a project: on macOS ~/Library/Application Support/rewind/exports;
// elsewhere $XDG_DATA_HOME/rewind/exports, or ~/.local/share/rewind/exports
// when that is unset (or not an absolute path, as the XDG spec has it).
func ExportsDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("exports folder: %w", err)
	}
	data := filepath.Join(home, ".local", "share")
	switch xdg := os.Getenv("XDG_DATA_HOME"); {
	case runtime.GOOS == "darwin":
		data = filepath.Join(home, "Library", "Application Support")
	case filepath.IsAbs(xdg):
		data = xdg
	}
	return filepath.Join(data, "rewind", "exports"), nil
}

// underDir reports whether path is dir or lies inside it (both clean and
// absolute).
func underDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
