package snap

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// ManifestVersion is the version of the manifest format this package writes.
const ManifestVersion = 1

// A Manifest describes a snapshot without opening its archive: every entry
// with its metadata and content hash, the tree hash, and when the tree was
// scanned (for the racy-git rule).
//
// On disk it is a text file: one JSON header line (type "manifest", version,
// scan_started, counts, tree_hash; unknown fields are ignored), then one line
// per entry in walk order, fields separated by tabs:
//
//	kind mode size mtime_ns ctime_ns inode hash-or-link path
//
// kind is f, d or l; mode is octal; hash is hex SHA-256 ("-" for folders);
// a path or link that holds a tab, newline, backslash or quote, or starts
// with a quote, is written as a Go-quoted string.
type Manifest struct {
	Header  ManifestHeader
	Entries []Entry
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
	CompressedBytes int64  `json:"compressed_bytes"`
	TreeHash        string `json:"tree_hash"`
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
	for i := range entries {
		switch entries[i].Kind {
		case KindFile:
			m.Header.Files++
			m.Header.Bytes += entries[i].Size
		case KindDir:
			m.Header.Dirs++
		case KindSymlink:
			m.Header.Symlinks++
		}
	}
	m.Header.TreeHash = TreeHash(entries)
	return m
}

// TreeHash is "sha256:" and the hex SHA-256 of the entries' kinds, permission
// bits, content hashes or link targets and paths, in walk order. Times and
// inodes do not count: two trees with the same content have the same hash.
func TreeHash(entries []Entry) string {
	h := sha256.New()
	var b []byte
	for i := range entries {
		e := &entries[i]
		b = b[:0]
		b = append(b, kindLetter(e.Kind), 0)
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, 0)
		b = append(b, e.Hash...)
		b = append(b, e.Link...)
		b = append(b, 0)
		b = append(b, e.Path...)
		b = append(b, '\n')
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
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

// WriteTo writes the manifest in its text form.
func (m *Manifest) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256*1024)
	hdr, err := json.Marshal(m.Header)
	if err != nil {
		return 0, err
	}
	bw.Write(hdr)
	bw.WriteByte('\n')
	var b []byte
	for i := range m.Entries {
		e := &m.Entries[i]
		b = b[:0]
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
		case KindSymlink:
			b = appendField(b, e.Link)
		default:
			b = append(b, '-')
		}
		b = append(b, '\t')
		b = appendField(b, e.Path)
		b = append(b, '\n')
		bw.Write(b)
	}
	return 0, bw.Flush()
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

// ReadManifest parses a manifest file.
func ReadManifest(name string) (*Manifest, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", name, err)
	}
	m, err := ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", name, err)
	}
	return m, nil
}

// ParseManifest parses the text form of a manifest.
func ParseManifest(b []byte) (*Manifest, error) {
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	m := &Manifest{}
	if err := json.Unmarshal(line, &m.Header); err != nil || m.Header.Type != "manifest" {
		return nil, fmt.Errorf("not a Rewind manifest (bad header line)")
	}
	if m.Header.Version > ManifestVersion {
		return nil, fmt.Errorf("manifest version %d is newer than this program understands (%d); upgrade Rewind", m.Header.Version, ManifestVersion)
	}
	m.Entries = make([]Entry, 0, bytes.Count(rest, []byte("\n")))
	for n := 2; len(rest) > 0; n++ {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if len(line) == 0 {
			continue
		}
		e, err := parseManifestLine(string(line))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		m.Entries = append(m.Entries, e)
	}
	return m, nil
}

func parseManifestLine(line string) (Entry, error) {
	var f [8]string
	for i := 0; i < 7; i++ {
		var ok bool
		f[i], line, ok = strings.Cut(line, "\t")
		if !ok {
			return Entry{}, fmt.Errorf("want 8 tab-separated fields")
		}
	}
	f[7] = line
	var e Entry
	switch f[0] {
	case "f":
		e.Kind = KindFile
	case "d":
		e.Kind = KindDir
	case "l":
		e.Kind = KindSymlink
	default:
		return e, fmt.Errorf("unknown kind %q", f[0])
	}
	mode, err1 := strconv.ParseUint(f[1], 8, 32)
	size, err2 := strconv.ParseInt(f[2], 10, 64)
	mt, err3 := strconv.ParseInt(f[3], 10, 64)
	ct, err4 := strconv.ParseInt(f[4], 10, 64)
	ino, err5 := strconv.ParseUint(f[5], 10, 64)
	path, err6 := parseField(f[7])
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			return e, err
		}
	}
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino, e.Path = fs.FileMode(mode)&fs.ModePerm, size, mt, ct, ino, path
	switch e.Kind {
	case KindFile:
		if len(f[6]) != 64 {
			return e, fmt.Errorf("bad content hash for %s", path)
		}
		e.Hash = f[6]
	case KindSymlink:
		if e.Link, err1 = parseField(f[6]); err1 != nil {
			return e, err1
		}
	}
	return e, nil
}
