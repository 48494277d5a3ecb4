package store

import (
	"bytes"
	"context"
	"io"

	"github.com/klauspost/pgzip"
	"rewind.dev/fork"
	"rewind.dev/rewind/secrets"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"

	"rewind.dev/internal/ctxio"
)

// What an export scans for secrets (rewind.dev/rewind/secrets): every file
// of the tree it writes, but a binary one (a NUL byte in its first 8 KiB)
// or one over scanLimit, which are counted; the transcript; and the
// checkpoint's own text (its description and prompts).
const (
	scanLimit  = 10 << 20
	binaryPeek = 8 << 10
)

// SecretsFound is what an export's scan for secrets found.
type SecretsFound struct {
	Tree       []TreeSecret       `json:"tree"`
	Transcript []TranscriptSecret `json:"transcript"`
	Checkpoint []FieldSecret      `json:"checkpoint"`
	// FilesSkipped counts the files not scanned: binary, or over 10 MiB.
	FilesSkipped int `json:"files_skipped"`
}

// TreeSecret is a secret in a file of the tree: on Line (from 1), or the
// file itself when Line is 0 (a rule that goes by file names).
type TreeSecret struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
	Line int    `json:"line"`
}

// TranscriptSecret is a secret on a line of the transcript (from 1).
type TranscriptSecret struct {
	Rule string `json:"rule"`
	Line int    `json:"line"`
}

// FieldSecret is a secret in a text field of the checkpoint's metadata:
// "description", "prompt" (the prompt it was taken at) or "last_prompt".
type FieldSecret struct {
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// Count is how many secrets were found.
func (f *SecretsFound) Count() int { return len(f.Tree) + len(f.Transcript) + len(f.Checkpoint) }

// exportScan is an export's scan: what it found, and what --redact does
// with it.
type exportScan struct {
	found SecretsFound
	// tree holds the secrets of each file with some in its content; named,
	// the files that a rule reports by name (which --redact leaves out:
	// they cannot be masked).
	tree       map[string][]secrets.Finding
	named      map[string]bool
	transcript []secrets.Finding
}

// scanTree scans the files of the tree m describes that keep takes.
func (x *exportScan) scanTree(ctx context.Context, m *snap.Manifest, keep func(path string) bool) error {
	x.tree, x.named = map[string][]secrets.Finding{}, map[string]bool{}
	n := 0
	return snap.ReadFiles(m, keep, scanLimit, func(path string, data []byte) error {
		if n++; n&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if data == nil || bytes.IndexByte(data[:min(len(data), binaryPeek)], 0) >= 0 {
			x.found.FilesSkipped++
			data = nil // (the name is checked still)
		}
		for _, f := range secrets.Scan(path, data) {
			x.found.Tree = append(x.found.Tree, TreeSecret{Path: path, Rule: f.Rule, Line: f.Line})
			if f.End > f.Start {
				x.tree[path] = append(x.tree[path], f)
			} else {
				x.named[path] = true
			}
		}
		return nil
	})
}

// scanTranscript scans the transcript the captures of chain hold.
func (x *exportScan) scanTranscript(ctx context.Context, chain []string) error {
	r, err := fork.OpenSnapshots(chain)
	if err != nil {
		return err
	}
	defer r.Close()
	return secrets.ScanReader(ctx, "", r, func(f secrets.Finding) error {
		x.found.Transcript = append(x.found.Transcript, TranscriptSecret{Rule: f.Rule, Line: f.Line})
		x.transcript = append(x.transcript, f)
		return nil
	})
}

// scanFields scans the checkpoint's text fields, and with mask, masks what
// it finds in md's; it returns the names of the fields masked.
func (x *exportScan) scanFields(md *Metadata, mask bool) []string {
	type field struct {
		name string
		v    *string
	}
	fields := []field{{"description", &md.Description}, {"prompt", &md.Trigger.Prompt}}
	if md.Transcript != nil {
		fields = append(fields, field{"last_prompt", &md.Transcript.LastPrompt})
	}
	var masked []string
	for _, f := range fields {
		fs := secrets.Scan("", []byte(*f.v))
		for _, s := range fs {
			x.found.Checkpoint = append(x.found.Checkpoint, FieldSecret{Field: f.name, Rule: s.Rule})
		}
		if mask && len(fs) > 0 {
			b := []byte(*f.v)
			secrets.Mask(b, fs)
			*f.v = string(b)
			masked = append(masked, f.name)
		}
	}
	return masked
}

// writeMasked writes the transcript the captures of chain hold, inflated,
// through a masker of x's secrets, deflated onto w; sum takes the bytes
// written, before deflating.
func (x *exportScan) writeMasked(ctx context.Context, w io.Writer, chain []string, sum *record.TranscriptSum) error {
	r, err := fork.OpenSnapshots(chain)
	if err != nil {
		return err
	}
	defer r.Close()
	zw, err := pgzip.NewWriterLevel(w, pgzip.BestSpeed)
	if err != nil {
		return err
	}
	mw := secrets.NewJSONLinesMasker(io.MultiWriter(zw, sumWriter{sum}), x.transcript)
	if _, err := io.Copy(mw, ctxio.Reader{Ctx: ctx, R: r}); err != nil {
		return err
	}
	return zw.Close()
}

// sumWriter writes into a record.TranscriptSum.
type sumWriter struct{ t *record.TranscriptSum }

func (s sumWriter) Write(p []byte) (int, error) { s.t.Write(p); return len(p), nil }
