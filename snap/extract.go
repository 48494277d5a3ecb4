package snap

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"rewind.dev/internal/ctxio"
)

// adoptHeld is how many entries an extraction indexes for
// adopting (RestoreOptions.Index, CreateOptions.Adopt): past it the index, which holds every
// entry, is dropped, and the caller snapshots the tree as usual, in
// bounded memory.
const adoptHeld = 1 << 16

// errNotExtracted is an extraction that does not apply (the folder is not
// empty) or gave up with nothing written (the archive is out of walk
// order): the restore plans instead.
var errNotExtracted = errors.New("not extracted")

// extract is Restore of a whole archive into an empty folder. With nothing
// there to compare, keep or lose, the plan (an operation held per file, a
// map of every path) has no work to do: each entry is written as it is
// read, into a tree inside a staging folder at the root, with the archive
// checked in walk order — the order Rewind writes it in — instead of
// against maps of every path. Once the archive has been read to its end
// and its checksum verified, the staging tree's top entries are moved up
// into the root. Anything refused, a damaged archive or an interruption
// leaves the folder as empty as it was. An archive out of walk order (not
// Rewind's) gives errNotExtracted with nothing written: the plan reads it.
func extract(ctx context.Context, root, archive string, opts RestoreOptions) (*RestoreResult, error) {
	limits := opts.Limits.Or(DefaultLimits)
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	p := &restorePlan{ctx: ctx, root: root, r: r, state: stateExcludes(root)}
	defer p.close()
	p.cleanStaleStages(".")
	if empty, err := emptyFolder(r); err != nil || !empty {
		return nil, errNotExtracted
	}
	p.fold = ProbeFolding(root)
	p.progress = progressFrom(ctx)
	p.progress.Begin()
	var as *archiveScanner
	if opts.index != nil { // members, read ahead, tell each entry's place
		as, err = openArchiveMembers(archive, limits, p.fold, true)
	} else {
		as, err = openArchive(archive, limits, p.fold)
	}
	if err != nil {
		return nil, err
	}
	defer as.Close()
	as.ordered = true
	if err := p.openStage(); err != nil {
		return nil, err
	}
	x := &extraction{p: p, as: as, tree: p.stage + "/tree", held: cmp.Or(opts.adoptHeld, adoptHeld)}
	x.umask, x.umaskKnown = umask()
	if err := p.r.Mkdir(x.tree, 0o700); err != nil {
		return nil, fmt.Errorf("create staging folder in %s: %w", root, err)
	}
	if x.treeRoot, err = p.r.OpenRoot(x.tree); err != nil {
		return nil, fmt.Errorf("create staging folder in %s: %w", root, err)
	}
	defer x.close()
	if opts.index != nil && as.kind == "full" {
		x.index = opts.index
		*x.index = ArchiveIndex{archive: as.name, size: as.csize, entries: map[string]*Entry{}}
		x.hashed, x.rest = &hashingReader{h: sha256.New()}, make([]byte, 512)
	}
	if err := x.run(ctx); err != nil {
		if as.disordered {
			return nil, errNotExtracted
		}
		return nil, err
	}
	if err := x.moveUp(); err != nil {
		return nil, err
	}
	return &RestoreResult{Type: "restore", Written: x.written, Folders: x.folders}, nil
}

