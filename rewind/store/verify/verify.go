// Package verify is how a store is checked: what a checkpoint needs to
// restore, checked the same way by validate and by every restore, so the
// two agree: a checkpoint validate calls healthy restores, and a restore
// refuses, before it changes anything, one validate flags.
//
// The cheap part runs every time: the metadata, the manifest chain, the
// tree hash, every archive there with its recorded size, the transcript's
// files there. The files a checkpoint is read from (manifests, archives,
// transcript captures) are also read whole once — gzip checksums, every
// entry against its manifest, the transcript against its cursor — and what
// was found is remembered in the store's "verified" file, by each file's
// size, modification time and inode, so a file that changes is read again.
// A save records the files it writes as verified; validate reads everything
// again. The file is a JSON header line, then one tab-separated line per
// file (size, mtime_ns, inode, path, problem or "-", quoted where needed):
// a save reads it each time, and it grows with the store, so it is cheap to
// parse.
//
// It reads a store through Store, a view of its folder and its
// checkpoints, and imports no store: the store's restores, saves and gc
// call a Checker, and its Validate calls Checkpoints.
package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
)

// Store is what the checks read of a store.
type Store struct {
	Dir     string // the store's folder
	Version int    // the store's format, which the verified file's header names
	// Load reads one checkpoint's metadata.
	Load func(id string) (*record.Checkpoint, error)
	// Limits are the limits a snapshot is read within (validate's read-ahead).
	Limits func() snap.Limits
	// Unreadable says why checkpoint id, whose metadata did not load
	// (err), cannot be read, when the store knows better than err
	// (another user's folder); "" when it does not.
	Unreadable func(id string, err error) string
}

// Part says what of a checkpoint a check covers.
type Part uint8

const (
	Code Part = 1 << iota // the tree's snapshot
	Chat                  // the transcript
	All  = Code | Chat
)

// verifiedFile is what identifies a file as it was read, and what reading
// it found.
type verifiedFile struct {
	Size    int64
	MTime   int64 // ns
	Ino     uint64
	Problem string // "" when it verified
}

func (st Store) verifiedPath() string { return st.Dir + "/verified" }

