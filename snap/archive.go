package snap

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/klauspost/pgzip"

	"rewind.dev/internal/ctxio"
	"rewind.dev/snap/gzmember"
)

// maxDeflateRatio is deflate's best possible compression (about 1032:1): an
// archive whose headers declare more content than that ratio allows cannot
// be a whole archive, and is refused before anything is inflated.
const maxDeflateRatio = 1100

// maxTrailer bounds what may follow the tar end marker inside the gzip
// stream (tar pads to its record size, 10 KiB by default).
const maxTrailer = 1 << 20

// ArchiveError is a refusal to read an archive: the entry it concerns (if
// any) and why.
type ArchiveError struct {
	Archive string
	Entry   string
	Reason  string
}

func (e *ArchiveError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("archive %s: entry %q: %s", e.Archive, e.Entry, e.Reason)
	}
	return fmt.Sprintf("archive %s: %s", e.Archive, e.Reason)
}

// archiveScanner reads an archive entry by entry, refusing anything that
// could not have come from a tree: unsafe names, duplicates, conflicts,
// unsupported types, and sizes past the limits.
type archiveScanner struct {
	name   string
	limits Limits
	fold   Folding // how the target file system compares names: names it takes for one collide
	kind   string  // the archive's mark: "full", "layer", or "" (none; see archiveKind)

	f      *os.File
	zr     io.Reader // the inflated stream: a *pgzip.Reader, a *gzmember.Reader or a *gzmember.ReadAhead
	tr     *tar.Reader
	cr     *ctxio.CountingReader // what tr has read of zr
	next0  int64                 // where in zr the next header starts
	csize  int64
	seen   map[string]Kind
	folded map[string]string
	dirs   map[string]bool // every folder implied by a path seen so far
	bytes  int64
	n      int

	// A manifest's entries are checked in walk order (its format's) rather
	// than against maps of every path: last is the entry before, and above
	// the listed entries above it (each entry is pushed; the next pops
	// those it is not inside).
	ordered    bool
	disordered bool // an entry was out of walk order (refused)
	last       string
	above      []listed
	// scoped checks spellings (see recordSpelling) among each folder's
	// entries, in the listed folders above, rather than in a map of every
	// path: two names one folder holds are all that can collide where
	// every folder is listed, and a manifest that implies one is
	// errImpliedFolder. rootNames is the root's.
	scoped    bool
	rootNames map[string]string
	// unchecked leaves out the checks across entries (duplicates,
	// conflicts, spellings): an archive copied into walk order is checked
	// as its copy is read (see inWalkOrder).
	unchecked bool
}

type listed struct {
	path  string
	kind  Kind
	names map[string]string // scoped: the fold keys of the names in it, to their paths
}

func openArchive(name string, limits Limits, fold Folding) (*archiveScanner, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	zr, err := pgzip.NewReaderN(f, 1<<20, 4)
	if err != nil {
		f.Close()
		return nil, &ArchiveError{Archive: name, Reason: "not a gzip file (" + err.Error() + ")"}
	}
	return newScanner(name, limits, fold, archiveKind(zr.Header.Extra), f, zr, fi.Size()), nil
}

// openArchiveMembers opens an archive to be read member by member, so
// that each entry's place — the gzip member holding its header and how far
// into it — is known (Entry.COff, Entry.Skip): what a manifest records and
// a restore seeks to.
//
// With ahead, the members are inflated in a goroutine a few blocks ahead of
// the reader, for a long read with other work to overlap (a restore);
// without, on the caller's goroutine, which suits short archives read many
// at a time (validate).
func openArchiveMembers(name string, limits Limits, fold Folding, ahead bool) (*archiveScanner, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("archive %s: %w", name, err)
	}
	ms, err := gzmember.NewReader(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, &ArchiveError{Archive: name, Reason: "not a gzip file (" + err.Error() + ")"}
	}
	kind := archiveKind(ms.Extra())
	if ahead {
		return newScanner(name, limits, fold, kind, f, gzmember.NewReadAhead(ms), fi.Size()), nil
	}
	return newScanner(name, limits, fold, kind, f, ms, fi.Size()), nil
}

// placer knows where in the archive a byte of the inflated stream is: a
// gzmember.Reader, read directly or through a gzmember.ReadAhead.
type placer interface {
	At(pos int64) (coff, skip int64)
}

func newScanner(name string, limits Limits, fold Folding, kind string, f *os.File, zr io.Reader, csize int64) *archiveScanner {
	cr := &ctxio.CountingReader{R: zr}
	s := &archiveScanner{
		name: name, limits: limits, fold: fold, kind: kind, f: f, zr: zr, tr: tar.NewReader(cr), cr: cr, csize: csize,
		seen: map[string]Kind{}, dirs: map[string]bool{},
	}
	if fold.Folds() {
		s.folded = map[string]string{}
	}
	return s
}

