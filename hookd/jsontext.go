package hookd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file is a strict JSON (RFC 8259) parser that keeps the byte span of
// every value, so the settings merge can splice Rewind's entries into a
// user's file and leave every other byte — key order, number spelling,
// escapes, indentation — exactly as it was. Decoding into map[string]any and
// re-encoding would lose all of that.

// node is one JSON value and where it sits in the source.
type node struct {
	kind       byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	start, end int  // the value's bytes: src[start:end]
	elems      []elem
}

// elem is one member of an object or element of an array.
type elem struct {
	key      string // decoded member name (objects only)
	start    int    // first byte: the key's quote for members, the value for elements
	delim    int    // position of the ',' or opener before start
	colonSep string // the bytes between the key and the value, e.g. `: ` (objects only)
	val      *node
}

// SyntaxError is a settings file that is not strict JSON, with the position
// of the first problem.
type SyntaxError struct {
	Path      string // may be empty
	Line, Col int    // 1-based; Col counts bytes
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
}

const maxDepth = 512

type parser struct {
	src []byte
	pos int
}

// parseJSON parses src as exactly one JSON value surrounded by optional
// whitespace.
func parseJSON(src []byte) (*node, error) {
	p := &parser{src: src}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		return nil, p.fail(0, "a byte order mark is not allowed in JSON")
	}
	p.space()
	if p.pos == len(src) {
		return nil, p.fail(p.pos, "empty document")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(src) {
		return nil, p.unexpected("after the top-level value")
	}
	return n, nil
}

func (p *parser) fail(at int, format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.src[:min(at, len(p.src))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// unexpected explains the byte at p.pos, naming the usual culprits of
// hand-edited settings: comments and trailing commas.
func (p *parser) unexpected(where string) error {
	if p.pos >= len(p.src) {
		return p.fail(p.pos, "unexpected end of file %s", where)
	}
	c := p.src[p.pos]
	if c == '/' && p.pos+1 < len(p.src) && (p.src[p.pos+1] == '/' || p.src[p.pos+1] == '*') {
		return p.fail(p.pos, "comments are not allowed in JSON")
	}
	return p.fail(p.pos, "unexpected %q %s", rune(c), where)
}

func (p *parser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.fail(p.pos, "nested deeper than %d levels", maxDepth)
	}
	if p.pos >= len(p.src) {
		return nil, p.unexpected("where a value was expected")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		return p.container(c, depth)
	case c == '"':
		if _, err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos}, nil
	case c == '-' || c >= '0' && c <= '9':
		if err := p.number(); err != nil {
			return nil, err
		}
		return &node{kind: '0', start: start, end: p.pos}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.pos:], []byte(lit)) {
				p.pos += len(lit)
				return &node{kind: lit[0], start: start, end: p.pos}, nil
			}
		}
		return nil, p.unexpected("where a value was expected")
	}
}

func (p *parser) container(open byte, depth int) (*node, error) {
	n := &node{kind: open, start: p.pos}
	closer := byte('}')
	what := "object"
	if open == '[' {
		closer, what = ']', "array"
	}
	delim := p.pos
	p.pos++
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == closer {
		p.pos++
		n.end = p.pos
		return n, nil
	}
	for {
		e := elem{start: p.pos, delim: delim}
		if open == '{' {
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				if p.pos < len(p.src) && p.src[p.pos] == '}' && len(n.elems) > 0 {
					return nil, p.fail(delim, "trailing comma in %s", what)
				}
				return nil, p.unexpected("where a member name was expected")
			}
			key, err := p.str()
			if err != nil {
				return nil, err
			}
			e.key = key
			keyEnd := p.pos
			p.space()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return nil, p.unexpected("after a member name (want ':')")
			}
			p.pos++
			p.space()
			e.colonSep = string(p.src[keyEnd:p.pos])
		} else if p.pos < len(p.src) && p.src[p.pos] == ']' && len(n.elems) > 0 {
			return nil, p.fail(delim, "trailing comma in %s", what)
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		e.val = v
		n.elems = append(n.elems, e)
		p.space()
		if p.pos >= len(p.src) {
			return nil, p.unexpected("in " + what)
		}
		switch p.src[p.pos] {
		case ',':
			delim = p.pos
			p.pos++
			p.space()
		case closer:
			p.pos++
			n.end = p.pos
			return n, nil
		default:
			return nil, p.unexpected(fmt.Sprintf("in %s (want ',' or '%c')", what, closer))
		}
	}
}

// str consumes a string and returns it decoded.
func (p *parser) str() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			raw := p.src[start:p.pos]
			if !escaped {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", p.fail(start, "invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(p.src) {
				p.pos++
				return "", p.unexpected("in a string")
			}
			switch e := p.src[p.pos+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				for i := 2; i < 6; i++ {
					if p.pos+i >= len(p.src) || !isHex(p.src[p.pos+i]) {
						return "", p.fail(p.pos, "invalid \\u escape in a string")
					}
				}
				p.pos += 6
			default:
				return "", p.fail(p.pos, "invalid escape \\%c in a string", rune(e))
			}
		case c < 0x20:
			return "", p.fail(p.pos, "control character %#02x in a string (escape it)", c)
		default:
			p.pos++
		}
	}
	return "", p.fail(start, "unterminated string")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (p *parser) number() error {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.src[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return p.fail(start, "invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.fail(start, "invalid number")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.fail(start, "invalid number")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
		return p.fail(start, "invalid number")
	}
	return nil
}

// member returns the index of the member named key, or -1.
func (n *node) member(key string) int {
	for i, e := range n.elems {
		if e.key == key {
			return i
		}
	}
	return -1
}

// stringValue decodes a string node of src.
func (n *node) stringValue(src []byte) (string, bool) {
	if n == nil || n.kind != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(src[n.start:n.end], &s); err != nil {
		return "", false
	}
	return s, true
}

func kindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 'n':
		return "null"
	default:
		return "a boolean"
	}
}

// lineIndent is the leading whitespace of the line that holds src[pos].
func lineIndent(src []byte, pos int) string {
	ls := bytes.LastIndexByte(src[:pos], '\n') + 1
	e := ls
	for e < len(src) && (src[e] == ' ' || src[e] == '\t') {
		e++
	}
	return string(src[ls:e])
}

// afterNewline returns the text after the last newline of sep and whether
// there was one.
func afterNewline(sep string) (string, bool) {
	i := strings.LastIndexByte(sep, '\n')
	if i < 0 {
		return "", false
	}
	return sep[i+1:], true
}