// readVerified reads the verified file (empty when absent or damaged: it is
// a cache, and what it forgets is read again).
func (st Store) readVerified() map[string]verifiedFile {
	out := map[string]verifiedFile{}
	b, err := os.ReadFile(st.verifiedPath())
	if err != nil {
		return out
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	var h struct {
		Type    string `json:"type"`
		Version int    `json:"version"`
	}
	if json.Unmarshal([]byte(head), &h) != nil || h.Type != "verified" || h.Version > st.Version {
		return out
	}
	for _, line := range strings.Split(rest, "\n") {
		f := strings.SplitN(line, "\t", 5)
		if len(f) != 5 {
			continue
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		mtime, err2 := strconv.ParseInt(f[1], 10, 64)
		ino, err3 := strconv.ParseUint(f[2], 10, 64)
		path, err4 := strconv.Unquote(f[3])
		problem, err5 := strconv.Unquote(f[4])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
			continue
		}
		out[path] = verifiedFile{Size: size, MTime: mtime, Ino: ino, Problem: problem}
	}
	return out
}

// writeVerified replaces the verified file: unsynced, since losing it only
// costs reading the files again; a read-only store keeps none.
func (st Store) writeVerified(files map[string]verifiedFile) {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"verified","version":%d}`+"\n", st.Version)
	for path, r := range files {
		fmt.Fprintf(&b, "%d\t%d\t%d\t%s\t%s\n", r.Size, r.MTime, r.Ino, strconv.Quote(path), strconv.Quote(r.Problem))
	}
	durable.WriteFile(st.verifiedPath(), []byte(b.String()), layout.FileMode, durable.NoSync)
}

// Checker checks checkpoints, reading each file at most once.
type Checker struct {
	ctx   context.Context
	st    Store
	deep  bool // read every file whole again, whatever the verified file says
	v     *snap.Verifier
	files map[string]verifiedFile // the verified file's records, by key
	dirty bool

	// What a deep check (validate) has read in this run, so that a store
	// of thousands of checkpoints costs each file once, not once per
	// checkpoint that reads it: the files read whole (by key), the stamps
	// taken, the checkpoints loaded, the newest manifests read (a
	// checkpoint's is most often a delta over the one before), and what
	// the newest transcripts verified held (the next builds on one).
	read      map[string]bool // by key
	good      map[string]bool // by path: read, and right
	stamps    map[string]stampOf
	loaded    map[string]*record.Checkpoint // the newest loadedMemory of them
	loadOrder []string
	manifests []*snap.Manifest
	passed    map[string]bool // manifest files checked whole, and right (kept past their manifests)
	sums      map[string]*deepSum
	sumOrder  []string
}

// deepSum is what inflating a checkpoint's transcript found, kept in a
// deep check for the checkpoints after it that build on it; ids are the
// checkpoints whose files it read, oldest first.
type deepSum struct {
	sum *record.TranscriptSum
	ids []string
}

// stampOf is a file's stat, taken once in a deep run.
type stampOf struct {
	fi  fs.FileInfo
	err error
}

// checkerMemory is how many of the newest manifests and transcript sums a
// deep check keeps; checkerHeld bounds the entries of the manifests it
// keeps beyond the newest (an entry held costs about 300 bytes). A
// checkpoint is nearly always laid over the one before it. A snapshot of
// more than checkerEntries entries is not held at all: it is read in
// passes, each checkpoint's chain read again (a tree of 230,000 files held
// whole was 70 MB, two of them for a layer laid over the other).
const (
	checkerMemory  = 16
	checkerHeld    = 1 << 17
	checkerEntries = 1 << 16
)

// loadedMemory is how many of the newest checkpoints' metadata a deep
// check keeps: what a transcript chain (at most maxTranscriptChain links)
// builds on is among them, unless no-op checkpoints crowd them out, when it
// is loaded again.
const loadedMemory = 256

// New is a checker of st's checkpoints for a restore, a save or gc: it
// reads again only what the verified file does not vouch for as it is.
func New(ctx context.Context, st Store) *Checker {
	return newChecker(ctx, st, false, st.readVerified())
}

// newChecker is a checker starting from files, the verified file's
// records; a deep one (validate's) reads every file whole again.
func newChecker(ctx context.Context, st Store, deep bool, files map[string]verifiedFile) *Checker {
	k := &Checker{ctx: ctx, st: st, deep: deep, v: snap.NewVerifier(), files: files}
	if deep {
		k.read, k.good, k.stamps, k.loaded, k.sums = map[string]bool{}, map[string]bool{}, map[string]stampOf{}, map[string]*record.Checkpoint{}, map[string]*deepSum{}
		k.passed = map[string]bool{}
	}
	return k
}

// load is st.Load, once per checkpoint in a deep run.
func (k *Checker) load(id string) (*record.Checkpoint, error) {
	if c := k.loaded[id]; c != nil {
		return c, nil
	}
	c, err := k.st.Load(id)
	if err == nil && k.deep {
		k.loaded[id] = c
		k.loadOrder = append(k.loadOrder, id)
		if len(k.loadOrder) > loadedMemory { // (a month's metadata would outgrow the heap's limit)
			delete(k.loaded, k.loadOrder[0])
			k.loadOrder = k.loadOrder[1:]
		}
	}
	return c, err
}

// stamp is the package's stamp, taken once per file in a deep run (the
// files it checks do not change under it).
func (k *Checker) stamp(f string) (verifiedFile, bool) {
	fi, err := k.stat(f)
	return stampFrom(fi, err)
}

// stat is os.Stat, once per file in a deep run.
func (k *Checker) stat(f string) (fs.FileInfo, error) {
	if !k.deep {
		return os.Stat(f)
	}
	st, ok := k.stamps[f]
	if !ok {
		st.fi, st.err = os.Stat(f)
		k.stamps[f] = st
	}
	return st.fi, st.err
}

func (k *Checker) same(f string, rec verifiedFile) bool {
	now, ok := k.stamp(f)
	return ok && now.Size == rec.Size && now.MTime == rec.MTime && now.Ino == rec.Ino
}

// laid is a manifest read as a delta over another: that one's file, and
// the manifest's own lines (see snap.ReadManifestDelta).
type laid struct {
	over string
	own  []snap.Entry
}

// snapshotOf is Snapshot, laying the manifest over the one it is a
// delta over when a deep run has just read that one, and returning with it
// the file that one was read from and the manifest's own lines (over ""
// when it read the chain). A snapshot of more than checkerEntries entries
// is not held but read in passes (snap.Opened), its own lines returned
// whenever it is a delta.
func (k *Checker) snapshotOf(c *record.Checkpoint) (m *snap.Manifest, l laid, err error) {
	if !k.deep {
		m, err := Snapshot(c)
		return m, laid{}, err
	}
	m, own, err := snap.ReadManifestDeltaWithin(c.ManifestPath(), checkerEntries, func(file string) *snap.Manifest {
		for _, m := range k.manifests {
			if m.File == file {
				return m
			}
		}
		return nil
	})
	if err != nil {
		return nil, laid{}, err
	}
	if own != nil {
		l = laid{m.Header.Parent, own}
	}
	if m.Opened() {
		return m, l, treeHashOf(c, m)
	}
	k.manifests = append(k.manifests, m)
	entries := 0
	for _, m := range k.manifests {
		entries += len(m.Entries)
	}
	for len(k.manifests) > checkerMemory || (len(k.manifests) > 1 && entries > checkerHeld) {
		entries -= len(k.manifests[0].Entries)
		k.manifests[0].Release() // (no one else holds it: its entries go to a later one)
		k.manifests = k.manifests[1:]
	}
	return m, l, treeHashOf(c, m)
}

// Refresh reads the verified file again (after a save recorded what it
// wrote), keeping what this checker found itself.
func (k *Checker) Refresh() {
	for f, rec := range k.st.readVerified() {
		if _, mine := k.files[f]; !mine {
			k.files[f] = rec
		}
	}
}

// DamageError is a checkpoint that does not restore, and why.
type DamageError struct {
	Checkpoint string
	Err        error
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("checkpoint %s is damaged: %v", e.Checkpoint, e.Err)
}

func (e *DamageError) Unwrap() error { return e.Err }

// Check reports whether the parts of c restore, as a *DamageError.
func (k *Checker) Check(c *record.Checkpoint, what Part) error {
	if err := k.CheckParts(c, what); err != nil {
		return &DamageError{Checkpoint: c.ID, Err: err}
	}
	return nil
}

// CheckParts is Check's error without its checkpoint.
func (k *Checker) CheckParts(c *record.Checkpoint, what Part) error {
	if what&Code != 0 {
		m, l, err := k.snapshotOf(c)
		if err != nil {
			return err
		}
		if err := k.checkSnapshot(m, l); err != nil {
			return err
		}
	}
	if what&Chat != 0 && c.Transcript != nil && c.Transcript.Snapshot != "" {
		chain, err := k.transcriptFiles(c)
		if err != nil {
			return err
		}
		if err := k.whole(chain, func() (string, error) {
			return "", k.verifyTranscript(c, chain)
		}); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
	}
	return nil
}

// transcriptFiles lists the files holding c's transcript, each there. In a
// deep run, when what c's transcript builds on was verified just before
// (and its chain does not hold c: no loop), that is c's own file alone:
// the others are that one's, read whole and found right.
func (k *Checker) transcriptFiles(c *record.Checkpoint) ([]string, error) {
	var chain []string
	if t := k.sums[c.Transcript.Base]; k.deep && c.Transcript.Base != "" && t != nil && !slices.Contains(t.ids, c.ID) {
		chain = []string{filepath.Join(c.Dir, c.Transcript.Snapshot)}
	} else {
		var err error
		if chain, err = record.TranscriptChain(c, k.load); err != nil {
			return nil, fmt.Errorf("transcript: %w", err)
		}
	}
	for _, f := range chain {
		if _, ok := k.stamp(f); !ok {
			_, err := os.Stat(f)
			return nil, fmt.Errorf("transcript: %w", err)
		}
	}
	return chain, nil
}

// verifyTranscript inflates c's transcript and checks it against its
// cursor. In a deep run, when what c's transcript builds on was verified
// just before, only c's own file is inflated, after what that held.
func (k *Checker) verifyTranscript(c *record.Checkpoint, chain []string) error {
	var from *deepSum
	if b := c.Transcript.Base; b != "" && k.sums[b] != nil {
		from, chain = k.sums[b], chain[len(chain)-1:] // (see transcriptFiles)
	}
	var fromSum *record.TranscriptSum
	if from != nil {
		fromSum = from.sum
	}
	sum, err := record.SumTranscript(k.ctx, c, chain, fromSum)
	if err != nil || !k.deep {
		return err
	}
	t := &deepSum{sum: sum}
	if from != nil {
		t.ids = append(slices.Clip(from.ids), c.ID)
	} else {
		t.ids = make([]string, len(chain))
		for i, f := range chain {
			t.ids[i] = filepath.Base(filepath.Dir(f))
		}
	}
	k.sums[c.ID] = t
	k.sumOrder = append(k.sumOrder, c.ID)
	if len(k.sumOrder) > checkerMemory {
		if old := k.sums[k.sumOrder[0]]; old.sum != t.sum {
			old.sum.Recycle()
		}
		delete(k.sums, k.sumOrder[0])
		k.sumOrder = k.sumOrder[1:]
	}
	return nil
}

// CheckSnapshot makes sure every file the snapshot m (opened by Snapshot)
// is read from is there with its recorded size and verified whole: what a
// save checks of the checkpoint it builds on.
func (k *Checker) CheckSnapshot(m *snap.Manifest) error { return k.checkSnapshot(m, laid{}) }

// checkSnapshot makes sure every file a snapshot m is read from is there
// with its recorded size and verified whole (snapshotOf has checked the
// rest). Files the verified file vouches for as they are need neither. In
// a deep run, m laid over a manifest this run has checked whole and found
// right (l) costs what m adds: its tree hash, its own lines, its own file
// and the archives they read — what it keeps from that one is that one's
// verdict, the same files read the same way.
func (k *Checker) checkSnapshot(m *snap.Manifest, l laid) error {
	own := k.deep && l.over != "" && k.passed[l.over] && m.OwnLinesRecord(l.own)
	var files []string
	if own {
		files = m.OwnFiles(l.own)
	} else {
		files = m.Files()
	}
	if !k.deep && k.vouched(files) {
		return nil
	}
	archives := m.CheckArchivesStat
	check := k.v.Check
	if own {
		archives = func(stat func(string) (fs.FileInfo, error)) error { return m.CheckOwnArchivesStat(l.own, stat) }
		check = func(ctx context.Context, m *snap.Manifest) error { return k.v.CheckOwn(ctx, m, l.own) }
	}
	if err := archives(k.stat); err != nil {
		return err
	}
	err := k.whole(files, func() (string, error) {
		err := check(k.ctx, m)
		var ae *snap.ArchiveError
		if errors.As(err, &ae) && ae.Archive != "" {
			return ae.Archive, err
		}
		return "", err
	})
	if err == nil && k.deep {
		k.passed[m.File] = true
	}
	return err
}

// Snapshot opens c's manifest chain and checks its tree hash against the
// metadata's. The tree's worth of entries is read on each pass over it, not
// held (snap.OpenManifest): a check goes through them in walk order, as a
// save goes through its parent's.
func Snapshot(c *record.Checkpoint) (*snap.Manifest, error) {
	m, err := snap.OpenManifest(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	return m, treeHashOf(c, m)
}

// treeHashOf checks the tree hash of c's manifest m against c's metadata.
func treeHashOf(c *record.Checkpoint, m *snap.Manifest) error {
	if m.Header.TreeHash != c.Snapshot.TreeHash {
		return fmt.Errorf("manifest tree hash %s differs from metadata's %s", m.Header.TreeHash, c.Snapshot.TreeHash)
	}
	return nil
}

// vouched reports whether the verified file says every one of files
// verified, as it is now.
func (k *Checker) vouched(files []string) bool {
	for _, f := range files {
		rec, ok := k.files[k.key(f)]
		if !ok || rec.Problem != "" || !k.same(f, rec) {
			return false
		}
	}
	return true
}

// transcriptFiles lists the files holding c's transcript, each there.
func (st Store) transcriptFiles(c *record.Checkpoint) ([]string, error) {
	chain, err := record.TranscriptChain(c, st.Load)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	for _, f := range chain {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("transcript: %w", err)
		}
	}
	return chain, nil
}

// whole makes sure the files are verified: by the verified file when it says
// so of each as it is now (and not deep), else by running read, which
// returns the file to blame when it fails — a file damaged in itself (an
// archive that does not read); "" when the fault lies between the files (an
// entry not where its manifest says), which is then not remembered.
func (k *Checker) whole(files []string, read func() (string, error)) error {
	if k.deep && k.readWhole(files) {
		return nil
	}
	known := true
	for _, f := range files {
		if k.good[f] {
			continue // (read whole in this run, and right: a deep run's usual file)
		}
		key := k.key(f)
		rec, ok := k.files[key]
		switch {
		case !ok || !k.same(f, rec) || k.deep && !k.read[key]:
			known = false
		case rec.Problem != "":
			return fmt.Errorf("%s: %s", f, rec.Problem)
		}
	}
	if known {
		return nil
	}
	blame, err := read()
	if err != nil {
		if blame != "" {
			k.Record(blame, err.Error())
		}
		return err
	}
	for _, f := range files {
		if !k.good[f] { // (a deep run's files read right before stay so)
			k.Record(f, "")
		}
	}
	return nil
}

// readWhole reports whether a deep run has read every one of files whole
// and found it right: the common case of a checkpoint whose files its
// elders share, answered without a key or a stamp per file.
func (k *Checker) readWhole(files []string) bool {
	for _, f := range files {
		if !k.good[f] {
			return false
		}
	}
	return true
}

// key is f relative to the store (absolute when outside it).
func (k *Checker) key(f string) string {
	if rel, ok := strings.CutPrefix(f, k.st.Dir+string(filepath.Separator)); ok && filepath.IsLocal(rel) && filepath.Clean(rel) == rel {
		return filepath.ToSlash(rel) // the usual case, without Rel's cost
	}
	if rel, err := filepath.Rel(k.st.Dir, f); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return f
}

// Record remembers what reading f found: a save records the files it
// wrote ("" for no problem).
func (k *Checker) Record(f, problem string) {
	rec, ok := k.stamp(f)
	if !ok {
		return
	}
	rec.Problem = problem
	key := k.key(f)
	k.files[key] = rec
	k.dirty = true
	if k.deep {
		k.read[key] = true
		k.good[f] = problem == ""
	}
}

// stamp is what identifies f as it is now.
func stamp(f string) (verifiedFile, bool) {
	return stampFrom(os.Stat(f))
}

// stampFrom is the stamp of a file stat returned fi and err for.
func stampFrom(fi fs.FileInfo, err error) (verifiedFile, bool) {
	if err != nil {
		return verifiedFile{}, false
	}
	return verifiedFile{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Ino: fileid.Inode(fi)}, true
}

func same(f string, rec verifiedFile) bool {
	now, ok := stamp(f)
	return ok && now.Size == rec.Size && now.MTime == rec.MTime && now.Ino == rec.Ino
}

// Save writes the verified file when something new was found.
func (k *Checker) Save() {
	if !k.dirty {
		return
	}
	k.st.writeVerified(k.files)
	k.dirty = false
}

// Prune forgets the files that are gone (with the checkpoints gc deleted).
func (k *Checker) Prune() {
	for f := range k.files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(k.st.Dir, filepath.FromSlash(f))
		}
		if _, err := os.Stat(p); err != nil {
			delete(k.files, f)
			k.dirty = true
		}
	}
}

// Damage is the damage st knows of without reading any archive: the files
// the verified file records a problem for (as they still are), and whether
// newest (nil for none) — what the next save builds on — passes the cheap
// checks.
func Damage(st Store, newest *record.Checkpoint) []string {
	var out []string
	k := New(context.Background(), st) // reads nothing but the verified file
	for f, rec := range k.files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(st.Dir, filepath.FromSlash(f))
		}
		if rec.Problem != "" && same(p, rec) {
			out = append(out, fmt.Sprintf("%s: %s", f, rec.Problem))
		}
	}
	if newest != nil {
		if err := st.cheapCheck(newest); err != nil {
			out = append(out, (&DamageError{Checkpoint: newest.ID, Err: err}).Error())
		}
	}
	return out
}

// cheapCheck is the part of a check that reads no archive: the manifest
// chain, the tree hash, every archive there with its recorded size, the
// transcript's files there.
func (st Store) cheapCheck(c *record.Checkpoint) error {
	m, err := Snapshot(c)
	if err != nil {
		return err
	}
	if err := m.CheckArchives(); err != nil {
		return err
	}
	if c.Transcript != nil && c.Transcript.Snapshot != "" {
		if _, err := st.transcriptFiles(c); err != nil {
			return err
		}
	}
	return nil
}

// merge takes in what o, a deep checker of other checkpoints in the same
// run, read: its records of the files it read, a problem found winning over
// a clean read of the same file.
func (k *Checker) merge(o *Checker) {
	for key := range o.read {
		if rec := o.files[key]; !k.read[key] || k.files[key].Problem == "" && rec.Problem != "" {
			k.files[key] = rec
			k.read[key] = true
		}
	}
	k.dirty = k.dirty || o.dirty
}