func (s *archiveScanner) Close() error {
	if zr, ok := s.zr.(io.Closer); ok {
		zr.Close()
	}
	return s.f.Close()
}

func (s *archiveScanner) refuse(entry, format string, args ...any) error {
	return &ArchiveError{Archive: s.name, Entry: entry, Reason: fmt.Sprintf(format, args...)}
}

// next returns the next entry and a reader for a file's content; io.EOF at
// the end, after the gzip checksum has been verified.
func (s *archiveScanner) next() (*Entry, io.Reader, error) {
	for {
		start := s.next0
		hdr, err := s.tr.Next()
		if err == io.EOF {
			return nil, nil, s.finish()
		}
		if err != nil {
			return nil, nil, s.corrupt(err)
		}
		// tar reads exactly the header's blocks: the content, padded to a
		// block, ends where the next header starts. (tar.Reader reports an
		// old-style regular file, TypeRegA, as TypeReg.)
		s.next0 = s.cr.N
		if hdr.Typeflag == tar.TypeReg {
			s.next0 += (hdr.Size + 511) &^ 511
		}
		e, skip, err := s.check(hdr)
		if err != nil {
			return nil, nil, err
		}
		if skip {
			continue
		}
		if ms, ok := s.zr.(placer); ok {
			e.COff, e.Skip = ms.At(start)
		}
		if e.Kind == KindFile {
			return e, s.tr, nil
		}
		return e, nil, nil
	}
}

func (s *archiveScanner) corrupt(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &ArchiveError{Archive: s.name, Reason: "truncated (unexpected end of data); the archive is incomplete"}
	}
	return &ArchiveError{Archive: s.name, Reason: "corrupt: " + err.Error()}
}

// finish reads what follows the tar end marker, so the gzip checksum and
// length are verified.
func (s *archiveScanner) finish() error {
	n, err := io.Copy(io.Discard, io.LimitReader(s.zr, maxTrailer+1))
	if err != nil {
		return s.corrupt(err)
	}
	if n > maxTrailer {
		return &ArchiveError{Archive: s.name, Reason: "unexpected data after the end of the tar stream"}
	}
	return io.EOF
}

// check validates one header and turns it into an entry. skip is true for a
// "." entry, which names the root itself.
func (s *archiveScanner) check(hdr *tar.Header) (e *Entry, skip bool, err error) {
	raw := hdr.Name
	name := strings.TrimPrefix(raw, "./")
	if hdr.Typeflag == tar.TypeDir {
		name = strings.TrimSuffix(name, "/")
	}
	if name == "" || name == "." {
		if hdr.Typeflag == tar.TypeDir {
			return nil, true, nil
		}
		return nil, false, s.refuse(raw, "empty name")
	}
	if err := s.checkName(raw, name); err != nil {
		return nil, false, err
	}
	e = &Entry{Path: name, Mode: fs.FileMode(hdr.Mode) & fs.ModePerm, MTime: hdr.ModTime.UnixNano()}
	switch hdr.Typeflag {
	case tar.TypeReg: // tar.Reader reports TypeRegA as TypeReg
		e.Kind = KindFile
		e.Size = hdr.Size
		if hdr.Size < 0 {
			return nil, false, s.refuse(raw, "negative size")
		}
		s.bytes += hdr.Size
		if s.bytes > s.limits.MaxBytes {
			return nil, false, s.refuse(raw, "content exceeds the limit of %d bytes in total", s.limits.MaxBytes)
		}
		if s.bytes/maxDeflateRatio > s.csize {
			return nil, false, s.refuse(raw, "declares %d bytes of content, more than a %d-byte archive can hold (a compression bomb or a truncated file)", s.bytes, s.csize)
		}
	case tar.TypeDir:
		e.Kind = KindDir
	case tar.TypeSymlink:
		e.Kind = KindSymlink
		e.Mode = 0o777
		e.Link = hdr.Linkname
		e.Size = int64(len(hdr.Linkname))
		if err := s.checkLinkTarget(raw, hdr.Linkname); err != nil {
			return nil, false, err
		}
	case tar.TypeLink:
		return nil, false, s.refuse(raw, "hard links are not supported")
	case tar.TypeChar, tar.TypeBlock:
		return nil, false, s.refuse(raw, "device files are not supported")
	case tar.TypeFifo:
		return nil, false, s.refuse(raw, "FIFOs are not supported")
	default:
		return nil, false, s.refuse(raw, "unsupported entry type %q", string(hdr.Typeflag))
	}
	if err := s.checkGit(raw, e); err != nil {
		return nil, false, err
	}
	if err := s.record(raw, e); err != nil {
		return nil, false, err
	}
	return e, false, nil
}

