package hookd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"rewind.dev/internal/durable"
)

// keepBackups is how many settings backups Rewind keeps per file: the
// newest, the bytes before Rewind's last change. Rewind changes only its own
// entries, so the user's part of any older backup is in the file itself;
// more backups only piled up beside it.
const keepBackups = 1

// updateSettings applies edit to the settings file at path and writes the
// result when it differs: backup first, then an atomic replace of the
// symlink's target with the same mode. A missing file is edited as the
// template (and not created when removeOnly). A file this created is marked
// (createdMarker), and removed again once only the template is left.
func updateSettings(path, template string, removeOnly bool, edit func([]byte) ([]byte, int, int, error)) (Change, error) {
	c := Change{Path: path}
	target, err := resolveLink(path)
	if err != nil {
		return c, err
	}
	c.Target = target
	old, err := readFile(target)
	existed := err == nil
	if errors.Is(err, fs.ErrNotExist) {
		if removeOnly {
			return c, nil
		}
	} else if err != nil {
		return c, err
	}
	// A missing or empty file is the template; a format whose empty file is valid (TOML,
	// template "") keeps what it has, white space included.
	var empty []byte
	if template != "" {
		empty = []byte(template + "\n")
	}
	src := old
	if len(bytes.TrimSpace(src)) == 0 && template != "" {
		src = empty
	}
	out, added, removed, err := edit(src)
	if err != nil {
		return c, err
	}
	c.Added, c.Removed = added, removed
	if existed && bytes.Equal(out, old) {
		c.Added, c.Removed = 0, 0
		return c, nil
	}
	if st, err := os.Stat(target); existed && err == nil && st.Mode().Perm()&0o200 == 0 {
		// Its owner made it read-only: replacing it (which a rename can)
		// would override that.
		return c, fmt.Errorf("%s is read-only, so Rewind does not change it; make it writable (chmod u+w %s) and run again", target, target)
	}
	if existed && removeOnly && bytes.Equal(out, empty) && fileExists(target+createdMarker) {
		// Rewind made this file and only its own entries were in it: it goes,
		// with what Rewind made for it (no backup: nothing in it was the user's).
		if err := durable.FaultOr("remove", target, func() error { return os.Remove(target) }); err != nil {
			return c, err
		}
		if err := durable.SyncDir(filepath.Dir(target)); err != nil {
			return c, err
		}
		removeMade(target)
		c.Changed, c.RemovedFile = true, true
		return c, nil
	}
	mode := fs.FileMode(0o600)
	if existed {
		st, err := os.Stat(target)
		if err != nil {
			return c, err
		}
		mode = st.Mode().Perm()
		if c.Backup, err = backup(target, old, mode); err != nil {
			return c, err
		}
	} else {
		made, err := makeDirs(filepath.Dir(target), 0o700)
		if err != nil {
			return c, err
		}
		// The marker first: a crash between the two leaves a marker
		// without a file, which the next run ignores.
		if err := markMade(target, made); err != nil {
			return c, err
		}
	}
	if err := durable.WriteFile(target, out, mode, durable.KeepOwner); err != nil {
		return c, err
	}
	c.Changed = true
	return c, nil
}

// createdMarker is the suffix of the file beside a settings file (or a
// bridge) that says Rewind created it, so unregistering may remove it when
// nothing but Rewind's entries was ever put in, and names the folders
// Rewind made for it (after madeHeader), which go with it when left empty.
const createdMarker = ".rewind-created"

// madeHeader starts, in a createdMarker, the list of the folders Rewind
// made for the file, one a line, outermost first (none: it made none). A
// marker without it was written before folders were recorded.
const madeHeader = "folders made for it:"

// makeDirs makes dir and the folders above it that are missing, as
// os.MkdirAll does, and returns those it made, outermost first.
func makeDirs(dir string, perm fs.FileMode) ([]string, error) {
	var made []string
	for d := dir; !fileExists(d); d = filepath.Dir(d) {
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := durable.FaultOr("mkdir", dir, func() error { return os.MkdirAll(dir, perm) }); err != nil {
		return nil, err
	}
	slices.Reverse(made)
	return made, nil
}

// markMade writes the createdMarker beside target, naming the folders made
// for it.
func markMade(target string, made []string) error {
	var b strings.Builder
	b.WriteString("created by Rewind's hook registration; removed with the file\n" + madeHeader + "\n")
	for _, d := range made {
		b.WriteString(d + "\n")
	}
	return durable.WriteFile(target+createdMarker, []byte(b.String()), 0o600, durable.KeepOwner)
}

// removeMade removes, once the file target Rewind created is gone, what
// Rewind made for it: its marker, its backups (they held nothing but
// Rewind's entries), and the folders its marker names, innermost first,
// each only when it is left empty (a real folder above target, not a
// link). A marker from before the folders were recorded, or none (a bridge
// installed then), counts target's own folder as made for it: left empty,
// it holds nothing of the user's. Best effort: the file is gone already.
func removeMade(target string) {
	b, err := os.ReadFile(target + createdMarker)
	dirs := []string{filepath.Dir(target)}
	if err == nil {
		if _, list, ok := strings.Cut(string(b), madeHeader+"\n"); ok {
			dirs = nil
			for _, d := range strings.Split(strings.TrimSpace(list), "\n") {
				if d != "" {
					dirs = append(dirs, d)
				}
			}
		}
	}
	os.Remove(target + createdMarker)
	olds, _ := filepath.Glob(globEscape(target+".rewind-backup-") + "*")
	for _, o := range olds {
		if fi, err := os.Lstat(o); err == nil && fi.Mode().IsRegular() {
			os.Remove(o)
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		d := filepath.Clean(dirs[i])
		if rel, err := filepath.Rel(d, target); err != nil || !filepath.IsAbs(d) || rel == "." || strings.HasPrefix(rel, "..") {
			continue // (not a folder above target: not one made for it)
		}
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			os.Remove(d) // (fails, and leaves it, when something is in it)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// readFile is os.ReadFile through the fault seam.
func readFile(path string) ([]byte, error) {
	if err := durable.Fault("read", path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// resolveLink follows path's symlinks, also when the final target does not
// exist yet, so a write lands in the target and the link stays a link.
func resolveLink(path string) (string, error) {
	p := path
	for range 40 {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			if st.IsDir() {
				return "", fmt.Errorf("%s is a directory", p)
			}
			return p, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// backup writes old beside target as <name>.rewind-backup-<UTC time> and
// keeps the newest keepBackups of them.
func backup(target string, old []byte, mode fs.FileMode) (string, error) {
	prefix := target + ".rewind-backup-"
	name := prefix + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := durable.WriteFile(name, old, mode, durable.KeepOwner); err != nil {
		return "", fmt.Errorf("backup of %s: %w", target, err)
	}
	olds, _ := filepath.Glob(globEscape(prefix) + "*")
	sort.Strings(olds)
	for len(olds) > keepBackups {
		if !strings.HasSuffix(olds[0], ".tmp") {
			os.Remove(olds[0])
		}
		olds = olds[1:]
	}
	return name, nil
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}
