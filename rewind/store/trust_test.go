package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
)

// A checkpoint's metadata is a store file: the transcript it names is forked or cut only
// inside its agent's session folders — unless the user named it when saving — and only when
// it is a regular file of the user's.
func TestCheckpointTranscriptOnlyWhereItMayBe(t *testing.T) {
	s := envProject(t)
	inside := agentTranscript(t, "ebb31263-7b6a-4122-bff9-6eef5ee5652d.jsonl")
	if err := os.WriteFile(inside, fixtureBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := save(t, s, SaveOptions{TranscriptPath: inside, Agent: "claude"})
	if cp.Transcript.Named {
		t.Error("a transcript in the agent's folders is recorded as named by the user")
	}
	elsewhere := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(elsewhere, fixtureBytes(t), 0o600)
	if named := save(t, s, SaveOptions{TranscriptPath: elsewhere, Agent: "claude"}); !named.Transcript.Named {
		t.Error("a transcript the caller named outside the agent's folders is not recorded as named")
	}

	key := filepath.Join(os.Getenv("HOME"), ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("PRIVATE\n"), 0o600)
	for _, c := range []struct {
		name  string
		path  string
		named bool
		want  string // "" when the restore may go ahead
	}{
		{"a private file, not named", key, false, "outside the agent's session folders"},
		{"traversal out of the folders", filepath.Dir(inside) + "/../../../.ssh/id_ed25519", false, "not a clean absolute path"},
		{"a folder, named", t.TempDir(), true, "not a regular file"},
		{"relative, named", "t.jsonl", true, "not an absolute path"},
		{"the agent's own", inside, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := cp.Metadata
			tr := *md.Transcript
			tr.OriginalPath, tr.Named = c.path, c.named
			md.Transcript = &tr
			if err := writeMetadata(cp.Dir, &md); err != nil {
				t.Fatal(err)
			}
			planted, err := s.Load(cp.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Restore(ctx, planted, RestoreOptions{Context: ContextFork, DryRun: true})
			var fe *jsonl.ForeignPathError
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("restore: %v", err)
			case c.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("restore: %v, want a ForeignPathError saying %q", err, c.want)
			}
		})
	}
}

// back without a transcript given, and without hooks, goes back in the one
// the newest checkpoint recorded: read from metadata, it is checked as any
// recorded path, and one that fails the check is not read.
func TestBackTakesOnlyARecordedTranscriptItMay(t *testing.T) {
	s := envProject(t)
	inside := agentTranscript(t, "ebb31263-7b6a-4122-bff9-6eef5ee5652d.jsonl")
	if err := os.WriteFile(inside, fixtureBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := save(t, s, SaveOptions{TranscriptPath: inside, Agent: "claude"})
	if res, err := s.Back(ctx, BackOptions{N: 1, DryRun: true}); err != nil || res.Cut == nil || res.Cut.Transcript != realPath(inside) {
		t.Fatalf("back: %+v, %v; want a cut of %s", res, err, inside)
	}
	key := filepath.Join(os.Getenv("HOME"), ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, fixtureBytes(t), 0o600)
	md := cp.Metadata
	tr := *md.Transcript
	tr.OriginalPath = key
	md.Transcript = &tr
	if err := writeMetadata(cp.Dir, &md); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Back(ctx, BackOptions{N: 1, DryRun: true}); !errors.Is(err, ErrNoTranscript) {
		t.Fatalf("back over a planted path: %+v, %v; want ErrNoTranscript", res, err)
	}
	if _, err := s.Back(ctx, BackOptions{Text: "what did you change", DryRun: true}); !errors.Is(err, ErrNoTranscript) {
		t.Fatalf("back :/TEXT over a planted path: %v; want ErrNoTranscript", err)
	}
}

// A store's id is what makes it the user's: a store.json naming an id the home does not hold
// is refused before anything else is read, says why, and 'rewind init --trust' adopts it.
func TestStoreOfAnotherHomeIsRefused(t *testing.T) {
	t.Parallel()
	s := project(t)
	save(t, s, SaveOptions{Description: "mine"})
	// Another machine's home: the same store, the registry gone.
	os.RemoveAll(layout.Registry(s.Homes.Rewind))
	_, err := s.Homes.Open(s.Project)
	var ue *UntrustedStoreError
	if !errors.As(err, &ue) || !ue.Unknown || !strings.Contains(ue.Fix, "rewind init --trust") {
		t.Fatalf("open: %v, want an unknown store with the way to adopt it", err)
	}
	if _, err := s.Homes.Trust(s.Project); err != nil {
		t.Fatalf("trust: %v", err)
	}
	if _, err := s.Homes.Open(s.Project); err != nil {
		t.Fatalf("open after trust: %v", err)
	}
	// A copy of the project: its store is the user's too, and gets an id of its own, so that
	// the two never take turns at one entry of the registry.
	copied := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", s.Project, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	c, err := s.Homes.Open(copied)
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	a, _ := readStoreRecord(filepath.Join(s.Dir, "store.json"))
	b, _ := readStoreRecord(filepath.Join(c.Dir, "store.json"))
	if a.ID == "" || a.ID == b.ID {
		t.Errorf("the copy's id %q, the original's %q", b.ID, a.ID)
	}
	if _, err := s.Homes.Open(s.Project); err != nil {
		t.Errorf("the original after the copy: %v", err)
	}
}
