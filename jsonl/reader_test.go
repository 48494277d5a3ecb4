package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// forwardLines reads every line with Reader.
func forwardLines(t testing.TB, data []byte) []Line {
	r := NewReader(bytes.NewReader(data), 0)
	var out []Line
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		l.Data = append([]byte(nil), l.Data...)
		out = append(out, l)
	}
}

// reverseLines reads the complete lines with ReverseReader, returned oldest first.
func reverseLines(t testing.TB, data []byte) []Line {
	end, err := LastNewline(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReverseReader(bytes.NewReader(data), end)
	var out []Line
	for {
		l, err := r.Prev()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		l.Data = append([]byte(nil), l.Data...)
		out = append([]Line{l}, out...)
	}
	return out
}

func TestReaders(t *testing.T) {
	long := strings.Repeat("x", 3*reverseBlock+17)
	tests := []struct {
		name       string
		data       string
		complete   []string
		incomplete string
	}{
		{"empty", "", nil, ""},
		{"one", "a\n", []string{"a"}, ""},
		{"no final newline", "a\nb", []string{"a"}, "b"},
		{"only incomplete", "abc", nil, "abc"},
		{"blank lines", "\n\na\n\n", []string{"", "", "a", ""}, ""},
		{"crlf", "a\r\nb\r\n", []string{"a\r", "b\r"}, ""},
		{"nul runs", "\x00\x00\x00\na\x00\n", []string{"\x00\x00\x00", "a\x00"}, ""},
		{"long line", "a\n" + long + "\nb\n", []string{"a", long, "b"}, ""},
		{"long incomplete", "a\n" + long, []string{"a"}, long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := forwardLines(t, []byte(tt.data))
			var got []string
			inc := ""
			for _, l := range fw {
				if l.Complete {
					got = append(got, string(l.Data))
				} else {
					inc = string(l.Data)
				}
				if string(tt.data[l.Offset:l.End]) != string(l.Data)+map[bool]string{true: "\n", false: ""}[l.Complete] {
					t.Errorf("forward line at %d: offsets do not match data", l.Offset)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.complete, "|") || inc != tt.incomplete {
				t.Errorf("forward: %q + %q, want %q + %q", got, inc, tt.complete, tt.incomplete)
			}
			rv := reverseLines(t, []byte(tt.data))
			got = got[:0]
			for i, l := range rv {
				got = append(got, string(l.Data))
				if l.Offset != fw[i].Offset || l.End != fw[i].End {
					t.Errorf("reverse line %d at [%d,%d), forward at [%d,%d)", i, l.Offset, l.End, fw[i].Offset, fw[i].End)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.complete, "|") {
				t.Errorf("reverse: %q, want %q", got, tt.complete)
			}
		})
	}
}

// TestHundredMegabyteLine: a 100 MB line is read whole, both ways, and the tail scan passes
// over it to the prompt before it; an 8 MB prompt line is parsed.
func TestHundredMegabyteLine(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100 MB")
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"queue-operation","operation":"enqueue"}` + "\n")
	b.WriteString(`{"type":"user","uuid":"big","message":{"content":"` + strings.Repeat("a", 8<<20) + `"}}` + "\n")
	b.WriteString(`{"type":"assistant","uuid":"huge","message":{"content":[{"type":"text","text":"` + strings.Repeat("b", hugeLine) + `"}]}}` + "\n")
	b.WriteString(`{"type":"last-prompt"}` + "\n")
	data := b.Bytes()
	d, _ := LookupDialect("claude")
	tr, err := New("", bytes.NewReader(data), int64(len(data)), d)
	if err != nil {
		t.Fatal(err)
	}
	tu, err := tr.Back(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if tu.ID != "big" || tu.Offset != 0 || len(tu.Text) != TextLimit {
		t.Errorf("got %+v", tu)
	}
	var lens []int
	if err := tr.Lines(0, func(l Line) bool { lens = append(lens, len(l.Data)); return true }); err != nil || len(lens) != 4 || lens[2] < hugeLine {
		t.Errorf("forward read line lengths %v, %v", lens, err)
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	ra io.ReaderAt
	n  atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.ra.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// bigTranscript builds a Claude transcript of about size bytes: a prompt every 200 lines, lines
// of 1 KiB with a 256 KiB one every 50 lines.
func bigTranscript(size int) []byte {
	var b bytes.Buffer
	small := `{"type":"assistant","uuid":"a","message":{"content":[{"type":"text","text":"` + strings.Repeat("s", 1000) + `"}]}}` + "\n"
	large := `{"type":"user","uuid":"t","toolUseResult":{},"message":{"content":[{"type":"tool_result","content":"` + strings.Repeat("L", 256<<10) + `"}]}}` + "\n"
	for i := 0; b.Len() < size; i++ {
		switch {
		case i%200 == 0:
			b.WriteString(`{"type":"queue-operation","operation":"enqueue"}` + "\n")
			b.WriteString(`{"type":"user","uuid":"p","message":{"content":"prompt"}}` + "\n")
		case i%50 == 0:
			b.WriteString(large)
		default:
			b.WriteString(small)
		}
	}
	return b.Bytes()
}

// TestTailScanCost: back N and cursor read bytes in proportion to the distance scanned, not
// the file size (counted, not timed).
func TestTailScanCost(t *testing.T) {
	d, _ := LookupDialect("claude")
	ctx := context.Background()
	var reads [2]int64
	var cursorReads [2]int64
	for i, size := range []int{4 << 20, 32 << 20} {
		data := bigTranscript(size)
		cra := &countingReaderAt{ra: bytes.NewReader(data)}
		tr, err := New("", cra, int64(len(data)), d)
		if err != nil {
			t.Fatal(err)
		}
		cra.n.Store(0)
		if _, err := tr.Back(ctx, 3); err != nil {
			t.Fatal(err)
		}
		reads[i] = cra.n.Load()
		cra.n.Store(0)
		if _, err := tr.Cursor(ctx, CursorOptions{}); err != nil {
			t.Fatal(err)
		}
		cursorReads[i] = cra.n.Load()
	}
	if reads[1] > reads[0]*2 || reads[1] > 8<<20 {
		t.Errorf("back 3 read %d bytes of 4 MiB and %d bytes of 32 MiB: cost grows with size", reads[0], reads[1])
	}
	if cursorReads[1] > 3*HashWindow+(1<<20) {
		t.Errorf("cursor read %d bytes of 32 MiB", cursorReads[1])
	}
}

func TestLastIndexByte(t *testing.T) {
	for _, s := range []string{"", "a", "\n", "a\nb", strings.Repeat("x", 9000) + "\n" + strings.Repeat("y", 9000), "\n" + strings.Repeat("z", 5000), strings.Repeat("a\n", 3000)} {
		if got, want := lastIndexByte([]byte(s), '\n'), strings.LastIndexByte(s, '\n'); got != want {
			t.Errorf("lastIndexByte(len %d) = %d, want %d", len(s), got, want)
		}
	}
}
