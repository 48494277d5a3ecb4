package gzmember

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math/rand"
	"testing"
)

// place is where the writer said a byte of the stream would land.
type place struct {
	pos    int64 // the byte's offset in the stream
	member int
	skip   int64
}

// write compresses data through a Writer in chunks of random sizes, with
// the first member's header extra field extra, and returns the archive and
// the place the writer gave for each chunk's first byte.
func write(t *testing.T, rng *rand.Rand, data, extra []byte) (*Writer, []byte, []place) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, 1, extra)
	var places []place
	for pos := 0; pos < len(data); {
		n := min(len(data)-pos, 1+rng.Intn(300<<10))
		member, skip := w.Offset()
		places = append(places, place{int64(pos), member, skip})
		if _, err := w.Write(data[pos : pos+n]); err != nil {
			t.Fatal(err)
		}
		pos += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w, buf.Bytes(), places
}

// streamOf returns n bytes that compress somewhat, as source code does.
func streamOf(rng *rand.Rand, n int) []byte {
	words := []string{"func ", "return ", "err ", "nil", "\n", "\t", "{", "}", "(", ")", "x", "if "}
	var b bytes.Buffer
	for b.Len() < n {
		if rng.Intn(4) == 0 {
			b.WriteByte(byte(rng.Intn(256)))
		} else {
			b.WriteString(words[rng.Intn(len(words))])
		}
	}
	return b.Bytes()[:n]
}

// TestMembersAreOneGzipStream: what a Writer writes is read back whole by
// the standard library's gzip reader, by a Reader and by a ReadAhead, and
// the first member's header carries the extra field given.
func TestMembersAreOneGzipStream(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	data := streamOf(rng, 3*memberSize+12345)
	extra := []byte("RW\x04\x00mark")
	_, archive, _ := write(t, rng, data, extra)

	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(zr.Header.Extra, extra) {
		t.Errorf("the first member's extra field is %q, want %q", zr.Header.Extra, extra)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("compress/gzip read %d bytes, %v; want the %d written", len(got), err, len(data))
	}

	for _, ahead := range []bool{false, true} {
		r, err := NewReader(bytes.NewReader(archive), int64(len(archive)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.Extra(), extra) {
			t.Errorf("Reader.Extra is %q, want %q", r.Extra(), extra)
		}
		var rc io.ReadCloser = r
		if ahead {
			rc = NewReadAhead(r)
		}
		got, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("ahead %v: read %d bytes, %v; want the %d written", ahead, len(got), err, len(data))
		}
		rc.Close()
	}
}

// TestEachMemberInflatesAlone: every place the writer gives is found by
// inflating only its member, from the offset Start gives it, and a Reader
// (or ReadAhead) that read the stream gives the same place for that byte.
func TestEachMemberInflatesAlone(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(2))
	data := streamOf(rng, 4*memberSize+777)
	w, archive, places := write(t, rng, data, nil)
	if len(places) < 10 || places[len(places)-1].member < 3 {
		t.Fatalf("%d places in %d members: the test needs more", len(places), places[len(places)-1].member+1)
	}

	for _, ahead := range []bool{false, true} {
		r, err := NewReader(bytes.NewReader(archive), int64(len(archive)))
		if err != nil {
			t.Fatal(err)
		}
		var rd interface {
			io.ReadCloser
			At(int64) (int64, int64)
		} = r
		if ahead {
			rd = NewReadAhead(r)
		}
		if _, err := io.Copy(io.Discard, rd); err != nil {
			t.Fatal(err)
		}
		for _, p := range places {
			coff, skip := rd.At(p.pos)
			if coff != w.Start(p.member) || skip != p.skip {
				t.Errorf("ahead %v: byte %d: the reader says member at %d, skip %d; the writer said member %d at %d, skip %d",
					ahead, p.pos, coff, skip, p.member, w.Start(p.member), p.skip)
			}
		}
		rd.Close()
	}

	for _, p := range places {
		coff := w.Start(p.member)
		sr, err := NewSingleReader(bytes.NewReader(archive[coff:]))
		if err != nil {
			t.Fatal(err)
		}
		member, err := io.ReadAll(sr)
		if err != nil {
			t.Fatalf("member %d: %v", p.member, err)
		}
		if len(member) > memberSize {
			t.Errorf("member %d inflates to %d bytes, more than %d", p.member, len(member), memberSize)
		}
		want := data[p.pos:min(len(data), int(p.pos)+len(member)-int(p.skip))]
		if !bytes.HasPrefix(member[p.skip:], want) {
			t.Errorf("byte %d: member %d from %d bytes in is not the stream", p.pos, p.member, p.skip)
		}
		end := int64(len(archive))
		if p.member+1 < len(w.starts) {
			end = w.Start(p.member + 1)
		}
		if n := sr.CompressedLen(); n != end-coff {
			t.Errorf("member %d: CompressedLen %d, want %d", p.member, n, end-coff)
		}
	}
}

// TestWriteRawCopiesMembers: members copied as they are from another
// archive are read back between what was written before and after them,
// and what is written after starts a member of its own.
func TestWriteRawCopiesMembers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	copied := streamOf(rng, 2*memberSize+99)
	_, raw, _ := write(t, rng, copied, nil)
	before, after := streamOf(rng, 5000), streamOf(rng, memberSize+5000)

	var buf bytes.Buffer
	w := NewWriter(&buf, 1, []byte("x"))
	w.Write(before)
	if err := w.WriteRaw(context.Background(), bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	member, skip := w.Offset()
	w.Write(after)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if skip != 0 {
		t.Errorf("after WriteRaw, Offset gives skip %d, want 0", skip)
	}
	if !bytes.Equal(buf.Bytes()[w.Start(1):w.Start(member)], raw) {
		t.Errorf("the copied members are not the bytes given")
	}

	r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	want := append(append(append([]byte(nil), before...), copied...), after...)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(want))
	}
	if coff, skip := r.At(int64(len(before) + len(copied))); coff != w.Start(member) || skip != 0 {
		t.Errorf("the first byte after the copy is at %d, skip %d; want %d, 0", coff, skip, w.Start(member))
	}
}
