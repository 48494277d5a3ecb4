package ctxio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReaderStopsWhenDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader{Ctx: ctx, R: strings.NewReader("abc")}
	b := make([]byte, 1)
	if n, err := r.Read(b); n != 1 || err != nil {
		t.Fatalf("read: %d %v", n, err)
	}
	cancel()
	if _, err := r.Read(b); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v", err)
	}
}

func TestCounting(t *testing.T) {
	var out bytes.Buffer
	w := &CountingWriter{W: &out}
	r := &CountingReader{R: strings.NewReader("hello, world")}
	if _, err := io.Copy(w, r); err != nil {
		t.Fatal(err)
	}
	if r.N != 12 || w.N != 12 || out.String() != "hello, world" {
		t.Errorf("read %d, wrote %d: %q", r.N, w.N, out.String())
	}
}
