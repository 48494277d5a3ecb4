package store

import (
	"errors"
	"testing"

	"rewind.dev/hookd"
)

// TestResolveWords: every name a command takes resolves by one rule (Resolve): @N, :/TEXT (the
// newest mention, never a restore backup), an id or unique id prefix, then a
// pin label, then a description, whole.
func TestResolveWords(t *testing.T) {
	s := project(t)
	prompt := func(text string) *Checkpoint {
		return save(t, s, SaveOptions{Trigger: Trigger{Kind: TriggerHook, Event: hookd.EventPrompt, Prompt: text}})
	}
	a := prompt("Add the cache\nto the parser")
	b := save(t, s, SaveOptions{Description: "cache done", Pin: "release"})
	c := prompt("rename things")
	d := save(t, s, SaveOptions{Description: "release"}) // a description equal to b's label
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
