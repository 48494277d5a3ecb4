package snap

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
)

// ManifestVersion is the version of the manifest format this package writes.
const ManifestVersion = 2

// A Manifest describes a snapshot without opening its archive: every entry
// with its metadata, content hash and where its content is, the tree hash,
// and when the tree was scanned (for the racy-git rule).
//
// On disk it is a text file: one JSON header line, then one line per entry
// in walk order, fields separated by tabs:
//
//	kind mode size mtime_ns ctime_ns inode hash-or-link src member skip path
//
// kind is f, d or l (x in a delta: the path is gone); mode is octal; hash
// is hex SHA-256 ("-" for folders); src is the archive holding a file's
// content, relative to the manifest's folder ("-" for the snapshot's own
// archive), member the offset of the gzip member holding its tar header and
// skip the inflated bytes of that member before it. A path, link or src that
// holds a tab, newline, backslash or quote, or starts with a quote, is
// written as a Go-quoted string.
//
// A layer's manifest is a delta: its header names the parent manifest, and
// it lists only the entries that differ from the parent's (x lines for the
// removed ones). Reading it reads the chain.
type Manifest struct {
	Header  ManifestHeader
	Entries []Entry // the whole tree, in walk order; Src absolute
	File    string  // the file it was read from (absolute), "" for a new one
	chain   []string
	sizes   map[string]int64 // archive (absolute) -> its size, as the chain's headers record it
	stream  *entryStream     // for OpenManifest's: where Entries are read from on each pass
	srcs    *sources         // for OpenManifest's: sources, once found
	recall  *recall          // for OpenManifest's: what the last inherit from it learned
	// sparse: Entries hold only what differs from the parent (createOver's
	// layer), read through the parent's recall.
	sparse bool
}

// Files lists the files the snapshot is read from: the manifest files of
// its chain (newest first) and every archive its entries' content is in,
// absolute.
func (m *Manifest) Files() []string {
	out := slices.Clone(m.chain)
	if len(out) == 0 && m.File != "" {
		out = append(out, m.File)
	}
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(m.Header.Archive)
	srcs, _ := m.sources()
	for _, a := range srcs {
		add(a.name)
	}
	return out
}

// source is an archive a snapshot's files are read from, and the furthest
// member offset the snapshot names in it.
type source struct {
	name string
	last int64
}

// sources lists the archives m's files are read from, in the order its
// entries first name them, and for a manifest read as it goes, why a pass
// over it failed.
func (m *Manifest) sources() ([]source, error) {
	if m.srcs != nil {
		return m.srcs.list, m.srcs.err
	}
	var c sourceCollector
	err := m.each(func(e *Entry) error { c.add(e); return nil })
	if m.stream != nil {
		m.srcs = &sources{c.list, err} // (a pass is a read of the tree's manifest: once)
	}
	return c.list, err
}

// sourcesOf lists the archives entries read from, as sources does.
func sourcesOf(entries []Entry) []source {
	var c sourceCollector
	for i := range entries {
		c.add(&entries[i])
	}
	return c.list
}

// sourceCollector gathers sources: a few archives hold a tree's files, so
// the last one found is tried before the list.
type sourceCollector struct {
	list []source
	at   int
}

func (c *sourceCollector) add(e *Entry) {
	if e.Kind != KindFile {
		return
	}
	if c.at >= len(c.list) || c.list[c.at].name != e.Src {
		c.at = slices.IndexFunc(c.list, func(s source) bool { return s.name == e.Src })
		if c.at < 0 {
			c.at = len(c.list)
			c.list = append(c.list, source{name: e.Src})
		}
	}
	c.list[c.at].last = max(c.list[c.at].last, e.COff)
}

type sources struct {
	list []source
	err  error
}

// CheckArchives checks, without reading them, that the archives the
// snapshot's files are read from are all there, each of the size the chain
// recorded for it — or, for an archive no header gives the size of (written
// before sizes were recorded), large enough to hold every member its entries
// name. It is what a save checks before it builds a layer on the snapshot.
func (m *Manifest) CheckArchives() error { return m.CheckArchivesStat(os.Stat) }

// CheckArchivesStat is CheckArchives taking the archives' sizes from stat:
// a caller checking thousands of snapshots that share archives stats each
// once.
func (m *Manifest) CheckArchivesStat(stat func(name string) (fs.FileInfo, error)) error {
	srcs, err := m.sources()
	if err != nil {
		return err
	}
	return m.checkSources(srcs, stat)
}

// checkArchives checks the archives entries read from, at the sizes m's
// chain records.
func (m *Manifest) checkArchives(entries []Entry, stat func(name string) (fs.FileInfo, error)) error {
	return m.checkSources(sourcesOf(entries), stat)
}

