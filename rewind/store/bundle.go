package store

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
)

// An export archive ('rewind export') is a plain, uncompressed tar whose
// members lie in one folder, rewind-export-<checkpoint id>/:
//
//	checkpoint.json      the checkpoint's metadata, as its metadata.json
//	transcript.jsonl.gz  the transcript up to the checkpoint's cursor (when it has one)
//	tree.tar.gz          the whole tree at the checkpoint, a full snapshot as rewind-snap writes
//	export.json          what the archive is (format, version, agent, source folder), and the
//	                     size and SHA-256 of every other member; last, since it holds their hashes
//
// This file is the format's one owner: its names, export.json, and reading
// an archive back with every check made before anything is written.

// Names of an export archive's members.
const (
	BundleManifest   = "export.json"
	BundleCheckpoint = "checkpoint.json"
	BundleTranscript = "transcript.jsonl.gz"
	BundleTree       = "tree.tar.gz"
	// BundleFormat is export.json's type; BundleVersion the version this
	// Rewind writes and the newest it reads. Version 2 names checkpoint.json's
	// has_transcript so (version 1 wrote hasTranscript, still read): an
	// earlier Rewind, which reads version 1 only, says a newer one wrote the
	// archive rather than that a key is unknown.
	BundleFormat  = "rewind-export"
	BundleVersion = 2
)

// bundleMembers are the names an archive may hold, in the order they are written.
var bundleMembers = []string{BundleCheckpoint, BundleTranscript, BundleTree, BundleManifest}

// BundleInfo is export.json.
type BundleInfo struct {
	Type          string    `json:"type"` // BundleFormat
	Version       int       `json:"version"`
	CreatedAt     time.Time `json:"created_at"`
	RewindVersion string    `json:"rewind_version,omitempty"`
	Agent         string    `json:"agent,omitempty"`
	AgentVersion  string    `json:"agent_version,omitempty"`
	// SourceFolder is the project the checkpoint was taken in; SessionID
	// and Transcript the session its conversation is.
	SourceFolder string `json:"source_folder"`
	SessionID    string `json:"session_id,omitempty"`
	Transcript   string `json:"transcript,omitempty"`
	// Checkpoint names the checkpoint; its whole metadata is checkpoint.json.
	Checkpoint  string    `json:"checkpoint"`
	TakenAt     time.Time `json:"taken_at"`
	Description string    `json:"description,omitempty"`
	Prompt      string    `json:"prompt,omitempty"` // the prompt it was taken at, if any
	TreeHash    string    `json:"tree_hash"`        // of the checkpoint's whole tree (before redaction)
	Files       int       `json:"files"`            // files in tree.tar.gz
	// TranscriptBytes is the length of the conversation (inflated), and
	// PrefixSHA256 and TailSHA256 its cursor's hashes, checked on import.
	TranscriptBytes int64  `json:"transcript_bytes,omitempty"`
	PrefixSHA256    string `json:"prefix_sha256,omitempty"`
	TailSHA256      string `json:"tail_sha256,omitempty"`
	// Redacted are the paths left out by --redact; Masked the files whose
	// secrets it masked (same length), TranscriptMasked how many secrets
	// it masked in the transcript (which keeps its length: PrefixSHA256
	// and TailSHA256 are the masked bytes', not checkpoint.json's), and
	// MaskedFields the fields of checkpoint.json and this file it masked.
	Redacted         []string       `json:"redacted,omitempty"`
	Masked           []MaskedFile   `json:"masked,omitempty"`
	TranscriptMasked int            `json:"transcript_masked,omitempty"`
	MaskedFields     []string       `json:"masked_fields,omitempty"`
	Members          []BundleMember `json:"members"`
}

// BundleMember is one member of the archive other than export.json.
type BundleMember struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// BundleError is an export archive that is refused; nothing was written.
type BundleError struct {
	Path   string
	Reason string
}

func (e *BundleError) Error() string {
	return fmt.Sprintf("export archive %s: %s; nothing was written", e.Path, e.Reason)
}

// Bounds on what an archive may hold, so that one cannot fill the disk or
// memory before its checks fail: the small members are read into memory.
const (
	bundleLimit      = 16 << 20 // export.json, checkpoint.json
	bundleTreeLimit  = 1 << 40  // tree.tar.gz (its entries are bounded by snap's limits)
	bundleTextLimit  = 64 << 30 // transcript.jsonl.gz, and the transcript inflated
	bundleFieldLimit = 4096     // a path or other text of export.json
)

