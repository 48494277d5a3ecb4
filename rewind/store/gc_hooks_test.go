package store

import (
	"errors"
	"os"

	"rewind.dev/rewind/store/gc"
)

// remove deletes one checkpoint whatever the policy says (see gc.Remove).
func (s *Store) remove(c *Checkpoint) error { return gc.Remove(s.forGC(), c) }

// sweepLayers deletes the archives no checkpoint reads (see gc.Sweep).
func (s *Store) sweepLayers() (int64, error) { return gc.Sweep(s.forGC()) }

// indexPath is the store's index (see package gc).
func (s *Store) indexPath() string { return s.path("index") }

// dropIndex removes the store's index, as a gc killed while it rewrote a
// checkpoint leaves it: retention then reads the whole store.
func (s *Store) dropIndex() error {
	if err := os.Remove(s.indexPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
