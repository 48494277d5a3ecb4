//go:build unix

package reliability

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Deterministic reproducers of defects the crash runs found by chance, kept
// after their fix so they cannot come back.

// TestKilledRestoreCanBeUndone kills a restore the moment its first change
// reaches the tree: undo-restore must bring the tree back.
func TestKilledRestoreCanBeUndone(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), crashFiles, 1)
	// A file of C that A lacks: the restore deletes it.
	var gone string
	for p, v := range w.digests["C"] {
		if _, inA := w.digests["A"][p]; !inA && strings.HasPrefix(v, "file") {
			gone = filepath.Join(w.project, p)
			break
		}
	}
	killWhen(t, proc{name: "rewind", args: []string{"restore", w.ids["A"], "--code-only", "--yes", "-C", w.project}, env: w.env},
		func() bool { _, err := os.Lstat(gone); return err != nil })
	if treeDigest(t, w.project).sum() == w.sums["A"] {
		t.Skip("the restore finished before the kill; run again")
	}
	r := run(t, proc{name: "rewind", args: []string{"undo-restore", "-C", w.project}, env: w.env})
	if got := treeDigest(t, w.project); got.sum() != w.sums["C"] {
		t.Fatalf("undo-restore (exit %d: %s) does not bring back the tree a killed restore half changed: %s",
			r.code, strings.TrimSpace(r.stderr), w.digests["C"].diff(got))
	}
}

// TestStoreFromBeforeLayersStillSaves: a store made before layered
// snapshots (no layers/ folder) must keep working after an upgrade.
func TestStoreFromBeforeLayersStillSaves(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), 50, 1)
	os.RemoveAll(filepath.Join(w.project, ".agent/rewind/layers"))
	r := run(t, proc{name: "rewind", args: []string{"save", "after upgrade", "-C", w.project}, env: w.env})
	if r.code != 0 {
		t.Fatalf("rewind save on a store without layers/: exit %d: %s", r.code, strings.TrimSpace(r.stderr))
	}
}

// killWhen runs p and SIGKILLs it the moment cond holds (polled without
// pause), or lets it finish. It reports whether it killed.
func killWhen(t *testing.T, p proc, cond func() bool) bool {
	t.Helper()
	cmd := p.command(t.Context())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		select {
		case <-done:
			return false
		default:
		}
		if cond() {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return true
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	t.Fatalf("%s did not finish within a minute", p.name)
	return false
}

// layerFiles lists the names in the store's layers/ folder.
func layerFiles(w *world) []string {
	des, _ := os.ReadDir(filepath.Join(w.project, ".agent/rewind/layers"))
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

// TestKilledSaveLeavesNoTempFile kills a save while its layer archive is a
// temp file; the next save must not leave it behind.
func TestKilledSaveLeavesNoTempFile(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), crashFiles, 1)
	save := proc{name: "rewind", args: []string{"save", "--transcript", w.transcript, "x", "-C", w.project}, env: w.env}
	if !killWhen(t, save, func() bool {
		return slices.ContainsFunc(layerFiles(w), func(n string) bool { return strings.Contains(n, ".rewind-tmp-") })
	}) {
		t.Skip("the save finished before its temp file was seen; run again")
	}
	mustRun(t, save)
	for _, n := range layerFiles(w) {
		if strings.Contains(n, ".rewind-tmp-") {
			t.Errorf("layers/%s is still there after the next save", n)
		}
	}
}

// TestKilledSaveLeavesNoOrphanLayer kills a save the moment its layer
// archive is in place, before its checkpoint is published; the next save
// must not leave an archive no checkpoint reads.
func TestKilledSaveLeavesNoOrphanLayer(t *testing.T) {
	w := newWorld(t, filepath.Join(workDir(t), "w"), crashFiles, 1)
	before := len(slices.DeleteFunc(layerFiles(w), func(n string) bool { return strings.Contains(n, ".rewind-tmp-") }))
	save := proc{name: "rewind", args: []string{"save", "--transcript", w.transcript, "x", "-C", w.project}, env: w.env}
	killed := killWhen(t, save, func() bool {
		return len(slices.DeleteFunc(layerFiles(w), func(n string) bool { return strings.Contains(n, ".rewind-tmp-") })) > before
	})
	if !killed || len(checkpoints(t, w.project, w.env)) != 2 {
		t.Skip("the save published its checkpoint before the kill; run again")
	}
	mustRun(t, save)
	if o := orphanLayers(t, w); len(o) > 0 {
		t.Errorf("layer archives no checkpoint reads, after the next save: %v", rel(w.root, o))
	}
}