// recordSpelling refuses a path that a file system folding names (see
// Folding) takes for one recorded before, and records it.
func (s *archiveScanner) recordSpelling(raw, name string) error {
	if s.folded == nil {
		return nil
	}
	return s.spelling(s.folded, s.fold.Key(name), raw, name)
}

// spelling refuses name where names, the spellings met so far by fold key,
// holds its key already, and records it.
func (s *archiveScanner) spelling(names map[string]string, key, raw, name string) error {
	if other, ok := names[key]; ok {
		return s.refuse(raw, "collides with %q on this file system, which takes them for one name (%s)", other, s.fold)
	}
	names[key] = name
	return nil
}

// recordSpellingIn is recordSpelling for a scanner that is scoped: name
// is checked against the other names of its folder, the nearest listed
// entry above it.
func (s *archiveScanner) recordSpellingIn(raw, name string) error {
	dir, base := path.Split(name)
	names := &s.rootNames
	if n := len(s.above); n > 0 {
		names = &s.above[n-1].names
		if s.above[n-1].path+"/" != dir {
			return errImpliedFolder
		}
	} else if dir != "" {
		return errImpliedFolder
	}
	if !s.fold.Folds() {
		return nil
	}
	if *names == nil {
		*names = map[string]string{}
	}
	return s.spelling(*names, s.fold.Key(base), raw, name)
}

// recordInOrder is record for entries in walk order. Walk order leaves no
// room for a duplicate, nor for an entry where an earlier one needed a
// folder (that one would come after it), and a listed file or symlink
// above an entry would be the nearest listed entry above it: the first
// entry inside it is refused.
func (s *archiveScanner) recordInOrder(raw string, e *Entry) error {
	switch c := comparePaths(s.last, e.Path); {
	case s.n == 1:
	case c == 0:
		return s.refuse(raw, "duplicate entry")
	case c > 0:
		s.disordered = true
		return s.refuse(raw, "out of walk order (after %s)", s.last)
	}
	for len(s.above) > 0 && !strings.HasPrefix(e.Path, s.above[len(s.above)-1].path+"/") {
		s.above = s.above[:len(s.above)-1]
	}
	if n := len(s.above); n > 0 && s.above[n-1].kind != KindDir {
		return s.refuse(raw, "inside %s, which the archive holds as a %s", s.above[n-1].path, s.above[n-1].kind)
	}
	if s.scoped {
		if err := s.recordSpellingIn(raw, e.Path); err != nil {
			return err
		}
	} else if err := s.recordSpelling(raw, e.Path); err != nil {
		return err
	}
	s.above = append(s.above, listed{path: e.Path, kind: e.Kind})
	s.last = e.Path
	return nil
}

// checkEntry applies to a manifest's entry the checks an archive's header
// gets: a manifest from a damaged or crafted store must not lead a restore
// outside the root either.
func (s *archiveScanner) checkEntry(e *Entry) error {
	if e.Path == "" {
		return s.refuse(e.Path, "empty name")
	}
	if err := s.checkName(e.Path, e.Path); err != nil {
		return err
	}
	switch e.Kind {
	case KindFile:
		if e.Size < 0 {
			return s.refuse(e.Path, "negative size")
		}
		s.bytes += e.Size
		if s.bytes > s.limits.MaxBytes {
			return s.refuse(e.Path, "content exceeds the limit of %d bytes in total", s.limits.MaxBytes)
		}
		if e.Src == "" {
			return s.refuse(e.Path, "no archive holds its content")
		}
	case KindSymlink:
		if err := s.checkLinkTarget(e.Path, e.Link); err != nil {
			return err
		}
	case KindDir:
	default:
		return s.refuse(e.Path, "unknown kind")
	}
	if err := s.checkGit(e.Path, e); err != nil {
		return err
	}
	e.Mode &= fs.ModePerm
	return s.record(e.Path, e)
}

func (s *archiveScanner) checkName(raw, name string) error {
	switch {
	case strings.IndexByte(name, 0) >= 0:
		return s.refuse(raw, "name contains a NUL byte")
	case strings.HasPrefix(name, "/"):
		return s.refuse(raw, "absolute path")
	case len(name) > s.limits.MaxPath:
		return s.refuse(raw, "path longer than %d bytes", s.limits.MaxPath)
	}
	for _, el := range strings.Split(name, "/") {
		switch el {
		case "..":
			return s.refuse(raw, "path leaves the root (..)")
		case "", ".":
			return s.refuse(raw, "path is not clean (empty or . element)")
		}
	}
	if depth(name) > s.limits.MaxDepth {
		return s.refuse(raw, "path deeper than %d elements", s.limits.MaxDepth)
	}
	if name == ".agent/rewind" || strings.HasPrefix(name, ".agent/rewind/") {
		return s.refuse(raw, "path inside a folder Rewind never restores (.git, .agent/rewind)")
	}
	return nil
}