// Bundle is an export archive read back and checked: its members other
// than the small ones are copied out to Dir (a temporary folder the caller
// removes with Close).
type Bundle struct {
	Path       string
	SHA256     string // of the whole archive, as sha256sum prints it
	Info       BundleInfo
	Checkpoint Metadata
	Dir        string
	Tree       string // Dir's copy of tree.tar.gz
	Transcript string // Dir's copy of transcript.jsonl.gz; "" when there is none
}

// Close removes the copies.
func (b *Bundle) Close() { os.RemoveAll(b.Dir) }

// OpenBundle reads the export archive at name and checks it whole before
// anything is made of it, writing nothing but its copies in a temporary
// folder: one top folder named for the checkpoint, only the members the
// format names, each once, a regular file and within its bound; export.json
// and checkpoint.json of a version this Rewind reads, with no field it does
// not know, every name in them of its grammar (checkpoint id, session id,
// agent from the closed list, folders as clean absolute paths), and every
// field export.json shares with checkpoint.json equal to it; every member's
// size and SHA-256 as export.json records them; the transcript inflating to
// exactly the bytes its cursor says; and the tree passing the checks a
// restore makes, holding the files export.json counts. The archive is read
// once; the tree and transcript are read again from the copies.
func OpenBundle(ctx context.Context, name string) (_ *Bundle, err error) {
	bad := func(format string, args ...any) error {
		return &BundleError{Path: name, Reason: fmt.Sprintf(format, args...)}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, bad("not a regular file")
	}
	// No member holds more bytes than the archive: one that would (a sparse
	// file's holes, which tar fills with zeros) could fill the disk.
	size := fi.Size()
	dir, err := os.MkdirTemp("", "rewind-import-")
	if err != nil {
		return nil, err
	}
	b := &Bundle{Path: name, Dir: dir}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	type got struct {
		size int64
		sum  string
		data []byte
	}
	members := map[string]got{}
	top := ""
	whole := sha256.New()
	tr := tar.NewReader(io.TeeReader(f, whole))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("not a tar archive, or damaged (%v)", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clean := strings.TrimSuffix(strings.TrimPrefix(hdr.Name, "./"), "/")
		if !filepath.IsLocal(clean) || path.Clean(clean) != clean || layout.HasControl(clean) {
			return nil, bad("member %q is not a clean relative name", hdr.Name)
		}
		first, rest, _ := strings.Cut(clean, "/")
		if top == "" {
			top = first
		}
		if first != top || !strings.HasPrefix(top, bundleTop) {
			return nil, bad("member %q lies outside its %s… folder", hdr.Name, bundleTop)
		}
		if rest == "" && hdr.Typeflag == tar.TypeDir {
			continue
		}
		if !slices.Contains(bundleMembers, rest) {
			return nil, bad("unknown member %q", hdr.Name)
		}
		if hdr.Typeflag != tar.TypeReg || sparse(hdr) {
			return nil, bad("member %q is not a regular file", hdr.Name)
		}
		if hdr.Size > size {
			return nil, bad("member %q claims %d bytes, more than the archive holds", hdr.Name, hdr.Size)
		}
		if _, dup := members[rest]; dup {
			return nil, bad("member %q appears twice", hdr.Name)
		}
		h := sha256.New()
		var g got
		switch rest {
		case BundleTree, BundleTranscript:
			limit := int64(bundleTreeLimit)
			if rest == BundleTranscript {
				limit = bundleTextLimit
			}
			if hdr.Size > limit {
				return nil, bad("member %s is %d bytes, more than a %s may be", rest, hdr.Size, rest)
			}
			out := filepath.Join(dir, rest)
			w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, layout.FileMode)
			if err != nil {
				return nil, err
			}
			g.size, err = io.Copy(io.MultiWriter(w, h), io.LimitReader(tr, size))
			// The tree's archive becomes an imported checkpoint's own
			// (linked, and synced then): its writing starts now, beside
			// the restore, not at that sync.
			durable.StartWriteback(w.Fd(), 0, g.size)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, bad("member %s: %v", rest, err)
			}
			if rest == BundleTree {
				b.Tree = out
			} else {
				b.Transcript = out
			}
		default:
			if hdr.Size > bundleLimit {
				return nil, bad("member %s is %d bytes, more than a %s may be", rest, hdr.Size, rest)
			}
			if g.data, err = io.ReadAll(io.TeeReader(tr, h)); err != nil {
				return nil, bad("member %s: %v", rest, err)
			}
			g.size = int64(len(g.data))
		}
		g.sum = hex.EncodeToString(h.Sum(nil))
		members[rest] = g
	}
	if _, err := io.Copy(whole, f); err != nil { // (the archive's end, past tar's)
		return nil, err
	}
	b.SHA256 = hex.EncodeToString(whole.Sum(nil))
	info, ok := members[BundleManifest]
	if !ok {
		return nil, bad("no %s: not an export archive", BundleManifest)
	}
	if err := record.DecodeStrict(info.data, &b.Info); err != nil {
		return nil, bad("%s: %v", BundleManifest, err)
	}
	if b.Info.Type != BundleFormat {
		return nil, bad("%s is of type %q, not %q", BundleManifest, b.Info.Type, BundleFormat)
	}
	if b.Info.Version < 1 || b.Info.Version > BundleVersion {
		return nil, bad("format version %d; this Rewind reads versions 1 to %d (a newer Rewind wrote it?)", b.Info.Version, BundleVersion)
	}
	listed := map[string]bool{}
	for _, m := range b.Info.Members {
		g, ok := members[m.Name]
		switch {
		case m.Name == BundleManifest || listed[m.Name]:
			return nil, bad("%s lists %q twice or lists itself", BundleManifest, m.Name)
		case !ok:
			return nil, bad("member %q is missing", m.Name)
		case g.size != m.Size:
			return nil, bad("member %s is %d bytes where %s records %d", m.Name, g.size, BundleManifest, m.Size)
		case g.sum != m.SHA256:
			return nil, bad("member %s's SHA-256 differs from the one %s records: the archive was changed or damaged", m.Name, BundleManifest)
		}
		listed[m.Name] = true
	}
	for n := range members {
		if n != BundleManifest && !listed[n] {
			return nil, bad("member %s is not listed in %s", n, BundleManifest)
		}
	}
	if !listed[BundleTree] || !listed[BundleCheckpoint] {
		return nil, bad("it holds no %s or no %s", BundleTree, BundleCheckpoint)
	}
	cpJSON := members[BundleCheckpoint].data
	if err := record.CheckSum(cpJSON); err != nil {
		return nil, bad("%s: %v", BundleCheckpoint, err)
	}
	if b.Checkpoint, err = record.Decode(cpJSON, true); err != nil {
		return nil, bad("%s: %v", BundleCheckpoint, err)
	}
	if top != bundleTop+b.Info.Checkpoint {
		return nil, bad("its folder %q does not name its checkpoint %q", top, b.Info.Checkpoint)
	}
	if err := b.Info.check(&b.Checkpoint, b.Transcript != ""); err != nil {
		return nil, bad("%v", err)
	}
	if b.Transcript != "" {
		if err := checkBundleTranscript(b.Transcript, b.Info); err != nil {
			return nil, bad("%s: %v", BundleTranscript, err)
		}
	}
	files := 0
	err = snap.List(b.Tree, func(e *snap.Entry) error {
		if e.Kind == snap.KindFile {
			files++
		}
		return ctx.Err()
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, bad("%s: %v", BundleTree, err)
	}
	if files != b.Info.Files {
		return nil, bad("%s holds %d files where %s records %d", BundleTree, files, BundleManifest, b.Info.Files)
	}
	return b, nil
}

