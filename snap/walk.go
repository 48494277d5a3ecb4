package snap

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"rewind.dev/internal/fileid"
	"rewind.dev/snap/gitignore"
)

// WalkOptions adjust a walk.
type WalkOptions struct {
	// Ignore holds extra patterns (gitignore syntax) applied at the root with
	// the highest precedence, e.g. from Rewind's config.
	Ignore []string
	// Entries, when known, is about how many entries the tree holds (its
	// last snapshot's): the list is made that large at once, and filled in
	// walk order as the walk goes rather than once it is done.
	Entries int
	// Now, when set, is the clock the walk's start is read from instead of
	// time.Now: Tree.Started, which a manifest keeps as its scan's start
	// and the next comparison judges an entry's times racy by (tests put
	// the scan past a file's times without waiting).
	Now func() time.Time

	// window, when set, is WalkEach's window instead of walkWindow: a
	// smaller one for an fn much slower than the walk, which the readers
	// never wait on anyway.
	window int
	// ahead, when set, is told of each entry WalkEach hands on, just
	// before fn, on the same goroutine; it must not block (see prefetch).
	ahead func(e *Entry)
	// unreadable, when set, is told each path WalkEach could not read (as
	// Tree.Unreadable lists them) on fn's goroutine, before any entry after
	// it in walk order is handed on: so fn may know, as the walk goes,
	// whether a path it has not met was left out unread.
	unreadable func(path string)
	// readAhead, when set (tests), is told the entries read ahead each
	// time WalkEach reads a folder.
	readAhead func(pending int)
	// openFolder, when set (tests, which change a folder as it is
	// opened), opens each folder instead of openDir.
	openFolder func(abs string) (dirFD, []string, error)
}

// Tree is the result of a walk: the entries in scope, in walk order, and
// what was skipped.
type Tree struct {
	Entries    []Entry
	Special    []string // sockets, FIFOs and devices in scope, which cannot be captured
	Unreadable []string // entries in scope the walk could not read (a folder it may not list)
	Started    int64    // when the walk began, in nanoseconds since the epoch
	Rules      Rules    // the rules from outside the tree it was walked under
}

// Walk lists the entries in scope under root, with their metadata but no
// content hashes. Symlinks are not followed. Folders are read in parallel;
// the result is in walk order all the same.
func Walk(ctx context.Context, root string, opts WalkOptions) (*Tree, error) {
	return walk(ctx, root, opts, nil)
}

// WalkEach is Walk handing each entry to fn in walk order as the walk goes,
// instead of listing them: the tree is not held, only the folders read
// ahead of fn. The Tree it returns has no Entries. fn may keep the entry (a
// copy: its strings are its own); an error from it ends the walk and is
// returned.
func WalkEach(ctx context.Context, root string, opts WalkOptions, fn func(e *Entry) error) (*Tree, error) {
	return walk(ctx, root, opts, fn)
}

