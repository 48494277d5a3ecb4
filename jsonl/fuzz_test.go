package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzReader: the forward and the reverse reader agree on every complete line, and the last
// line without a newline is never complete; the tail scan never fails or panics.
func FuzzReader(f *testing.F) {
	f.Add([]byte("a\nb"))
	f.Add([]byte("\r\n\x00\x00\n{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		fw := forwardLines(t, data)
		rv := reverseLines(t, data)
		var complete []Line
		for i, l := range fw {
			if !l.Complete && i != len(fw)-1 {
				t.Fatalf("incomplete line %d is not the last", i)
			}
			if l.Complete {
				complete = append(complete, l)
			}
		}
		if len(complete) != len(rv) {
			t.Fatalf("forward %d complete lines, reverse %d", len(complete), len(rv))
		}
		for i := range rv {
			if rv[i].Offset != complete[i].Offset || rv[i].End != complete[i].End || !bytes.Equal(rv[i].Data, complete[i].Data) {
				t.Fatalf("line %d differs: forward %+v, reverse %+v", i, complete[i], rv[i])
			}
		}
		for _, d := range Dialects() {
			tr, err := New("", bytes.NewReader(data), int64(len(data)), d)
			if err != nil {
				t.Fatal(err)
			}
			turns, err := tr.Turns(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, tu := range turns {
				if tu.Offset > tu.PromptOffset || tu.PromptOffset >= tu.End || tu.End > tr.End() {
					t.Fatalf("%s: bad turn %+v (end %d)", d.Name, tu, tr.End())
				}
			}
		}
	})
}

// FuzzClassify: any line classifies without panicking, and a prompt's text is valid UTF-8 of
// at most TextLimit characters.
func FuzzClassify(f *testing.F) {
	f.Add([]byte(`{"type":"user","uuid":"u","message":{"content":"hello"}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"image"},{"type":"text","text":"<system-reminder>x"}]}}`))
	f.Add([]byte(`{"type":"message","id":"m","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>a</system-reminder> go"}]}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"user_message","message":"hi","images":[1]}}`))
	f.Add([]byte(`{"type":"user.message","id":"e","data":{"content":"\xff\xfe"}}`))
	f.Add([]byte("\x00\x00{}\r"))
	f.Fuzz(func(t *testing.T, line []byte) {
		// The fast member scanner agrees with encoding/json on every valid object.
		var want map[string]json.RawMessage
		if json.Unmarshal(line, &want) == nil && want != nil {
			got, ok := scanObject(line)
			if !ok || len(got) != len(want) {
				t.Fatalf("scanObject(%q) = %v, %v; encoding/json found %d members", line, got, ok, len(want))
			}
			for k, v := range want {
				if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
					t.Fatalf("member %q: %q, encoding/json %q", k, got[k], v)
				}
			}
		}
		for _, d := range Dialects() {
			ev := d.Classify(line)
			if ev.Kind == KindPrompt {
				if !utf8.ValidString(ev.Text) || utf8.RuneCountInString(ev.Text) > TextLimit || ev.Text == "" {
					t.Fatalf("%s: bad prompt text %q", d.Name, ev.Text)
				}
			}
			if _, err := json.Marshal(ev); err != nil {
				t.Fatal(err)
			}
		}
	})
}
