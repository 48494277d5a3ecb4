package fork

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestParseCheckpoint(t *testing.T) {
	h := strings.Repeat("ab", 32)
	tests := []struct {
		name, in string
		want     Checkpoint
		err      string
	}{
		{"back", `{"type":"boundary","offset":18996,"prompt_offset":19329,"turn":{"n":1,"offset":18996}}`, Checkpoint{Offset: 18996}, ""},
		{"at", `{"offset":7,"events_kept":1,"events_removed":2}`, Checkpoint{Offset: 7}, ""},
		{"cursor", `{"type":"cursor","agent":"claude","byte_offset_end":42,"prefix_sha256":"` + h + `","tail_sha256":"` + h + `","last_event_id":"x","lines":null}`,
			Checkpoint{Offset: 42, PrefixSHA256: h, TailSHA256: h, Agent: "claude"}, ""},
		{"cursor without type", `{"byte_offset_end":3}` + "\n", Checkpoint{Offset: 3}, ""},
		{"inode", `{"offset":1,"inode":99}`, Checkpoint{Offset: 1, Inode: 99}, ""},
		{"empty", ``, Checkpoint{}, "no boundary or cursor"},
		{"not JSON", `offset=3`, Checkpoint{}, "invalid character"},
		{"no offset", `{"type":"turns"}`, Checkpoint{}, "neither offset nor byte_offset_end"},
		{"cursor without end", `{"type":"cursor","offset":3}`, Checkpoint{}, "no byte_offset_end"},
		{"negative", `{"offset":-3}`, Checkpoint{}, "negative"},
		{"bad hash", `{"type":"cursor","byte_offset_end":3,"prefix_sha256":"zz"}`, Checkpoint{}, "not a hex SHA-256"},
		{"two values", `{"offset":1}{"offset":2}`, Checkpoint{}, "more than one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCheckpoint([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte(`{"type":"boundary","offset":18996}`))
	f.Add([]byte(`{"type":"cursor","byte_offset_end":42,"prefix_sha256":"` + strings.Repeat("0", 64) + `"}`))
	f.Add([]byte(`{"offset":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCheckpoint(data)
		if err == nil && c.Offset < 0 {
			t.Errorf("accepted a negative offset: %+v", c)
		}
	})
}

func TestSetStringFields(t *testing.T) {
	tests := []struct {
		name, in string
		set      map[string]string
		want     string
		err      bool
	}{
		{"keeps order and spacing", `{"type":"session_start", "id" : "old","title":"T","n":1}`, map[string]string{"id": "new", "title": "[Fork] T"},
			`{"type":"session_start", "id" : "new","title":"[Fork] T","n":1}`, false},
		{"escapes", `{"title":"a"}`, map[string]string{"title": `"q" <b> é` + "\n"}, `{"title":"\"q\" <b> é\n"}`, false},
		{"absent field not added", `{"a":{"title":"nested"}}`, map[string]string{"title": "x"}, `{"a":{"title":"nested"}}`, false},
		{"non-string value replaced", `{"title":null}`, map[string]string{"title": "x"}, `{"title":"x"}`, false},
		{"duplicate keys both replaced", `{"id":"a","id":"b"}`, map[string]string{"id": "c"}, `{"id":"c","id":"c"}`, false},
		{"not an object", `["id"]`, map[string]string{"id": "c"}, "", true},
		{"trailing garbage", `{"id":"a"} x`, map[string]string{"id": "c"}, "", true},
		{"truncated", `{"id":"a"`, map[string]string{"id": "c"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := setStringFields([]byte(tt.in), tt.set)
			if (err != nil) != tt.err || (!tt.err && string(got) != tt.want) {
				t.Errorf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func FuzzSetStringFields(f *testing.F) {
	f.Add([]byte(`{"type":"session_start","id":"x","title":"t"}`), "new")
	f.Add([]byte(`{"id":1,"title":{"a":[1,2]}}`), "é\"")
	f.Fuzz(func(t *testing.T, line []byte, v string) {
		out, replaced, err := setStringFields(line, map[string]string{"id": v, "title": v})
		if err != nil {
			return
		}
		var m map[string]any
		if err := jsonUnmarshal(out, &m); err != nil {
			t.Fatalf("output is not JSON: %s (%v)", out, err)
		}
		var want string // what a JSON reader makes of v (invalid UTF-8 becomes U+FFFD)
		jsonUnmarshal(jsonString(v), &want)
		for k := range replaced {
			if s, ok := m[k].(string); !ok || s != want {
				t.Errorf("%s = %#v, want %q", k, m[k], v)
			}
		}
	})
}

// jsonUnmarshal reads b as a JSON reader would, keeping numbers as they are
// written: one too large for a float64 is JSON all the same (the agents'
// lines are read by readers that keep it, and Rewind never changes it).
func jsonUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("more after the value (%v)", err)
	}
	return nil
}
