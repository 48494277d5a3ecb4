package fork

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"rewind.dev/jsonl"
)

// titleBase finds what the fork's title is made from, in the kept bytes: the session's own
// title (Claude: the newest custom-title, else ai-title; Droid: session_start.title), else the
// source's title when the caller knows it (a fork of a fork cut before its title line), else
// the newest user prompt kept (the point where the fork ends; Claude lists a session without a
// title line by a prompt too). "" when there is none of them.
func titleBase(ctx context.Context, prefix *jsonl.Transcript, source string) (string, error) {
	if prefix.Dialect == nil {
		return "", errors.New("the transcript's agent is unknown")
	}
	t, ok, err := prefix.Title(ctx)
	if err != nil {
		return "", err
	}
	if ok && strings.TrimSpace(t.Text) != "" {
		return t.Text, nil
	}
	if strings.TrimSpace(source) != "" {
		return source, nil
	}
	turns, err := prefix.Turns(ctx, 1)
	if err != nil || len(turns) == 0 {
		return "", err
	}
	return strings.Join(strings.Fields(turns[0].Text), " "), nil
}

// markTitle puts the dialect's fork prefix before base, once: a fork of a fork keeps the
// title it has ("[Fork] …", not "[Fork] [Fork] …"), as the prefix says what the session
// is, not how far down it lies (jsonl.Dialect.ForkTitle).
func markTitle(d *jsonl.Dialect, base string) string {
	if base == "" {
		return ""
	}
	return d.ForkTitle(base)
}

// setStringFields returns line (a JSON object, without newline) with the top-level string
// fields named in set replaced, every other byte kept as it was (key order, spacing,
// escaping). Fields not present are not added; replaced reports which were. A line that is not
// a JSON object is an error.
func setStringFields(line []byte, set map[string]string) (out []byte, replaced map[string]bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	type span struct {
		start, end int64
		value      string
	}
	var spans []span
	replaced = map[string]bool{}
	for dec.More() {
		keyTok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("not a JSON object: %w", err)
		}
		key, _ := keyTok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("not a JSON object: %w", err)
		}
		end := dec.InputOffset()
		if v, ok := set[key]; ok {
			spans = append(spans, span{end - int64(len(raw)), end, v})
			replaced[key] = true
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("not a single JSON object")
	}
	out = make([]byte, 0, len(line)+64)
	prev := int64(0)
	for _, s := range spans {
		out = append(out, line[prev:s.start]...)
		out = append(out, jsonString(s.value)...)
		prev = s.end
	}
	out = append(out, line[prev:]...)
	return out, replaced, nil
}

// jsonString encodes s as a JSON string the way agents write them (no HTML escaping).
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// stringField returns the top-level string field key of a JSON object line.
func stringField(line []byte, key string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(jsonl.Clean(line), &m) != nil {
		return "", false
	}
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return "", false
	}
	return s, true
}
