package snap

import (
	"bytes"
	"io"
	"path"
	"path/filepath"
	"strings"

	"rewind.dev/snap/gitignore"
)

// snapshotRules answers "would this path have been ignored when the snapshot
// was taken?" from the .gitignore and .rewindignore files the snapshot holds
// and the rules from outside the tree it was taken under — each
// repository's info/exclude, excludes file and the .gitignore files above
// the root, Rewind's configured patterns — as its manifest records them; a
// snapshot without them (an archive alone, an older manifest) is judged by
// those rules as they are now.
type snapshotRules struct {
	root   string
	top    *gitContext            // the root's repository (or none)
	nested map[string]*gitContext // repositories nested in the tree, by their folder; nil: known to be none
	live   bool                   // no recorded rules: nested repositories are looked for in the tree
	// gitFiles says the snapshot holds .git files (Rules.GitFiles): one
	// taken before, or an archive without its rules, is judged to hold none,
	// so a restore leaves the tree's alone.
	gitFiles bool
	extra    []gitignore.Pattern
	data     map[string][]byte // the snapshot's ignore files, by path
}

func newSnapshotRules(root string, opts WalkOptions, recorded *Rules) *snapshotRules {
	abs, _ := filepath.Abs(root)
	r := &snapshotRules{root: abs, nested: map[string]*gitContext{}, data: map[string][]byte{}}
	ignore := opts.Ignore
	if recorded != nil {
		ignore, r.gitFiles = recorded.Ignore, recorded.GitFiles
		for _, rr := range recorded.Repos {
			gc := &gitContext{base: rr.Base, rules: rr}
			gc.build()
			if rr.Base == "" {
				r.top = gc
			} else {
				r.nested[rr.Base] = gc
			}
		}
	}
	if r.top == nil {
		gc, _ := loadGitContext(abs, false) // only its rules count here, which it reads whatever its index
		r.top, r.live = &gc, true
	}
	r.extra = gitignore.Parse([]byte(joinLines(ignore)))
	return r
}

// repoAt returns the repository whose top is the folder dir, or nil.
func (r *snapshotRules) repoAt(dir string) *gitContext {
	if gc, ok := r.nested[dir]; ok || !r.live {
		return gc
	}
	var found *gitContext
	if gc, ok, _ := nestedGitContext(filepath.Join(r.root, filepath.FromSlash(dir)), dir, false); ok {
		found = &gc
	}
	r.nested[dir] = found
	return found
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

func (r *snapshotRules) listsFor(dir string) []gitignore.List {
	var out []gitignore.List
	for _, name := range []string{".gitignore", ".rewindignore"} {
		f := name
		if dir != "" {
			f = dir + "/" + name
		}
		if b, ok := r.data[f]; ok && len(b) > 0 {
			out = append(out, gitignore.List{Base: dir, Patterns: gitignore.Parse(b), Rewind: name == ".rewindignore"})
		}
	}
	return out
}

// ignored reports whether p (relative to the root) is out of scope under the
// snapshot's rules: it, or a folder above it, is ignored. The rules are
// stacked as a walk stacks them.
func (r *snapshotRules) ignored(p string, isDir bool) bool {
	st := gitignore.NewStack(r.top.global)
	for _, l := range r.top.parents {
		st = st.Push(l)
	}
	els := strings.Split(p, "/")
	for i := range els {
		dir := strings.Join(els[:i], "/")
		if i > 0 {
			if gc := r.repoAt(dir); gc != nil {
				st = st.Nested(gc.global)
			}
		}
		for _, l := range r.listsFor(dir) {
			st = st.Push(l)
		}
		if i == 0 && len(r.extra) > 0 {
			st = st.Push(gitignore.List{Patterns: r.extra, Rewind: true})
		}
		if i == len(els)-1 && !isDir && els[i] == ".git" {
			return !r.gitFiles // (no pattern applies to a .git file: see gitFileMax)
		}
		if st.Ignored(path.Join(els[:i+1]...), i < len(els)-1 || isDir) {
			return true
		}
	}
	return false
}
