package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// A restore to a checkpoint taken before the current folder existed
// removes it; undo-restore run there (no -C) works on the project the
// folder was in and brings it back, and so does any command after it. A
// folder gone where no project with a store held it is named, with what to
// do.
func TestCommandsInAFolderARestoreRemoved(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	if _, _, err := store.Init(dir, layout.ModeProject); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a")
	mustRun(t, dir, "", "save", "before")
	write("sub/deeper/b.txt", "b")
	mustRun(t, dir, "", "save", "after")

	here := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errs strings.Builder
		code := Main(context.Background(), args, strings.NewReader(""), &out, &errs)
		return code, out.String(), errs.String()
	}
	deeper := filepath.Join(dir, "sub", "deeper")
	t.Chdir(deeper)
	t.Setenv("PWD", deeper) // (as a shell that went there says)
	if code, out, errs := here("restore", "before"); code != 0 {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the restore left sub/: %v", err)
	}

	// init makes nothing for a folder that is gone: it says where to go.
	code, _, errs := here("init")
	if code == 0 || !strings.Contains(errs, "hint: cd to the project ("+dir+")") {
		t.Errorf("init in the folder gone: exit %d\n%s", code, errs)
	}

	code, out, errs := here("undo-restore")
	if code != 0 || !strings.Contains(out, "Undid restore") {
		t.Fatalf("undo-restore in the folder the restore removed: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "warning: the current folder ("+deeper+") was removed; working on its project, "+dir) {
		t.Errorf("undo-restore says nothing of the folder it stood in:\n%s", errs)
	}
	if b, err := os.ReadFile(filepath.Join(deeper, "b.txt")); err != nil || string(b) != "b" {
		t.Errorf("undo-restore did not bring sub/deeper back: %q, %v", b, err)
	}
	// The folder is back at its path, not the one the process stands in:
	// commands still work, relative paths still name paths under it.
	code, out, errs = here("diff", "after", "--stat", "--", ".")
	if code != 0 || !strings.Contains(out, "No changes") || !strings.Contains(errs, "'cd "+deeper+"' enters it as it is now") {
		t.Errorf("diff -- . there: exit %d\n%s%s", code, out, errs)
	}

	// Without $PWD there is no path to go on: it says what to do.
	os.Unsetenv("PWD")
	code, _, errs = here("status")
	if code == 0 || !strings.Contains(errs, "error: the current folder no longer exists") || !strings.Contains(errs, "hint: cd to the project and run it again, or name it with -C DIR") {
		t.Errorf("status without $PWD: exit %d\n%s", code, errs)
	}
	// Nor in a folder gone that no project with a store held; nor does init
	// make a store for one.
	elsewhere := filepath.Join(t.TempDir(), "x")
	os.Mkdir(elsewhere, 0o755)
	t.Chdir(elsewhere)
	os.Remove(elsewhere)
	t.Setenv("PWD", elsewhere)
	for _, cmd := range []string{"status", "init"} {
		code, _, errs = here(cmd)
		if code == 0 || !strings.Contains(errs, "error: the current folder "+elsewhere+" no longer exists") {
			t.Errorf("%s in a folder gone, no project's: exit %d\n%s", cmd, code, errs)
		}
	}
}
