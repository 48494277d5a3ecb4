package snap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WalkOptions adjust a walk.
type WalkOptions struct {
	// Ignore holds extra patterns (gitignore syntax) applied at the root with
	// the highest precedence, e.g. from Rewind's config.
	Ignore []string
}

// Tree is the result of a walk: the entries in scope, in walk order, and
// what was skipped.
type Tree struct {
	Entries []Entry
	Special []string // sockets, FIFOs and devices in scope, which cannot be captured
	Started int64    // when the walk began, in nanoseconds since the epoch
}

// Walk lists the entries in scope under root, with their metadata but no
// content hashes. Symlinks are not followed. Folders are read in parallel;
// the result is in walk order all the same.
func Walk(ctx context.Context, root string, opts WalkOptions) (*Tree, error) {
	started := time.Now().UnixNano()
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("root %s: not a folder", root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	gc := loadGitContext(abs)
	st := &ignoreStack{global: gc.global}
	for _, l := range gc.parents {
		st = st.push(l)
	}
	w := &walker{ctx: ctx, root: abs, gc: &gc, extra: parsePatterns([]byte(joinLines(opts.Ignore))), state: stateExcludes(abs)}
	w.sem = make(chan struct{}, walkWorkers)
	top := &dirResult{}
	w.wg.Add(1)
	w.dir(top, "", st, false)
	w.wg.Wait()
	if w.err != nil {
		return nil, w.err
	}
	tree := &Tree{Entries: make([]Entry, 0, top.count()), Started: started}
	top.flatten(tree)
	return tree, nil
}

// walkWorkers bounds the folders read at once. Reading a tree is mostly
// system calls, so a few more than the cores keeps them all busy.
const walkWorkers = 8

type walker struct {
	ctx   context.Context
	root  string
	gc    *gitContext
	extra []pattern
	state map[string]bool // Rewind's and the agents' state folders inside the root
	sem   chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
}

// dirResult is one folder's entries in name order; subs[i] holds the
// contents of entries[i] when it is a folder.
type dirResult struct {
	entries []Entry
	special []string
	subs    []*dirResult
}

func (d *dirResult) count() int {
	n := len(d.entries)
	for _, s := range d.subs {
		if s != nil {
			n += s.count()
		}
	}
	return n
}

func (d *dirResult) flatten(t *Tree) {
	t.Special = append(t.Special, d.special...)
	for i := range d.entries {
		t.Entries = append(t.Entries, d.entries[i])
		if d.subs[i] != nil {
			d.subs[i].flatten(t)
		}
	}
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

func (w *walker) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// dir reads the folder rel (already in scope) into res and schedules its
// subfolders. inIgnored is true inside a folder that is ignored but holds
// tracked files: there only tracked paths count.
func (w *walker) dir(res *dirResult, rel string, st *ignoreStack, inIgnored bool) {
	defer w.wg.Done()
	if w.failed() {
		return
	}
	if err := w.ctx.Err(); err != nil {
		w.fail(err)
		return
	}
	abs := w.abs(rel)
	// Raw system calls: an *os.File would register the folder with the
	// runtime's poller and switch its mode, several calls per folder that a
	// walk of thousands of folders feels.
	dfd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) && rel != "" {
			return // removed while walking
		}
		w.fail(fmt.Errorf("cannot read folder %s: %w", displayPath(rel), err))
		return
	}
	defer unix.Close(dfd)
	names, err := readDirNames(dfd)
	if err != nil {
		w.fail(fmt.Errorf("cannot read folder %s: %w", displayPath(rel), err))
		return
	}
	sort.Strings(names)
	if !inIgnored {
		for _, name := range []string{".gitignore", ".rewindignore"} {
			if i := sort.SearchStrings(names, name); i < len(names) && names[i] == name {
				if b, err := os.ReadFile(filepath.Join(abs, name)); err == nil {
					st = st.push(patternList{base: rel, patterns: parsePatterns(b)})
				}
			}
		}
		if rel == "" && len(w.extra) > 0 {
			st = st.push(patternList{patterns: w.extra})
		}
	}
	var sub []int
	for _, name := range names {
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		if builtinExcluded(crel, name) || w.state[crel] {
			continue
		}
		var sys unix.Stat_t
		if err := unix.Fstatat(dfd, name, &sys, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			w.fail(fmt.Errorf("cannot stat %s: %w", crel, err))
			return
		}
		e := entryFromStat(crel, &sys)
		isDir := e.Kind == KindDir
		if rel == "" && isDir && strings.HasPrefix(name, stagingPrefix) && isStaging(abs, name) {
			continue // a restore's staging folder (a running one, or a killed one's)
		}
		ignored := inIgnored || st.ignored(crel, isDir)
		if ignored {
			if w.gc.tracked == nil {
				continue
			}
			if isDir {
				if !w.gc.trackedUnder(crel) {
					continue
				}
			} else if !w.gc.isTracked(crel) {
				continue
			}
		}
		switch e.Kind {
		case KindDir:
			sub = append(sub, len(res.entries))
		case KindSymlink:
			target, err := os.Readlink(filepath.Join(abs, name))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				w.fail(fmt.Errorf("cannot read symlink %s: %w", crel, err))
				return
			}
			e.Link = target
			e.Size = int64(len(target))
		case KindFile:
		default:
			res.special = append(res.special, crel)
			continue
		}
		res.entries = append(res.entries, e)
	}
	res.subs = make([]*dirResult, len(res.entries))
	for _, i := range sub {
		child := &dirResult{}
		res.subs[i] = child
		w.wg.Add(1)
		crel, ignored := res.entries[i].Path, inIgnored || st.ignored(res.entries[i].Path, true)
		select {
		case w.sem <- struct{}{}:
			go func() {
				defer func() { <-w.sem }()
				w.dir(child, crel, st, ignored)
			}()
		default:
			w.dir(child, crel, st, ignored)
		}
	}
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// readDirNames lists an open folder's entries, without "." and "..".
func readDirNames(fd int) ([]string, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	var names []string
	for {
		n, err := unix.Getdents(fd, *bp)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent((*bp)[:n], -1, names)
	}
}

func (w *walker) abs(rel string) string {
	if rel == "" {
		return w.root
	}
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

// entryFromStat converts lstat information. Kind is 0 for special files.
func entryFromStat(rel string, st *unix.Stat_t) Entry {
	e := Entry{Path: rel, Mode: fs.FileMode(st.Mode) & fs.ModePerm, MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		CTime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, Ino: st.Ino}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		e.Kind = KindFile
		e.Size = st.Size
	case syscall.S_IFDIR:
		e.Kind = KindDir
	case syscall.S_IFLNK:
		e.Kind = KindSymlink
		e.Mode = 0o777
	}
	return e
}

// entryFromInfo converts lstat information. Kind is 0 for special files.
func entryFromInfo(rel string, fi fs.FileInfo) Entry {
	e := Entry{Path: rel, Mode: fi.Mode().Perm(), MTime: fi.ModTime().UnixNano()}
	switch {
	case fi.Mode().IsRegular():
		e.Kind = KindFile
		e.Size = fi.Size()
	case fi.IsDir():
		e.Kind = KindDir
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Kind = KindSymlink
		e.Mode = 0o777
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.CTime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		e.Ino = st.Ino
	}
	return e
}

func displayPath(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func joinLines(ss []string) string {
	out := ""
	for _, s := range ss {
		out += s + "\n"
	}
	return out
}
