// Package gzmember writes and reads the compression of a snapshot archive:
// a tar stream cut into gzip members of about 1 MiB, each compressed on its
// own (no shared dictionary), several at a time.
//
// Concatenated members are one valid gzip stream, so gzip, tar and every
// reader that follows RFC 1952 read the archive as one file. Because no
// member depends on the ones before it, any member can be inflated alone:
// a file's content is reached by seeking to its member and inflating at
// most one member's worth. The Writer tells where each byte lands (which
// member, how far in) and the Reader where each member starts, which is
// what a manifest records and a restore seeks to.
package gzmember

import "bytes"

// memberSize is how much of the stream goes into one gzip member: a file's
// content is reached by seeking to its member and inflating at most this
// much.
const memberSize = 1 << 20

// buffer returns a free buffer from pool, or a new one of capacity size.
func buffer(pool chan *bytes.Buffer, size int) *bytes.Buffer {
	select {
	case b := <-pool:
		b.Reset()
		return b
	default:
		return bytes.NewBuffer(make([]byte, 0, size))
	}
}

func release(pool chan *bytes.Buffer, b *bytes.Buffer) {
	select {
	case pool <- b:
	default:
	}
}
