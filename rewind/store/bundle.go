package store

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
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
	// Rewind writes and the newest it reads.
	BundleFormat  = "rewind-export"
	BundleVersion = 1
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
	// Redacted are the paths left out by --redact.
	Redacted []string       `json:"redacted,omitempty"`
	Members  []BundleMember `json:"members"`
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

// bundleLimit bounds the small members read into memory.
const bundleLimit = 16 << 20

// Bundle is an export archive read back and checked: its members other
// than the small ones are copied out to Dir (a temporary folder the caller
// removes with Close).
type Bundle struct {
	Path       string
	Info       BundleInfo
	Checkpoint Metadata
	Dir        string
	Tree       string // Dir's copy of tree.tar.gz
	Transcript string // Dir's copy of transcript.jsonl.gz; "" when there is none
}

// Close removes the copies.
func (b *Bundle) Close() { os.RemoveAll(b.Dir) }

// OpenBundle reads the export archive at name and checks it whole before
// anything is made of it: one top folder, only the members the format
// names, each once and a regular file, export.json of a version this Rewind
// reads, and every member's size and SHA-256 as export.json records them.
// The large members are copied into a temporary folder on the way, hashed
// as they are copied, so the archive is read once.
func OpenBundle(name string) (_ *Bundle, err error) {
	bad := func(format string, args ...any) error {
		return &BundleError{Path: name, Reason: fmt.Sprintf(format, args...)}
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("not a tar archive, or damaged (%v)", err)
		}
		clean := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		first, rest, _ := strings.Cut(clean, "/")
		if top == "" {
			top = first
		}
		if first != top || !strings.HasPrefix(top, "rewind-export-") || strings.HasPrefix(clean, "/") {
			return nil, bad("member %q lies outside its rewind-export-… folder", hdr.Name)
		}
		if rest == "" && hdr.Typeflag == tar.TypeDir {
			continue
		}
		if !slices.Contains(bundleMembers, rest) {
			return nil, bad("unknown member %q", hdr.Name)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, bad("member %q is not a regular file", hdr.Name)
		}
		if _, dup := members[rest]; dup {
			return nil, bad("member %q appears twice", hdr.Name)
		}
		h := sha256.New()
		var g got
		switch rest {
		case BundleTree, BundleTranscript:
			out := filepath.Join(dir, rest)
			w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, layout.FileMode)
			if err != nil {
				return nil, err
			}
			g.size, err = io.Copy(io.MultiWriter(w, h), tr)
			// The tree's archive becomes an imported checkpoint's own
			// (linked, and synced then): its writing starts now, beside
			// the restore, not at that sync.
			durable.StartWriteback(w.Fd(), 0, g.size)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, bad("member %q: %v", hdr.Name, err)
			}
			if rest == BundleTree {
				b.Tree = out
			} else {
				b.Transcript = out
			}
		default:
			if hdr.Size > bundleLimit {
				return nil, bad("member %q is %d bytes, more than a %s may be", hdr.Name, hdr.Size, rest)
			}
			if g.data, err = io.ReadAll(io.TeeReader(tr, h)); err != nil {
				return nil, bad("member %q: %v", hdr.Name, err)
			}
			g.size = int64(len(g.data))
		}
		g.sum = hex.EncodeToString(h.Sum(nil))
		members[rest] = g
	}
	info, ok := members[BundleManifest]
	if !ok {
		return nil, bad("no %s: not an export archive", BundleManifest)
	}
	if err := json.Unmarshal(info.data, &b.Info); err != nil {
		return nil, bad("%s: %v", BundleManifest, err)
	}
	if b.Info.Type != BundleFormat {
		return nil, bad("%s is of type %q, not %q", BundleManifest, b.Info.Type, BundleFormat)
	}
	if b.Info.Version < 1 || b.Info.Version > BundleVersion {
		return nil, bad("format version %d; this Rewind reads version %d (a newer Rewind wrote it?)", b.Info.Version, BundleVersion)
	}
	listed := map[string]bool{}
	for _, m := range b.Info.Members {
		g, ok := members[m.Name]
		switch {
		case m.Name == BundleManifest || listed[m.Name]:
			return nil, bad("%s lists %q twice or lists itself", BundleManifest, m.Name)
		case !ok:
			return nil, bad("member %s is missing", m.Name)
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
	if err := json.Unmarshal(members[BundleCheckpoint].data, &b.Checkpoint); err != nil {
		return nil, bad("%s: %v", BundleCheckpoint, err)
	}
	if b.Transcript != "" && (b.Info.PrefixSHA256 == "" || b.Info.TranscriptBytes <= 0) {
		return nil, bad("its transcript has no cursor in %s", BundleManifest)
	}
	return b, nil
}