// sparse reports whether a tar header is a sparse file's (GNU's PAX form: its
// type is a regular file's), whose holes the reader would make up.
func sparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// bundleTop starts the name of an archive's one folder; the checkpoint's id ends it.
const bundleTop = "rewind-export-"

// check holds export.json to its grammar and to the checkpoint's metadata
// cp: every name that may become a path, or a word on the screen, is one it
// may be, and what both files say they say alike. hasTranscript says whether
// the archive holds the conversation.
func (i *BundleInfo) check(cp *Metadata, hasTranscript bool) error {
	if !isID(i.Checkpoint) {
		return fmt.Errorf("checkpoint %q is not a checkpoint id", i.Checkpoint)
	}
	if cp.ID != i.Checkpoint {
		return fmt.Errorf("%s is of checkpoint %q, %s of %q", BundleCheckpoint, cp.ID, BundleManifest, i.Checkpoint)
	}
	for _, f := range []struct{ name, v string }{
		{"rewind_version", i.RewindVersion}, {"agent_version", i.AgentVersion}, {"source_folder", i.SourceFolder},
		{"transcript", i.Transcript}, {"description", i.Description}, {"prompt", i.Prompt},
	} {
		if len(f.v) > bundleFieldLimit || !utf8.ValidString(f.v) {
			return fmt.Errorf("%s is longer than %d bytes or not UTF-8", f.name, bundleFieldLimit)
		}
	}
	if !cleanAbs(i.SourceFolder) {
		return fmt.Errorf("source_folder %q is not a clean absolute path", i.SourceFolder)
	}
	if i.Transcript != "" && !cleanAbs(i.Transcript) {
		return fmt.Errorf("transcript %q is not a clean absolute path", i.Transcript)
	}
	if i.Agent != "" {
		if d, err := jsonl.LookupDialect(i.Agent); err != nil || d.Name != i.Agent {
			return fmt.Errorf("agent %q is not one Rewind knows (%s)", i.Agent, strings.Join(jsonl.DialectNames(), ", "))
		}
	}
	if i.SessionID != "" && !layout.ValidSessionID(i.SessionID) {
		return fmt.Errorf("session_id %q is not an agent's session id", i.SessionID)
	}
	if i.Files < 0 || i.TranscriptBytes < 0 || i.TranscriptBytes > bundleTextLimit {
		return fmt.Errorf("its counts are out of range")
	}
	for _, r := range i.Redacted {
		if !filepath.IsLocal(r) || layout.HasControl(r) {
			return fmt.Errorf("redacted path %q is not a relative path", r)
		}
	}
	for _, m := range i.Masked {
		if !filepath.IsLocal(m.Path) || layout.HasControl(m.Path) || m.Count <= 0 {
			return fmt.Errorf("masked path %q is not a relative path, or its count is out of range", m.Path)
		}
	}
	for _, f := range i.MaskedFields {
		if !slices.Contains(maskableFields, f) {
			return fmt.Errorf("masked field %q is not one a secret is masked in", f)
		}
	}
	if i.TranscriptMasked < 0 || i.TranscriptMasked > 0 && !hasTranscript {
		return fmt.Errorf("transcript_masked is out of range")
	}
	same := func(field string, a, b any) error {
		if a != b {
			return fmt.Errorf("%s says %s %v where %s says %v", BundleManifest, field, a, BundleCheckpoint, b)
		}
		return nil
	}
	t := cp.Transcript
	if hasTranscript != (t != nil && t.Snapshot != "") || hasTranscript != cp.HasTranscript {
		return fmt.Errorf("%s and %s disagree on whether it holds a transcript", BundleManifest, BundleCheckpoint)
	}
	errs := []error{
		same("taken_at", i.TakenAt.UTC(), cp.CreatedAt.UTC()), same("description", i.Description, cp.Description),
		same("prompt", i.Prompt, cp.Trigger.Prompt), same("tree_hash", i.TreeHash, cp.Snapshot.TreeHash),
	}
	if hasTranscript {
		if i.TranscriptBytes <= 0 || i.PrefixSHA256 == "" || i.TailSHA256 == "" {
			return fmt.Errorf("its transcript has no cursor in %s", BundleManifest)
		}
		errs = append(errs, same("agent", i.Agent, t.Agent), same("session_id", i.SessionID, t.SessionID),
			same("transcript", i.Transcript, t.OriginalPath), same("transcript_bytes", i.TranscriptBytes, t.Cursor.ByteOffsetEnd))
	} else if i.Agent != "" || i.SessionID != "" || i.TranscriptBytes != 0 {
		return fmt.Errorf("%s names a conversation the archive does not hold", BundleManifest)
	}
	return errors.Join(errs...)
}

