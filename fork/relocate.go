package fork

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// folderRewriter passes a transcript through, line by line, rewriting the working-folder fields
// of each line (CwdFields) that name the session's old folder, or a folder below it, to the same
// place under the new one. Every other byte is kept (setStringFields); a line it cannot parse
// passes as it is.
type folderRewriter struct {
	w        io.Writer
	fields   []string
	from, to string
	pending  []byte // the start of a line not yet ended
	n        int64  // fields rewritten
}

func (r *folderRewriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.pending = append(r.pending, p...)
			break
		}
		line := p[:i+1]
		if len(r.pending) > 0 {
			line = append(r.pending, line...)
			r.pending = r.pending[:0]
		}
		if _, err := r.w.Write(r.rewrite(line)); err != nil {
			return 0, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// flush writes a last line without its newline.
func (r *folderRewriter) flush() error {
	if len(r.pending) == 0 {
		return nil
	}
	_, err := r.w.Write(r.rewrite(r.pending))
	r.pending = nil
	return err
}

// rewrite returns line (newline included, if any) with its folder fields moved.
func (r *folderRewriter) rewrite(line []byte) []byte {
	body, nl := bytes.CutSuffix(line, []byte("\n"))
	if needle := r.needle(); needle != nil && !bytes.Contains(body, needle) {
		return line
	}
	out, n := body, 0
	for _, f := range r.fields {
		path := strings.Split(f, ".")
		if !bytes.Contains(out, []byte(`"`+strings.TrimSuffix(path[0], "[]")+`"`)) {
			continue
		}
		var m int
		out, m = r.moveIn(out, path)
		n += m
	}
	if n == 0 {
		return line
	}
	r.n += int64(n)
	if nl {
		out = append(out, '\n')
	}
	return out
}

// needle is how the old folder appears in a line that names it, nil when that cannot be told
// (its JSON form has escapes, which an agent may write another way).
func (r *folderRewriter) needle() []byte {
	if r.from == "" {
		return nil
	}
	enc := jsonString(r.from)
	enc = enc[1 : len(enc)-1]
	if string(enc) != r.from {
		return nil
	}
	return enc
}

// moveIn returns raw, one JSON value, with the folder strings at path below it moved, every
// other byte kept, and how many it moved. A "[]" element of path is every element of an array.
// What does not have the path's shape is left as it is.
func (r *folderRewriter) moveIn(raw []byte, path []string) ([]byte, int) {
	if len(path) == 0 {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return raw, 0
		}
		moved, ok := movePath(s, r.from, r.to)
		if !ok {
			return raw, 0
		}
		return jsonString(moved), 1
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return raw, 0
	}
	open, _ := tok.(json.Delim)
	if (open != '[' || path[0] != "[]") && (open != '{' || path[0] == "[]") {
		return raw, 0
	}
	var out []byte
	prev, n := 0, 0
	for dec.More() {
		key := "[]"
		if open == '{' {
			k, err := dec.Token()
			if err != nil {
				return raw, 0
			}
			key, _ = k.(string)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return raw, 0
		}
		if key != path[0] {
			continue
		}
		moved, m := r.moveIn(v, path[1:])
		if m == 0 {
			continue
		}
		end := int(dec.InputOffset())
		out = append(append(out, raw[prev:end-len(v)]...), moved...)
		prev, n = end, n+m
	}
	if n == 0 {
		return raw, 0
	}
	return append(out, raw[prev:]...), n
}

// movePath is p with its leading folder from replaced by to, when p is from or lies below it.
func movePath(p, from, to string) (string, bool) {
	if p == from {
		return to, true
	}
	if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(from, "/")+"/"); ok {
		return strings.TrimSuffix(to, "/") + "/" + rest, true
	}
	return "", false
}