func walk(ctx context.Context, root string, opts WalkOptions, each func(e *Entry) error) (*Tree, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	started := now().UnixNano()
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
	gc, err := loadGitContext(abs, true)
	if err != nil {
		return nil, err
	}
	st := gitignore.NewStack(gc.global)
	for _, l := range gc.parents {
		st = st.Push(l)
	}
	w := &walker{ctx: ctx, root: abs, extra: gitignore.Parse([]byte(joinLines(opts.Ignore))), state: stateExcludes(abs)}
	w.rules.Ignore, w.rules.GitFiles = opts.Ignore, true
	w.gitRoots = sync.OnceValue(func() []string { return resolvedForms(abs) })
	w.unreadable = opts.unreadable
	w.readAhead, w.open = opts.readAhead, opts.openFolder
	if w.open == nil {
		w.open = openDir
	}
	w.rules.Repos = append(w.rules.Repos, gc.rules)
	w.sem = make(chan struct{}, walkWorkers)
	if each != nil { // (WalkEach's)
		w.window = walkWindow
		if opts.window > 0 {
			w.window = opts.window
		}
		w.ahead = sync.NewCond(&w.aheadMu)
	}
	top := newDirResult()
	tree := &Tree{Started: started}
	flat := make(chan struct{})
	hint := min(opts.Entries, maxEntriesHint)
	streaming := each != nil
	put := func(e *Entry) { tree.Entries = append(tree.Entries, *e) }
	if streaming {
		stopped := false // (by fn's error: the walk winds down)
		put = func(e *Entry) {
			if stopped {
				return
			}
			if opts.ahead != nil {
				opts.ahead(e)
			}
			if err := each(e); err != nil {
				w.fail(err)
				stopped = true
			}
		}
	}
	if hint > 0 || streaming {
		// The folders' lists are put in walk order as they are read, each
		// let go of once copied: the tree is never held twice, and the
		// copying is done by the time the walk is.
		if !streaming {
			tree.Entries = make([]Entry, 0, hint+hint/16)
		}
		go func() {
			defer close(flat)
			top.flatten(tree, put, w)
		}()
	}
	w.wg.Add(1)
	w.dir(top, nil, "", st, &gc, false)
	w.wg.Wait()
	if hint > 0 || streaming {
		<-flat
	} else {
		// A tree of unknown size is put in order once read, its list made
		// at its size rather than grown by copies.
		tree.Entries = make([]Entry, 0, top.count())
		top.flatten(tree, put, w)
	}
	if w.err != nil {
		return nil, w.err
	}
	sort.Slice(w.rules.Repos, func(i, j int) bool { return w.rules.Repos[i].Base < w.rules.Repos[j].Base })
	tree.Rules = w.rules
	return tree, nil
}

// maxEntriesHint bounds what WalkOptions.Entries makes room for (a hint
// read from a damaged store file may say anything): a larger tree's list
// grows as it is read.
const maxEntriesHint = 1 << 20

// walkWorkers bounds the folders read at once. Reading a tree is mostly
// system calls, so a few more than the cores keeps them all busy.
const walkWorkers = 8

type walker struct {
	ctx        context.Context
	root       string
	gitRoots   func() []string // the root's paths, as given and resolved, once a .git file needs them
	rules      Rules           // under mu: every repository met
	extra      []gitignore.Pattern
	state      map[string]bool   // Rewind's and the agents' state folders inside the root
	unreadable func(path string) // see WalkOptions.unreadable
	readAhead  func(pending int) // see WalkOptions.readAhead
	open       func(abs string) (dirFD, []string, error)
	sem        chan struct{}
	wg         sync.WaitGroup
	mu         sync.Mutex
	err        error

	// For WalkEach: a folder is not read while more than window entries
	// read wait to be put, unless it is the one flatten waits for (awaited).
	// Every folder before that one in walk order is read, so the walk
	// always goes on: it only stops running ahead.
	window  int
	aheadMu sync.Mutex
	ahead   *sync.Cond // signalled when pending falls or awaited changes
	pending int
	awaited *dirResult
}

// walkWindow is how many entries WalkEach reads ahead of its fn at most
// (give or take a folder's): what a walk holds does not grow with the tree.
// About 40 MB of entries at most; smaller windows stall the readers (a
// save of 1M files: 2^16 1.9 -> 2.4 s, 2^17 2.3 s, 2^18 1.9 s), as the
// folders they wait on block the folders queued behind them.
const walkWindow = 1 << 18

// admit waits until the folder res may be read (see window).
func (w *walker) admit(res *dirResult) {
	if w.window == 0 {
		return
	}
	w.aheadMu.Lock()
	for w.pending > w.window && w.awaited != res && !w.failed() {
		w.ahead.Wait()
	}
	w.aheadMu.Unlock()
}

// read counts n entries read, to be put.
func (w *walker) read(n int) {
	if w.window == 0 {
		return
	}
	w.aheadMu.Lock()
	w.pending += n
	if w.readAhead != nil {
		w.readAhead(w.pending)
	}
	w.aheadMu.Unlock()
}

// await says flatten waits for d; put that n entries were put.
func (w *walker) await(d *dirResult) {
	if w.window == 0 {
		return
	}
	w.aheadMu.Lock()
	w.awaited = d
	w.ahead.Broadcast()
	w.aheadMu.Unlock()
}

