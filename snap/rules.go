package snap

import (
	"bytes"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// snapshotRules answers "would this path have been ignored when the snapshot
// was taken?" from the .gitignore and .rewindignore files the snapshot holds,
// plus the rules that live outside the tree (.git/info/exclude, global
// excludes, folders above the root) as they are now.
type snapshotRules struct {
	base  *ignoreStack
	files map[string][]pattern // folder -> patterns of its .gitignore then .rewindignore
	order map[string][]string  // folder -> file names seen, to keep .gitignore before .rewindignore
	data  map[string][]byte
}

func newSnapshotRules(root string, opts WalkOptions) *snapshotRules {
	abs, _ := filepath.Abs(root)
	gc := loadGitContext(abs)
	st := &ignoreStack{global: gc.global}
	for _, l := range gc.parents {
		st = st.push(l)
	}
	r := &snapshotRules{base: st, data: map[string][]byte{}}
	if extra := parsePatterns([]byte(joinLines(opts.Ignore))); len(extra) > 0 {
		r.base = r.base.push(patternList{patterns: extra})
	}
	return r
}

// add tees the content of the snapshot's ignore file name as it is read.
func (r *snapshotRules) add(name string, content *io.Reader) {
	var b bytes.Buffer
	r.data[name] = nil
	*content = io.TeeReader(*content, &capture{buf: &b, done: func() { r.data[name] = b.Bytes() }})
}

type capture struct {
	buf  *bytes.Buffer
	done func()
}

func (c *capture) Write(p []byte) (int, error) {
	c.buf.Write(p)
	c.done()
	return len(p), nil
}

func (r *snapshotRules) listsFor(dir string) []patternList {
	var out []patternList
	for _, name := range []string{".gitignore", ".rewindignore"} {
		f := name
		if dir != "" {
			f = dir + "/" + name
		}
		if b, ok := r.data[f]; ok && len(b) > 0 {
			out = append(out, patternList{base: dir, patterns: parsePatterns(b)})
		}
	}
	return out
}

// ignored reports whether p (relative to the root) is out of scope under the
// snapshot's rules: it, or a folder above it, is ignored.
func (r *snapshotRules) ignored(p string, isDir bool) bool {
	st := r.base
	els := strings.Split(p, "/")
	for i := range els {
		dir := strings.Join(els[:i], "/")
		for _, l := range r.listsFor(dir) {
			st = st.push(l)
		}
		sub := path.Join(els[:i+1]...)
		if st.ignored(sub, i < len(els)-1 || isDir) {
			return true
		}
	}
	return false
}
