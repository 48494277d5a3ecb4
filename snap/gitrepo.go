package snap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"rewind.dev/internal/gitdir"
	"rewind.dev/snap/gitignore"
)

// gitContext is what a walk needs from a git repository whose files it
// reads — the one holding the walk root, if any, or one nested inside the
// tree: the repository-wide exclude lists, the .gitignore files of the
// folders between the repository top and the root, and the tracked paths
// (git never ignores a tracked file). Inside a nested repository only its
// own rules apply, as they do for git run there.
type gitContext struct {
	base    string           // the repository's top relative to the root; "" for the root's own
	global  []gitignore.List // info/exclude, then the global excludes file
	parents []gitignore.List // .gitignore files above the root, outermost first (base "")
	tracked *pathList        // paths relative to the root (base ""), or to base; nil outside a repository
	rules   RepoRules        // the texts of global and parents, as a snapshot records them
}

// Rules are the ignore rules a snapshot was taken under that do not live in
// the tree: each repository's (RepoRules) and Rewind's configured patterns.
// A manifest records them, so that a restore tells what the snapshot's rules
// ignored by the rules of its time, not by today's.
type Rules struct {
	Repos  []RepoRules `json:"repos,omitempty"`
	Ignore []string    `json:"ignore,omitempty"` // WalkOptions.Ignore
	// GitFiles says the snapshot holds the .git files that make folders
	// submodules and linked worktrees (see gitFileMax): every walk's does,
	// one recorded before they were held does not.
	GitFiles bool `json:"git_files,omitempty"`
}

// RepoRules are a repository's rules from outside the tree.
type RepoRules struct {
	Base         string        `json:"base,omitempty"`          // the repository's top relative to the root; "" for the root's own
	Prefix       string        `json:"prefix,omitempty"`        // base "": the root's path from the repository's top, with a final "/"
	Exclude      string        `json:"exclude,omitempty"`       // info/exclude
	ExcludesFile string        `json:"excludes_file,omitempty"` // the text of core.excludesFile, or of git's default one
	Parents      []ParentRules `json:"parents,omitempty"`       // base "": .gitignore files above the root, outermost first
}

// ParentRules is a .gitignore file above the root: its text, and the path
// from its folder down to the root (with a final "/").
type ParentRules struct {
	Prefix string `json:"prefix"`
	Text   string `json:"text"`
}

// loadGitContext finds the repository of root by looking for ".git" in root
// and its parents, the way git does, and reads what ignore decisions need:
// its rules and, with tracked, its tracked paths (a walk's; a million paths
// are 28 MB, and what a snapshot's rules judge needs only the rules).
// Outside a repository it still applies the global excludes file, so a tree
// is captured the same way whether or not it is under git.
func loadGitContext(root string, tracked bool) (gitContext, error) {
	top, gitDir := gitdir.Find(root)
	prefix := ""
	if gitDir != "" {
		p, _ := filepath.Rel(top, root)
		if p = filepath.ToSlash(p); p != "." {
			prefix = p
		}
	}
	gc, err := repoContext(top, gitDir, "", prefix, tracked)
	if prefix != "" {
		gc.rules.Parents = parentIgnores(top, prefix)
	}
	gc.build()
	return gc, err
}

// nestedGitContext reads the rules of the repository whose top is the
// tree's folder rel (absolute abs), or reports that it is none.
func nestedGitContext(abs, rel string, tracked bool) (gitContext, bool, error) {
	gitDir := gitdir.Of(abs)
	if gitDir == "" {
		return gitContext{}, false, nil
	}
	gc, err := repoContext(abs, gitDir, rel, "", tracked)
	gc.build()
	return gc, true, err
}

// repoContext reads a repository's exclude lists and, with tracked, its
// tracked paths (the global excludes file alone when gitDir is ""): top is
// its work tree, base where its top lies in the tree, prefix where the root
// lies below its top.
func repoContext(top, gitDir, base, prefix string, tracked bool) (gitContext, error) {
	gc := gitContext{base: base, rules: RepoRules{Base: base}}
	var err error
	if prefix != "" {
		gc.rules.Prefix = prefix + "/"
	}
	if gitDir != "" {
		commonDir := gitdir.Common(gitDir)
		if b, err := os.ReadFile(filepath.Join(commonDir, "info", "exclude")); err == nil {
			gc.rules.Exclude = string(b)
		}
		if tracked {
			gc.tracked, err = trackedPaths(top, gitDir, commonDir, prefix)
		}
	}
	if f := globalExcludesFile(gitDir); f != "" {
		if b, err := os.ReadFile(f); err == nil {
			gc.rules.ExcludesFile = string(b)
		}
	}
	return gc, err
}

