package snap

import (
	"context"
	"io"

	"rewind.dev/internal/ctxio"
)

// writeRaw ends the member being filled and writes r, whole gzip members
// already compressed, after it: members copied from another archive as
// they are. What is written after starts a new member.
func (m *memberWriter) writeRaw(ctx context.Context, r io.Reader) error {
	if m.err != nil {
		return m.err
	}
	m.cut(false)
	m.flush(0)
	if m.err != nil {
		return m.err
	}
	m.starts = append(m.starts, m.written)
	n, err := io.Copy(m.w, ctxio.Reader{Ctx: ctx, R: r})
	m.written += n
	m.index++
	if err != nil {
		m.err = err
	}
	return m.err
}
