package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/hookd"
)

// prompt takes the checkpoint a prompt's hook takes.
func prompt(t *testing.T, s *Store, text string) *Checkpoint {
	t.Helper()
	return save(t, s, SaveOptions{Trigger: Trigger{Kind: TriggerHook, Event: hookd.EventPrompt, Prompt: text}})
}

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix + " " + string(rune('a'+i)) + "\n")
	}
	return b.String()
}

// The test: three prompts edit different parts of one file and
// other files; reverting the middle one keeps the first's and the third's
// edits exactly.
func TestRevertMiddlePrompt(t *testing.T) {
	t.Parallel()
	s := project(t)
	dir := s.Project
	top, mid, end := lines(5, "top"), lines(5, "mid"), lines(5, "end")
	write(t, dir, "app.go", top+mid+end)
	write(t, dir, "old.txt", "the second prompt deletes me\n")
	prompt(t, s, "first")
	write(t, dir, "app.go", strings.Replace(top, "top a", "top A (first)", 1)+mid+end)
	write(t, dir, "first.txt", "first\n")
	second := prompt(t, s, "second")
	write(t, dir, "app.go", strings.Replace(top, "top a", "top A (first)", 1)+strings.Replace(mid, "mid c", "mid C (second)", 1)+end)
	write(t, dir, "second.txt", "added by the second\n")
	write(t, dir, "sub/second.txt", "in a folder the second made\n")
	os.Remove(filepath.Join(dir, "old.txt"))
	prompt(t, s, "third")
	want := strings.Replace(top, "top a", "top A (first)", 1) + mid + strings.Replace(end, "end e", "end E (third)", 1)
	write(t, dir, "app.go", strings.Replace(top, "top a", "top A (first)", 1)+strings.Replace(mid, "mid c", "mid C (second)", 1)+strings.Replace(end, "end e", "end E (third)", 1))
	write(t, dir, "third.txt", "third\n")

	dry, err := s.Revert(ctx, second, RevertOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(dry.Plan); got != "app.go:merge old.txt:revert second.txt:revert sub:revert sub/second.txt:revert" {
		t.Errorf("dry run plan: %s", got)
	}
	if read(t, filepath.Join(dir, "second.txt")) != "added by the second\n" {
		t.Fatal("a dry run changed the tree")
	}
	res, err := s.Revert(ctx, second, RevertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backup == "" || res.Kind != KindRevert || res.Plan.To == "" || res.Plan.Prompt != "second" {
		t.Errorf("result: %+v %+v", res, res.Plan)
	}
	if got := read(t, filepath.Join(dir, "app.go")); got != want {
		t.Errorf("app.go:\n%s\nwant:\n%s", got, want)
	}
	for name, content := range map[string]string{"old.txt": "the second prompt deletes me\n", "first.txt": "first\n", "third.txt": "third\n"} {
		if got := read(t, filepath.Join(dir, name)); got != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	for _, gone := range []string{"second.txt", "sub"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, added by the second prompt, is still there (%v)", gone, err)
		}
	}
	// undo-restore brings the tree back as it was before the revert.
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "second.txt")); got != "added by the second\n" || !strings.Contains(read(t, filepath.Join(dir, "app.go")), "mid C (second)") {
		t.Errorf("undo-restore did not bring the tree back: second.txt %q", got)
	}
}

func actions(p *RevertPlan) string {
	var out []string
	for _, rp := range p.Paths {
		out = append(out, rp.Path+":"+string(rp.Action))
	}
	return strings.Join(out, " ")
}

func TestRevertConflicts(t *testing.T) {
	t.Parallel()
	s := project(t)
	dir := s.Project
	write(t, dir, "a.txt", "one\ntwo\nthree\n")
	write(t, dir, "bin", "\x00\x01\x02")
	cp := prompt(t, s, "the step")
	write(t, dir, "a.txt", "one\nTWO (step)\nthree\n")
	write(t, dir, "bin", "\x00\x01\x02step")
	write(t, dir, "new.txt", "added by the step\n")
	prompt(t, s, "later")
	write(t, dir, "a.txt", "one\nTWO (step, then later)\nthree\n")
	write(t, dir, "bin", "\x00\x01\x02step and later")
	write(t, dir, "new.txt", "added by the step, changed later\n")

	res, err := s.Revert(ctx, cp, RevertOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Paths) != 3 || ce.Markers {
		t.Fatalf("err = %v, want a conflict in 3 paths", err)
	}
	if res == nil || res.Backup != "" || res.Plan.Conflicts != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := actions(res.Plan); got != "a.txt:conflict bin:conflict new.txt:conflict" {
		t.Errorf("plan: %s", got)
	}
	if got := read(t, filepath.Join(dir, "a.txt")); got != "one\nTWO (step, then later)\nthree\n" {
		t.Errorf("a conflicting revert wrote a.txt: %q", got)
	}
	h, _ := s.History()
	if len(h.Entries) != 0 {
		t.Errorf("a conflicting revert was recorded: %+v", h.Entries)
	}

	res, err = s.Revert(ctx, cp, RevertOptions{Markers: true})
	if !errors.As(err, &ce) || !ce.Markers || res == nil || res.Backup == "" {
		t.Fatalf("with markers: err %v, result %+v", err, res)
	}
	want := "one\n<<<<<<< now\nTWO (step, then later)\n=======\ntwo\n>>>>>>> " + cp.ID + " (before the step)\nthree\n"
	if got := read(t, filepath.Join(dir, "a.txt")); got != want {
		t.Errorf("a.txt with markers:\n%s\nwant:\n%s", got, want)
	}
	if got := read(t, filepath.Join(dir, "bin")); got != "\x00\x01\x02step and later" {
		t.Errorf("a binary conflict was written: %q", got)
	}
	if got := actions(res.Plan); got != "a.txt:markers bin:conflict new.txt:conflict" {
		t.Errorf("plan: %s", got)
	}
	if _, err := s.UndoRestore(ctx, UndoRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "a.txt")); got != "one\nTWO (step, then later)\nthree\n" {
		t.Errorf("undo-restore left %q", got)
	}
}