// build parses the rule texts into the pattern lists the walk applies.
func (gc *gitContext) build() {
	r := &gc.rules
	gc.global, gc.parents = nil, nil
	for _, text := range []string{r.Exclude, r.ExcludesFile} {
		if text != "" {
			gc.global = append(gc.global, gitignore.List{Base: r.Base, Prefix: r.Prefix, Patterns: gitignore.Parse([]byte(text))})
		}
	}
	for _, p := range r.Parents {
		gc.parents = append(gc.parents, gitignore.List{Prefix: p.Prefix, Patterns: gitignore.Parse([]byte(p.Text))})
	}
}

// parentIgnores reads the .gitignore files of the folders from top down to
// (not including) the root at top/prefix. Each list sees paths as git does,
// relative to its own folder: its prefix is the way from there to the root.
// A symlinked .gitignore is not followed, as git does not.
func parentIgnores(top, prefix string) []ParentRules {
	var out []ParentRules
	parts := strings.Split(prefix, "/")
	for i := range parts {
		dirRel := strings.Join(parts[:i], "/")
		b, ok := readIgnoreFile(atCWD, filepath.Join(top, filepath.FromSlash(dirRel), ".gitignore"))
		if !ok {
			continue
		}
		out = append(out, ParentRules{Prefix: strings.Join(parts[i:], "/") + "/", Text: string(b)})
	}
	return out
}

