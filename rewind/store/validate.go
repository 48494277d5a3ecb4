package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"rewind.dev/internal/layout"
	"rewind.dev/snap"
)

// Problem is one thing validate found wrong.
type Problem struct {
	Type  string `json:"type"` // "problem"
	What  string `json:"what"` // the thing: a file, a checkpoint id
	Issue string `json:"issue"`
}

// Validate checks the configuration files and every checkpoint end to end,
// by the checks every restore makes (see verify.go), reading every file
// whole again: metadata and its checksum, the manifest chain, every file's
// content in the archive that holds it (content hashes, gzip checksums; each
// archive is read once per run of checkpoints, see below), the tree hash against the metadata, and the
// transcript chain against its cursor. It returns every problem found, and
// records what it read in the verified file.
func (s *Store) Validate(ctx context.Context) ([]Problem, int, error) {
	var probs []Problem
	add := func(what, format string, args ...any) {
		probs = append(probs, Problem{Type: "problem", What: what, Issue: fmt.Sprintf(format, args...)})
	}
	if _, err := s.Config(); err != nil {
		add("config", "%v", err)
	}
	if _, err := s.Session(); err != nil {
		add(filepath.Join(s.Dir, "session.json"), "%v", err)
	}
	if _, err := s.History(); err != nil {
		add(filepath.Join(s.Dir, "restore-history.json"), "%v", err)
	}
	// Leftovers of a killed run in staging/ are not a problem: no listed
	// checkpoint depends on them, and the next save removes them.
	ids, err := s.IDs()
	if err != nil {
		return nil, 0, err
	}
	// Reading the archives is most of the work: they are read in id order
	// (the order the checks need them) beside the checks.
	var layers []string
	if des, err := os.ReadDir(s.layersDir()); err == nil {
		for _, de := range des {
			if id, ok := strings.CutSuffix(de.Name(), ".tar.gz"); ok && isID(id) {
				layers = append(layers, de.Name())
			}
		}
		slices.SortFunc(layers, func(a, b string) int {
			return CompareIDs(strings.TrimSuffix(a, ".tar.gz"), strings.TrimSuffix(b, ".tar.gz"))
		})
	}
	p := progressFrom(ctx)
	p.Begin()
	p.Expect(int64(len(ids)), 0)
	// A large store is checked in as many runs of consecutive checkpoints
	// as there are cores, each with its own checker and its own archives
	// read ahead: the checks per checkpoint (metadata, the manifest laid
	// over its parent's, tree hashes, the transcript's hashes) cost as much
	// as the reading, and on one core they were the bottleneck. Each run
	// starts cold, reading the manifest and transcript chains its first
	// checkpoint builds on, and the archives of that chain, again.
	parts := min(runtime.GOMAXPROCS(0), len(ids)/minValidatePart)
	if parts < 2 {
		parts = 1
	}
	ks := make([]*checker, parts)
	found := make([][]Problem, parts)
	errs := make([]error, parts)
	ks[0] = s.newChecker(ctx, true)
	bounds := []int{0, len(ids)}
	if parts > 1 {
		bounds = splitByWork(ids, parts, s.checkWork(ids, ks[0].files))
	}
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := bounds[i], bounds[i+1]
		var mine []string // the layers written from ids[lo] up to ids[hi]
		for _, l := range layers {
			id := strings.TrimSuffix(l, ".tar.gz")
			if (i == 0 || CompareIDs(id, ids[lo]) >= 0) && (i == parts-1 || CompareIDs(id, ids[hi]) < 0) {
				mine = append(mine, filepath.Join(s.layersDir(), l))
			}
		}
		if i > 0 {
			ks[i] = s.newCheckerFrom(ctx, true, maps.Clone(ks[0].files)) // (the verified file read once)
		}
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
	k.save()
	for i := range parts {
		probs = append(probs, found[i]...)
		if errs[i] != nil {
			return probs, len(ids), errs[i]
		}
	}
	return probs, len(ids), nil
}

// checkWork estimates what checking each of ids costs, in bytes: a fixed
// cost per checkpoint (its metadata, manifest, tree hash and transcript
// tail) and the compressed bytes of its transcript capture and archive,
// which are inflated whole. A transcript's captures start again whole now
// and then, each larger than the last, so the newer checkpoints of a
// store cost more. Sizes come from the verified file's records, else a
// stat.
func (s *Store) checkWork(ids []string, records map[string]verifiedFile) []int64 {
	const perCheckpoint = 8 << 10 // measured (scripts/bench store): as much as inflating 8 KiB
	size := func(key string) int64 {
		if r, ok := records[key]; ok {
			return r.Size
		}
		if fi, err := os.Stat(s.path(key)); err == nil {
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

// minValidatePart is the fewest checkpoints validate checks in a run of
// their own: below it, what a run reads again to start costs more than a
// core saves.
var minValidatePart = 1024 // (a variable for the tests)

// validate checks the checkpoints ids, reading ahead the archives layers.
func (k *checker) validate(ids, layers []string, p *Progress) ([]Problem, error) {
	var probs []Problem
	stop := k.v.ReadAhead(k.ctx, layers, k.s.Limits().Or(snap.DefaultLimits))
	defer stop()
	for _, id := range ids {
		p.Add(1, 0)
		c, err := k.load(id)
		if err != nil {
			issue := fmt.Sprintf("not a checkpoint: %v", err)
			if u := k.s.notYours(id, false); u != nil && errors.Is(err, fs.ErrPermission) {
				issue = fmt.Sprintf("not readable: it belongs to %s, not to you; %s gives it back", u.whose(), u.Fix)
			}
			probs = append(probs, Problem{Type: "problem", What: id, Issue: issue})
			continue
		}
		if err := k.check(c, partAll); err != nil {
			if k.ctx.Err() != nil {
				return probs, k.ctx.Err()
			}
			probs = append(probs, Problem{Type: "problem", What: id, Issue: fmt.Sprintf("%v", errors.Unwrap(err))})
		}
	}
	return probs, nil
}
