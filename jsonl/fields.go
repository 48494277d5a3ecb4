package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// object is one JSON object decoded one level at a time: nested objects are decoded only when a
// dotted path reaches into them, so a 2 MB tool result is scanned once and never copied into
// maps of maps.
type object struct {
	fields map[string]json.RawMessage
	sub    map[string]*object
}

// parseObject splits data into a JSON object's members; it returns nil when data is not an
// object. Member values are located, not decoded or validated: a 2 MB tool result is skipped
// at memchr speed, and only the values a rule reads are decoded (and so validated).
func parseObject(data []byte) *object {
	m, ok := scanObject(data)
	if !ok {
		return nil
	}
	return &object{fields: m}
}

// scanObject splits a JSON object into raw members (the last of duplicate keys wins, as with
// encoding/json).
func scanObject(data []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	m := make(map[string]json.RawMessage, 16)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		kend, ok := skipString(data, i)
		if !ok {
			return nil, false
		}
		key := data[i+1 : kend-1]
		var k string
		if bytes.IndexByte(key, '\\') < 0 && utf8.Valid(key) {
			k = string(key)
		} else if json.Unmarshal(data[i:kend], &k) != nil {
			return nil, false
		}
		i = skipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		vend, ok := skipValue(data, i)
		if !ok {
			return nil, false
		}
		m[k] = json.RawMessage(data[i:vend])
		i = skipSpace(data, vend)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return m, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at data[i] == '"'.
func skipString(data []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for b := q - 1; b > i && data[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// skipValue returns the index just past the value starting at data[i].
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, j > i
		}
		j++
	}
	return j, j > i
}

// get returns the raw value at a dotted path ("message.content"), and whether it is present.
// A present JSON null counts as present.
func (o *object) get(path string) (json.RawMessage, bool) {
	if o == nil || path == "" {
		return nil, false
	}
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		v, ok := o.fields[path]
		return v, ok
	}
	child, ok := o.sub[head]
	if !ok {
		raw, present := o.fields[head]
		if present {
			child = parseObject(raw)
		}
		if o.sub == nil {
			o.sub = make(map[string]*object)
		}
		o.sub[head] = child
	}
	if child == nil {
		return nil, false
	}
	return child.get(rest)
}

// str returns the string at path, or "" when it is absent or not a string.
func (o *object) str(path string) string {
	raw, ok := o.get(path)
	if !ok {
		return ""
	}
	return rawString(raw)
}

// rawString decodes raw as a JSON string; anything else gives "".
func rawString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// rawEqual reports whether two JSON values are equal after decoding.
func rawEqual(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if bytes.Equal(a, b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}