// readIgnoreFile reads an ignore file of the tree (name relative to the
// folder at, or a path with atCWD) when it is a regular file: git does
// not follow a symlinked .gitignore, nor read a FIFO, and neither does the
// walk.
func readIgnoreFile(at dirFD, name string) ([]byte, bool) {
	f, err := openAt(at, name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return b, err == nil
}

// globalExcludesFile returns core.excludesFile from the git configuration
// (repository, then global, then XDG), or git's default
// $XDG_CONFIG_HOME/git/ignore.
func globalExcludesFile(gitDir string) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if gitDir != "" {
		configs = append(configs, filepath.Join(gitDir, "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	for _, c := range configs {
		if v, ok := gitConfigValue(c, "core", "excludesfile"); ok {
			if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
				v = filepath.Join(home, rest)
			}
			return v
		}
	}
	if xdg != "" {
		return filepath.Join(xdg, "git", "ignore")
	}
	return ""
}

// gitConfigValue reads one key from a git config file: enough of the format
// for core.excludesFile (sections, case-insensitive keys, quoted values,
// comments). Include directives are not followed.
func gitConfigValue(file, section, key string) (string, bool) {
	f, err := os.Open(file)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var cur, val string
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			cur = strings.ToLower(strings.TrimSpace(strings.SplitN(line[1:end], " ", 2)[0]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if cur != section {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, "\"") {
			v = strings.TrimSpace(v[:i])
		}
		v = strings.Trim(v, "\"")
		val, found = v, true // the last value wins, as in git
	}
	return val, found
}

// trackedPaths returns the paths git tracks that lie under prefix,
// relative to it, sorted (never nil: none is an empty list). It reads the
// index itself — versions 2 to 4, with SHA-1 or SHA-256 object names — and
// asks git (git ls-files) for an index in a form it does not know: a split
// or sparse index, or any other extension git requires a reader to
// understand. A tracked file the walk missed would be dropped from the
// snapshot although its ignore pattern does not apply to it, so when neither
// way works the walk fails, saying why, rather than guess.
func trackedPaths(top, gitDir, commonDir, prefix string) (*pathList, error) {
	index := filepath.Join(gitDir, "index")
	f, err := os.Open(index)
	if errors.Is(err, fs.ErrNotExist) {
		return &pathList{}, nil // nothing added yet
	}
	if err != nil {
		return nil, fmt.Errorf("git index %s: %w", index, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("git index %s: %w", index, err)
	}
	hashLen := 20
	if f, ok := gitConfigValue(filepath.Join(commonDir, "config"), "extensions", "objectformat"); ok && strings.EqualFold(f, "sha256") {
		hashLen = 32
	}
	l := pathListBuilder{prefix: prefix}
	why := readIndex(f, fi.Size(), hashLen, l.sizeFor, l.add)
	if why == "" {
		return l.done(), nil
	}
	paths, err := gitLsFiles(top)
	if err != nil {
		return nil, &IndexError{Index: index, Form: why, Err: err}
	}
	l = pathListBuilder{prefix: prefix}
	for _, p := range paths {
		l.add([]byte(p))
	}
	return l.done(), nil
}

// IndexError is a git index the walk could neither read itself nor have git
// list: without it, tracked files that an ignore pattern matches would be
// dropped from the snapshot.
type IndexError struct {
	Index string // the index file
	Form  string // what it is, e.g. "a split index (core.splitIndex)"
	Err   error  // why git could not list it
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("git index %s is %s, which Rewind does not read itself, and git could not list it: %v", e.Index, e.Form, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }

// pathList is a sorted list of paths held front-coded in one slice: each
// path as the length of the start it shares with the one before, then the
// rest (uvarints, then bytes), every pathBlock-th in full, where a search
// starts. A git index's paths share most of their bytes with the one
// before: a million cost 7.5 MB so, 28 MB as plain bytes and an end each
// — held through every walk of a repository's tree.
type pathList struct {
	blob   []byte
	blocks []uint32 // where each block of pathBlock paths starts in blob
}

const pathBlock = 16

// first decodes into buf the first path not before s, and returns it; nil
// where there is none.
func (l *pathList) first(s string, buf []byte) []byte {
	if len(l.blocks) == 0 {
		return nil
	}
	// The last block that starts at or before s (or the first).
	b := max(sort.Search(len(l.blocks), func(i int) bool { return string(l.blockFirst(i)) > s })-1, 0)
	end := len(l.blob)
	if b+1 < len(l.blocks) {
		end = int(l.blocks[b+1])
	}
	for off := int(l.blocks[b]); off < end; {
		shared, rest, next := l.at(off)
		buf = append(buf[:shared], rest...)
		off = next
		if string(buf) >= s {
			return buf
		}
	}
	if b+1 < len(l.blocks) {
		return append(buf[:0], l.blockFirst(b+1)...)
	}
	return nil
}

// at decodes the path written at off: how much of the one before it
// shares, the rest, and where the next starts.
func (l *pathList) at(off int) (shared int, rest []byte, next int) {
	sh, n := binary.Uvarint(l.blob[off:])
	off += n
	size, n := binary.Uvarint(l.blob[off:])
	off += n
	return int(sh), l.blob[off : off+int(size)], off + int(size)
}

// blockFirst is the path block i starts with (written in full).
func (l *pathList) blockFirst(i int) []byte {
	_, rest, _ := l.at(int(l.blocks[i]))
	return rest
}

// pathListBuilder keeps the paths under prefix, relative to it, sorted and
// without repeats (an unmerged path has several stages).
type pathListBuilder struct {
	prefix string
	blob   []byte
	blocks []uint32
	n      int      // paths written
	last   []byte   // the last path written
	sorted []string // when the paths come out of order: all of them, to sort at the end
}

// sizeFor makes room at once for the block starts of n paths.
func (b *pathListBuilder) sizeFor(n int) {
	b.blocks = make([]uint32, 0, n/pathBlock+1)
}

func (b *pathListBuilder) add(p []byte) {
	if b.prefix != "" {
		rest, ok := bytes.CutPrefix(p, []byte(b.prefix+"/"))
		if !ok {
			return
		}
		p = rest
	}
	if b.sorted != nil {
		b.sorted = append(b.sorted, string(p))
		return
	}
	if b.n > 0 {
		switch c := bytes.Compare(p, b.last); {
		case c == 0:
			return
		case c < 0: // git keeps its index sorted; an index that is not is sorted here
			l := b.list()
			var buf []byte
			for q := l.first("", nil); q != nil; q = l.first(string(q)+"\x00", buf) {
				b.sorted = append(b.sorted, string(q))
				buf = q
			}
			b.sorted = append(b.sorted, string(p))
			return
		}
	}
	b.write(p)
}

// write adds p, after every path written.
func (b *pathListBuilder) write(p []byte) {
	shared := 0
	if b.n%pathBlock == 0 {
		b.blocks = append(b.blocks, uint32(len(b.blob)))
	} else {
		for shared < len(p) && shared < len(b.last) && p[shared] == b.last[shared] {
			shared++
		}
	}
	b.blob = binary.AppendUvarint(b.blob, uint64(shared))
	b.blob = binary.AppendUvarint(b.blob, uint64(len(p)-shared))
	b.blob = append(b.blob, p[shared:]...)
	b.last = append(b.last[:0], p...)
	b.n++
}

// list is what is written so far, sharing the builder's bytes.
func (b *pathListBuilder) list() *pathList {
	return &pathList{blob: b.blob, blocks: b.blocks}
}

func (b *pathListBuilder) done() *pathList {
	if b.sorted != nil {
		sort.Strings(b.sorted)
		b.sorted = slices.Compact(b.sorted)
		b.blob, b.blocks, b.n = nil, b.blocks[:0], 0
		for _, p := range b.sorted {
			b.write([]byte(p))
		}
		b.sorted = nil
	}
	if cap(b.blob) > len(b.blob)+len(b.blob)/4+4096 { // (grown by doubling, or most of the index lies outside the prefix)
		b.blob, b.blocks = bytes.Clone(b.blob), slices.Clone(b.blocks)
	}
	return b.list()
}

// gitLsFiles asks git for the tracked paths of the work tree at top.
func gitLsFiles(top string) ([]string, error) {
	cmd := exec.Command("git", "-C", top, "ls-files", "-z", "--cached")
	for _, kv := range os.Environ() {
		// The repository is top's own, whatever the caller's git hook set.
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains([]string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"}, k) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// readIndex reads the paths of a git index (versions 2 to 4) of size bytes
// whose object names are hashLen bytes, as it goes: sized is told how many
// entries it holds, then add each path (which it must copy to keep). why
// says, when it cannot, what form the index is in: another version, an
// extension git requires readers to understand (a split index's "link", a
// sparse index's "sdir"), or damage.
func readIndex(r io.Reader, size int64, hashLen int, sized func(n int), add func(path []byte)) (why string) {
	const notIndex = "not an index git wrote"
	x := &indexReader{br: bufio.NewReaderSize(r, 256<<10)}
	var head [12]byte
	if size < int64(12+hashLen) {
		return notIndex
	}
	if _, err := io.ReadFull(x.br, head[:]); err != nil || string(head[:4]) != "DIRC" {
		return notIndex
	}
	x.version = binary.BigEndian.Uint32(head[4:8])
	n := binary.BigEndian.Uint32(head[8:12])
	if x.version < 2 || x.version > 4 {
		return fmt.Sprintf("of version %d", x.version)
	}
	sized(int(n))
	x.end = size - int64(hashLen) // the trailing checksum
	x.off = 12
	// ctime, mtime (8+8), dev, ino, mode, uid, gid, size (6*4), the object
	// name, then 16 bits of flags.
	x.fixed = 40 + hashLen
	x.buf = make([]byte, x.fixed+2)
	for i := uint32(0); i < n; i++ {
		if why := x.entry(add); why != "" {
			return why
		}
	}
	return x.extensions()
}

// indexReader reads a git index's entries and extensions, off bytes in, up to end (where the
// trailing checksum starts).
type indexReader struct {
	br       *bufio.Reader
	off, end int64
	version  uint32
	fixed    int    // an entry's fixed part, up to its flags
	buf      []byte // an entry's fixed part and flags
	prev     []byte // the name before (a version 4 name is written against it)
	long     []byte // a name longer than the reader's buffer
}

// name reads a NUL-ended name that must end before end.
func (x *indexReader) name() ([]byte, bool) {
	b, err := x.br.ReadSlice(0)
	if err == bufio.ErrBufferFull {
		x.long = append(x.long[:0], b...)
		for err == bufio.ErrBufferFull && x.off+int64(len(x.long)) <= x.end {
			b, err = x.br.ReadSlice(0)
			x.long = append(x.long, b...)
		}
		b = x.long
	}
	if err != nil || x.off+int64(len(b)) > x.end {
		return nil, false
	}
	x.off += int64(len(b))
	return b[:len(b)-1], true
}

// entry reads one entry and gives add its path (valid until the reader moves on); why says
// what is wrong with the index, "" when nothing is.
func (x *indexReader) entry(add func(path []byte)) (why string) {
	if x.off+int64(x.fixed+2) > x.end {
		return "damaged (it ends inside an entry)"
	}
	if _, err := io.ReadFull(x.br, x.buf); err != nil {
		return "damaged (it ends inside an entry)"
	}
	flags := binary.BigEndian.Uint16(x.buf[x.fixed:])
	hdr := x.fixed + 2
	if flags&0x4000 != 0 && x.version >= 3 { // extended flags
		hdr += 2
		if _, err := x.br.Discard(2); err != nil || x.off+int64(hdr) > x.end {
			return "damaged (it ends inside an entry)"
		}
	}
	x.off += int64(hdr)
	if x.version == 4 {
		// A varint of bytes to drop from the previous name, then a NUL-ended suffix.
		drop, m := readIndexVarint(x.br)
		if m <= 0 || int(drop) > len(x.prev) || x.off+int64(m) > x.end {
			return "damaged (a bad path prefix)"
		}
		x.off += int64(m)
		suffix, ok := x.name()
		if !ok {
			return "damaged (a path without its end)"
		}
		x.prev = append(x.prev[:len(x.prev)-int(drop)], suffix...)
		add(x.prev)
		return ""
	}
	name, ok := x.name()
	if !ok {
		return "damaged (a path without its end)"
	}
	add(name) // (before the reader moves on: name is its buffer)
	// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
	pad := (hdr+len(name)+8)&^7 - (hdr + len(name) + 1)
	if _, err := x.br.Discard(pad); err != nil {
		return "damaged (it ends inside an entry)"
	}
	x.off += int64(pad)
	return ""
}

// extensions reads the extensions after the entries: a four-byte signature, a 32-bit size,
// the data. One whose signature starts with a lowercase letter must be understood to read the
// index right; the others are caches.
func (x *indexReader) extensions() (why string) {
	var head [8]byte
	for x.off+8 <= x.end {
		if _, err := io.ReadFull(x.br, head[:]); err != nil {
			return "damaged (an extension past its end)"
		}
		sig := string(head[:4])
		size := int64(binary.BigEndian.Uint32(head[4:8]))
		if sig[0] >= 'a' && sig[0] <= 'z' {
			switch sig {
			case "link":
				return "a split index (core.splitIndex)"
			case "sdir":
				return "a sparse index"
			}
			return fmt.Sprintf("an index with the %q extension", sig)
		}
		if x.off+8+size > x.end {
			return "damaged (an extension past its end)"
		}
		if _, err := x.br.Discard(int(size)); err != nil {
			return "damaged (an extension past its end)"
		}
		x.off += 8 + size
	}
	return ""
}

func readIndexVarint(br *bufio.Reader) (uint64, int) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0
	}
	val := uint64(c & 127)
	i := 0
	for c&128 != 0 {
		i++
		if i > 9 {
			return 0, 0
		}
		if c, err = br.ReadByte(); err != nil {
			return 0, 0
		}
		val++
		val = (val << 7) + uint64(c&127)
	}
	return val, i + 1
}

// isTracked reports whether path (relative to the root) is tracked, and
// trackedUnder whether any tracked path lies inside folder dir.
func (gc *gitContext) isTracked(path string) bool {
	path = gc.local(path)
	var buf [256]byte
	p := gc.tracked.first(path, buf[:0])
	return p != nil && string(p) == path
}

func (gc *gitContext) trackedUnder(dir string) bool {
	dir = gc.local(dir) + "/"
	var buf [256]byte
	p := gc.tracked.first(dir, buf[:0])
	return len(p) >= len(dir) && string(p[:len(dir)]) == dir
}

// local is path relative to the repository's top (for a nested one).
func (gc *gitContext) local(path string) string {
	if gc.base == "" {
		return path
	}
	return strings.TrimPrefix(path, gc.base+"/")
}
