//go:build unix

package reliability

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSparseFilesStaySparse: sparse files of random layouts (data runs
// between holes, ending in a hole or in data) come back byte for byte and
// still sparse from rewind restore and undo-restore.
func TestSparseFilesStaySparse(t *testing.T) {
	runs, failures := 0, 0
	for round := range sparseRounds {
		runs++
		rng := rand.New(rand.NewPCG(uint64(round), 8))
		root := workDir(t)
		home, project := filepath.Join(root, "home"), filepath.Join(root, "p")
		env := []string{"HOME=" + home}
		writeFile(t, filepath.Join(project, "a.txt"), []byte("a"), 0o644)
		var errs []string
		rw := func(args ...string) {
			if r := run(t, proc{name: "rewind", args: append(args, "-C", project), env: env}); r.code != 0 {
				errs = append(errs, fmt.Sprintf("rewind %s: exit %d: %s", strings.Join(args, " "), r.code, strings.TrimSpace(r.stderr)))
			}
		}
		rw("init", "--mode", "project")
		rw("save", "small")
		small := treeDigest(t, project)
		var files []string
		var data int64
		for i := range 3 {
			p := filepath.Join(project, fmt.Sprintf("img%d", i))
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			size := int64(8+rng.IntN(56)) << 20
			for range 1 + rng.IntN(6) {
				b := make([]byte, 1+rng.IntN(64<<10))
				for j := range b {
					b[j] = byte(1 + rng.IntN(255))
				}
				f.WriteAt(b, rng.Int64N(size-int64(len(b))))
				data += int64(len(b)) + 2*4096
			}
			if rng.IntN(2) == 0 {
				f.WriteAt([]byte("end"), size-3)
			}
			f.Truncate(size)
			f.Close()
			files = append(files, p)
		}
		if allocated(files...) > data+1<<20 {
			t.Skip("this file system does not keep holes")
		}
		rw("save", "sparse")
		sparse := treeDigest(t, project)
		ids := checkpoints(t, project, env)
		check := func(how string, want digest) {
			if got := treeDigest(t, project); got.sum() != want.sum() {
				errs = append(errs, how+" is not exact: "+want.diff(got))
			}
			if a := allocated(files...); a > data+1<<20 {
				errs = append(errs, fmt.Sprintf("after %s the files take %d bytes on disk, for %d bytes of data: holes were filled", how, a, data))
			}
		}
		rw("restore", ids[1], "--code-only", "--yes")
		check("the restore of the tree before them", small)
		rw("undo-restore")
		check("undo-restore (from the backup)", sparse)
		for _, p := range files {
			os.Remove(p)
		}
		rw("restore", ids[0], "--code-only", "--yes")
		check("the restore of their checkpoint", sparse)
		if len(errs) > 0 {
			failures++
			t.Errorf("round %d: %s", round, strings.Join(errs, "\n\t"))
		}
	}
	figures(t, "sparse-files", runs, 3*runs, failures)
}

// allocated is the disk space files take together.
func allocated(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			n += st.Blocks * 512
		}
	}
	return n
}
