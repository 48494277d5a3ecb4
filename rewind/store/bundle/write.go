package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"rewind.dev/internal/ctxio"
	"rewind.dev/internal/layout"
)

// File is what a Writer writes an archive into: a new file, written from
// its start, that it may seek in and write back into (a streamed member's
// header is written after its content).
type File interface {
	io.Writer
	io.Seeker
	io.WriterAt
}

// Writer lays out an export archive in a File: its members in the order
// the format names them (Add, Stream), then export.json (Close). Each
// member's size and SHA-256 is recorded in the Info it was made with.
type Writer struct {
	out   File
	tw    *tar.Writer
	info  *Info
	top   string
	mtime time.Time
}

// NewWriter starts the archive of info.Checkpoint in out. info is
// export.json: the caller fills it in as the members are written, and the
// Writer its Members.
func NewWriter(out File, info *Info) *Writer {
	return &Writer{out: out, tw: tar.NewWriter(out), info: info, top: Top(info.Checkpoint), mtime: time.Now()}
}

// header is the tar header of the member name, of size bytes.
func (w *Writer) header(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: w.top + "/" + name, Size: size, Mode: int64(layout.FileMode), ModTime: w.mtime, Format: tar.FormatUSTAR}
}

// Add writes the member name, whose bytes are data.
func (w *Writer) Add(name string, data []byte) error {
	if err := w.add(name, data); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	w.info.Members = append(w.info.Members, Member{Name: name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
	return nil
}

func (w *Writer) add(name string, data []byte) error {
	if err := w.tw.WriteHeader(w.header(name, int64(len(data)))); err != nil {
		return err
	}
	_, err := w.tw.Write(data)
	return err
}

// Stream writes the member name, whose bytes write writes and whose size
// is known only once written: its header is reserved, the content streamed
// after it, then the header written.
func (w *Writer) Stream(name string, write func(w io.Writer) error) error {
	if err := w.tw.Flush(); err != nil {
		return err
	}
	at, err := w.out.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := w.out.Write(make([]byte, 512)); err != nil {
		return err
	}
	h := sha256.New()
	cw := &ctxio.CountingWriter{W: io.MultiWriter(w.out, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if pad := (512 - cw.N%512) % 512; pad > 0 {
		if _, err := w.out.Write(make([]byte, pad)); err != nil {
			return err
		}
	}
	var hb bytes.Buffer
	if err := tar.NewWriter(&hb).WriteHeader(w.header(name, cw.N)); err != nil {
		return err
	}
	if hb.Len() != 512 {
		return fmt.Errorf("tar header of %s is %d bytes", name, hb.Len())
	}
	if _, err := w.out.WriteAt(hb.Bytes(), at); err != nil {
		return err
	}
	w.info.Members = append(w.info.Members, Member{Name: name, Size: cw.N, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// Close writes export.json, the Info as it now is, and ends the archive.
// The File is left open, at the archive's end.
func (w *Writer) Close() error {
	ij, err := json.MarshalIndent(w.info, "", "  ")
	if err != nil {
		return err
	}
	if err := w.add(ManifestName, append(ij, '\n')); err != nil {
		return err
	}
	return w.tw.Close()
}
