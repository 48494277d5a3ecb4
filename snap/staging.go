package snap

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A restore stages new content in a folder at the root — and what goes
// onto a file system mounted inside the tree in a folder of the same name
// at the top of that mount (see mount) — which the walk leaves out
// wherever it meets one, and the next restore removes if a killed one left
// it (at the root and at the top of each mount). Both act only on a folder
// they can prove a restore made, never on a name alone: its name is
// stagingPrefix and a token of 24 random hex digits followed by 8 of their
// checksum, and it holds a marker file (stagingMarker) whose content is
// stagingMagic and the token — or, in the instant between creating the
// folder and writing the marker, nothing but an empty marker. A user's
// folder that merely starts with the prefix (.rewind-restore-notes) is
// captured and restored like any other, and never removed.
const (
	stagingPrefix = ".rewind-restore-"
	stagingMarker = "lock" // also flock-held by the restore while it runs
	stagingMagic  = "rewind-snap restore staging folder"
)

// newStagingName returns a fresh staging folder name and the marker's
// content for it.
func newStagingName() (name string, marker []byte) {
	var rnd [12]byte
	rand.Read(rnd[:])
	token := hex.EncodeToString(rnd[:])
	token += stagingSum(token)
	return stagingPrefix + token, []byte(stagingMagic + "\n" + token + "\n")
}

func stagingSum(random string) string {
	sum := sha256.Sum256([]byte(stagingMagic + random))
	return hex.EncodeToString(sum[:4])
}

// isStaging reports whether the entry name in folder dir is a staging folder
// a restore made (see above). It follows no symlink.
func isStaging(dir, name string) bool {
	token, ok := strings.CutPrefix(name, stagingPrefix)
	if !ok || len(token) != 32 || strings.ToLower(token) != token || stagingSum(token[:24]) != token[24:] {
		return false
	}
	p := filepath.Join(dir, name)
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		return false
	}
	f, err := openNoFollow(filepath.Join(p, stagingMarker))
	if err != nil {
		des, err := os.ReadDir(p)
		return err == nil && len(des) == 0 // killed right after creating it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	var b [256]byte
	n, _ := f.Read(b[:])
	if n == 0 {
		des, err := os.ReadDir(p)
		return err == nil && len(des) == 1 // killed before the marker was written
	}
	return bytes.Equal(b[:n], []byte(stagingMagic+"\n"+token+"\n"))
}

// stagingEntry reports whether the entry name, of mode m, of the folder dir
// is a staging folder (the cheap name test first: the marker is read only
// for names that match).
func stagingEntry(dir, name string, m fs.FileMode) bool {
	return m.IsDir() && strings.HasPrefix(name, stagingPrefix) && isStaging(dir, name)
}

// stagedTree is the folder in the staging folder that holds, at their own
// paths, the files fetched into folders the plan creates.
const stagedTree = "tree"

// stagedAt is where in the staging folder the content fetched for the
// plan's operation i, op, is staged: inside a folder the plan creates
// (newFolders), at its own path in stagedTree, to be moved in with that
// folder; elsewhere, by the operation's number.
func stagedAt(i int, op *restoreOp, inside bool) string {
	if inside {
		return inStagedTree(op.entry.Path)
	}
	return "f" + strconv.Itoa(i)
}

// inStagedTree is where the entry at path name is staged inside stagedTree.
func inStagedTree(name string) string { return stagedTree + "/" + name }

// newFolders follows the plan's operations in order (walk order), and
// tells of each whether it is inside a folder the plan creates: such a
// folder is moved in whole, with what was staged in it, rather than each
// of its files renamed into place (a million renames, for a tree emptied
// by hand).
type newFolders struct{ open []string }

func (n *newFolders) step(op *restoreOp) (inside bool) {
	name := op.entry.Path
	for len(n.open) > 0 && !strings.HasPrefix(name, n.open[len(n.open)-1]+"/") {
		n.open = n.open[:len(n.open)-1]
	}
	inside = len(n.open) > 0
	if op.kind == opMkdir {
		n.open = append(n.open, name)
	}
	return inside
}
