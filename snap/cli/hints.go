package cli

import (
	"errors"
	"fmt"

	"rewind.dev/internal/cmdline"
	"rewind.dev/snap"
	"rewind.dev/snap/gitindex"
)

// hint is rewind-snap's hint-of-error switch: what to do about the snap package's errors, in
// rewind-snap's own flags.
func hint(err error) string {
	var (
		ie  *gitindex.Error
		le  *snap.LimitError
		ae  *snap.ArchiveError
		me  *snap.ManifestError
		se  *snap.StoppedError
		mnt *snap.MountError
	)
	switch {
	case errors.As(err, &ie):
		return "install git (it is asked for the index forms Rewind does not read), or run git there without them (git update-index --no-split-index)"
	case errors.As(err, &le) && le.Limit == "max_bytes":
		return "leave it out with a pattern in a .rewindignore file, or raise --max-bytes (restores through the manifest then need no flag)"
	case errors.As(err, &le):
		return "leave it out with a pattern in a .rewindignore file"
	case errors.As(err, &mnt) && mnt.Path == mnt.Mount:
		return "unmount it and restore again"
	case errors.As(err, &mnt) && mnt.ReadOnly:
		return "remount it read-write and restore again"
	case errors.As(err, &mnt):
		return "make it writable and restore again"
	case errors.As(err, new(*snap.LeftAloneError)):
		return "nothing was changed; a restore never deletes or replaces a path it leaves alone, nor a folder that holds one"
	case errors.As(err, &se):
		return "the restore stopped part way; run it again to finish, or restore a backup"
	case errors.As(err, &ae):
		return "the tree was not changed; restore from another snapshot"
	case errors.As(err, &me):
		return "pass what an earlier 'rewind-snap create --manifest' wrote (--parent DIR reads DIR/manifest)"
	case errors.Is(err, snap.ErrNoArchive):
		return fmt.Sprintf("pass --out FILE.tar.gz; run '%s create --help'", name)
	}
	return cmdline.HintOf(err)
}
