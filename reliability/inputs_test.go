//go:build unix

package reliability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapInputsInTheRoot keeps rewind-snap's own files inside the tree
// they are taken of — a chain of layers in snaps/, full archives beside
// it — over a tree holding files named like whiteouts, and restores random
// snapshots from their archives (full ones) and manifests (any): each
// restore brings back its tree exactly, keeps every file it reads from, and
// a layer's archive alone is refused by its mark.
func TestSnapInputsInTheRoot(t *testing.T) {
	var root string
	snap := func(args ...string) result {
		return run(t, proc{name: "rewind-snap", args: append(args, "--root", root), dir: root})
	}
	type saved struct {
		dir  string // relative to root: its manifest and snapshot.tar.gz
		full bool
		tree digest
	}
	var snaps []saved
	rng := rand.New(rand.NewPCG(4, 4))
	runs, failures := 0, 0
	for i := range inputRounds {
		// Each snapshot holds the ones already in the tree, so the tree
		// starts afresh every few rounds, before they grow large.
		if i%6 == 0 {
			root, snaps = filepath.Join(workDir(t), "p"), nil
			genTree(t, root, 80, uint64(i))
			for p, body := range map[string]string{".wh.gone": "", "d01/.wh..wh..opq": "", "d02/.wh.x": "mine\n"} {
				writeFile(t, filepath.Join(root, p), []byte(body), 0o644)
			}
		}
		s := saved{dir: fmt.Sprintf("snaps/%02d", i)}
		os.MkdirAll(filepath.Join(root, s.dir), 0o755)
		args := []string{"create", "--out", filepath.Join(root, s.dir, "snapshot.tar.gz"), "--manifest", filepath.Join(root, s.dir, "manifest")}
		if i%6%4 != 0 {
			args = append(args, "--parent", filepath.Join(root, snaps[len(snaps)-1].dir))
		}
		r := snap(args...)
		if r.code != 0 {
			t.Fatalf("rewind-snap %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		s.full = strings.Contains(r.stdout, `"layer":false`) // past its depth or size, a chain starts afresh
		s.tree = withoutState(treeDigest(t, root), []string{"snaps"})
		if s.full {
			// The snapshots before a full one are read by none after it. Each
			// snapshot holds the ones in the tree before it: kept, they would
			// grow without end.
			for _, old := range snaps {
				os.RemoveAll(filepath.Join(root, old.dir))
			}
			snaps = nil
		}
		snaps = append(snaps, s)
		aside := filepath.Join(filepath.Dir(root), "snaps-aside") // not for mutateTree to edit
		os.Rename(filepath.Join(root, "snaps"), aside)
		mutateTree(t, root, uint64(i+1))
		os.Rename(aside, filepath.Join(root, "snaps"))

		runs++
		var errs []string
		fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
		k := rng.IntN(len(snaps))
		pick := snaps[k]
		from := []string{"--manifest", filepath.Join(root, pick.dir, "manifest")}
		var inputs []string // what the restore reads: the chain down to its full snapshot
		for j := k; j >= 0; j-- {
			inputs = append(inputs, snaps[j].dir+"/manifest", snaps[j].dir+"/snapshot.tar.gz")
			if snaps[j].full {
				break
			}
		}
		if pick.full && rng.IntN(2) == 0 {
			from, inputs = []string{"--from", filepath.Join(root, pick.dir, "snapshot.tar.gz")}, []string{pick.dir + "/snapshot.tar.gz"}
		}
		keep := filepath.Join(filepath.Dir(root), "snaps-copy")
		copyTree(t, filepath.Join(root, "snaps"), keep)
		before := map[string]string{}
		for _, p := range inputs {
			b, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			before[p] = string(b)
		}
		if r := snap(append([]string{"restore"}, from...)...); r.code != 0 {
			fail("restore %s: exit %d: %s", strings.Join(from, " "), r.code, strings.TrimSpace(r.stderr))
		}
		for p, want := range before {
			if b, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(b) != want {
				fail("restore %s deleted or wrote %s, which it reads (%v)", strings.Join(from, " "), p, err)
			}
		}
		if got := withoutState(treeDigest(t, root), []string{"snaps"}); got.sum() != pick.tree.sum() {
			fail("restore %s did not bring its tree back: %s", strings.Join(from, " "), pick.tree.diff(got))
		}
		if !pick.full {
			if r := snap("restore", "--from", filepath.Join(root, pick.dir, "snapshot.tar.gz"), "--dry-run"); r.code == 0 || !strings.Contains(r.stderr, "layer") {
				fail("restore --from a layer's archive: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
			}
		}
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", i, strings.Join(errs, "\n\t"))
		}
		// The newer snapshots an exact restore of an older tree removed come
		// back for the next rounds.
		copyTree(t, keep, filepath.Join(root, "snaps"))
	}
	figures(t, "snap-inputs-in-the-root", runs, runs, failures)
}