func (w *walker) put(n int) {
	if w.window == 0 {
		return
	}
	w.aheadMu.Lock()
	w.pending -= n
	if w.pending <= w.window {
		w.ahead.Broadcast()
	}
	w.aheadMu.Unlock()
}

// dirResult is one folder's entries in name order; subs[i] holds the
// contents of entries[i] when it is a folder. A folder that changed while it
// was walked is marked: gone (removed, or now something out of scope),
// replaced (now a file or symlink, which its entry in the parent holds), or
// unreadable (its owner may list it, the walk may not).
//
// ready is closed once the folder is read (its subfolders scheduled, not
// read): until then only the walk's worker for it touches the result, nor
// may the entry for it in its parent's result be read (see dir's self).
type dirResult struct {
	entries    []Entry
	special    []string
	unreadable []string // entries of this folder that could not be read
	subs       []*dirResult
	ready      chan struct{}

	gone, replaced, denied bool
}

func newDirResult() *dirResult { return &dirResult{ready: make(chan struct{})} }

func (d *dirResult) count() int {
	n := len(d.entries)
	for _, s := range d.subs {
		if s != nil {
			n += s.count()
		}
	}
	return n
}

// flatten puts d's entries in walk order, each folder's as soon as it is
// read, letting go of each folder's own list once it is put; what is
// skipped goes to t.
func (d *dirResult) flatten(t *Tree, put func(e *Entry), w *walker) {
	w.await(d)
	<-d.ready
	t.Special = append(t.Special, d.special...)
	w.skipUnread(t, d.unreadable...)
	for i := range d.entries {
		sub := d.subs[i]
		if sub != nil {
			w.await(sub)
			<-sub.ready
		}
		switch {
		case sub == nil || sub.replaced:
			put(&d.entries[i])
		case sub.gone:
			t.Special = append(t.Special, sub.special...)
		case sub.denied:
			w.skipUnread(t, d.entries[i].Path)
		default:
			put(&d.entries[i])
			sub.flatten(t, put, w)
		}
		d.subs[i] = nil
	}
	w.put(len(d.entries))
	d.entries, d.subs = nil, nil
}

// skipUnread notes paths in scope the walk could not read in t, and tells
// WalkOptions.unreadable of them.
func (w *walker) skipUnread(t *Tree, paths ...string) {
	t.Unreadable = append(t.Unreadable, paths...)
	if w.unreadable != nil {
		for _, p := range paths {
			w.unreadable(p)
		}
	}
}

func (w *walker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	if w.window != 0 {
		w.aheadMu.Lock()
		w.ahead.Broadcast() // (a folder waiting to be read is not)
		w.aheadMu.Unlock()
	}
}

func (w *walker) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// dir reads the folder rel (already in scope; self is its entry in the
// parent's result, nil for the root) into res and schedules its subfolders.
// st is the parent's ignore stack. inIgnored is true inside a folder that is
// ignored but holds tracked files: there only tracked paths count. A folder
// that is replaced while it is walked is looked at again (entry), up to a
// few times: a tree an agent is changing never fails the walk.
func (w *walker) dir(res *dirResult, self *Entry, rel string, st *gitignore.Stack, repo *gitContext, inIgnored bool) {
	defer w.wg.Done()
	ready := false
	defer func() {
		if !ready {
			close(res.ready)
		}
	}()
	if w.failed() {
		return
	}
	if err := w.ctx.Err(); err != nil {
		w.fail(err)
		return
	}
	w.admit(res)
	if w.failed() {
		return
	}
	abs := w.abs(rel)
	dfd, names, ok := w.list(res, self, abs, rel, st, repo, inIgnored)
	if !ok {
		return
	}
	defer closeDir(dfd)
	sort.Strings(names)
	if st, repo, inIgnored, ok = w.folderRules(dfd, names, abs, rel, st, repo, inIgnored); !ok {
		return
	}
	sub, ok := w.entries(res, dfd, names, abs, rel, st, repo, inIgnored)
	if !ok {
		return
	}
	res.subs = make([]*dirResult, len(res.entries))
	for _, i := range sub {
		res.subs[i] = newDirResult()
	}
	w.read(len(res.entries))
	ready = true
	close(res.ready)
	w.descend(res, sub, st, repo, inIgnored)
}

