package jsonl

import (
	"context"
	"os"
	"testing"
)

// BenchmarkBack3 measures back 3 on a generated transcript named by $REWIND_BENCH_TRANSCRIPT
// (go run ./internal/gentranscript -size 100MiB -o FILE); it is skipped without one.
func BenchmarkBack3(b *testing.B) {
	path := os.Getenv("REWIND_BENCH_TRANSCRIPT")
	if path == "" {
		b.Skip("set REWIND_BENCH_TRANSCRIPT to a generated transcript")
	}
	for b.Loop() {
		tr, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tr.Back(context.Background(), 3); err != nil {
			b.Fatal(err)
		}
		tr.Close()
	}
}
