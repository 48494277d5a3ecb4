package snap

import (
	"context"
	"path/filepath"
)

// DiffManifest lists the changes between the snapshot that m describes and
// the tree at root, without opening an archive: files whose metadata is
// unchanged (and was not racy at scan time) are taken as unchanged, the
// others are hashed.
func DiffManifest(ctx context.Context, root string, m *Manifest, opts WalkOptions) ([]Change, error) {
	tree, err := Walk(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	var out []Change
	add := func(op Op, e *Entry) {
		out = append(out, Change{Type: "change", Op: op, Path: e.Path, Kind: e.Kind.String()})
	}
	cur, old := tree.Entries, m.Entries
	state := stateExcludes(root)
	for _, u := range append(tree.Unreadable, m.Header.Unreadable...) {
		state[u] = true // what could not be read, then or now, is not compared
	}
	i, j := 0, 0
	for i < len(cur) || j < len(old) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var c int
		switch {
		case i == len(cur):
			c = 1
		case j == len(old):
			c = -1
		default:
			c = comparePaths(cur[i].Path, old[j].Path)
		}
		switch {
		case c < 0:
			if !underAny(cur[i].Path, state) {
				add(OpAdded, &cur[i])
			}
			i++
		case c > 0:
			if !underAny(old[j].Path, state) { // left out of the walk, and never compared
				add(OpDeleted, &old[j])
			}
			j++
		default:
			e, o := &cur[i], &old[j]
			i, j = i+1, j+1
			switch {
			case e.Kind != o.Kind || e.Link != o.Link:
				add(OpModified, e)
			case e.Kind == KindFile && !(e.sameStat(o) && !m.racy(o)):
				if e.Size != o.Size {
					add(OpModified, e)
					continue
				}
				h, err := hashFile(ctx, filepath.Join(root, filepath.FromSlash(e.Path)))
				if err != nil && (unreadableErr(err) || changed(err)) {
					continue // unreadable, or changing under the diff: not compared
				}
				if err != nil {
					return nil, err
				}
				if h != o.Hash {
					add(OpModified, e)
				} else if e.Mode != o.Mode {
					add(OpMode, e)
				}
			case e.Mode != o.Mode:
				add(OpMode, e)
			}
		}
	}
	return out, nil
}
