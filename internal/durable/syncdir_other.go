//go:build !windows

package durable

import (
	"fmt"
	"os"
)

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := Sync(d); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