// checkBundleTranscript inflates an archive's transcript and checks that it
// is exactly the bytes export.json's cursor says: its length and the hashes
// of its first and last bytes. It stops a byte past that length, so a
// transcript that inflates without end is refused there.
func checkBundleTranscript(name string, i BundleInfo) error {
	r, err := record.OpenTranscript([]string{name})
	if err != nil {
		return err
	}
	defer r.Close()
	t := (*record.TranscriptSum)(nil).Clone()
	defer t.Recycle()
	buf := make([]byte, 64<<10)
	lr := io.LimitReader(r, i.TranscriptBytes+1)
	for {
		n, err := lr.Read(buf)
		t.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("does not inflate: %w", err)
		}
	}
	return t.Check(jsonl.Cursor{ByteOffsetEnd: i.TranscriptBytes, PrefixSHA256: i.PrefixSHA256, TailSHA256: i.TailSHA256})
}

// cleanAbs reports whether p is an absolute path as its system writes one
// (this system's, or the other family's: an archive may come from Windows),
// clean, without control characters.
func cleanAbs(p string) bool {
	if p == "" || layout.HasControl(p) {
		return false
	}
	if strings.HasPrefix(p, "/") {
		return path.Clean(p) == p
	}
	if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') { // C:\…
		return !strings.Contains(p, "..")
	}
	return false
}