// list opens the folder rel and lists its names. A folder that cannot be opened is
// recorded in res (denied, gone, replaced by what is there now, in self) and ok is false;
// a failure of the walk is recorded in w.
func (w *walker) list(res *dirResult, self *Entry, abs, rel string, st *gitignore.Stack, repo *gitContext, inIgnored bool) (dfd dirFD, names []string, ok bool) {
	for attempt := 0; ; attempt++ {
		fd, ns, err := w.open(abs)
		if err == nil {
			return fd, ns, true
		}
		switch {
		case rel == "":
			w.fail(fmt.Errorf("cannot read folder %s: %w", displayPath(rel), err))
			return dfd, nil, false
		case denied(err):
			res.denied = true
			return dfd, nil, false
		case !changed(err):
			w.fail(fmt.Errorf("cannot read folder %s: %w", displayPath(rel), err))
			return dfd, nil, false
		case attempt == maxRetries:
			// Still changing after the last look: it was gone when last
			// opened, and the checkpoint holds it so, as for a symlink.
			res.gone = true
			return dfd, nil, false
		}
		// Removed or replaced since its parent was read: what is there now?
		e, ok, err := w.entry(atCWD, abs, rel, st, repo, inIgnored)
		switch {
		case err != nil && denied(err):
			res.denied = true
			return dfd, nil, false
		case err != nil:
			w.fail(err)
			return dfd, nil, false
		case !ok:
			res.gone = true
			return dfd, nil, false
		case e.Kind == 0:
			res.gone = true
			res.special = append(res.special, rel)
			return dfd, nil, false
		case e.Kind != KindDir:
			*self = e
			res.replaced = true
			return dfd, nil, false
		}
	}
}

// folderRules are the rules in force inside the folder rel, whose names are listed: a
// repository nested there brings its own, and its .gitignore and .rewindignore files add
// theirs. ok is false when the walk failed.
func (w *walker) folderRules(dfd dirFD, names []string, abs, rel string, st *gitignore.Stack, repo *gitContext, inIgnored bool) (*gitignore.Stack, *gitContext, bool, bool) {
	if i := sort.SearchStrings(names, ".git"); rel != "" && i < len(names) && names[i] == ".git" {
		// A repository nested in the tree: inside it only its own rules
		// apply, and its own tracked files, as for git run there.
		nested, ok, err := nestedGitContext(abs, rel, true)
		if err != nil {
			w.fail(err)
			return st, repo, inIgnored, false
		}
		if ok {
			repo, st, inIgnored = &nested, st.Nested(nested.global), false
			w.mu.Lock()
			w.rules.Repos = append(w.rules.Repos, nested.rules)
			w.mu.Unlock()
		}
	}
	if !inIgnored {
		for _, name := range []string{".gitignore", ".rewindignore"} {
			if i := sort.SearchStrings(names, name); i < len(names) && names[i] == name {
				if b, ok := readIgnoreFile(dfd, name); ok {
					st = st.Push(gitignore.List{Base: rel, Patterns: gitignore.Parse(b), Rewind: name == ".rewindignore"})
				}
			}
		}
		if rel == "" && len(w.extra) > 0 {
			st = st.Push(gitignore.List{Patterns: w.extra, Rewind: true})
		}
	}
	return st, repo, inIgnored, true
}

