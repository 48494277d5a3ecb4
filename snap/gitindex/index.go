// Package gitindex reads the paths a git repository tracks from its index
// (.git/index), as git's read-cache.c reads them, into a compact sorted
// list; an index in a form it does not read is listed by git itself (git
// ls-files). Git never ignores a tracked file, so ignore rules need this
// list beside the patterns.
package gitindex

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
	"strings"
)

// Tracked returns the paths git tracks that lie under prefix, relative to
// it, sorted (never nil: none is an empty list): top is the work tree,
// gitDir its git folder, objectFormat the repository's
// extensions.objectFormat ("" for SHA-1). It reads the index itself —
// versions 2 to 4, with SHA-1 or SHA-256 object names — and asks git (git
// ls-files) for an index in a form it does not know: a split or sparse
// index, or any other extension git requires a reader to understand. A
// tracked file a walk missed would be dropped from the snapshot although its
// ignore pattern does not apply to it, so when neither way works Tracked
// fails with an *Error, saying why, rather than guess.
func Tracked(top, gitDir, prefix, objectFormat string) (*Paths, error) {
	index := filepath.Join(gitDir, "index")
	f, err := os.Open(index)
	if errors.Is(err, fs.ErrNotExist) {
		return &Paths{}, nil // nothing added yet
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
	if strings.EqualFold(objectFormat, "sha256") {
		hashLen = 32
	}
	l := pathsBuilder{prefix: prefix}
	why := readIndex(f, fi.Size(), hashLen, l.sizeFor, l.add)
	if why == "" {
		return l.done(), nil
	}
	paths, err := gitLsFiles(top)
	if err != nil {
		return nil, &Error{Index: index, Form: why, Err: err}
	}
	l = pathsBuilder{prefix: prefix}
	for _, p := range paths {
		l.add([]byte(p))
	}
	return l.done(), nil
}

// Error is a git index Tracked could neither read itself nor have git
// list: without it, tracked files that an ignore pattern matches would be
// dropped from a snapshot.
type Error struct {
	Index string // the index file
	Form  string // what it is, e.g. "a split index (core.splitIndex)"
	Err   error  // why git could not list it
}

func (e *Error) Error() string {
	return fmt.Sprintf("git index %s is %s, which Rewind does not read itself, and git could not list it: %v", e.Index, e.Form, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

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