// checkGit refuses an entry inside a .git folder — git's own or a nested
// repository's, at any depth, in any spelling the file system takes for
// .git — and an entry named .git that is not a .git file a snapshot may
// hold: a regular file of at most gitFileMax bytes (its content is checked
// as it is staged: see checkGitFile).
func (s *archiveScanner) checkGit(raw string, e *Entry) error {
	if !strings.Contains(e.Path, ".") {
		return nil
	}
	els := strings.Split(e.Path, "/")
	for i, el := range els {
		switch {
		case !isGitName(el, s.fold):
		case i < len(els)-1:
			return s.refuse(raw, "path inside a folder Rewind never restores (.git, .agent/rewind)")
		case e.Kind != KindFile:
			return s.refuse(raw, "a .git %s: a restore writes a .git file, never a .git folder or symlink", e.Kind)
		case e.Size > gitFileMax:
			return s.refuse(raw, "a .git file of %d bytes: git writes one line, and a snapshot holds none over %d bytes", e.Size, gitFileMax)
		}
	}
	return nil
}

// checkLinkTarget refuses symlink targets no file system can hold. Where a
// target points does not matter: a symlink is restored as a symlink, and a
// restore never writes through one (record refuses an entry below a
// symlink of the archive; apply checks every parent is a real folder).
func (s *archiveScanner) checkLinkTarget(raw, target string) error {
	switch {
	case target == "":
		return s.refuse(raw, "symlink with an empty target")
	case strings.IndexByte(target, 0) >= 0:
		return s.refuse(raw, "symlink target contains a NUL byte")
	case len(target) > s.limits.MaxPath:
		return s.refuse(raw, "symlink target longer than %d bytes", s.limits.MaxPath)
	}
	return nil
}

// record refuses duplicates and file/folder conflicts (and, on a file system
// that folds names, two spellings of one name: the second would overwrite
// the first).
func (s *archiveScanner) record(raw string, e *Entry) error {
	s.n++
	if s.n > s.limits.MaxEntries {
		return s.refuse(raw, "more than %d entries", s.limits.MaxEntries)
	}
	if s.unchecked {
		return nil
	}
	if s.ordered {
		if s.kind == "layer" && e.Kind == KindFile && strings.HasPrefix(path.Base(e.Path), whiteoutPrefix) {
			return nil // where the path it removes was, out of walk order; no restore reads it (see whiteoutPrefix)
		}
		return s.recordInOrder(raw, e)
	}
	if _, dup := s.seen[e.Path]; dup {
		return s.refuse(raw, "duplicate entry")
	}
	if e.Kind != KindDir && s.dirs[e.Path] {
		return s.refuse(raw, "a %s where an earlier entry needs a folder", e.Kind)
	}
	for p := path.Dir(e.Path); p != "."; p = path.Dir(p) {
		if k, ok := s.seen[p]; ok && k != KindDir {
			return s.refuse(raw, "inside %s, which the archive holds as a %s", p, k)
		}
		if s.dirs[p] {
			break // its parents were checked when it was first implied
		}
		s.dirs[p] = true
	}
	if err := s.recordSpelling(raw, e.Path); err != nil {
		return err
	}
	s.seen[e.Path] = e.Kind
	return nil
}

// refuseLayer refuses an archive marked a layer, for a restore that reads
// an archive whole: its files are only what changed over others.
func (s *archiveScanner) refuseLayer() error {
	if s.kind == "layer" {
		return &ArchiveError{Archive: s.name,
			Reason: "a layer over other snapshots (its header says so); restore it with its manifest (rewind-snap restore --manifest), which names them"}
	}
	return nil
}

// refuseWhiteout refuses e where it is a whiteout in an archive without a
// mark (an older rewind-snap's): its name is all there is to tell a layer by.
func (s *archiveScanner) refuseWhiteout(e *Entry) error {
	if s.kind == "" && strings.HasPrefix(path.Base(e.Path), whiteoutPrefix) {
		return &ArchiveError{Archive: s.name, Entry: e.Path,
			Reason: "a whiteout in an archive without Rewind's mark, so probably a layer over other snapshots; restore it with its manifest (rewind-snap restore --manifest), which names them"}
	}
	return nil
}