// checkSources checks the archives srcs names, at the sizes m's chain
// records.
func (m *Manifest) checkSources(srcs []source, stat func(name string) (fs.FileInfo, error)) error {
	for _, s := range srcs {
		a, off := s.name, s.last
		fi, err := stat(a)
		if err != nil {
			return &ArchiveError{Archive: a, Reason: fmt.Sprintf("missing (%v); the snapshot's files in it cannot be read", errors.Unwrap(err))}
		}
		if size, ok := m.sizes[a]; ok && fi.Size() != size {
			return &ArchiveError{Archive: a, Reason: fmt.Sprintf("%d bytes, where its manifest recorded %d; it is damaged", fi.Size(), size)}
		}
		if fi.Size() <= off {
			return &ArchiveError{Archive: a, Reason: fmt.Sprintf("%d bytes, too short for a member its manifest names at %d; it is damaged", fi.Size(), off)}
		}
	}
	return nil
}

// OwnFiles lists the files m is read from that the manifest it was laid
// over is not, given own, its own lines (see ReadManifestDelta): its own
// file, its own archive and the archives its own lines read from. Every
// other file of m.Files() is one of that manifest's Files.
func (m *Manifest) OwnFiles(own []Entry) []string {
	out := []string{m.File}
	if m.Header.Archive != "" {
		out = append(out, m.Header.Archive)
	}
	for i := range own {
		if e := &own[i]; e.Kind == KindFile && !slices.Contains(out, e.Src) {
			out = append(out, e.Src)
		}
	}
	return out
}

// OwnLinesRecord reports whether every archive m's header records the size
// of is one of own, its own lines (see ReadManifestDelta), read from, as
// Encode writes them: then a check of those lines' archives covers every
// size m records anew. A header that says otherwise (damaged, or written
// otherwise) needs the whole check.
func (m *Manifest) OwnLinesRecord(own []Entry) bool {
	for a := range m.Header.Archives {
		if !slices.ContainsFunc(own, func(e Entry) bool { return e.Kind == KindFile && e.Src == a }) {
			return false
		}
	}
	return true
}

// CheckOwnArchivesStat is CheckArchivesStat for a manifest laid over one
// that passed CheckArchivesStat with the same stat, given own, its own
// lines (see ReadManifestDelta): only the archives they read from are
// checked, at the sizes m's chain records — the lines it keeps from that
// one name the same members, checked against the same sizes; a size its
// header records anew must be of an archive its own lines read from (see
// OwnLinesRecord).
func (m *Manifest) CheckOwnArchivesStat(own []Entry, stat func(name string) (fs.FileInfo, error)) error {
	return m.checkArchives(own, stat)
}

// entries is how many entries the snapshot holds.
func (h *ManifestHeader) entries() int { return h.Files + h.Dirs + h.Symlinks }

// size is how many entries m holds, to make room for: its header's count
// when they are read as a pass goes (bounded: a damaged header may say
// anything).
func (m *Manifest) size() int {
	if m.stream == nil {
		return len(m.Entries)
	}
	return min(max(m.Header.entries(), 0), maxEntriesHint)
}

// ManifestHeader is the first line of a manifest file.
type ManifestHeader struct {
	Type            string `json:"type"`
	Version         int    `json:"version"`
	ScanStarted     int64  `json:"scan_started"` // ns since the epoch, taken before the walk
	Files           int    `json:"files"`
	Dirs            int    `json:"dirs"`
	Symlinks        int    `json:"symlinks"`
	Bytes           int64  `json:"bytes"`
	CompressedBytes int64  `json:"compressed_bytes"` // of this snapshot's own archive
	TreeHash        string `json:"tree_hash"`
	// Archive is the snapshot's own archive. In memory it is absolute; on
	// disk, relative to the manifest's folder.
	Archive string `json:"archive,omitempty"`
	// Parent is the manifest this one is a layer over (absolute in memory,
	// relative on disk); "" for a full snapshot.
	Parent string `json:"parent,omitempty"`
	// Depth counts the layers since the last full snapshot (0: full).
	Depth int `json:"depth"`
	// ChainCompressed is the compressed size of the layers since the full
	// snapshot, this one included; BaseCompressed the full snapshot's.
	ChainCompressed int64 `json:"chain_compressed_bytes,omitempty"`
	BaseCompressed  int64 `json:"base_compressed_bytes,omitempty"`
	// Limits are the limits the snapshot was taken within, when they are
	// not DefaultLimits: a restore through the manifest uses them.
	Limits *Limits `json:"limits,omitempty"`
	// Unreadable lists the paths the snapshot could not read (no
	// permission, an I/O error), sorted: they are not in it, and a restore
	// leaves whatever is at them alone.
	Unreadable []string `json:"unreadable,omitempty"`
	// Rules are the ignore rules from outside the tree the snapshot was
	// taken under: a restore judges by them what the snapshot ignored.
	Rules *Rules `json:"rules,omitempty"`
	// Archives holds the sizes of the other archives this file's entries
	// are read from (in memory absolute, on disk relative to the manifest's
	// folder), so that a chain can be checked without reading them.
	Archives map[string]int64 `json:"archives,omitempty"`
}

