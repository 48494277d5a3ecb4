package cli

import (
	"strings"
	"testing"

	"rewind.dev/rewind/store"
)

// TestWriteRestoreFailed: an undo-restore or redo that failed does not say
// it undid or redid anything; it names the backup that holds the tree as it
// was before.
func TestWriteRestoreFailed(t *testing.T) {
	for _, kind := range []store.RestoreKind{store.KindUndoRestore, store.KindRedo} {
		r := &store.UndoRestoreResult{Type: "restore", Kind: kind, Checkpoint: "c", TreeChange: store.TreeChange{Backup: "b"}, Entry: "e", What: "restore to c"}
		var out strings.Builder
		writeUndoRestore(&out, r, true)
		if got, want := out.String(), "Backup checkpoint b holds the tree as it was before.\n"; got != want {
			t.Errorf("%s that failed: %q, want %q", kind, got, want)
		}
	}
}
