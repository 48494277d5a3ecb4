package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store"
)

// list shows 20 rows and says how many more there are; --json lists every
// checkpoint unless -n is given.
func TestListDefaultAndJSONUncapped(t *testing.T) {
	ownHome(t)
	dir := t.TempDir()
	s, _, err := store.Init(dir, layout.ModeProject)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 23 {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(fmt.Sprint(i)), 0o644)
		if _, err := s.Save(ctx, store.SaveOptions{Description: fmt.Sprint("cp ", i), Trigger: store.Trigger{Kind: store.TriggerManual}}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(args ...string) string {
		var out, errs strings.Builder
		if code := Main(ctx, append([]string{"-C", dir, "list"}, args...), strings.NewReader(""), &out, &errs); code != 0 {
			t.Fatalf("list %q: exit %d: %s", args, code, errs.String())
		}
		return out.String()
	}
	text := list()
	if n := strings.Count(text, "\n@"); n != 20 {
		t.Errorf("text lists %d rows, want 20:\n%s", n, text)
	}
	if !strings.HasSuffix(text, "… 3 more (-n 0 lists them)\n") {
		t.Errorf("no footer for the 3 rows left out:\n%s", text)
	}
	if n := strings.Count(list("-n", "0"), "\n@"); n != 23 {
		t.Errorf("-n 0 lists %d rows, want 23", n)
	}
	if n := strings.Count(list("--json"), `{"type":"checkpoint"`); n != 23 {
		t.Errorf("--json lists %d checkpoints, want all 23", n)
	}
	if n := strings.Count(list("--json", "-n", "5"), `{"type":"checkpoint"`); n != 5 {
		t.Errorf("--json -n 5 lists %d checkpoints, want 5", n)
	}
}
