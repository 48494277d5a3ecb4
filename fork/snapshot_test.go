package fork

import (
	"bufio"
	"bytes"
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/pgzip"
)

// writeChain writes data as a chain of n snapshot files in dir the way the store captures
// them (pgzip at BestSpeed; the first file in two members, as an appended capture is), and
// returns their paths, oldest first.
func writeChain(tb testing.TB, dir string, data []byte, n int) []string {
	tb.Helper()
	var paths []string
	for i := range n {
		part := data[len(data)*i/n : len(data)*(i+1)/n]
		var buf bytes.Buffer
		members := [][]byte{part}
		if i == 0 {
			members = [][]byte{part[:len(part)/2], part[len(part)/2:]}
		}
		for _, m := range members {
			zw, _ := pgzip.NewWriterLevel(&buf, pgzip.BestSpeed)
			zw.Write(m)
			if err := zw.Close(); err != nil {
				tb.Fatal(err)
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("%02d.jsonl.gz", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// transcriptLike is size bytes of JSON lines that compress about as a real transcript does.
func transcriptLike(size int) []byte {
	rng := rand.New(rand.NewSource(1))
	words := strings.Fields("the a file test go func return error read write fork checkpoint prompt tool result user assistant message content text session")
	var b bytes.Buffer
	for b.Len() < size {
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"%016x","message":{"content":"`, rng.Uint64())
		for range 10 + rng.Intn(60) {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\"}}\n")
	}
	return b.Bytes()[:size]
}

// TestOpenSnapshots: a chain inflates to the concatenation of its parts, whatever its length;
// a missing file fails at open, a file that is not gzip or is cut short fails naming it.
func TestOpenSnapshots(t *testing.T) {
	data := transcriptLike(3 << 20)
	for _, n := range []int{1, 2, 64} {
		paths := writeChain(t, t.TempDir(), data, n)
		r, err := OpenSnapshots(paths)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("chain of %d: %d bytes (want %d), %v", n, len(got), len(data), err)
		}
	}
	if r, err := OpenSnapshots(nil); err != nil {
		t.Error(err)
	} else if b, err := io.ReadAll(r); len(b) != 0 || err != nil {
		t.Errorf("no snapshots: %q, %v", b, err)
	}

	dir := t.TempDir()
	paths := writeChain(t, dir, data, 3)
	if _, err := OpenSnapshots(append(paths, filepath.Join(dir, "gone.gz"))); err == nil || !strings.Contains(err.Error(), "gone.gz") {
		t.Errorf("missing file: %v", err)
	}
	plain := filepath.Join(dir, "plain.gz")
	os.WriteFile(plain, data[:1000], 0o600)
	cut := filepath.Join(dir, "cut.gz")
	whole, _ := os.ReadFile(paths[1])
	os.WriteFile(cut, whole[:len(whole)/2], 0o600)
	for _, chain := range [][]string{{paths[0], plain, paths[2]}, {paths[0], cut, paths[2]}, {plain}} {
		r, err := OpenSnapshots(chain)
		if err == nil {
			_, err = io.ReadAll(r)
			r.Close()
		}
		bad := chain[len(chain)/2]
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s in the chain: %v", filepath.Base(bad), err)
		}
	}
}

// BenchmarkOpenSnapshots inflates a 32 MiB transcript held in a chain of 8 and of 64 files,
// with OpenSnapshots (pgzip) and with the standard library's gzip reader in its place.
func BenchmarkOpenSnapshots(b *testing.B) {
	data := transcriptLike(32 << 20)
	for _, n := range []int{8, 64} {
		paths := writeChain(b, b.TempDir(), data, n)
		for _, rd := range []struct {
			name string
			open func([]string) (io.ReadCloser, error)
		}{{"pgzip", OpenSnapshots}, {"compress-gzip", openStdGzip}} {
			b.Run(fmt.Sprintf("files=%d/%s", n, rd.name), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					r, err := rd.open(paths)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := io.Copy(io.Discard, r); err != nil || n != int64(len(data)) {
						b.Fatal(n, err)
					}
					r.Close()
				}
			})
		}
	}
}

// openStdGzip is OpenSnapshots with the standard library's reader, for the benchmark.
func openStdGzip(paths []string) (io.ReadCloser, error) {
	var rs []io.Reader
	var fs []*os.File
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		zr, err := stdgzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			return nil, err
		}
		rs, fs = append(rs, zr), append(fs, f)
	}
	return closer{io.MultiReader(rs...), fs}, nil
}

type closer struct {
	io.Reader
	fs []*os.File
}

func (c closer) Close() error {
	for _, f := range c.fs {
		f.Close()
	}
	return nil
}
