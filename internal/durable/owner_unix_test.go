//go:build unix

package durable

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestKeepOwner: a replaced file keeps its owner (only root may give a file away).
func TestKeepOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	p := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(p, []byte("{}"), 0o600)
	if err := os.Chown(p, 12345, 23456); err != nil {
		t.Skip(err)
	}
	if err := WriteFile(p, []byte(`{"a":1}`), 0o600, KeepOwner); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if s := st.Sys().(*syscall.Stat_t); s.Uid != 12345 || s.Gid != 23456 {
		t.Errorf("owner %d:%d, want 12345:23456", s.Uid, s.Gid)
	}
	if err := WriteFile(p, []byte(`{"a":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Error("without KeepOwner the file is not ours")
	}
}
