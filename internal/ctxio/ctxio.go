// Package ctxio holds the small readers and writers every tool wraps its long copies in: a
// reader that stops when its context is done (a copy of a large file or transcript ends
// within a buffer of an interrupt), and a reader and a writer that count the bytes through
// them, and a copy of files one after the other.
package ctxio

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Reader reads from R until Ctx is done: each Read first checks Ctx.
type Reader struct {
	Ctx context.Context
	R   io.Reader
}

func (c Reader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(p)
}

// CountingReader counts the bytes read through it in N.
type CountingReader struct {
	R io.Reader
	N int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// CountingWriter counts the bytes written through it in N.
type CountingWriter struct {
	W io.Writer
	N int64
}

func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// Concat copies the files at paths into w, one after the other.
func Concat(w io.Writer, paths ...string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
	}
	return nil
}
