package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/hookd"
)

// TestResolveWords: every name a command takes resolves by one rule (Resolve): @N, :/TEXT (the
// newest mention, never a restore backup), an id or unique id prefix, then a
// pin label, then a description, whole.
func TestResolveWords(t *testing.T) {
	t.Parallel()
	s := project(t)
	prompt := func(text string) *Checkpoint {
		return save(t, s, SaveOptions{Trigger: Trigger{Kind: TriggerHook, Event: hookd.EventPrompt, Prompt: text}})
	}
	a := prompt("Add the cache\nto the parser")
	b := save(t, s, SaveOptions{Description: "cache done", Pin: "release"})
	c := prompt("rename things")
	d := save(t, s, SaveOptions{Description: "release"}) // a description equal to b's label
	write(t, s.Project, "changed.txt", "so that the restore has something to do")
	if _, err := s.Restore(ctx, a, RestoreOptions{Code: true}); err != nil {
		t.Fatal(err)
	}
	backup, err := s.Newest() // its description: "before restore to <a>"
	if err != nil || !backup.Backup() {
		t.Fatalf("newest %v, %v: want the restore's backup", backup, err)
	}
	for _, tc := range []struct {
		name string
		want *Checkpoint
	}{
		{"@0", d},
		{"@3", a},
		{":/add THE cache to", a}, // any case; a line break counts as a space
		{":/cache", b},            // the newest mention: a description
		{":/rename", c},
		{"release", b}, // a pin label before a description
		{"cache done", b},
		{a.ID, a},
		{backup.ID, backup},
	} {
		got, err := s.Resolve(tc.name)
		if err != nil || got.ID != tc.want.ID {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tc.name, got, err, tc.want.ID)
		}
	}
	for _, name := range []string{":/before restore", "before restore to " + a.ID, "cache", "@5"} {
		var nocp *NoCheckpointError
		if _, err := s.Resolve(name); !errors.As(err, &nocp) {
			t.Errorf("Resolve(%q) = %v, want a NoCheckpointError (restore backups are named by id)", name, err)
		}
	}
}

// TestBackByWordsInAgent: back :/TEXT run by the agent counts as back N does there — the
// running prompt is the newest, written or not — and finds it by its words too.
func TestBackByWordsInAgent(t *testing.T) {
	t.Parallel()
	data := fixtureBytes(t)
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprint("written=", written), func(t *testing.T) {
			s := project(t)
			tp := filepath.Join(t.TempDir(), "1cbbde27-5fcc-4652-9047-4142f5f1912c.jsonl")
			os.WriteFile(tp, data, 0o644)
			ts := turns(t, tp) // oldest first
			last := ts[len(ts)-1]
			os.WriteFile(tp, data[:last.PromptOffset], 0o644)
			save(t, s, SaveOptions{TranscriptPath: tp, Trigger: Trigger{Kind: "hook", Event: "UserPromptSubmit", Prompt: last.Text}})
			if written {
				os.WriteFile(tp, data, 0o644)
			}
			for i, tu := range ts {
				res, err := s.Back(ctx, BackOptions{Text: strings.ToUpper(tu.Text), TranscriptPath: tp, InAgent: true, DryRun: true})
				if want := len(ts) - i; err != nil || res.Cut.N != want || res.Cut.Before != tu.Text {
					t.Errorf("back :/%s: %+v, %v; want the %d most recent prompt", tu.Text, res, err, want)
				}
			}
			_, err := s.Back(ctx, BackOptions{Text: "no such words", TranscriptPath: tp, InAgent: true, DryRun: true})
			var np *NoPromptError
			if !errors.As(err, &np) || np.Searched != len(ts) {
				t.Errorf("back :/no such words: %v, want a NoPromptError having searched %d", err, len(ts))
			}
		})
	}
}
