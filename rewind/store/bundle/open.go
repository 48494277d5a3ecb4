package bundle

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
)

// Open reads the export archive at name and checks it whole before
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
// once; the tree and transcript are read again from the copies. A refused
// archive is an *Error.
func Open(ctx context.Context, name string) (_ *Archive, err error) {
	r := &reader{ctx: ctx, name: name, members: map[string]member{}}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, r.bad("not a regular file")
	}
	// No member holds more bytes than the archive: one that would (a sparse
	// file's holes, which tar fills with zeros) could fill the disk.
	r.size = fi.Size()
	dir, err := os.MkdirTemp("", "rewind-import-")
	if err != nil {
		return nil, err
	}
	r.a = &Archive{Path: name, Dir: dir}
	defer func() {
		if err != nil {
			r.a.Close()
		}
	}()
	if err := r.read(f); err != nil {
		return nil, err
	}
	for _, check := range []func() error{r.decodeInfo, r.checkMembers, r.decodeCheckpoint, r.checkInfo, r.checkTranscript, r.checkTree} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return r.a, nil
}

// reader is one Open: the archive it reads, and what it found there.
type reader struct {
	ctx     context.Context
	name    string
	size    int64 // the archive's
	a       *Archive
	top     string            // the one folder the members lie in
	members map[string]member // by name within top
}

// member is a member read: its size and SHA-256, and its bytes when it is
// a small one (export.json, checkpoint.json).
type member struct {
	size int64
	sum  string
	data []byte
}

// bad is the archive refused for the reason format says.
func (r *reader) bad(format string, args ...any) error {
	return &Error{Path: r.name, Reason: fmt.Sprintf(format, args...)}
}

// read reads the archive f through once: each member is checked by its
// header and copied out or held, and the whole archive hashed.
func (r *reader) read(f *os.File) error {
	whole := sha256.New()
	tr := tar.NewReader(io.TeeReader(f, whole))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r.bad("not a tar archive, or damaged (%v)", err)
		}
		if err := r.ctx.Err(); err != nil {
			return err
		}
		name, err := r.memberName(hdr)
		if err != nil {
			return err
		} else if name == "" {
			continue // the top folder itself
		}
		if err := r.readMember(hdr, name, tr); err != nil {
			return err
		}
	}
	if _, err := io.Copy(whole, f); err != nil { // (the archive's end, past tar's)
		return err
	}
	r.a.SHA256 = hex.EncodeToString(whole.Sum(nil))
	return nil
}

// memberName is hdr's name within the archive's one folder: a member the
// format names, a regular file within the archive's size, not met before;
// "" for the folder itself.
func (r *reader) memberName(hdr *tar.Header) (string, error) {
	clean := strings.TrimSuffix(strings.TrimPrefix(hdr.Name, "./"), "/")
	if !filepath.IsLocal(clean) || path.Clean(clean) != clean || layout.HasControl(clean) {
		return "", r.bad("member %q is not a clean relative name", hdr.Name)
	}
	first, rest, _ := strings.Cut(clean, "/")
	if r.top == "" {
		r.top = first
	}
	if first != r.top || !strings.HasPrefix(r.top, topPrefix) {
		return "", r.bad("member %q lies outside its %s… folder", hdr.Name, topPrefix)
	}
	if rest == "" && hdr.Typeflag == tar.TypeDir {
		return "", nil
	}
	if !slices.Contains(names, rest) {
		return "", r.bad("unknown member %q", hdr.Name)
	}
	if hdr.Typeflag != tar.TypeReg || sparse(hdr) {
		return "", r.bad("member %q is not a regular file", hdr.Name)
	}
	if hdr.Size > r.size {
		return "", r.bad("member %q claims %d bytes, more than the archive holds", hdr.Name, hdr.Size)
	}
	if _, dup := r.members[rest]; dup {
		return "", r.bad("member %q appears twice", hdr.Name)
	}
	return rest, nil
}

// readMember reads the member name, whose header is hdr, from tr: the tree
// and the transcript are copied out to the temporary folder, the small
// ones held.
func (r *reader) readMember(hdr *tar.Header, name string, tr io.Reader) error {
	limit := int64(smallLimit)
	switch name {
	case TreeName:
		limit = treeLimit
	case TranscriptName:
		limit = textLimit
	}
	if hdr.Size > limit {
		return r.bad("member %s is %d bytes, more than a %s may be", name, hdr.Size, name)
	}
	h := sha256.New()
	var m member
	var err error
	if name == TreeName || name == TranscriptName {
		m.size, err = r.copyOut(name, tr, h)
	} else {
		if m.data, err = io.ReadAll(io.TeeReader(tr, h)); err == nil {
			m.size = int64(len(m.data))
		} else {
			err = r.bad("member %s: %v", name, err)
		}
	}
	if err != nil {
		return err
	}
	m.sum = hex.EncodeToString(h.Sum(nil))
	r.members[name] = m
	return nil
}