// limitsOf is the limits m's snapshot was taken within.
func limitsOf(m *Manifest) Limits {
	if m.Header.Limits != nil {
		return m.Header.Limits.Or(DefaultLimits)
	}
	return DefaultLimits
}

// racyWindow is how close to the scan a change time may be before the
// entry's metadata cannot prove its content unchanged: file systems stamp
// times with a coarse clock, so a write just after the scan can leave the
// same mtime behind. Such entries are re-hashed on the next comparison.
const racyWindow = 2_000_000_000 // 2 s, in ns

// racy reports whether e's metadata was too fresh at scan time to be trusted.
func (m *Manifest) racy(e *Entry) bool {
	t := m.Header.ScanStarted - racyWindow
	return e.MTime >= t || e.CTime >= t
}

// newManifest fills the header counts and tree hash from entries.
func newManifest(entries []Entry, scanStarted int64) *Manifest {
	m := &Manifest{Entries: entries}
	m.Header = ManifestHeader{Type: "manifest", Version: ManifestVersion, ScanStarted: scanStarted}
	var t treeHasher
	for i := range entries {
		m.Header.count(&entries[i])
		t.add(&entries[i])
	}
	m.Header.TreeHash = t.sum()
	return m
}

// count adds e to the header's counts.
func (h *ManifestHeader) count(e *Entry) {
	switch e.Kind {
	case KindFile:
		h.Files++
		h.Bytes += e.Size
	case KindDir:
		h.Dirs++
	case KindSymlink:
		h.Symlinks++
	}
}

// treeHashBuffers are what TreeHash hashes entries' lines through.
var treeHashBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 20<<10); return &b }}

// TreeHash is "sha256:" and the hex SHA-256 of the entries' kinds, permission
// bits, content hashes or link targets and paths, in walk order. Times,
// inodes and where content is stored do not count: two trees with the same
// content have the same hash.
func TreeHash(entries []Entry) string {
	var t treeHasher
	for i := range entries {
		t.add(&entries[i])
	}
	return t.sum()
}

// A treeHasher is TreeHash taking the entries one at a time, in walk order.
// Its zero value is ready; sum ends it.
type treeHasher struct {
	h  hash.Hash
	bp *[]byte // (lines hashed 16 KiB at a time: a write per line cost more than the hashing)
}

func (t *treeHasher) add(e *Entry) {
	if t.h == nil {
		t.h, t.bp = sha256.New(), treeHashBuffers.Get().(*[]byte)
	}
	b := *t.bp
	if len(b) > 16<<10 {
		t.h.Write(b)
		b = b[:0]
	}
	b = append(b, kindLetter(e.Kind), 0)
	b = strconv.AppendUint(b, uint64(e.Mode), 8)
	b = append(b, 0)
	b = append(b, e.Hash...)
	b = append(b, e.Link...)
	b = append(b, 0)
	b = append(b, e.Path...)
	*t.bp = append(b, '\n')
}

func (t *treeHasher) sum() string {
	if t.h == nil {
		t.h = sha256.New()
	} else {
		t.h.Write(*t.bp)
		*t.bp = (*t.bp)[:0]
		treeHashBuffers.Put(t.bp)
	}
	return "sha256:" + hex.EncodeToString(t.h.Sum(nil))
}

func kindLetter(k Kind) byte {
	switch k {
	case KindFile:
		return 'f'
	case KindDir:
		return 'd'
	case KindSymlink:
		return 'l'
	}
	return '?'
}

// WriteManifestFile writes m to name atomically. When m.Header.Parent is
// set, parent must be that manifest: only the differences are written.
func WriteManifestFile(name string, m *Manifest, parent *Manifest) error {
	name, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	err = durable.Write(name, layout.FileMode, func(w io.Writer) error { return m.Encode(w, filepath.Dir(name), parent) })
	if err != nil {
		return err
	}
	m.File = name
	return nil
}

