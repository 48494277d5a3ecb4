// Package ctxio holds the small readers and writers every tool wraps its long copies in: a
// reader that stops when its context is done (a copy of a large file or transcript ends
// within a buffer of an interrupt), and a reader and a writer that count the bytes through
// them.
package ctxio

import (
	"context"
	"io"
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
