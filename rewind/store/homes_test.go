package store

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestEnvHomes: the homes the environment names are those Rewind read from
// it at every use before: $REWIND_HOME, else ~/.rewind; the exports folder
// under $XDG_DATA_HOME when that is absolute, else under ~/.local/share; no
// exports folder without a home. (It sets the environment: not parallel.)
func TestEnvHomes(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("the exports folder is under ~/Library on macOS")
	}
	home := t.TempDir()
	for _, c := range []struct {
		name                  string
		home, rewind, xdgData string
		want                  Homes
	}{
		{"defaults", home, "", "", Homes{Rewind: filepath.Join(home, ".rewind"), User: home, Exports: filepath.Join(home, ".local/share/rewind/exports")}},
		{"REWIND_HOME and XDG_DATA_HOME", home, "/r", "/d", Homes{Rewind: "/r", User: home, Exports: "/d/rewind/exports"}},
		{"a relative XDG_DATA_HOME", home, "", "d", Homes{Rewind: filepath.Join(home, ".rewind"), User: home, Exports: filepath.Join(home, ".local/share/rewind/exports")}},
		{"no home", "", "/r", "/d", Homes{Rewind: "/r"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOME", c.home)
			t.Setenv("REWIND_HOME", c.rewind)
			t.Setenv("XDG_DATA_HOME", c.xdgData)
			if got := EnvHomes(); got != c.want {
				t.Errorf("EnvHomes() = %+v, want %+v", got, c.want)
			}
		})
	}
}
