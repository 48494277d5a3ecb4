package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"rewind.dev/internal/layout"
	"rewind.dev/internal/progress"
	"rewind.dev/rewind/store/record"
	"rewind.dev/snap"
)

// Problem is one thing validate found wrong.
type Problem struct {
	Type  string `json:"type"` // "problem"
	What  string `json:"what"` // the thing: a file, a checkpoint id
	Issue string `json:"issue"`
}

// Checkpoints checks the checkpoints ids (st's, oldest first) end to end,
// by the checks every restore makes, reading every file whole again:
// metadata and its checksum, the manifest chain, every file's content in
// the archive that holds it (content hashes, gzip checksums; each archive
// is read once per run of checkpoints, see below), the tree hash against
// the metadata, and the transcript chain against its cursor. It returns
// every problem found, and records what it read in the verified file.
// minPart is the fewest checkpoints checked in a run of their own: below
// it, what a run reads again to start costs more than a core saves. runs
// is the most runs; zero is one per core (GOMAXPROCS).
func Checkpoints(ctx context.Context, st Store, ids []string, minPart, runs int) ([]Problem, error) {
	// Reading the archives is most of the work: they are read in id order
	// (the order the checks need them) beside the checks.
	layers := st.layers()
	p := progress.From(ctx, progress.Checkpoints)
	p.Begin()
	p.Expect(int64(len(ids)), 0)
	// A large store is checked in as many runs of consecutive checkpoints
	// as there are cores, each with its own checker and its own archives
	// read ahead: the checks per checkpoint (metadata, the manifest laid
	// over its parent's, tree hashes, the transcript's hashes) cost as much
	// as the reading, and on one core they were the bottleneck. Each run
	// starts cold, reading the manifest and transcript chains its first
	// checkpoint builds on, and the archives of that chain, again.
	parts := min(cmp.Or(runs, runtime.GOMAXPROCS(0)), len(ids)/minPart)
	if parts < 2 {
		parts = 1
	}
	ks := make([]*Checker, parts)
	found := make([][]Problem, parts)
	errs := make([]error, parts)
	ks[0] = newChecker(ctx, st, true, st.readVerified())
	bounds := []int{0, len(ids)}
	if parts > 1 {
		bounds = splitByWork(ids, parts, st.checkWork(ids, ks[0].files))
	}
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := bounds[i], bounds[i+1]
		if i > 0 {
			ks[i] = newChecker(ctx, st, true, maps.Clone(ks[0].files)) // (the verified file read once)
		}
		mine := st.layersOf(layers, i == 0, i == parts-1, ids, lo, hi)
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i], errs[i] = ks[i].validate(ids[lo:hi], mine, p)
		}()
	}
	wg.Wait()
	k := ks[0]
	for _, o := range ks[1:] {
		k.merge(o)
	}
	k.Save()
	var probs []Problem
	for i := range parts {
		probs = append(probs, found[i]...)
		if errs[i] != nil {
			return probs, errs[i]
		}
	}
	return probs, nil
}

// layers lists the archives in st's layers/ that Rewind names
// (<id>.tar.gz), oldest first.
func (st Store) layers() []string {
	des, err := os.ReadDir(filepath.Join(st.Dir, layout.LayersDir))
	if err != nil {
		return nil
	}
	var layers []string
	for _, de := range des {
		if id, ok := strings.CutSuffix(de.Name(), ".tar.gz"); ok && record.IsID(id) {
			layers = append(layers, de.Name())
		}
	}
	slices.SortFunc(layers, func(a, b string) int {
		return record.CompareIDs(strings.TrimSuffix(a, ".tar.gz"), strings.TrimSuffix(b, ".tar.gz"))
	})
	return layers
}

// layersOf is the paths of the layers written from ids[lo] up to ids[hi]
// (from the first when first, to the last when last).
func (st Store) layersOf(layers []string, first, last bool, ids []string, lo, hi int) []string {
	var mine []string
	for _, l := range layers {
		id := strings.TrimSuffix(l, ".tar.gz")
		if (first || record.CompareIDs(id, ids[lo]) >= 0) && (last || record.CompareIDs(id, ids[hi]) < 0) {
			mine = append(mine, filepath.Join(st.Dir, layout.LayersDir, l))
		}
	}
	return mine
}

// checkWork estimates what checking each of ids costs, in bytes: a fixed
// cost per checkpoint (its metadata, manifest, tree hash and transcript
// tail) and the compressed bytes of its transcript capture and archive,
// which are inflated whole. A transcript's captures start again whole now
// and then, each larger than the last, so the newer checkpoints of a
// store cost more. Sizes come from the verified file's records, else a
// stat.
func (st Store) checkWork(ids []string, records map[string]verifiedFile) []int64 {
	const perCheckpoint = 8 << 10 // measured (scripts/bench store): as much as inflating 8 KiB
	size := func(key string) int64 {
		if r, ok := records[key]; ok {
			return r.Size
		}
		if fi, err := os.Stat(st.Dir + "/" + key); err == nil {
			return fi.Size()
		}
		return 0
	}
	w := make([]int64, len(ids))
	for i, id := range ids {
		w[i] = perCheckpoint +
			size(layout.CheckpointsDir+"/"+id+"/"+layout.TranscriptFile) +
			size(layout.LayersDir+"/"+id+".tar.gz")
	}
	return w
}

// splitByWork cuts ids into parts runs of consecutive checkpoints of about
// equal work: bounds[i] to bounds[i+1] is run i.
func splitByWork(ids []string, parts int, work []int64) []int {
	var total int64
	for _, w := range work {
		total += w
	}
	bounds := make([]int, 0, parts+1)
	bounds = append(bounds, 0)
	var sum int64
	for i, w := range work {
		// A run ends before the checkpoint whose middle lies past its share.
		if len(bounds) < parts && sum+w/2 >= total*int64(len(bounds))/int64(parts) && i > bounds[len(bounds)-1] {
			bounds = append(bounds, i)
		}
		sum += w
	}
	for len(bounds) < parts+1 {
		bounds = append(bounds, len(ids))
	}
	return bounds
}

// validate checks the checkpoints ids, reading ahead the archives layers.
func (k *Checker) validate(ids, layers []string, p *progress.Counter) ([]Problem, error) {
	var probs []Problem
	stop := k.v.ReadAhead(k.ctx, layers, k.st.Limits().Or(snap.DefaultLimits))
	defer stop()
	for _, id := range ids {
		p.Add(1, 0)
		c, err := k.load(id)
		if err != nil {
			issue := fmt.Sprintf("not a checkpoint: %v", err)
			if why := k.st.Unreadable(id, err); why != "" {
				issue = why
			}
			probs = append(probs, Problem{Type: "problem", What: id, Issue: issue})
			continue
		}
		if err := k.Check(c, All); err != nil {
			if k.ctx.Err() != nil {
				return probs, k.ctx.Err()
			}
			probs = append(probs, Problem{Type: "problem", What: id, Issue: fmt.Sprintf("%v", errors.Unwrap(err))})
		}
	}
	return probs, nil
}
