package gc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"

	"rewind.dev/internal/cmdline"
	"rewind.dev/internal/fileid"
	"rewind.dev/rewind/store/record"
)

// A checkpoint gc may not remove — its folder is another user's (a save
// run with sudo, a copy made as root), or removing it met a permission
// error — is kept, with what it builds on (gc cannot rewrite it over
// something older), and named with whose it is and what to do; retention
// goes on with the rest. One it cannot read either is also among the
// damaged: what it builds on cannot be known, so nothing older goes.

// Unremovable is a checkpoint gc may not remove.
type Unremovable struct {
	ID       string `json:"id"`
	UID      int    `json:"uid"`            // its folder's owner
	User     string `json:"user,omitempty"` // the owner's name, when known
	Readable bool   `json:"readable"`       // false: nothing older goes either
	Error    string `json:"error,omitempty"`
	Fix      string `json:"fix"` // the command that lets gc remove it
}

// Whose names u's owner: by name and uid, or by uid when the name is not known.
func (u Unremovable) Whose() string {
	if u.User != "" {
		return fmt.Sprintf("%s (uid %d)", u.User, u.UID)
	}
	return fmt.Sprintf("uid %d", u.UID)
}

// Message says what gc did about u.
func (u Unremovable) Message() string {
	what := "checkpoint " + u.ID + " belongs to " + u.Whose() + ", not to you"
	if u.UID == os.Geteuid() {
		what = "checkpoint " + u.ID + " could not be removed (" + u.Error + ")"
	}
	if !u.Readable {
		return what + ": gc can neither read nor remove it, and keeps it and everything older"
	}
	return what + ": gc cannot remove it, and keeps it and what it builds on"
}

// NotYours is checkpoint id as an Unremovable when its folder belongs to
// another user (root may remove anyone's), else nil.
func (st Store) NotYours(id string, readable bool) *Unremovable {
	if os.Geteuid() == 0 {
		return nil
	}
	fi, err := os.Lstat(st.checkpointDir(id))
	if err != nil || fileid.Mine(fi) {
		return nil
	}
	uid, _ := fileid.Owner(fi)
	return st.unremovable(id, uid, readable, nil)
}

// unremovable describes checkpoint id, owned by uid, that gc may not
// remove (err: what its removal met, when it was tried).
func (st Store) unremovable(id string, uid int, readable bool, err error) *Unremovable {
	u := &Unremovable{ID: id, UID: uid, Readable: readable}
	if o, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		u.User = o.Username
	}
	if err != nil {
		u.Error = err.Error()
	}
	if uid != os.Geteuid() {
		me := strconv.Itoa(os.Geteuid())
		if cur, err := user.Current(); err == nil {
			me = cur.Username
		}
		u.Fix = "sudo chown -R " + cmdline.ShellQuote(me) + " " + cmdline.ShellQuote(st.Dir)
	} else {
		u.Fix = "chmod -R u+rwX " + cmdline.ShellQuote(st.checkpointDir(id))
	}
	return u
}

// unremovableError is a checkpoint whose removal met a permission error.
type unremovableError struct {
	u   *Unremovable
	err error
}

func (e *unremovableError) Error() string { return "gc: " + e.u.Message() }
func (e *unremovableError) Unwrap() error { return e.err }

// removalRefused makes err, met removing checkpoint c, an
// *unremovableError when it is a permission error.
func (st Store) removalRefused(c *record.Checkpoint, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	uid := os.Geteuid()
	if fi, e := os.Lstat(c.Dir); e == nil {
		uid, _ = fileid.Owner(fi)
	}
	return &unremovableError{u: st.unremovable(c.ID, uid, true, err), err: err}
}
