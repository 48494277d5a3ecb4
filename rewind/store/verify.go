package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/fileid"
	"rewind.dev/snap"
)

// What a checkpoint needs to restore is checked the same way by validate
// and by every restore, so the two agree: a checkpoint validate calls
// healthy restores, and a restore refuses, before it changes anything, one
// validate flags.
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

// part says what of a checkpoint a check covers.
type part uint8

const (
	partCode part = 1 << iota
	partChat
	partAll = partCode | partChat
)

// verifiedFile is what identifies a file as it was read, and what reading
// it found.
type verifiedFile struct {
	Size    int64
	MTime   int64 // ns
	Ino     uint64
	Problem string // "" when it verified
}

func (s *Store) verifiedPath() string { return s.path("verified") }

// readVerified reads the verified file (empty when absent or damaged: it is
// a cache, and what it forgets is read again).
func (s *Store) readVerified() map[string]verifiedFile {
	out := map[string]verifiedFile{}
	b, err := os.ReadFile(s.verifiedPath())
	if err != nil {
		return out
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	var h struct {
		Type    string `json:"type"`
		Version int    `json:"version"`
	}
	if json.Unmarshal([]byte(head), &h) != nil || h.Type != "verified" || h.Version > Version {
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
func (s *Store) writeVerified(files map[string]verifiedFile) {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"verified","version":%d}`+"\n", Version)
	for path, r := range files {
		fmt.Fprintf(&b, "%d\t%d\t%d\t%s\t%s\n", r.Size, r.MTime, r.Ino, strconv.Quote(path), strconv.Quote(r.Problem))
	}
	durable.WriteFile(s.verifiedPath(), []byte(b.String()), 0o600, durable.NoSync)
}

// checker checks checkpoints, reading each file at most once.
type checker struct {
	ctx   context.Context
	s     *Store
	deep  bool // read every file whole again, whatever the verified file says
	v     *snap.Verifier
	files map[string]verifiedFile // the verified file's records, by key
	dirty bool
}

func (s *Store) newChecker(ctx context.Context, deep bool) *checker {
	return &checker{ctx: ctx, s: s, deep: deep, v: snap.NewVerifier(), files: s.readVerified()}
}

// refresh reads the verified file again (after a save recorded what it
// wrote), keeping what this checker found itself.
func (k *checker) refresh() {
	for f, rec := range k.s.readVerified() {
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

// check reports whether the parts of c restore, as a *DamageError.
func (k *checker) check(c *Checkpoint, what part) error {
	if err := k.checkParts(c, what); err != nil {
		return &DamageError{Checkpoint: c.ID, Err: err}
	}
	return nil
}

func (k *checker) checkParts(c *Checkpoint, what part) error {
	if what&partCode != 0 {
		m, err := k.s.snapshotOf(c)
		if err != nil {
			return err
		}
		if err := k.checkSnapshot(c, m); err != nil {
			return err
		}
	}
	if what&partChat != 0 && c.Transcript != nil && c.Transcript.Snapshot != "" {
		chain, err := k.s.transcriptFiles(c)
		if err != nil {
			return err
		}
		if err := k.whole(chain, func() (string, error) {
			return "", k.s.verifyTranscript(k.ctx, c)
		}); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
	}
	return nil
}

// checkSnapshot makes sure every file c's snapshot m is read from is
// there with its recorded size and verified whole (snapshotOf has checked
// the rest). Files the verified file vouches for as they are need neither.
func (k *checker) checkSnapshot(c *Checkpoint, m *snap.Manifest) error {
	files := m.Files()
	if !k.deep && k.vouched(files) {
		return nil
	}
	if err := m.CheckArchives(); err != nil {
		return err
	}
	return k.whole(files, func() (string, error) {
		err := k.v.Check(k.ctx, m)
		var ae *snap.ArchiveError
		if errors.As(err, &ae) && ae.Archive != "" {
			return ae.Archive, err
		}
		return "", err
	})
}

// snapshotOf reads c's manifest chain and checks its tree hash against the
// metadata's.
func (s *Store) snapshotOf(c *Checkpoint) (*snap.Manifest, error) {
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	if m.Header.TreeHash != c.Snapshot.TreeHash {
		return nil, fmt.Errorf("manifest tree hash %s differs from metadata's %s", m.Header.TreeHash, c.Snapshot.TreeHash)
	}
	return m, nil
}

// vouched reports whether the verified file says every one of files
// verified, as it is now.
func (k *checker) vouched(files []string) bool {
	for _, f := range files {
		rec, ok := k.files[k.key(f)]
		if !ok || rec.Problem != "" || !same(f, rec) {
			return false
		}
	}
	return true
}

// transcriptFiles lists the files holding c's transcript, each there.
func (s *Store) transcriptFiles(c *Checkpoint) ([]string, error) {
	chain, err := s.TranscriptChain(c)
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
func (k *checker) whole(files []string, read func() (string, error)) error {
	known := !k.deep
	for _, f := range files {
		rec, ok := k.files[k.key(f)]
		switch {
		case !ok || !same(f, rec) || k.deep:
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
			k.record(blame, err.Error())
		}
		return err
	}
	for _, f := range files {
		k.record(f, "")
	}
	return nil
}

// key is f relative to the store (absolute when outside it).
func (k *checker) key(f string) string {
	if rel, err := filepath.Rel(k.s.Dir, f); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return f
}

// record remembers what reading f found.
func (k *checker) record(f, problem string) {
	rec, ok := stamp(f)
	if !ok {
		return
	}
	rec.Problem = problem
	k.files[k.key(f)] = rec
	k.dirty = true
}

// stamp is what identifies f as it is now.
func stamp(f string) (verifiedFile, bool) {
	fi, err := os.Stat(f)
	if err != nil {
		return verifiedFile{}, false
	}
	return verifiedFile{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Ino: fileid.Inode(fi)}, true
}

func same(f string, rec verifiedFile) bool {
	now, ok := stamp(f)
	return ok && now.Size == rec.Size && now.MTime == rec.MTime && now.Ino == rec.Ino
}

// save writes the verified file when something new was found.
func (k *checker) save() {
	if !k.dirty {
		return
	}
	k.s.writeVerified(k.files)
	k.dirty = false
}

// prune forgets the files that are gone (with the checkpoints gc deleted).
func (k *checker) prune() {
	for f := range k.files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(k.s.Dir, filepath.FromSlash(f))
		}
		if _, err := os.Stat(p); err != nil {
			delete(k.files, f)
			k.dirty = true
		}
	}
}

// Damage is the damage the store knows of without reading any archive: the
// files the verified file records a problem for (as they still are), and
// whether the newest checkpoint — what the next save builds on — passes the
// cheap checks.
func (s *Store) Damage() []string {
	var out []string
	k := s.newChecker(context.Background(), false) // reads nothing but the verified file
	for f, rec := range k.files {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Dir, filepath.FromSlash(f))
		}
		if rec.Problem != "" && same(p, rec) {
			out = append(out, fmt.Sprintf("%s: %s", f, rec.Problem))
		}
	}
	if newest, err := s.Newest(); err == nil && newest != nil {
		if err := s.cheapCheck(newest); err != nil {
			out = append(out, (&DamageError{Checkpoint: newest.ID, Err: err}).Error())
		}
	}
	return out
}

// cheapCheck is the part of a check that reads no archive: the manifest
// chain, the tree hash, every archive there with its recorded size, the
// transcript's files there.
func (s *Store) cheapCheck(c *Checkpoint) error {
	m, err := s.snapshotOf(c)
	if err != nil {
		return err
	}
	if err := m.CheckArchives(); err != nil {
		return err
	}
	if c.Transcript != nil && c.Transcript.Snapshot != "" {
		if _, err := s.transcriptFiles(c); err != nil {
			return err
		}
	}
	return nil
}