// entries reads the entries of the folder rel in scope into res, and returns the indexes of
// its folders among them. ok is false when the walk failed.
func (w *walker) entries(res *dirResult, dfd dirFD, names []string, abs, rel string, st *gitignore.Stack, repo *gitContext, inIgnored bool) (sub []int, ok bool) {
	res.entries = make([]Entry, 0, len(names))
	for _, name := range names {
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		if name == ".git" {
			// A repository's data is never in a snapshot; the file that
			// makes a folder in scope a submodule or linked worktree is.
			if !inIgnored {
				if e, ok := w.gitFile(dfd, name, crel); ok {
					res.entries = append(res.entries, e)
				}
			}
			continue
		}
		if builtinExcluded(crel, name) || w.state[crel] {
			if crel == storeFolder && repo != nil && repo.tracked != nil && repo.trackedUnder(crel) {
				// Rewind's own store, committed to the repository: its files
				// arrive with every clone and pull, and are not the user's.
				w.fail(&TrackedStoreError{Path: crel})
				return nil, false
			}
			continue
		}
		// Looked up in the folder as it was listed: were it replaced since,
		// its names are gone, not someone else's.
		e, ok, err := w.entry(dfd, name, crel, st, repo, inIgnored)
		if err != nil {
			if denied(err) {
				res.unreadable = append(res.unreadable, crel)
				continue
			}
			w.fail(err)
			return nil, false
		}
		if !ok {
			continue
		}
		if e.Kind == KindDir && strings.HasPrefix(name, stagingPrefix) && isStaging(abs, name) {
			// A restore's staging folder (a running one, or a killed
			// one's): at the root, or at the top of a mount (see mount).
			continue
		}
		switch e.Kind {
		case KindDir:
			sub = append(sub, len(res.entries))
		case 0:
			res.special = append(res.special, crel)
			continue
		}
		res.entries = append(res.entries, e)
	}
	return sub, true
}

// descend walks the folders among res's entries (sub), each in a goroutine of its own while
// the walk has room for one, else in this one.
func (w *walker) descend(res *dirResult, sub []int, st *gitignore.Stack, repo *gitContext, inIgnored bool) {
	for _, i := range sub {
		child := res.subs[i]
		w.wg.Add(1)
		self := &res.entries[i]
		crel, ignored := self.Path, inIgnored || st.Ignored(self.Path, true)
		select {
		case w.sem <- struct{}{}:
			go func() {
				defer func() { <-w.sem }()
				w.dir(child, self, crel, st, repo, ignored)
			}()
		default:
			w.dir(child, self, crel, st, repo, ignored)
		}
	}
}

// maxRetries bounds how often the walk looks again at an entry that keeps
// changing type while it is read.
const maxRetries = 3

// entry stats name (relative to the folder at, or a path with atCWD),
// the tree's path rel, and reports whether it is in scope: not ignored, or
// tracked. A special file has Kind 0. A symlink that stops being one while
// its target is read is looked at again.
func (w *walker) entry(at dirFD, name, rel string, st *gitignore.Stack, repo *gitContext, inIgnored bool) (Entry, bool, error) {
	for attempt := 0; ; attempt++ {
		e, err := lstatAt(at, name, rel)
		if err != nil {
			if changed(err) {
				return Entry{}, false, nil
			}
			return Entry{}, false, fmt.Errorf("cannot stat %s: %w", rel, err)
		}
		isDir := e.Kind == KindDir
		if inIgnored || st.Ignored(rel, isDir) {
			switch {
			case repo.tracked == nil:
				return e, false, nil
			case isDir && !repo.trackedUnder(rel), !isDir && !repo.isTracked(rel):
				return e, false, nil
			}
		}
		if e.Kind != KindSymlink {
			return e, true, nil
		}
		target, err := readlinkat(at, name)
		switch {
		case err == nil:
			e.Link, e.Size = target, int64(len(target))
			return e, true, nil
		case changed(err) && attempt < maxRetries:
			continue // gone, or no longer a symlink
		case changed(err):
			return Entry{}, false, nil
		default:
			return Entry{}, false, fmt.Errorf("cannot read symlink %s: %w", rel, err)
		}
	}
}

// gitFile returns the entry name, in the folder at, at the tree's path rel,
// when it is a .git file a snapshot holds (see gitFileOK); anything else
// there is left out, a .git folder above all.
func (w *walker) gitFile(at dirFD, name, rel string) (Entry, bool) {
	e, err := lstatAt(at, name, rel)
	if err != nil || e.Kind != KindFile || e.Size > gitFileMax {
		return Entry{}, false
	}
	f, err := openAt(at, name)
	if err != nil {
		return Entry{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, gitFileMax+1))
	if err != nil || !gitFileOK(w.gitRoots(), rel, b) {
		return Entry{}, false
	}
	return e, true
}

func (w *walker) abs(rel string) string {
	if rel == "" {
		return w.root
	}
	return filepath.Join(w.root, filepath.FromSlash(rel))
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
	e.CTime, e.Ino = fileid.ChangeTime(fi), fileid.Inode(fi)
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
