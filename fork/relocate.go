package fork

import (
	"bytes"
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
	set := map[string]string{}
	for _, f := range r.fields {
		if !bytes.Contains(body, []byte(`"`+f+`"`)) {
			continue
		}
		v, ok := stringField(body, f)
		if !ok {
			continue
		}
		if moved, ok := movePath(v, r.from, r.to); ok {
			set[f] = moved
		}
	}
	if len(set) == 0 {
		return line
	}
	out, _, err := setStringFields(body, set)
	if err != nil {
		return line
	}
	r.n += int64(len(set))
	if nl {
		out = append(out, '\n')
	}
	return out
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
