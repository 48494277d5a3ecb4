package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
)

// object is one JSON object decoded one level at a time: nested objects are decoded only when a
// dotted path reaches into them, so a 2 MB tool result is scanned once and never copied into
// maps of maps.
type object struct {
	fields map[string]json.RawMessage
	sub    map[string]*object
}

// parseObject decodes data as a JSON object; it returns nil when data is not one.
func parseObject(data []byte) *object {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil
	}
	return &object{fields: m}
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