// Encode writes m in the manifest format to w, for a manifest file in the
// folder dir (paths in it are relative to dir). When m.Header.Parent is set,
// parent must be that manifest: only the differences are written. Either
// may be one opened with OpenManifest: it is read in passes (two for a full
// manifest: the archives its header records, then its lines), not held.
// WriteManifestFile is the usual way; Encode serves a caller that makes the
// file durable its own way.
func (m *Manifest) Encode(w io.Writer, dir string, parent *Manifest) error {
	if m.Header.Parent != "" && parent == nil {
		return errors.New("manifest: a layer's manifest needs its parent to be written")
	}
	if err := m.sparseOver(parent); err != nil {
		return err
	}
	hdr := m.Header
	hdr.Archives = nil
	record := func(e *Entry) { // the size of an archive an entry this file lists reads from
		if e.Kind != KindFile || e.Src == "" || e.Src == m.Header.Archive {
			return
		}
		if size, ok := m.sizes[e.Src]; ok {
			if hdr.Archives == nil {
				hdr.Archives = map[string]int64{}
			}
			hdr.Archives[relTo(dir, e.Src)] = size
		}
	}
	if m.Header.Parent == "" {
		if err := m.each(func(e *Entry) error { record(e); return nil }); err != nil {
			return err
		}
	}
	hdr.Archive = relTo(dir, hdr.Archive)
	hdr.Parent = relTo(dir, hdr.Parent)
	bw := bufio.NewWriterSize(w, 256*1024)
	writeHeader := func() error {
		b, err := json.Marshal(hdr)
		if err != nil {
			return err
		}
		bw.Write(b)
		return bw.WriteByte('\n')
	}
	var b []byte
	var out io.Writer = bw
	put := func(e *Entry, gone bool) {
		b = b[:0]
		if gone {
			b = append(b, "x\t-\t0\t0\t0\t0\t-\t-\t0\t0\t"...)
			b = appendField(b, e.Path)
			b = append(b, '\n')
			out.Write(b)
			return
		}
		b = appendEntryLine(b, e, m.Header.Archive, dir)
		out.Write(b)
	}
	if m.Header.Parent == "" {
		if err := writeHeader(); err != nil {
			return err
		}
		if err := m.each(func(e *Entry) error { put(e, false); return nil }); err != nil {
			return err
		}
		return bw.Flush()
	}
	// A layer lists what differs from its parent, and its header the
	// archives those entries read from: found in one pass over the parent,
	// the lines held until the header is written.
	var lines bytes.Buffer
	out = &lines
	merge := func(fn func(old, cur *Entry) error) error { return mergeWith(parent, m.Entries, fn) }
	if m.stream != nil {
		merge = func(fn func(old, cur *Entry) error) error { return mergeManifests(parent, m, fn) }
	}
	err := merge(func(old, cur *Entry) error {
		switch {
		case cur == nil:
			put(old, true)
		case old == nil || !cur.same(old):
			record(cur)
			put(cur, false)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := writeHeader(); err != nil {
		return err
	}
	bw.Write(lines.Bytes())
	return bw.Flush()
}

// appendEntryLine appends e's line of a manifest in the folder dir whose
// own archive is archive.
func appendEntryLine(b []byte, e *Entry, archive, dir string) []byte {
	b = append(b, kindLetter(e.Kind), '\t')
	b = strconv.AppendUint(b, uint64(e.Mode), 8)
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.MTime, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.CTime, 10)
	b = append(b, '\t')
	b = strconv.AppendUint(b, e.Ino, 10)
	b = append(b, '\t')
	switch e.Kind {
	case KindFile:
		b = append(b, e.Hash...)
		b = append(b, '\t')
		if e.Src == "" || e.Src == archive {
			b = append(b, '-')
		} else {
			b = appendField(b, relTo(dir, e.Src))
		}
	case KindSymlink:
		b = appendField(b, e.Link)
		b = append(b, "\t-"...)
	default:
		b = append(b, "-\t-"...)
	}
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.COff, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.Skip, 10)
	b = append(b, '\t')
	b = appendField(b, e.Path)
	return append(b, '\n')
}

// sparseOver reports, for a sparse manifest, whether it is read over
// parent: the one its entries were kept against, not since compared with
// another list.
func (m *Manifest) sparseOver(parent *Manifest) error {
	if m.sparse && (parent == nil || !parent.recall.of(m.Entries)) {
		return errors.New("manifest: a layer's manifest holding only what changed is read over the parent it was made over, right after")
	}
	return nil
}

// mergeWith is mergeEntries over the entries of parent (which may be read as
// it goes: see each) and cur. An error from fn ends it.
func mergeWith(parent *Manifest, cur []Entry, fn func(old, cur *Entry) error) error {
	if parent.recall.of(cur) {
		return parent.recall.merge(cur, fn)
	}
	j := 0
	err := parent.each(func(o *Entry) error {
		for j < len(cur) && comparePaths(cur[j].Path, o.Path) < 0 {
			if err := fn(nil, &cur[j]); err != nil {
				return err
			}
			j++
		}
		if j < len(cur) && cur[j].Path == o.Path {
			j++
			return fn(o, &cur[j-1])
		}
		return fn(o, nil)
	})
	if err != nil {
		return err
	}
	for ; j < len(cur); j++ {
		if err := fn(nil, &cur[j]); err != nil {
			return err
		}
	}
	return nil
}

// keeper returns what a caller keeping a string of m's entries past a pass
// (see each) keeps: a copy when they are read as the pass goes.
func (m *Manifest) keeper() func(string) string {
	if m.stream == nil {
		return func(s string) string { return s }
	}
	return strings.Clone
}

// mergeEntries walks two entry lists in walk order together, calling fn with
// the entry of each path in a (old) and b (cur), nil where absent.
func mergeEntries(a, b []Entry, fn func(old, cur *Entry)) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case i == len(a):
			c = 1
		case j == len(b):
			c = -1
		default:
			c = comparePaths(a[i].Path, b[j].Path)
		}
		switch {
		case c < 0:
			fn(&a[i], nil)
			i++
		case c > 0:
			fn(nil, &b[j])
			j++
		default:
			fn(&a[i], &b[j])
			i, j = i+1, j+1
		}
	}
}

