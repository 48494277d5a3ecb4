package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"rewind.dev/internal/layout"
)

// A pin label keeps a checkpoint through gc and names it wherever a
// checkpoint is named (Resolve). A label is refused when it could never name
// its checkpoint — Resolve would read it as something else (@N, :/TEXT, an
// id or the start of one), or it cannot be typed or seen as it is — or when
// it would take a name from another checkpoint (its description, or its
// label: moving a label takes Force, as git tag -f moves a tag).

// DefaultLabel is the label of a checkpoint pinned without one, and of
// one a label was moved from (it stays pinned). It names no checkpoint in
// particular: any number may carry it, and it takes no name from another.
const DefaultLabel = "pinned"

// Pinned returns the pinned checkpoints, newest first. A checkpoint's
// metadata is decoded only when its bytes hold a label: shell completion
// offers the labels as names at a tab, and a store may hold 10,000
// checkpoints.
func (s *Store) Pinned() ([]*Checkpoint, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	var pinned []*Checkpoint
	for i := len(ids) - 1; i >= 0; i-- {
		b, err := os.ReadFile(filepath.Join(s.checkpointDir(ids[i]), MetadataFile))
		if err != nil || !bytes.Contains(b, []byte(`"pinned":`)) { // (in a description or a prompt the quotes are escaped)
			continue
		}
		if c, err := s.Load(ids[i]); err == nil && c.Pinned != "" {
			pinned = append(pinned, c)
		}
	}
	return pinned, nil
}

// LabelProblem is why a pin label is refused.
type LabelProblem int

const (
	LabelEmpty       LabelProblem = iota + 1 // empty, or only spaces
	LabelSpaced                              // a space at either end
	LabelControl                             // a control character, a line break, or bytes that are not UTF-8
	LabelOption                              // starts with '-': it reads as an option
	LabelPosition                            // starts with '@': it reads as @N
	LabelSearch                              // starts with ":/": it reads as :/TEXT
	LabelID                                  // digits an id could start with
	LabelDescription                         // another checkpoint's description
	LabelTaken                               // another checkpoint's label (Force moves it)
)

// LabelError is a pin label refused, with why; Holder is the checkpoint
// whose description or label it is (LabelDescription, LabelTaken).
type LabelError struct {
	Label   string
	Problem LabelProblem
	Holder  string
}

func (e *LabelError) Error() string {
	l := fmt.Sprintf("%q", e.Label)
	switch e.Problem {
	case LabelEmpty:
		return "a pin label cannot be empty or only spaces"
	case LabelSpaced:
		return fmt.Sprintf("pin label %s starts or ends with a space", l)
	case LabelControl:
		return fmt.Sprintf("pin label %s holds a control character, a line break or bytes that are not UTF-8", l)
	case LabelOption:
		return fmt.Sprintf("pin label %s starts with '-': it would be read as an option", l)
	case LabelPosition:
		return fmt.Sprintf("pin label %s would be read as @N, a position in the list", l)
	case LabelSearch:
		return fmt.Sprintf("pin label %s would be read as %sTEXT, a search of prompts and descriptions", l, SearchPrefix)
	case LabelID:
		return fmt.Sprintf("pin label %s would be read as a checkpoint id, or the start of one", l)
	case LabelDescription:
		return fmt.Sprintf("pin label %s is the description of checkpoint %s: it names that one", l, e.Holder)
	case LabelTaken:
		return fmt.Sprintf("label %s is on checkpoint %s", l, e.Holder)
	}
	return fmt.Sprintf("pin label %s cannot be used", l)
}

// CheckLabel refuses a label that could never name a checkpoint, by its
// text alone (the store's checkpoints are not read: see Pin for the names
// it would take from others).
func CheckLabel(label string) error {
	bad := func(p LabelProblem) error { return &LabelError{Label: label, Problem: p} }
	switch {
	case strings.TrimSpace(label) == "":
		return bad(LabelEmpty)
	case !utf8.ValidString(label) || layout.HasControl(label):
		return bad(LabelControl)
	case strings.TrimSpace(label) != label:
		return bad(LabelSpaced)
	case strings.HasPrefix(label, "-"):
		return bad(LabelOption)
	case strings.HasPrefix(label, "@"):
		return bad(LabelPosition)
	case strings.HasPrefix(label, SearchPrefix):
		return bad(LabelSearch)
	case idStart(label):
		return bad(LabelID)
	}
	return nil
}

// idStart reports whether s could be the start of an id, now or in a later
// year: digits, with '_' where an id has one.
func idStart(s string) bool {
	for i, c := range s {
		if i == 8 || i == 15 {
			if c != '_' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PinOptions say how to pin.
type PinOptions struct {
	// Label is the checkpoint's label (DefaultLabel when the user names
	// none).
	Label string
	// Force moves a label another checkpoint carries to this one; that one
	// stays pinned, with DefaultLabel.
	Force bool
}

// Pin labels a checkpoint so gc keeps it, and returns the checkpoints the
// label was moved from (o.Force). The label is refused as CheckLabel says
// (an empty one too: Unpin takes a label off), and when another checkpoint
// has it as its description, or carries it (without o.Force).
func (s *Store) Pin(ctx context.Context, c *Checkpoint, o PinOptions) (movedFrom []string, err error) {
	if err := CheckLabel(o.Label); err != nil {
		return nil, err
	}
	l, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	holders, err := s.labelHolders(c.ID, o)
	if err != nil {
		return nil, err
	}
	for _, h := range holders {
		if err := s.setLabel(h, DefaultLabel); err != nil {
			return movedFrom, err
		}
		movedFrom = append(movedFrom, h.ID)
	}
	return movedFrom, s.setLabel(c, o.Label)
}

// Unpin takes a checkpoint's label off, so that gc may delete it again.
func (s *Store) Unpin(ctx context.Context, c *Checkpoint) error {
	l, err := s.Lock(ctx)
	if err != nil {
		return err
	}
	defer l.Unlock()
	return s.setLabel(c, "")
}

// setLabel writes c's label ("" for none).
func (s *Store) setLabel(c *Checkpoint, label string) error {
	md := c.Metadata
	md.Pinned = label
	if err := writeMetadata(c.Dir, &md); err != nil {
		return err
	}
	c.Metadata = md
	s.forGC().IndexChanged(c) // (its folder's bytes changed)
	return nil
}

// labelHolders are the checkpoints other than id that carry o.Label, for
// o.Force to move it from; a *LabelError when another checkpoint has it as
// its description, or carries it without o.Force. Call it under the lock.
func (s *Store) labelHolders(id string, o PinOptions) ([]*Checkpoint, error) {
	if o.Label == "" || o.Label == DefaultLabel {
		return nil, nil
	}
	cps, _, err := s.List()
	if err != nil {
		return nil, err
	}
	var holders []*Checkpoint
	for _, c := range cps { // newest first
		if c.ID == id {
			continue
		}
		if !c.Backup() && c.Description == o.Label {
			return nil, &LabelError{Label: o.Label, Problem: LabelDescription, Holder: c.ID}
		}
		if c.Pinned == o.Label {
			holders = append(holders, c)
		}
	}
	if len(holders) > 0 && !o.Force {
		return nil, &LabelError{Label: o.Label, Problem: LabelTaken, Holder: holders[0].ID}
	}
	return holders, nil
}