// A prompt's step runs to the next checkpoint not taken inside the prompt
// (its tool hooks); the newest checkpoint's runs to the tree now.
func TestStepEnd(t *testing.T) {
	t.Parallel()
	s := project(t)
	dir := s.Project
	write(t, dir, "a.txt", "1\n")
	p1 := prompt(t, s, "one")
	write(t, dir, "a.txt", "2\n")
	save(t, s, SaveOptions{Trigger: Trigger{Kind: TriggerHook, Event: hookd.EventPreTool, Tool: "Edit"}})
	write(t, dir, "b.txt", "b\n")
	p2 := prompt(t, s, "two")
	end, err := s.StepEnd(p1)
	if err != nil || end == nil || end.ID != p2.ID {
		t.Fatalf("StepEnd(%s) = %v, %v; want %s", p1.ID, end, err, p2.ID)
	}
	if end, err := s.StepEnd(p2); end != nil || err != nil {
		t.Fatalf("StepEnd of the newest = %v, %v", end, err)
	}
	write(t, dir, "c.txt", "c\n")
	// The newest checkpoint's step is everything since it.
	if _, err := s.Revert(ctx, p2, RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "c.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("c.txt, made after the newest checkpoint, is still there")
	}
	// The first prompt's step, both edits, the tool's checkpoint between
	// them notwithstanding.
	if _, err := s.Revert(ctx, p1, RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, b := read(t, filepath.Join(dir, "a.txt")), read(t, filepath.Join(dir, "b.txt")); got != "1\n" || !strings.HasPrefix(b, "<") {
		t.Errorf("a.txt = %q, b.txt = %q after reverting the first prompt", got, b)
	}
}

// What a revert puts back beyond text: permissions, symlinks, binary files
// nothing changed since, a folder later work put a file in; and a step
// named by its two ends.
func TestRevertKinds(t *testing.T) {
	t.Parallel()
	s := project(t)
	dir := s.Project
	write(t, dir, "run.sh", "echo hi\n")
	write(t, dir, "img.bin", "\x00old")
	os.Symlink("a", filepath.Join(dir, "link"))
	from := save(t, s, SaveOptions{Description: "before"})
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	write(t, dir, "img.bin", "\x00new")
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("b", filepath.Join(dir, "link"))
	write(t, dir, "made/by-step.txt", "step\n")
	mid := save(t, s, SaveOptions{Description: "middle"})
	write(t, dir, "made/later.txt", "later\n")
	end := save(t, s, SaveOptions{Description: "after"})
	write(t, dir, "after-end.txt", "kept\n")

	res, err := s.Revert(ctx, from, RevertOptions{To: mid})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(res.Plan); got != "img.bin:revert link:revert made:kept made/by-step.txt:revert run.sh:revert" {
		t.Errorf("plan: %s", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("run.sh mode: %v %v", fi.Mode(), err)
	}
	if got := read(t, filepath.Join(dir, "img.bin")); got != "\x00old" {
		t.Errorf("img.bin = %q", got)
	}
	if l, _ := os.Readlink(filepath.Join(dir, "link")); l != "a" {
		t.Errorf("link -> %q, want a", l)
	}
	if got := read(t, filepath.Join(dir, "made/later.txt")); got != "later\n" {
		t.Errorf("made/later.txt = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "made/by-step.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("made/by-step.txt is still there")
	}
	if read(t, filepath.Join(dir, "after-end.txt")) != "kept\n" {
		t.Error("a file made after the step's end was touched")
	}
	if _, err := s.Revert(ctx, end, RevertOptions{To: from}); err == nil {
		t.Error("a step that runs backwards in time was taken")
	}
}