func relTo(dir, p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	if r, err := filepath.Rel(dir, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

func absFrom(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

func appendField(b []byte, s string) []byte {
	if s == "" || strings.ContainsAny(s, "\t\n\r\\\"") || s[0] == '"' || s == "-" {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func parseField(s string) (string, error) {
	if strings.HasPrefix(s, "\"") {
		return strconv.Unquote(s)
	}
	return s, nil
}

// ManifestError is a manifest file that does not read as one: missing, not a manifest, or a
// chain of parents that breaks (Parent, the link that failed) or loops.
type ManifestError struct {
	Path   string
	Parent string // the parent in Path's chain that failed; "" for Path itself
	Err    error
}

func (e *ManifestError) Error() string {
	if e.Parent != "" {
		return fmt.Sprintf("manifest %s: its parent %s: %v", e.Path, e.Parent, e.Err)
	}
	return fmt.Sprintf("manifest %s: %v", e.Path, e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

// minLine is fewer bytes than any line of a manifest takes (a folder's, of
// a one-letter name, is 25).
const minLine = 20

// maxManifestChain bounds how many deltas ReadManifest follows.
const maxManifestChain = 4096

// ReadManifest reads a manifest file and, for a layer, its parents.
func ReadManifest(name string) (*Manifest, error) {
	m, _, err := readChain(name, false)
	return m, err
}

// OpenManifest is ReadManifest for a caller that goes through the entries
// in walk order only (a save comparing the tree with its parent): the full
// manifest at the chain's end is not held but read again on each pass, so
// the manifest costs the deltas laid over it, not the tree. Its Entries
// are nil; the functions of this package that take a parent read it.
func OpenManifest(name string) (*Manifest, error) {
	m, _, err := readChain(name, true)
	return m, err
}

// Opened reports whether m was opened as OpenManifest opens it: its
// entries are read on each pass, not held.
func (m *Manifest) Opened() bool { return m.stream != nil }

// readChain reads the manifest name and its chain; own is its own lines
// when it is a delta (see ReadManifestDelta).
func readChain(name string, stream bool) (m *Manifest, own []Entry, err error) {
	chain, base, err := loadChain(name, stream)
	if err != nil {
		return nil, nil, err
	}
	top := chain[0].m
	top.sizes = map[string]int64{}
	for i := len(chain) - 1; i >= 0; i-- { // the newest record wins
		h := &chain[i].m.Header
		for a, size := range h.Archives {
			top.sizes[a] = size
		}
		if h.Archive != "" {
			top.sizes[h.Archive] = h.CompressedBytes
		}
	}
	for _, l := range chain {
		top.chain = append(top.chain, l.m.File)
	}
	if base != nil {
		top.stream = base
	}
	if len(chain) == 1 {
		return top, nil, nil
	}
	own = top.Entries
	// Overlay the deltas (newest wins) on the full manifest at the chain's
	// end in one merge: the cost is the tree plus the deltas, not the tree
	// times the depth.
	over := map[string]*Entry{}
	removed := map[string]bool{}
	var added []Entry
	for _, l := range chain[:len(chain)-1] {
		for i := range l.m.Entries {
			e := &l.m.Entries[i]
			if _, done := over[e.Path]; done || removed[e.Path] {
				continue
			}
			if l.gone[e.Path] {
				removed[e.Path] = true
				continue
			}
			over[e.Path] = e
		}
	}
	if base != nil {
		// The base is read on each pass, the deltas laid over it as it goes.
		base.removed = removed
		for _, e := range over {
			base.over = append(base.over, *e)
		}
		sort.Slice(base.over, func(i, j int) bool { return comparePaths(base.over[i].Path, base.over[j].Path) < 0 })
		top.Entries = nil // (the newest delta's own)
		return top, own, nil
	}
	baseEntries := chain[len(chain)-1].m.Entries
	inBase := make(map[string]bool, len(over))
	for i := range baseEntries {
		if _, ok := over[baseEntries[i].Path]; ok {
			inBase[baseEntries[i].Path] = true
		}
	}
	for p, e := range over {
		if !inBase[p] {
			added = append(added, *e)
		}
	}
	top.Entries = overlay(baseEntries, over, removed, added)
	return top, own, nil
}

// A chainLink is one manifest of a chain, and the paths its delta lines
// remove.
type chainLink struct {
	m    *Manifest
	gone map[string]bool
}

// loadChain reads the manifest name and its parents, newest first, up to
// the full manifest at the chain's end; base is that manifest's entries
// read on each pass, when stream asks for it.
func loadChain(name string, stream bool) (chain []chainLink, base *entryStream, err error) {
	seen := map[string]bool{}
	for file := name; file != ""; {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, nil, err
		}
		if seen[abs] || len(chain) > maxManifestChain {
			return nil, nil, &ManifestError{Path: name, Err: fmt.Errorf("its chain of parents loops or is longer than %d", maxManifestChain)}
		}
		seen[abs] = true
		m, gone, stm, readErr, err := loadManifestFile(abs, stream)
		if readErr != nil {
			if len(chain) > 0 {
				return nil, nil, &ManifestError{Path: name, Parent: file, Err: readErr}
			}
			return nil, nil, &ManifestError{Path: name, Err: readErr}
		}
		if err != nil {
			return nil, nil, &ManifestError{Path: abs, Err: err}
		}
		if stm != nil {
			base = stm
		}
		m.File = abs
		chain = append(chain, chainLink{m, gone})
		file = m.Header.Parent
	}
	return chain, base, nil
}

// overlay lays the deltas over (newest entry of each path), removed and
// added (entries base does not have, sorted) on base, in walk order. With
// nothing added (a layer that changed or removed what was there), base's
// own array takes the result: it only shrinks, so every entry is written
// at or before where it is read, and a tree's worth of entries is not held
// twice.
func overlay(base []Entry, over map[string]*Entry, removed map[string]bool, added []Entry) []Entry {
	sort.Slice(added, func(i, j int) bool { return comparePaths(added[i].Path, added[j].Path) < 0 })
	var entries []Entry
	if len(added) == 0 {
		entries = base[:0]
	} else {
		entries = make([]Entry, 0, len(base)+len(added))
	}
	j := 0
	for i := range base {
		for j < len(added) && comparePaths(added[j].Path, base[i].Path) < 0 {
			entries = append(entries, added[j])
			j++
		}
		p := base[i].Path
		switch {
		case removed[p]:
		case over[p] != nil:
			entries = append(entries, *over[p])
		default:
			entries = append(entries, base[i])
		}
	}
	entries = append(entries, added[j:]...)
	if len(added) == 0 {
		clear(base[len(entries):]) // (what shrank off holds no strings)
	}
	return entries
}

// ReadManifestOver is ReadManifest for a caller that has read manifests
// name may build on: when known returns (non-nil) the manifest name's is a
// delta over, given its file, only name's own file is read and laid over
// that one's entries, so reading every manifest of a chain in turn costs
// each file once, not the chain once per manifest. What known returns (read
// by ReadManifest or this) is not changed. Otherwise it reads the chain.
func ReadManifestOver(name string, known func(file string) *Manifest) (*Manifest, error) {
	m, _, err := ReadManifestDelta(name, known)
	return m, err
}

// ReadManifestDelta is ReadManifestOver, returning too the manifest's own
// lines when it was laid over one known returned (nil otherwise): all that
// tells it from that one, what a caller that has checked that one checks
// of this one (Verifier.CheckOwn, CheckOwnArchivesStat, OwnFiles).
func ReadManifestDelta(name string, known func(file string) *Manifest) (m *Manifest, own []Entry, err error) {
	return ReadManifestDeltaWithin(name, -1, known)
}

// ReadManifestDeltaWithin is ReadManifestDelta for a caller bounding what
// it holds: a snapshot of more than most entries (most < 0: no bound) is
// opened as OpenManifest opens it, its entries read on each pass, not held
// (see Opened), and then own is its own lines whenever it is a delta.
func ReadManifestDeltaWithin(name string, most int, known func(file string) *Manifest) (m *Manifest, own []Entry, err error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, nil, err
	}
	if fi, err := os.Stat(abs); err == nil && most >= 0 && fi.Size() > int64(most)*minLine {
		// Perhaps a full manifest of more than most entries: not read
		// whole to learn so from its header.
		if m, _, _, readErr, err := loadManifestFile(abs, true); readErr == nil && err == nil && m.Header.entries() > most {
			return readChain(abs, true)
		}
	}
	b, err := readFileString(abs)
	if err != nil {
		return nil, nil, &ManifestError{Path: name, Err: err}
	}
	m, gone, err := parseManifest(b, filepath.Dir(abs))
	if err != nil {
		return nil, nil, &ManifestError{Path: abs, Err: err}
	}
	if most >= 0 && m.Header.entries() > most {
		return readChain(abs, true)
	}
	var parent *Manifest
	if m.Header.Parent != "" {
		parent = known(m.Header.Parent)
	} else {
		parent = &Manifest{} // a full manifest: nothing to lay it over
		parent.File = m.Header.Parent
	}
	if parent == nil || parent.File != m.Header.Parent || len(parent.chain) >= maxManifestChain || slices.Contains(parent.chain, abs) {
		m, _, err := readChain(abs, false)
		return m, nil, err
	}
	m.File = abs
	m.chain = append([]string{abs}, parent.chain...)
	m.sizes = make(map[string]int64, len(parent.sizes)+len(m.Header.Archives)+1)
	for a, size := range parent.sizes {
		m.sizes[a] = size
	}
	for a, size := range m.Header.Archives {
		m.sizes[a] = size
	}
	if m.Header.Archive != "" {
		m.sizes[m.Header.Archive] = m.Header.CompressedBytes
	}
	if m.Header.Parent == "" {
		return m, nil, nil
	}
	own = m.Entries
	entries := spareEntries(len(parent.Entries) + len(m.Entries))
	mergeEntries(parent.Entries, m.Entries, func(old, cur *Entry) {
		switch {
		case cur == nil:
			entries = append(entries, *old)
		case !gone[cur.Path]:
			entries = append(entries, *cur)
		}
	})
	m.Entries = entries
	return m, own, nil
}

// loadManifestFile reads one manifest file of a chain: whole, or with stream
// and when it is a full manifest, its header only (stm reads its entries).
// readErr is an error reading it, err one in what it holds.
func loadManifestFile(abs string, stream bool) (m *Manifest, gone map[string]bool, stm *entryStream, readErr, err error) {
	if stream {
		f, err := os.Open(abs)
		if err != nil {
			return nil, nil, nil, err, nil
		}
		defer f.Close()
		br := bufio.NewReaderSize(f, 64*1024)
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, nil, nil, err, nil
		}
		m = &Manifest{}
		if err := parseHeader(m, strings.TrimSuffix(line, "\n"), filepath.Dir(abs)); err != nil {
			return nil, nil, nil, nil, err
		}
		if m.Header.Parent == "" {
			return m, nil, &entryStream{file: abs, header: line, version: m.Header.Version, archive: m.Header.Archive}, nil, nil
		}
		var b strings.Builder
		b.WriteString(line)
		if _, err := io.Copy(&b, br); err != nil {
			return nil, nil, nil, err, nil
		}
		m, gone, err = parseManifest(b.String(), filepath.Dir(abs))
		return m, gone, nil, nil, err
	}
	b, err := readFileString(abs)
	if err != nil {
		return nil, nil, nil, err, nil
	}
	m, gone, err = parseManifest(b, filepath.Dir(abs))
	return m, gone, nil, nil, err
}

// readFileString reads a file into one string: a manifest's paths and
// hashes are slices of it, so the file's bytes are held once, not once as
// read and again as a string. (The bytes are read into a buffer nothing
// else refers to and never written after, so they may be the string's own,
// as strings.Builder does.)
func readFileString(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	size := 0
	if fi, err := f.Stat(); err == nil && fi.Size() < math.MaxInt32 {
		size = int(fi.Size())
	}
	b := make([]byte, 0, size+1) // +1: the read that sees the end
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grown since the stat
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if len(b) == 0 {
		return "", nil
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// parseHeader parses a manifest's header line into m.Header, its paths
// made absolute from dir.
func parseHeader(m *Manifest, line string, dir string) error {
	if err := json.Unmarshal([]byte(line), &m.Header); err != nil || m.Header.Type != "manifest" {
		return fmt.Errorf("not a Rewind manifest (bad header line)")
	}
	if m.Header.Version > ManifestVersion {
		return fmt.Errorf("manifest version %d is newer than this program understands (%d); upgrade Rewind", m.Header.Version, ManifestVersion)
	}
	m.Header.Archive = absFrom(dir, m.Header.Archive)
	m.Header.Parent = absFrom(dir, m.Header.Parent)
	if len(m.Header.Archives) > 0 {
		abs := make(map[string]int64, len(m.Header.Archives))
		for a, size := range m.Header.Archives {
			abs[absFrom(dir, a)] = size
		}
		m.Header.Archives = abs
	}
	return nil
}

// parseManifest parses a manifest file's text; its entries' paths and
// hashes are slices of text.
func parseManifest(text string, dir string) (*Manifest, map[string]bool, error) {
	line, text, _ := strings.Cut(text, "\n")
	m := &Manifest{}
	if err := parseHeader(m, line, dir); err != nil {
		return nil, nil, err
	}
	var gone map[string]bool
	m.Entries = make([]Entry, 0, strings.Count(text, "\n"))
	// Paths and hashes are slices of text rather than an allocation each,
	// and the few archives entries name are resolved once.
	srcs := map[string]string{}
	for n := 2; len(text) > 0; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if len(line) == 0 {
			continue
		}
		e, removed, err := parseManifestLine(line, m.Header.Version)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n, err)
		}
		if e.Kind == KindFile {
			if e.Src == "" {
				e.Src = m.Header.Archive
			} else if abs, ok := srcs[e.Src]; ok {
				e.Src = abs
			} else {
				abs = absFrom(dir, e.Src)
				srcs[e.Src] = abs
				e.Src = abs
			}
		}
		if removed {
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[e.Path] = true
		}
		m.Entries = append(m.Entries, e)
	}
	return m, gone, nil
}

func parseManifestLine(line string, version int) (e Entry, removed bool, err error) {
	nf := 11
	if version < 2 {
		nf = 8
	}
	var f [11]string
	for i := 0; i < nf-1; i++ {
		var ok bool
		f[i], line, ok = strings.Cut(line, "\t")
		if !ok {
			return e, false, fmt.Errorf("want %d tab-separated fields", nf)
		}
	}
	f[nf-1] = line
	path, err := parseField(f[nf-1])
	if err != nil {
		return e, false, err
	}
	e.Path = path
	switch f[0] {
	case "f":
		e.Kind = KindFile
	case "d":
		e.Kind = KindDir
	case "l":
		e.Kind = KindSymlink
	case "x":
		return e, true, nil
	default:
		return e, false, fmt.Errorf("unknown kind %q", f[0])
	}
	mode, ok1 := parseUint(f[1], 8)
	size, ok2 := parseUint(f[2], 10)
	mt, ok3 := parseInt(f[3])
	ct, ok4 := parseInt(f[4])
	ino, ok5 := parseUint(f[5], 10)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || mode > 0o7777 || size > math.MaxInt64 {
		return e, false, fmt.Errorf("bad number in the fields of %s", path)
	}
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino = fs.FileMode(mode)&fs.ModePerm, int64(size), mt, ct, ino
	switch e.Kind {
	case KindFile:
		if len(f[6]) != 64 {
			return e, false, fmt.Errorf("bad content hash for %s", path)
		}
		e.Hash = f[6]
	case KindSymlink:
		if e.Link, err = parseField(f[6]); err != nil {
			return e, false, err
		}
	}
	if version >= 2 {
		if e.Kind == KindFile && f[7] != "-" {
			if e.Src, err = parseField(f[7]); err != nil {
				return e, false, err
			}
		}
		var ok1, ok2 bool
		e.COff, ok1 = parseInt(f[8])
		e.Skip, ok2 = parseInt(f[9])
		if !ok1 || !ok2 {
			return e, false, fmt.Errorf("bad number in the fields of %s", path)
		}
	}
	return e, false, nil
}

// parseUint reads an unsigned number in base 8 or 10 without the
// allocations and generality of strconv: a manifest holds tens of
// thousands of them, and a snapshot reads its parent's first.
func parseUint(s string, base uint64) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	if len(s) > 19 { // might not fit: let strconv check
		n, err := strconv.ParseUint(s, int(base), 64)
		return n, err == nil
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(s[i]) - '0'
		if d >= base {
			return 0, false
		}
		n = n*base + d
	}
	return n, true
}

// parseInt reads a decimal int64, optionally negative (times before 1970).
func parseInt(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	u, ok := parseUint(s, 10)
	if !ok || u > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// ManifestArchives lists the archives one manifest file itself mentions
// (its own and the sources of the entries it lists), absolute, without
// reading its parents. Over every manifest of a chain, that is every
// archive the chain's snapshots read from.
func ManifestArchives(name string) ([]string, error) {
	return manifestArchives(name, 0)
}

// manifestArchives is ManifestArchives, a full manifest read chunk bytes
// at a time (0: streamChunk).
func manifestArchives(name string, chunk int) ([]string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	// A full manifest is read as it goes, a chunk at a time (a tree's worth
	// of lines: 160 MB at 1M files); a layer's, a delta, whole.
	m, _, stm, readErr, err := loadManifestFile(abs, true)
	if readErr != nil {
		err = readErr
	}
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", name, err)
	}
	seen := map[string]bool{}
	var out []string
	add := func(e *Entry) error {
		if p := e.Src; e.Kind == KindFile && p != "" && !seen[p] {
			p = strings.Clone(p) // (the stream's own, but kept past the pass)
			seen[p] = true
			out = append(out, p)
		}
		return nil
	}
	add(&Entry{Kind: KindFile, Src: m.Header.Archive})
	if stm != nil {
		stm.chunk = chunk
		if err := stm.each(add); err != nil {
			return nil, err
		}
		return out, nil
	}
	for i := range m.Entries {
		add(&m.Entries[i])
	}
	return out, nil
}

// entrySlices holds the entries of manifests their reader released: a
// caller reading thousands of layers one over another (a store's validate)
// otherwise allocates and clears a whole tree's entries per layer.
var entrySlices sync.Pool

// spareEntries returns an empty slice of at least n entries' capacity.
func spareEntries(n int) []Entry {
	if p, _ := entrySlices.Get().(*[]Entry); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]Entry, 0, n+n/8+64) // (room for the tree to grow: a slice too small for the next is dropped)
}

// Release hands m's entries on to manifests read later: a caller that
// reads many calls it on one it has done with, which must not be used
// after.
func (m *Manifest) Release() {
	if m.Entries == nil {
		return
	}
	e := m.Entries[:cap(m.Entries)]
	clear(e) // (no strings held for the collector)
	e = e[:0]
	m.Entries = nil
	entrySlices.Put(&e)
}
