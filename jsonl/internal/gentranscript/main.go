// Command gentranscript writes a synthetic Claude Code transcript for scripts/bench: a realistic
// mix of line sizes (mostly small, some tens of KiB, rare ones up to 2 MB) and a user prompt every
// ~200 lines, preceded by its queue-operation and file-history-snapshot lines.
//
//	go run ./internal/gentranscript -size 1GiB -o FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

func main() {
	size := flag.String("size", "1MiB", "approximate size: N, NKiB, NMiB or NGiB")
	out := flag.String("o", "", "output file (required)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil || *out == "" {
		fmt.Fprintln(os.Stderr, "gentranscript: error: need -o FILE and a -size like 1GiB")
		os.Exit(2)
	}
	if err := write(*out, n, *seed); err != nil {
		fmt.Fprintf(os.Stderr, "gentranscript: error: %v\n", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suf, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v * mult, err
}

func write(path string, size int64, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	filler := strings.Repeat("abcdefghij klmnopqrstuvwxyz 0123456789 ", (2<<20)/39+1)
	var written int64
	put := func(s string) {
		n, _ := w.WriteString(s)
		written += int64(n)
	}
	prev := "00000000-0000-0000-0000-000000000000"
	for i := 0; written < size; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		if i%200 == 0 {
			put(`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00Z","content":"prompt ` + strconv.Itoa(i) + `"}` + "\n")
			put(`{"type":"queue-operation","operation":"dequeue","timestamp":"2026-01-01T00:00:00Z"}` + "\n")
			put(`{"type":"file-history-snapshot","messageId":"` + id + `","snapshot":{"messageId":"` + id + `","trackedFileBackups":{}},"isSnapshotUpdate":false}` + "\n")
			put(`{"parentUuid":"` + prev + `","isSidechain":false,"type":"user","message":{"role":"user","content":"prompt ` + strconv.Itoa(i) + ` please change the code"},"uuid":"` + id + `","timestamp":"2026-01-01T00:00:00Z"}` + "\n")
			prev = id
			continue
		}
		// Line sizes as in real Claude files: 90% 200 B–2 KiB, 9.9% 2–32 KiB, 0.1% (pasted
		// images, big tool output) 64 KiB–2 MB; about 3.5 KiB a line on average.
		var n int
		switch r := rng.IntN(1000); {
		case r < 900:
			n = 200 + rng.IntN(1800)
		case r < 999:
			n = 2<<10 + rng.IntN(30<<10)
		default:
			n = 64<<10 + rng.IntN(2<<20-64<<10)
		}
		text := filler[:n]
		if i%2 == 0 {
			put(`{"parentUuid":"` + prev + `","isSidechain":false,"message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]},"type":"assistant","uuid":"` + id + `","timestamp":"2026-01-01T00:00:00Z"}` + "\n")
		} else {
			put(`{"parentUuid":"` + prev + `","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"` + text + `"}]},"uuid":"` + id + `","timestamp":"2026-01-01T00:00:00Z","toolUseResult":{"stdout":"ok"}}` + "\n")
		}
		prev = id
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
