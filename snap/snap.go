// Package snap captures a project tree as a snapshot (a standard tar.gz plus
// a manifest), compares a tree with a snapshot, and restores a tree exactly
// and safely from one.
//
// The scope of a snapshot is what git would not ignore: .gitignore files at
// every level, .git/info/exclude, the global excludes file, tracked files,
// plus .rewindignore files and the built-in excludes (.git folders,
// .agent/rewind, and the state folders of Rewind and the agents wherever
// the tree holds them, see StateFolders), plus the .git files that make a
// folder a submodule or linked worktree (see gitFileMax). The same rules
// apply outside a git repository. Regular files (with their permission
// bits), folders (empty ones too) and symlinks (as links) are captured,
// on whatever file system is mounted in the tree (see mount); sockets,
// FIFOs and devices are skipped and counted.
package snap

import (
	"fmt"
	"io/fs"
	"strings"

	"rewind.dev/internal/layout"
)

// Kind is the type of a tree entry.
type Kind uint8

const (
	KindFile Kind = iota + 1
	KindDir
	KindSymlink
)

func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "dir"
	case KindSymlink:
		return "symlink"
	}
	return "unknown"
}

// Entry is one file, folder or symlink of a tree or snapshot. Paths are
// slash-separated and relative to the root.
type Entry struct {
	Path  string
	Kind  Kind
	Mode  fs.FileMode // permission bits only; setuid, setgid and sticky are never kept
	Size  int64       // content bytes of a file, length of a symlink target
	MTime int64       // nanoseconds since the epoch
	CTime int64       // nanoseconds since the epoch; change detection only
	Ino   uint64      // change detection only
	Hash  string      // hex SHA-256 of a file's content; "" while unknown
	Link  string      // a symlink's target

	// Where a file's content is: the archive (an absolute path), the offset
	// of the gzip member that holds its tar header, and how many inflated
	// bytes of that member come before the header. Empty for entries read
	// from an archive rather than a manifest.
	Src  string
	COff int64
	Skip int64
}

// sameContent reports whether two entries describe the same thing in a
// snapshot's terms: kind, permission bits, content hash or link target.
func (e *Entry) sameContent(o *Entry) bool {
	return e.Kind == o.Kind && e.Mode == o.Mode && e.Hash == o.Hash && e.Link == o.Link
}

// same reports whether two manifest entries are identical in every field
// a manifest records.
func (e *Entry) same(o *Entry) bool {
	return e.sameStat(o) && e.Hash == o.Hash && e.Src == o.Src && e.COff == o.COff && e.Skip == o.Skip
}

// sameStat reports whether the file system metadata that a change would
// touch is unchanged.
func (e *Entry) sameStat(o *Entry) bool {
	return e.Kind == o.Kind && e.Mode == o.Mode && e.Size == o.Size && e.MTime == o.MTime &&
		e.CTime == o.CTime && e.Ino == o.Ino && e.Link == o.Link
}

// comparePaths orders paths the way a walk emits them: a folder right before
// its contents, names in byte order ("a", "a/x", "a.b").
func comparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// storeFolder is where a project keeps Rewind's store in project mode.
const storeFolder = layout.ProjectStore

// TrackedStoreError is a walk of a tree whose Rewind store (.agent/rewind)
// holds files git tracks: a store committed to the repository, whose files
// came with a clone or a pull and are not to be trusted. Nothing is saved or
// restored until git no longer tracks it.
type TrackedStoreError struct{ Path string }

func (e *TrackedStoreError) Error() string {
	return fmt.Sprintf("git tracks files in %s, Rewind's store: they came with the repository, and Rewind will not work on them", e.Path)
}

// builtinExcluded reports whether name (one path element) at rel is never
// part of a snapshot: Rewind's store. (git's .git is a case of its own: see
// gitFileMax. Restore staging folders are left out too, once proven: see
// isStaging.)
func builtinExcluded(rel, name string) bool {
	return name == "rewind" && (rel == storeFolder || strings.HasSuffix(rel, "/"+storeFolder))
}
