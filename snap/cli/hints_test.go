package cli

import (
	"errors"
	"fmt"
	"testing"

	"rewind.dev/internal/cmdline"
	"rewind.dev/snap"
	"rewind.dev/snap/gitindex"
)

// TestHint: each of the snap package's errors gets a hint naming rewind-snap's own flags.
func TestHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&gitindex.Error{Index: ".git/index", Form: "a split index", Err: errors.New("exit 128")}, "install git (it is asked for the index forms Rewind does not read), or run git there without them (git update-index --no-split-index)"},
		{&snap.LimitError{Limit: "max_bytes", Max: 1, What: "2 bytes"}, "leave it out with a pattern in a .rewindignore file, or raise --max-bytes (restores through the manifest then need no flag)"},
		{&snap.LimitError{Limit: "max_depth", Max: 1, What: "2 levels"}, "leave it out with a pattern in a .rewindignore file"},
		{&snap.MountError{Path: "m", Mount: "m"}, "unmount it and restore again"},
		{&snap.MountError{Path: "m/a", Mount: "m", ReadOnly: true}, "remount it read-write and restore again"},
		{&snap.MountError{Path: "m/a", Mount: "m", Err: errors.New("permission denied")}, "make it writable and restore again"},
		{&snap.StoppedError{Err: errors.New("rename: EIO")}, "the restore stopped part way; run it again to finish, or restore a backup"},
		{&snap.LeftAloneError{Folder: "a", Path: "a/s.tar.gz", Reason: "input"}, "nothing was changed; a restore never deletes or replaces a path it leaves alone, nor a folder that holds one"},
		{&snap.ArchiveError{Archive: "a.tar.gz", Reason: "not a gzip file"}, "the tree was not changed; restore from another snapshot"},
		{&snap.ManifestError{Path: "m", Err: errors.New("not a Rewind manifest (bad header line)")}, "pass what an earlier 'rewind-snap create --manifest' wrote (--parent DIR reads DIR/manifest)"},
		{snap.ErrNoArchive, "pass --out FILE.tar.gz; run 'rewind-snap create --help'"},
		{cmdline.WithHint(errors.New("x"), "carried"), "carried"},
		{errors.New("plain"), ""},
	} {
		if got := hint(fmt.Errorf("wrapped: %w", tc.err)); got != tc.want {
			t.Errorf("hint(%T %v) = %q, want %q", tc.err, tc.err, got, tc.want)
		}
	}
}
