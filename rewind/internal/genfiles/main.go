// Command genfiles writes a tree of many small source-like files, for
// scripts/bench's scale section: the 1,000,000-file point of the cost curve,
// which no copy of a real tree reaches in reasonable disk. The tree is
// deterministic (the same flags give the same bytes): folders of 50 to 100
// files, three levels deep, each file a few hundred bytes of Go-like text
// that differs from its neighbours (so compression and hashing see varied
// input, as in a real repository).
//
// It prints one JSON object: the files and bytes written and how long it took.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genfiles:", err)
		os.Exit(1)
	}
}

var words = []string{
	"buf", "count", "err", "index", "key", "len", "name", "next", "offset", "path",
	"read", "size", "state", "token", "value", "write", "entry", "cache", "limit", "node",
}

func run() error {
	dir := flag.String("dir", "", "the `folder` to create (must not exist)")
	n := flag.Int("n", 1000000, "files to write")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if _, err := os.Stat(*dir); err == nil {
		return fmt.Errorf("%s exists", *dir)
	}
	start := time.Now()
	r := rand.New(rand.NewPCG(*seed, 0))
	var files, bytes int64
	var buf []byte
	for d := 0; files < int64(*n); d++ {
		folder := filepath.Join(*dir, fmt.Sprintf("m%03d", d/10000), fmt.Sprintf("p%03d", d/100%100), fmt.Sprintf("d%02d", d%100))
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return err
		}
		per := 50 + r.IntN(51)
		for i := 0; i < per && files < int64(*n); i++ {
			buf = source(buf[:0], r, d, i)
			if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("f%03d.go", i)), buf, 0o644); err != nil {
				return err
			}
			files++
			bytes += int64(len(buf))
		}
	}
	out := bufio.NewWriter(os.Stdout)
	if err := json.NewEncoder(out).Encode(map[string]any{
		"files": files, "bytes": bytes, "seconds": time.Since(start).Seconds(),
	}); err != nil {
		return err
	}
	return out.Flush()
}

// source appends a small Go-like file of 200 to 700 bytes to b.
func source(b []byte, r *rand.Rand, d, i int) []byte {
	b = fmt.Appendf(b, "// Package d%d holds generated code for a benchmark tree.\npackage d%d\n\n", d, d)
	funcs := 1 + r.IntN(4)
	for f := 0; f < funcs; f++ {
		w1, w2 := words[r.IntN(len(words))], words[r.IntN(len(words))]
		b = fmt.Appendf(b, "// %s%d returns the %s of %s.\nfunc %s%d(%s int) int {\n", w1, i*10+f, w1, w2, w1, i*10+f, w2)
		b = fmt.Appendf(b, "\tif %s > %d {\n\t\treturn %s - %d\n\t}\n\treturn %s * %d\n}\n\n", w2, r.IntN(1000), w2, r.IntN(100), w2, r.IntN(50)+1)
	}
	return b
}
