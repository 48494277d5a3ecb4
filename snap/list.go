package snap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
)

// List calls fn for every entry of the archive, in archive order, after the
// same checks a restore makes; content is skipped, not hashed.
func List(archive string, fn func(e *Entry) error) error {
	as, err := openArchive(archive, DefaultLimits, false)
	if err != nil {
		return err
	}
	defer as.Close()
	for {
		e, content, err := as.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if content != nil {
			if _, err := io.Copy(io.Discard, content); err != nil {
				return archiveReadErr(e, err)
			}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// VerifyArchive reads the whole archive (checking it as a restore would,
// gzip checksum included) and compares every entry with the manifest: the
// same paths, kinds, modes, link targets and content hashes.
func VerifyArchive(archive string, m *Manifest) error {
	as, err := openArchive(archive, DefaultLimits, false)
	if err != nil {
		return err
	}
	defer as.Close()
	want := make(map[string]*Entry, len(m.Entries))
	for i := range m.Entries {
		want[m.Entries[i].Path] = &m.Entries[i]
	}
	seen := 0
	for {
		e, content, err := as.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		w := want[e.Path]
		if w == nil {
			return fmt.Errorf("archive %s holds %s, which its manifest does not list", archive, e.Path)
		}
		seen++
		if content != nil {
			h := sha256.New()
			if _, err := io.Copy(h, content); err != nil {
				return archiveReadErr(e, err)
			}
			e.Hash = hex.EncodeToString(h.Sum(nil))
		}
		if !e.sameContent(w) {
			return fmt.Errorf("archive %s: %s differs from its manifest (content, mode or link)", archive, e.Path)
		}
	}
	if seen != len(m.Entries) {
		return fmt.Errorf("archive %s holds %d entries, its manifest lists %d", archive, seen, len(m.Entries))
	}
	if got := TreeHash(m.Entries); got != m.Header.TreeHash {
		return fmt.Errorf("manifest tree hash %s does not match its entries (%s)", m.Header.TreeHash, got)
	}
	return nil
}

// ReadFiles calls fn with the content of each file of the archive that want
// names (at most limit bytes each; larger files get nil), in archive order.
func ReadFiles(archive string, want map[string]bool, limit int64, fn func(path string, data []byte) error) error {
	as, err := openArchive(archive, DefaultLimits, false)
	if err != nil {
		return err
	}
	defer as.Close()
	left := len(want)
	for left > 0 {
		e, content, err := as.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !want[e.Path] || content == nil {
			continue
		}
		left--
		var data []byte
		if e.Size <= limit {
			if data, err = io.ReadAll(content); err != nil {
				return archiveReadErr(e, err)
			}
		}
		if err := fn(e.Path, data); err != nil {
			return err
		}
	}
	return nil
}

// DiffManifests lists the changes from snapshot old to snapshot cur.
func DiffManifests(old, cur *Manifest) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(cur.Entries) || j < len(old.Entries) {
		var c int
		switch {
		case i == len(cur.Entries):
			c = 1
		case j == len(old.Entries):
			c = -1
		default:
			c = comparePaths(cur.Entries[i].Path, old.Entries[j].Path)
		}
		switch {
		case c < 0:
			out = append(out, Change{Type: "change", Op: "added", Path: cur.Entries[i].Path, Kind: cur.Entries[i].Kind.String()})
			i++
		case c > 0:
			out = append(out, Change{Type: "change", Op: "deleted", Path: old.Entries[j].Path, Kind: old.Entries[j].Kind.String()})
			j++
		default:
			e, o := &cur.Entries[i], &old.Entries[j]
			i, j = i+1, j+1
			switch {
			case e.Kind != o.Kind || e.Hash != o.Hash || e.Link != o.Link:
				out = append(out, Change{Type: "change", Op: "modified", Path: e.Path, Kind: e.Kind.String()})
			case e.Mode != o.Mode:
				out = append(out, Change{Type: "change", Op: "mode", Path: e.Path, Kind: e.Kind.String()})
			}
		}
	}
	return out
}
