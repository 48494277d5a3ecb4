package snap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCreateAsTheWalkGoesIsTheWholeTree snapshots random trees as the walk
// goes (createFull), in batches of a few entries and of the default size,
// and from the whole tree walked first (createWalked): the two archives
// must be the same bytes, the manifests the same lines and figures, and
// the manifest written as the walk went must restore the tree.
func TestCreateAsTheWalkGoesIsTheWholeTree(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	for _, batch := range []int{7, 1 << 14} {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("batch=%d,seed=%d", batch, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				dir, out := t.TempDir(), t.TempDir()
				genTree(t, rng, dir, 120)
				want, err := createWalked(context.Background(), dir, CreateOptions{Out: filepath.Join(out, "a.tar.gz")})
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteManifestFile(filepath.Join(out, "a.m"), want.Manifest, nil); err != nil {
					t.Fatal(err)
				}
				got, err := createFull(context.Background(), dir, WalkOptions{}, CreateOptions{Out: filepath.Join(out, "b.tar.gz"), fullBatch: batch}, filepath.Join(out, "b.m"))
				if err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(filepath.Join(out, "a.tar.gz"))
				b, _ := os.ReadFile(filepath.Join(out, "b.tar.gz"))
				if !bytes.Equal(a, b) {
					t.Fatalf("the archives differ (%d and %d bytes)", len(a), len(b))
				}
				fw, fg := *want, *got
				fw.Manifest, fg.Manifest, fw.Archive, fg.Archive = nil, nil, "", ""
				if !reflect.DeepEqual(fw, fg) {
					t.Fatalf("createFull's result\n%+v\nCreate's\n%+v", fg, fw)
				}
				ma, _ := os.ReadFile(filepath.Join(out, "a.m"))
				mb, _ := os.ReadFile(filepath.Join(out, "b.m"))
				ha, la, _ := strings.Cut(string(ma), "\n")
				hb, lb, _ := strings.Cut(string(mb), "\n")
				if la != lb {
					t.Fatalf("createFull's lines\n%s\nCreate's\n%s", lb, la)
				}
				ha = strings.Replace(ha, fmt.Sprint(want.Manifest.Header.ScanStarted), "T", 1)
				hb = strings.Replace(hb, fmt.Sprint(got.Manifest.Header.ScanStarted), "T", 1)
				hb = strings.Replace(hb, `"archive":"b.tar.gz"`, `"archive":"a.tar.gz"`, 1)
				if ha != hb {
					t.Fatalf("createFull's header\n%s\nCreate's\n%s", hb, ha)
				}
				m, err := OpenManifest(filepath.Join(out, "b.m"))
				if err != nil {
					t.Fatal(err)
				}
				to := t.TempDir()
				if _, err := Restore(context.Background(), to, "", RestoreOptions{Manifest: m}); err != nil {
					t.Fatal(err)
				}
				wantState, _ := splitIgnored(state(t, dir))
				gotState, _ := splitIgnored(state(t, to))
				if d := diffStates(wantState, gotState); d != "" {
					t.Fatalf("restore of createFull's snapshot differs:\n%s", d)
				}
				if names := ls(t, out); !reflect.DeepEqual(names, []string{"a.m", "a.tar.gz", "b.m", "b.tar.gz"}) {
					t.Fatalf("the folder holds %q", names)
				}
			})
		}
	}
}

// TestCreateAsTheWalkGoesRefusesPastALimit: a tree past a limit is
// refused, and nothing is left of the archive or the manifest, nor of the
// lines kept on the way.
func TestCreateAsTheWalkGoesRefusesPastALimit(t *testing.T) {
	t.Parallel()
	gitEnv(t)
	dir, out := t.TempDir(), t.TempDir()
	genTree(t, rand.New(rand.NewSource(1)), dir, 60)
	for _, l := range []Limits{{MaxEntries: 20}, {MaxBytes: 100}} {
		_, err := createFull(context.Background(), dir, WalkOptions{}, CreateOptions{Out: filepath.Join(out, "s.tar.gz"), Limits: l, fullBatch: 5}, filepath.Join(out, "m"))
		var le *LimitError
		if !errors.As(err, &le) {
			t.Fatalf("limits %+v: %v, want a LimitError", l, err)
		}
		if names := ls(t, out); len(names) != 0 {
			t.Fatalf("limits %+v: left %q", l, names)
		}
	}
}
