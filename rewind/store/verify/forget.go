package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"rewind.dev/internal/layout"
)

// Forget drops from the verified file what it says of the folders
// of the checkpoints removed, of files gone from the folders of survivors
// it rewrote, and of archives in layers/ gone with them, given in swept (gc
// prunes it by stat'ing every file it names, which grows with the store;
// a save reads it whole, so it must not grow with what retention deleted).
func Forget(st Store, removed, swept []string) {
	if len(removed) == 0 {
		return
	}
	gone := map[string]bool{}
	for _, id := range removed {
		gone[id] = true
	}
	k := New(context.Background(), st)
	touched := map[string]bool{} // survivors gc rewrote: their files still there stay
	for _, a := range swept {
		if key := k.key(a); strings.HasPrefix(key, layout.CheckpointsDir+"/") {
			touched[strings.TrimPrefix(key, layout.CheckpointsDir+"/")] = true
		} else if _, ok := k.files[key]; ok {
			delete(k.files, key)
			k.dirty = true
		}
	}
	for key := range k.files {
		rest, ok := strings.CutPrefix(key, layout.CheckpointsDir+"/")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, "/")
		if gone[id] || touched[id] && !exists(filepath.Join(st.Dir, filepath.FromSlash(key))) {
			delete(k.files, key)
			k.dirty = true
		}
	}
	k.Save()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
