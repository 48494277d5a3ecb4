package hookd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
		// Rewind made this file and only its own entries were in it.
		if c.Backup, err = backup(target, old, 0o600); err != nil {
			return c, err
		}
		if err := durable.FaultOr("remove", target, func() error { return os.Remove(target) }); err != nil {
			return c, err
		}
		os.Remove(target + createdMarker)
		if err := durable.SyncDir(filepath.Dir(target)); err != nil {
			return c, err
		}
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
	} else if err := durable.FaultOr("mkdir", filepath.Dir(target), func() error { return os.MkdirAll(filepath.Dir(target), 0o700) }); err != nil {
		return c, err
	}
	if !existed {
		// The marker first: a crash between the two leaves a marker
		// without a file, which the next run ignores.
		if err := durable.WriteFile(target+createdMarker, []byte("created by Rewind's hook registration; removed with the file\n"), 0o600, durable.KeepOwner); err != nil {
			return c, err
		}
	}
	if err := durable.WriteFile(target, out, mode, durable.KeepOwner); err != nil {
		return c, err
	}
	c.Changed = true
	return c, nil
}

// createdMarker is the suffix of the file beside a settings file that says
// Rewind created it, so unregistering may remove it when nothing but
// Rewind's entries was ever put in.
const createdMarker = ".rewind-created"

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
