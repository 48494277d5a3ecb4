package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

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
// was found is remembered in verified.json, by each file's size,
// modification time and inode, so a file that changes is read again. A save
// records the files it writes as verified; validate reads everything again.

// part says what of a checkpoint a check covers.
type part uint8

const (
	partCode part = 1 << iota
	partChat
	partAll = partCode | partChat
)

// verified is verified.json: what reading each file whole found.
type verified struct {
	Version int                     `json:"version"`
	Files   map[string]verifiedFile `json:"files"` // by path relative to the store
}

type verifiedFile struct {
	Size    int64  `json:"size"`
	MTime   int64  `json:"mtime_ns"`
	Ino     uint64 `json:"ino"`
	Problem string `json:"problem,omitempty"` // "" when it verified
}

func (s *Store) verifiedPath() string { return s.path("verified.json") }

// checker checks checkpoints, reading each file at most once.
type checker struct {
	ctx   context.Context
	s     *Store
	deep  bool // read every file whole again, whatever verified.json says
	v     *snap.Verifier
	state verified
	dirty bool
}

func (s *Store) newChecker(ctx context.Context, deep bool) *checker {
	k := &checker{ctx: ctx, s: s, deep: deep, v: snap.NewVerifier()}
	if err := readJSON(s.verifiedPath(), &k.state); err != nil {
		k.state = verified{} // a cache: a damaged one is read again
	}
	if k.state.Files == nil {
		k.state.Files = map[string]verifiedFile{}
	}
	return k
}

// refresh reads verified.json again (after a save recorded what it wrote).
func (k *checker) refresh() {
	var st verified
	if readJSON(k.s.verifiedPath(), &st) == nil && st.Files != nil {
		for f, rec := range st.Files {
			if _, mine := k.state.Files[f]; !mine {
				k.state.Files[f] = rec
			}
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
// verified whole (snapshotOf has checked the rest).
func (k *checker) checkSnapshot(c *Checkpoint, m *snap.Manifest) error {
	return k.whole(m.Files(), func() (string, error) {
		err := k.v.Check(k.ctx, m)
		var ae *snap.ArchiveError
		if errors.As(err, &ae) && ae.Archive != "" {
			return ae.Archive, err
		}
		return "", err
	})
}

// snapshotOf reads c's manifest chain and checks it without reading an
// archive: its tree hash, and every archive there with its recorded size.
func (s *Store) snapshotOf(c *Checkpoint) (*snap.Manifest, error) {
	m, err := snap.ReadManifest(c.ManifestPath())
	if err != nil {
		return nil, err
	}
	if m.Header.TreeHash != c.Snapshot.TreeHash {
		return nil, fmt.Errorf("manifest tree hash %s differs from metadata's %s", m.Header.TreeHash, c.Snapshot.TreeHash)
	}
	return m, m.CheckArchives()
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

// whole makes sure the files are verified: by verified.json when it says
// so of each as it is now (and not deep), else by running read, which
// returns the file to blame when it fails — a file damaged in itself (an
// archive that does not read); "" when the fault lies between the files (an
// entry not where its manifest says), which is then not remembered.
func (k *checker) whole(files []string, read func() (string, error)) error {
	known := !k.deep
	for _, f := range files {
		rec, ok := k.state.Files[k.key(f)]
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
	k.state.Files[k.key(f)] = rec
	k.dirty = true
}

// stamp is what identifies f as it is now.
func stamp(f string) (verifiedFile, bool) {
	fi, err := os.Stat(f)
	if err != nil {
		return verifiedFile{}, false
	}
	rec := verifiedFile{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		rec.Ino = st.Ino
	}
	return rec, true
}

func same(f string, rec verifiedFile) bool {
	now, ok := stamp(f)
	return ok && now.Size == rec.Size && now.MTime == rec.MTime && now.Ino == rec.Ino
}

// save writes verified.json when something new was found: unsynced, since
// losing it only costs reading the files again; a read-only store keeps none.
func (k *checker) save() {
	if !k.dirty {
		return
	}
	for f := range k.state.Files {
		if _, err := os.Stat(filepath.Join(k.s.Dir, filepath.FromSlash(f))); err != nil && !filepath.IsAbs(f) {
			delete(k.state.Files, f) // gone with its checkpoint
		}
	}
	k.state.Version = Version
	writeJSONUnsynced(k.s.verifiedPath(), k.state)
	k.dirty = false
}

// Damage is the damage the store knows of without reading any archive: the
// files verified.json records a problem for (as they still are), and
// whether the newest checkpoint — what the next save builds on — passes the
// cheap checks.
func (s *Store) Damage() []string {
	var out []string
	k := s.newChecker(context.Background(), false) // reads nothing but verified.json
	for f, rec := range k.state.Files {
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
	if _, err := s.snapshotOf(c); err != nil {
		return err
	}
	if c.Transcript != nil && c.Transcript.Snapshot != "" {
		if _, err := s.transcriptFiles(c); err != nil {
			return err
		}
	}
	return nil
}
