package snap

import (
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Folding is how a file system compares names. macOS's APFS, by default,
// takes names that differ only in case (README.md, Readme.md) for one
// name, and the Unicode normalisation forms of a name (é as one code point,
// NFC, or as e and a combining accent, NFD) for one name too, while it
// keeps the spelling a file was created with and lists that. Linux's ext4
// folds neither: there they are different files.
type Folding struct {
	Case bool `json:"case"`          // names that differ only in case are one name
	Norm bool `json:"normalization"` // a name's Unicode normalisation forms are one name
}

func (f Folding) String() string {
	switch {
	case f.Case && f.Norm:
		return "case- and normalisation-insensitive"
	case f.Case:
		return "case-insensitive"
	case f.Norm:
		return "normalisation-insensitive"
	}
	return "names compared byte for byte"
}

// Folds reports whether the file system takes any two spellings for one
// name.
func (f Folding) Folds() bool { return f.Case || f.Norm }

// Key returns the form of name shared by every spelling the file system
// takes for it. Case is folded fully (Unicode's CaseFolding, as APFS
// does), which may join a few names a file system keeps apart (ß and ss):
// a key match is a candidate, never proof (see spellings.same).
func (f Folding) Key(name string) string {
	if !f.Folds() {
		return name
	}
	if isASCII(name) {
		if f.Case {
			return asciiLower(name)
		}
		return name
	}
	if f.Norm {
		name = norm.NFD.String(name)
	}
	if f.Case {
		name = cases.Fold().String(name)
		if f.Norm {
			name = norm.NFD.String(name) // folding can compose or reorder
		}
	}
	return name
}

// ProbeFolding finds out how the file system at root compares names,
// without writing anything: it looks up a name the root holds with its
// case swapped, and one with non-ASCII letters in its other normalisation
// form, and sees whether each leads to the same file. Where the root holds
// no such name, the root's own name is tried in its parent (on the same
// device); where that tells nothing either, it takes the platform's
// default: macOS's APFS folds both, Linux's file systems neither.
func ProbeFolding(root string) Folding {
	var f Folding
	var caseKnown, normKnown bool
	try := func(dir, name string) {
		if !caseKnown {
			if other := swapCase(name); other != name {
				f.Case, caseKnown = sameName(dir, name, other)
			}
		}
		if !normKnown {
			if other := otherForm(name); other != name {
				f.Norm, normKnown = sameName(dir, name, other)
			}
		}
	}
	if d, err := os.Open(root); err == nil {
		for !caseKnown || !normKnown {
			names, err := d.Readdirnames(64)
			for _, n := range names {
				try(root, n)
			}
			if err != nil { // io.EOF at the end
				break
			}
		}
		d.Close()
	}
	if !caseKnown || !normKnown {
		if abs, err := filepath.Abs(root); err == nil {
			parent := filepath.Dir(abs)
			if parent != abs && sameDevice(parent, abs) {
				try(parent, filepath.Base(abs))
			}
		}
	}
	if !caseKnown {
		f.Case = runtime.GOOS == "darwin"
	}
	if !normKnown {
		f.Norm = runtime.GOOS == "darwin" || f.Case
	}
	return f
}

// sameName reports whether other, another spelling of the name that dir
// holds, leads to the same file; known is false when name itself could not
// be looked up (it went away), so nothing was learnt.
func sameName(dir, name, other string) (same, known bool) {
	a, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		return false, false
	}
	b, err := os.Lstat(filepath.Join(dir, other))
	if err != nil {
		return false, true
	}
	return os.SameFile(a, b), true
}

// otherForm returns name in the normalisation form it is not in (NFC when
// it is not NFC, else NFD); name itself when both forms are the same.
func otherForm(name string) string {
	if isASCII(name) || !utf8.ValidString(name) {
		return name
	}
	if c := norm.NFC.String(name); c != name {
		return c
	}
	return norm.NFD.String(name)
}

// respelled reports whether the last element of a snapshot's path is
// spelt differently in the tree beyond normalisation (in case): a restore
// renames such an entry to the snapshot's spelling. Normalisation forms of
// one name are not told apart: they look the same, and a file system that
// folds them may store one form whatever it is given (HFS+ stores NFD), so
// a rename could never settle.
func respelled(treePath, snapPath string) bool {
	return !sameLook(path.Base(treePath), path.Base(snapPath))
}

// sameLook reports whether two spellings differ at most in normalisation.
func sameLook(a, b string) bool {
	if a == b {
		return true
	}
	if isASCII(a) && isASCII(b) {
		return false
	}
	return norm.NFC.String(a) == norm.NFC.String(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// swapCase swaps the case of name's ASCII letters.
func swapCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
		case c >= 'A' && c <= 'Z':
			b[i] = c + 32
		}
	}
	return string(b)
}

// spellings finds, on a file system that folds names, the tree's entry
// that a snapshot's path names under another spelling (README.md for the
// tree's Readme.md, or a folder's NFC name for the tree's NFD one). A key
// match is only a candidate: same asks the file system whether the two
// spellings lead to one file, so a fold wider than the file system's never
// pairs two files.
type spellings struct {
	fold  Folding
	same  func(treePath, snapPath string) bool
	tree  []*Entry // the tree's entries a snapshot may name by another spelling
	byKey map[string][]*Entry
	taken map[*Entry]bool
}

func newSpellings(fold Folding, same func(treePath, snapPath string) bool) *spellings {
	return &spellings{fold: fold, same: same, taken: map[*Entry]bool{}}
}

// find returns the tree's entry that snapPath names, which the caller has
// not found spelt as the snapshot spells it, or nil. An entry is returned
// once at most.
func (s *spellings) find(snapPath string) *Entry {
	if s.byKey == nil {
		s.byKey = make(map[string][]*Entry, len(s.tree))
		for _, e := range s.tree {
			k := s.fold.Key(e.Path)
			s.byKey[k] = append(s.byKey[k], e)
		}
	}
	for _, c := range s.byKey[s.fold.Key(snapPath)] {
		if !s.taken[c] && c.Path != snapPath && s.same(c.Path, snapPath) {
			s.taken[c] = true
			return c
		}
	}
	return nil
}

// sameSpelt returns the same function of spellings for the tree at root:
// every element where the two paths differ is looked up in the tree's own
// parent folder, both spellings, without following a symlink, and must be
// one file. lstat is os.Lstat or an os.Root's; verified pairs are
// remembered (a renamed folder's children share its pair).
func sameSpelt(lstat func(name string) (os.FileInfo, error)) func(treePath, snapPath string) bool {
	known := map[string]bool{}
	return func(treePath, snapPath string) bool {
		te, se := strings.Split(treePath, "/"), strings.Split(snapPath, "/")
		if len(te) != len(se) {
			return false
		}
		for i := range te {
			if te[i] == se[i] {
				continue
			}
			parent := strings.Join(te[:i], "/")
			k := parent + "\x00" + te[i] + "\x00" + se[i]
			same, ok := known[k]
			if !ok {
				a, err1 := lstat(filepath.FromSlash(path.Join(parent, te[i])))
				b, err2 := lstat(filepath.FromSlash(path.Join(parent, se[i])))
				same = err1 == nil && err2 == nil && os.SameFile(a, b)
				known[k] = same
			}
			if !same {
				return false
			}
		}
		return true
	}
}
