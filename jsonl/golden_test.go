package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/fixtures"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fixtureFiles are the real transcripts (SOURCES.md beside them says where each comes from).
func fixtureFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtures.Dir(), "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures under %s (err %v)", fixtures.Dir(), err)
	}
	return files
}

// golden is what each fixture pins: its detection, cursor, line counts and every turn.
type golden struct {
	Detect Detection `json:"detect"`
	Cursor Cursor    `json:"cursor"`
	Stats  Stats     `json:"stats"`
	Title  *Title    `json:"title,omitempty"`
	Turns  []Turn    `json:"turns"`
}

func TestGoldenFixtures(t *testing.T) {
	ctx := context.Background()
	for _, f := range fixtureFiles(t) {
		agent := filepath.Base(filepath.Dir(f))
		name := agent + "__" + strings.TrimSuffix(filepath.Base(f), ".jsonl") + ".json"
		t.Run(name, func(t *testing.T) {
			tr, err := Open(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if tr.Dialect == nil || tr.Dialect.Name != agent {
				t.Fatalf("detected %v, want %s", tr.Dialect, agent)
			}
			var g golden
			if g.Detect, err = tr.Detect(); err != nil {
				t.Fatal(err)
			}
			if g.Cursor, err = tr.Cursor(ctx, CursorOptions{CountLines: true}); err != nil {
				t.Fatal(err)
			}
			if g.Stats, err = tr.Stats(); err != nil {
				t.Fatal(err)
			}
			if title, ok, err := tr.Title(ctx); err != nil {
				t.Fatal(err)
			} else if ok {
				g.Title = &title
			}
			if g.Turns, err = tr.Turns(ctx, 0); err != nil {
				t.Fatal(err)
			}
			checkTurnInvariants(t, tr, g.Turns)
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the golden file; run go test -update and review the diff\ngot:\n%s", path, got)
			}
		})
	}
}

// checkTurnInvariants checks what holds for every transcript: turns are newest first and tile
// the file from the oldest prompt's cut to the end; each prompt line classifies as a prompt;
// Back(n) and Turns(n) agree with the full list.
func checkTurnInvariants(t *testing.T, tr *Transcript, turns []Turn) {
	t.Helper()
	ctx := context.Background()
	end := tr.End()
	for i, tu := range turns {
		if tu.N != i+1 {
			t.Errorf("turn %d has n=%d", i+1, tu.N)
		}
		if tu.End != end {
			t.Errorf("turn %d ends at %d, want %d", tu.N, tu.End, end)
		}
		if !(tu.Offset <= tu.PromptOffset && tu.PromptOffset < tu.End) {
			t.Errorf("turn %d: offset %d, prompt_offset %d, end %d out of order", tu.N, tu.Offset, tu.PromptOffset, tu.End)
		}
		line := lineAt(t, tr, tu.PromptOffset)
		if ev := tr.Dialect.Classify(line); ev.Kind != KindPrompt || ev.ID != tu.ID || ev.Text != tu.Text {
			t.Errorf("turn %d: the line at prompt_offset classifies as %+v", tu.N, ev)
		}
		if tu.Offset > 0 {
			if b := byteAt(t, tr, tu.Offset-1); b != '\n' {
				t.Errorf("turn %d: offset %d is not at a line start", tu.N, tu.Offset)
			}
		}
		end = tu.Offset
		if tu.N <= 3 || tu.N == len(turns) { // each Back scans from the end: keep the test fast
			b, err := tr.Back(ctx, tu.N)
			if err != nil || b != tu {
				t.Errorf("Back(%d) = %+v, %v; want %+v", tu.N, b, err, tu)
			}
		}
	}
	if _, err := tr.Back(ctx, len(turns)+1); err == nil {
		t.Errorf("Back(%d) found a prompt beyond the %d listed", len(turns)+1, len(turns))
	}
	if len(turns) >= 2 {
		last2, err := tr.Turns(ctx, 2)
		if err != nil || len(last2) != 2 || last2[0] != turns[0] || last2[1] != turns[1] {
			t.Errorf("Turns(2) = %+v, %v; want the first two of the full list", last2, err)
		}
	}
}

func lineAt(t *testing.T, tr *Transcript, off int64) []byte {
	t.Helper()
	var out []byte
	if err := tr.Lines(off, func(l Line) bool { out = append([]byte(nil), l.Data...); return false }); err != nil {
		t.Fatal(err)
	}
	return out
}

func byteAt(t *testing.T, tr *Transcript, off int64) byte {
	t.Helper()
	b := make([]byte, 1)
	if _, err := tr.ReaderAt().ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b[0]
}