// emptyFolder tells whether the folder r opens holds nothing.
func emptyFolder(r *os.Root) (bool, error) {
	d, err := r.Open(".")
	if err != nil {
		return false, err
	}
	defer d.Close()
	_, err = d.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// extraction is the state of one extract.
type extraction struct {
	p        *restorePlan
	as       *archiveScanner
	tree     string       // the staging tree, root-relative
	treeRoot *os.Root     // opened
	open     []writtenDir // the folders written that the next entries may be inside, outermost first
	late     []writtenDir // folders closed to their owner, deepest first: their modes are set once moved up
	written  int          // files (and symlinks)
	folders  int
	index    *ArchiveIndex
	held     int // the most entries index holds (adoptHeld, or a test's)
	hashed   *hashingReader
	rest     []byte // for what hashed has left to read: nothing, once written

	umask      fs.FileMode // the process's, read once: what it leaves whole needs no chmod
	umaskKnown bool
}

// writtenDir is a folder written, with the mode it is given once its
// entries are.
type writtenDir struct {
	path string
	mode fs.FileMode
	set  bool // made with it
	r    *os.Root
}

// run writes the archive's entries into the staging tree.
func (x *extraction) run(ctx context.Context) error {
	as, p := x.as, x.p
	if err := as.refuseLayer(); err != nil {
		return err
	}
	for n := 0; ; n++ {
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e, content, err := as.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := as.refuseWhiteout(e); err != nil {
			return err
		}
		if underAny(e.Path, p.state) {
			continue // a snapshot taken before state folders were left out
		}
		if err := x.leaveFor(e.Path); err != nil {
			return err
		}
		if err := x.write(e, content); err != nil {
			return err
		}
		if x.index != nil {
			if len(x.index.entries) >= x.held {
				x.index.entries, x.index, x.hashed = nil, nil, nil // too many to hold: not adopted
			} else {
				x.index.entries[e.Path] = e
			}
		}
	}
	return x.leaveFor("")
}

// leaveFor gives the folders written that name is not inside their modes
// (their entries are all written: walk order puts them together), then
// writes the folders above name the archive implies without listing. With
// name "", it leaves every folder.
func (x *extraction) leaveFor(name string) error {
	for len(x.open) > 0 {
		d := x.open[len(x.open)-1]
		if name != "" && strings.HasPrefix(name, d.path+"/") {
			break
		}
		x.open = x.open[:len(x.open)-1]
		d.r.Close()
		if d.set {
			continue
		}
		if d.mode&0o700 != 0o700 {
			// Once moved up: a folder its owner cannot write would not
			// move, nor could the staging folder be removed past it.
			x.late = append(x.late, d)
			continue
		}
		if err := x.dir().Chmod(path.Base(d.path), d.mode); err != nil {
			return fmt.Errorf("chmod %s: %w", d.path, err)
		}
	}
	if name == "" {
		return nil
	}
	above := "."
	if len(x.open) > 0 {
		above = x.open[len(x.open)-1].path
	}
	var missing []string
	for d := path.Dir(name); d != above && d != "."; d = path.Dir(d) {
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := x.mkdir(missing[i], 0o755); err != nil {
			return err
		}
	}
	return nil
}

// dir is the folder the next entry goes in: the innermost folder open, or
// the staging tree. Each is held open, so an entry is written by its name
// there, not resolved from the root again.
func (x *extraction) dir() *os.Root {
	if n := len(x.open); n > 0 {
		return x.open[n-1].r
	}
	return x.treeRoot
}

// mkdir writes a folder, open to its owner until its entries are written
// (made with its mode where that is so and the umask leaves it whole).
func (x *extraction) mkdir(name string, mode fs.FileMode) error {
	parent, base := x.dir(), path.Base(name)
	perm, set := fs.FileMode(0o700), false
	if x.umaskKnown && mode&x.umask == 0 && mode&0o700 == 0o700 {
		perm, set = mode, true
	}
	if err := parent.Mkdir(base, perm); err != nil {
		return fmt.Errorf("create folder %s: %w", name, err)
	}
	r, err := parent.OpenRoot(base)
	if err != nil {
		return fmt.Errorf("create folder %s: %w", name, err)
	}
	x.open = append(x.open, writtenDir{name, mode, set, r})
	x.folders++
	return nil
}

// write writes one entry into the staging tree.
func (x *extraction) write(e *Entry, content io.Reader) error {
	p := x.p
	dir, base := x.dir(), path.Base(e.Path)
	switch e.Kind {
	case KindDir:
		return x.mkdir(e.Path, e.Mode)
	case KindSymlink:
		if err := dir.Symlink(e.Link, base); err != nil {
			return fmt.Errorf("write %s: %w", e.Path, err)
		}
		x.written++
		return nil
	}
	if x.hashed != nil {
		x.hashed.start(e, content)
		content = x.hashed
	}
	if isGitName(base, p.fold) {
		var err error
		if content, err = p.checkGitFile(e, content, x.as.name); err != nil {
			return err
		}
	}
	// Created with its mode where the umask leaves it whole: a chmod is a
	// metadata change of its own, paid for every file.
	perm, chmod := fs.FileMode(0o600), true
	if x.umaskKnown && e.Mode&x.umask == 0 {
		perm, chmod = e.Mode, false
	}
	f, err := dir.OpenFile(base, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", e.Path, err)
	}
	n, rerr, werr := copySparse(f, ctxio.Reader{Ctx: p.ctx, R: content})
	switch {
	case werr != nil:
		f.Close()
		return fmt.Errorf("write %s in %s: %w", e.Path, p.root, werr)
	case rerr != nil:
		f.Close()
		if p.ctx.Err() != nil {
			return p.ctx.Err()
		}
		return archiveReadErr(e, rerr)
	case n != e.Size:
		f.Close()
		return archiveReadErr(e, io.ErrUnexpectedEOF)
	}
	p.progress.Add(1, n)
	if x.hashed != nil {
		if err := x.hashed.finish(x.rest); err != nil {
			f.Close()
			return archiveReadErr(e, err)
		}
	}
	if chmod {
		if err := f.Chmod(e.Mode); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", e.Path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s in %s: %w", e.Path, p.root, err)
	}
	x.written++
	return nil
}

// close closes the folders held open.
func (x *extraction) close() {
	for _, d := range x.open {
		d.r.Close()
	}
	x.open = nil
	x.treeRoot.Close()
}

// moveUp moves the staging tree's top entries into the root, a batch of
// names at a time, then gives the folders closed to their owner their
// modes. The root was empty: a name that is taken now (something else
// wrote it meanwhile) is not replaced, and the restore stops, saying so.
func (x *extraction) moveUp() error {
	p := x.p
	for {
		d, err := p.r.Open(x.tree)
		if err != nil {
			return fmt.Errorf("restore into %s: %w", p.root, err)
		}
		names, err := d.Readdirnames(1024)
		d.Close()
		if len(names) == 0 {
			if err != io.EOF {
				return fmt.Errorf("restore into %s: %w", p.root, err)
			}
			for _, d := range x.late {
				if err := p.r.Chmod(d.path, d.mode); err != nil {
					return &StoppedError{Err: fmt.Errorf("chmod %s: %w", d.path, err)}
				}
			}
			return nil
		}
		for _, name := range names {
			if _, err := p.r.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
				return &StoppedError{Err: fmt.Errorf("restore into %s: %s appeared there while the archive was read; it was left as it is: move it aside and restore again", p.root, name)}
			}
			if err := p.r.Rename(x.tree+"/"+name, name); err != nil {
				return &StoppedError{Err: fmt.Errorf("write %s: %w", name, err)}
			}
		}
	}
}

// umask is the process's file mode creation mask, as Linux tells it
// (/proc/self/status); ok is false where it cannot be read without
// changing it.
func umask() (fs.FileMode, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return fs.FileMode(n) & fs.ModePerm, err == nil
		}
	}
	return 0, false
}