// copyOut copies the member name from tr into the temporary folder,
// hashing it into h, and returns its size.
func (r *reader) copyOut(name string, tr io.Reader, h hash.Hash) (int64, error) {
	out := filepath.Join(r.a.Dir, name)
	w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, layout.FileMode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(tr, r.size))
	// The tree's archive becomes an imported checkpoint's own (linked, and
	// synced then): its writing starts now, beside the restore, not at that
	// sync.
	durable.StartWriteback(w.Fd(), 0, n)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, r.bad("member %s: %v", name, err)
	}
	if name == TreeName {
		r.a.Tree = out
	} else {
		r.a.Transcript = out
	}
	return n, nil
}

// decodeInfo decodes export.json, of this format and a version this
// Rewind reads.
func (r *reader) decodeInfo() error {
	m, ok := r.members[ManifestName]
	if !ok {
		return r.bad("no %s: not an export archive", ManifestName)
	}
	i := &r.a.Info
	if err := record.DecodeStrict(m.data, i); err != nil {
		return r.bad("%s: %v", ManifestName, err)
	}
	if i.Type != Format {
		return r.bad("%s is of type %q, not %q", ManifestName, i.Type, Format)
	}
	if i.Version < 1 || i.Version > Version {
		return r.bad("format version %d; this Rewind reads versions 1 to %d (a newer Rewind wrote it?)", i.Version, Version)
	}
	return nil
}

// checkMembers checks the members read against those export.json lists:
// each listed once, there, of its size and SHA-256, and none unlisted; the
// tree and checkpoint.json among them.
func (r *reader) checkMembers() error {
	listed := map[string]bool{}
	for _, m := range r.a.Info.Members {
		g, ok := r.members[m.Name]
		switch {
		case m.Name == ManifestName || listed[m.Name]:
			return r.bad("%s lists %q twice or lists itself", ManifestName, m.Name)
		case !ok:
			return r.bad("member %q is missing", m.Name)
		case g.size != m.Size:
			return r.bad("member %s is %d bytes where %s records %d", m.Name, g.size, ManifestName, m.Size)
		case g.sum != m.SHA256:
			return r.bad("member %s's SHA-256 differs from the one %s records: the archive was changed or damaged", m.Name, ManifestName)
		}
		listed[m.Name] = true
	}
	for n := range r.members {
		if n != ManifestName && !listed[n] {
			return r.bad("member %s is not listed in %s", n, ManifestName)
		}
	}
	if !listed[TreeName] || !listed[CheckpointName] {
		return r.bad("it holds no %s or no %s", TreeName, CheckpointName)
	}
	return nil
}

// decodeCheckpoint verifies checkpoint.json's checksum and decodes it,
// refusing a key this Rewind does not know.
func (r *reader) decodeCheckpoint() error {
	data := r.members[CheckpointName].data
	if err := record.CheckSum(data); err != nil {
		return r.bad("%s: %v", CheckpointName, err)
	}
	var err error
	if r.a.Checkpoint, err = record.Decode(data, true); err != nil {
		return r.bad("%s: %v", CheckpointName, err)
	}
	return nil
}

// checkInfo checks that the archive's folder names its checkpoint, and
// export.json against its grammar and checkpoint.json.
func (r *reader) checkInfo() error {
	if r.top != Top(r.a.Info.Checkpoint) {
		return r.bad("its folder %q does not name its checkpoint %q", r.top, r.a.Info.Checkpoint)
	}
	if err := r.a.Info.check(&r.a.Checkpoint, r.a.Transcript != ""); err != nil {
		return r.bad("%v", err)
	}
	return nil
}

// checkTranscript checks the transcript, when there is one, against
// export.json's cursor.
func (r *reader) checkTranscript() error {
	if r.a.Transcript == "" {
		return nil
	}
	if err := checkTranscript(r.a.Transcript, &r.a.Info); err != nil {
		return r.bad("%s: %v", TranscriptName, err)
	}
	return nil
}

// checkTree reads the tree through as a restore would, counting its files.
func (r *reader) checkTree() error {
	files := 0
	err := snap.List(r.a.Tree, func(e *snap.Entry) error {
		if e.Kind == snap.KindFile {
			files++
		}
		return r.ctx.Err()
	})
	if err != nil {
		if r.ctx.Err() != nil {
			return r.ctx.Err()
		}
		return r.bad("%s: %v", TreeName, err)
	}
	if files != r.a.Info.Files {
		return r.bad("%s holds %d files where %s records %d", TreeName, files, ManifestName, r.a.Info.Files)
	}
	return nil
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
