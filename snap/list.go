package snap

import (
	"io"
)

// List calls fn for every entry of the archive, in archive order, after the
// same checks a restore makes; content is skipped, not hashed.
func List(archive string, fn func(e *Entry) error) error {
	as, err := openArchive(archive, DefaultLimits, false)
	if err != nil {
		return err
	}
	defer as.Close()
	for {
		e, content, err := as.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if content != nil {
			if _, err := io.Copy(io.Discard, content); err != nil {
				return archiveReadErr(e, err)
			}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}
