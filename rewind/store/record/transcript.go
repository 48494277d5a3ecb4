package record

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"

	"rewind.dev/fork"
	"rewind.dev/jsonl"
)

// A checkpoint's transcript is held in gzip files, a chain of them when it
// builds on an earlier checkpoint's: their bytes inflated one after the
// other are the transcript up to the checkpoint's cursor.

// spareSums are the sums done with (Recycle): a store's deep check sums a
// transcript per checkpoint, and a fresh tail for each was much of what it
// allocated.
var spareSums sync.Pool

// TranscriptSum is what a transcript's bytes are checked by: their length,
// the first and the last jsonl.HashWindow of them.
type TranscriptSum struct {
	n       int64
	head    []byte // the first bytes, while fewer than jsonl.HashWindow
	headSum string // their SHA-256 once there are jsonl.HashWindow
	tail    []byte // the last jsonl.HashWindow bytes
}

// Clone copies t (nil: an empty sum) into a spare sum or a new one.
func (t *TranscriptSum) Clone() *TranscriptSum {
	c, _ := spareSums.Get().(*TranscriptSum)
	if c == nil {
		c = &TranscriptSum{tail: make([]byte, 0, jsonl.HashWindow)}
	}
	if t == nil {
		t = &TranscriptSum{}
	}
	c.n, c.headSum = t.n, t.headSum
	c.head = append(c.head[:0], t.head...)
	c.tail = append(c.tail[:0], t.tail...)
	return c
}

// Recycle hands t on to a later Clone; it must not be used after.
func (t *TranscriptSum) Recycle() { spareSums.Put(t) }

// Write adds b, the next bytes of the transcript.
func (t *TranscriptSum) Write(b []byte) {
	if len(b) == 0 {
		return
	}
	if t.n < jsonl.HashWindow {
		k := min(int64(len(b)), jsonl.HashWindow-t.n)
		t.head = append(t.head, b[:k]...)
		if len(t.head) == jsonl.HashWindow {
			t.headSum = hashHex(t.head)
			t.head = nil
		}
	}
	t.n += int64(len(b))
	if len(b) >= jsonl.HashWindow {
		t.tail = append(t.tail[:0], b[len(b)-jsonl.HashWindow:]...)
		return
	}
	if over := len(t.tail) + len(b) - jsonl.HashWindow; over > 0 {
		t.tail = append(t.tail[:0], t.tail[over:]...) // (in place, within the tail's window)
	}
	t.tail = append(t.tail, b...)
}

// Check compares what was read with the cursor of the checkpoint it is
// the transcript of.
func (t *TranscriptSum) Check(cur jsonl.Cursor) error {
	got := t.Cursor()
	if got.ByteOffsetEnd != cur.ByteOffsetEnd {
		return fmt.Errorf("transcript holds %d bytes, its cursor says %d", got.ByteOffsetEnd, cur.ByteOffsetEnd)
	}
	if got.PrefixSHA256 != cur.PrefixSHA256 {
		return fmt.Errorf("transcript's first bytes differ from its cursor's hash")
	}
	if got.TailSHA256 != cur.TailSHA256 {
		return fmt.Errorf("transcript's last bytes differ from its cursor's hash")
	}
	return nil
}

// Cursor is the cursor of what was read: its length and hashes.
func (t *TranscriptSum) Cursor() jsonl.Cursor {
	head := t.headSum
	if t.n < jsonl.HashWindow {
		head = hashHex(t.head)
	}
	return jsonl.Cursor{ByteOffsetEnd: t.n, PrefixSHA256: head, TailSHA256: hashHex(t.tail)}
}

func hashHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// smallChain is the compressed size up to which OpenTranscript inflates a
// transcript chain in this goroutine with small buffers: fork.OpenSnapshots
// inflates ahead in another with 1 MiB of buffers, faster on megabytes but
// most of the cost of the one small link a store's validate reads per
// checkpoint.
const smallChain = 2 << 20

// OpenTranscript opens a transcript chain as fork.OpenSnapshots does, without
// its buffers when the files are small. Read errors name the file.
func OpenTranscript(chain []string) (io.ReadCloser, error) {
	var size int64
	for _, f := range chain {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("open snapshot: %w", err)
		}
		size += fi.Size()
	}
	if size > smallChain {
		return fork.OpenSnapshots(chain)
	}
	return &smallReader{chain: chain}, nil
}

// smallReader inflates the files of a chain one after the other.
type smallReader struct {
	chain []string
	f     *os.File
	*smallInflater
}

// smallInflater is what a smallReader inflates with, handed on by Close to
// the next (a store's validate opens one per checkpoint).
type smallInflater struct {
	br *bufio.Reader
	zr *gzip.Reader
}

var smallInflaters sync.Pool

func (r *smallReader) Read(p []byte) (int, error) {
	for {
		if r.f == nil {
			if len(r.chain) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(r.chain[0])
			if err != nil {
				return 0, fmt.Errorf("open snapshot: %w", err)
			}
			r.f = f
			if r.smallInflater == nil {
				r.smallInflater, _ = smallInflaters.Get().(*smallInflater)
				if r.smallInflater == nil {
					r.smallInflater = &smallInflater{br: bufio.NewReader(nil)}
				}
			}
			r.br.Reset(f)
			if r.zr == nil {
				r.zr, err = gzip.NewReader(r.br)
			} else {
				err = r.zr.Reset(r.br)
			}
			if err != nil {
				return 0, fmt.Errorf("snapshot %s is not gzip: %w", r.chain[0], err)
			}
		}
		n, err := r.zr.Read(p)
		if err == io.EOF {
			r.f.Close()
			r.f, r.chain = nil, r.chain[1:]
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			return n, fmt.Errorf("inflate snapshot %s: %w", r.chain[0], err)
		}
		return n, nil
	}
}

func (r *smallReader) Close() error {
	if r.smallInflater != nil {
		r.br.Reset(nil)
		smallInflaters.Put(r.smallInflater)
		r.smallInflater = nil
	}
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}
