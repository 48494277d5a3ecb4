//go:build linux || darwin

package foldtest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hanwen/go-fuse/v2/fuse/nodefs"
	"github.com/hanwen/go-fuse/v2/fuse/pathfs"
)

// Mount mounts a folding view of dir at mnt (an empty folder) and returns
// the function that unmounts it. The error says why it could not be
// mounted (no /dev/fuse, no right to mount): callers skip on it.
//
// The mount is served by the calling process. A child it starts must not
// have its working folder on the mount (exec.Cmd.Dir, a testscript's cd):
// between fork and exec the child changes into it and waits for an answer
// that the suspended parent may never give. Name the paths instead (or
// rewind -C).
func Mount(dir, mnt string) (unmount func() error, err error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("no FUSE: %w", err)
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fs := &folding{FileSystem: pathfs.NewLoopbackFileSystem(dir), dir: dir}
	// Each spelling is its own node to the kernel (no ClientInodes): were
	// two spellings one inode, the kernel would take a rename from one to
	// the other for a no-op (rename(2) of two links to one file) and never
	// ask the file system, which is what changes the case on disk.
	root := pathfs.NewPathNodeFs(fs, nil).Root()
	// Nothing is cached by the kernel: a name's spelling can change under
	// it by a rename through another spelling. A name looked up again is
	// looked up, not merely stat'ed: a file removed under one spelling and
	// made a folder under another would otherwise keep its node as a file,
	// and what is inside the folder could not be reached ("not a
	// directory").
	opts := &nodefs.Options{LookupKnownChildren: true}
	srv, _, err := nodefs.Mount(mnt, root, &fuse.MountOptions{
		DirectMount: true,
		FsName:      "foldtest",
		Name:        "foldtest",
		AllowOther:  false,
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("mount a folding file system at %s: %w", mnt, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		srv.Unmount()
		return nil, fmt.Errorf("mount a folding file system at %s: %w", mnt, err)
	}
	return func() error {
		var err error
		for range 50 { // busy while a test's last file closes
			if err = srv.Unmount(); err == nil {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return err
	}, nil
}

// folding maps every path it is given to the spelling on disk, element by
// element, before the loopback sees it.
type folding struct {
	pathfs.FileSystem
	dir string
}

// real returns the on-disk spelling of name (relative, slash-separated):
// each element spelt as the folder holds it, or as given where it holds no
// spelling of it.
func (f *folding) real(name string) string {
	if name == "" {
		return ""
	}
	var out string
	for el := range strings.SplitSeq(name, "/") {
		out = path.Join(out, f.spelling(out, el))
	}
	return out
}

// spelling returns the folder dir's spelling of el.
func (f *folding) spelling(dir, el string) string {
	full := filepath.Join(f.dir, filepath.FromSlash(dir))
	if _, err := os.Lstat(filepath.Join(full, el)); err == nil {
		return el
	}
	des, err := os.ReadDir(full)
	if err != nil {
		return el
	}
	k := Key(el)
	for _, de := range des {
		if Key(de.Name()) == k {
			return de.Name()
		}
	}
	return el
}

func (f *folding) GetAttr(name string, c *fuse.Context) (*fuse.Attr, fuse.Status) {
	return f.FileSystem.GetAttr(f.real(name), c)
}

func (f *folding) Chmod(name string, mode uint32, c *fuse.Context) fuse.Status {
	return f.FileSystem.Chmod(f.real(name), mode, c)
}

func (f *folding) Chown(name string, uid, gid uint32, c *fuse.Context) fuse.Status {
	return f.FileSystem.Chown(f.real(name), uid, gid, c)
}

func (f *folding) Utimens(name string, a, m *time.Time, c *fuse.Context) fuse.Status {
	return f.FileSystem.Utimens(f.real(name), a, m, c)
}

func (f *folding) Truncate(name string, size uint64, c *fuse.Context) fuse.Status {
	return f.FileSystem.Truncate(f.real(name), size, c)
}

func (f *folding) Access(name string, mode uint32, c *fuse.Context) fuse.Status {
	return f.FileSystem.Access(f.real(name), mode, c)
}

func (f *folding) Link(old, name string, c *fuse.Context) fuse.Status {
	return f.FileSystem.Link(f.real(old), f.real(name), c)
}

func (f *folding) Mkdir(name string, mode uint32, c *fuse.Context) fuse.Status {
	return f.FileSystem.Mkdir(f.real(name), mode, c)
}

func (f *folding) Mknod(name string, mode, dev uint32, c *fuse.Context) fuse.Status {
	return f.FileSystem.Mknod(f.real(name), mode, dev, c)
}

// Rename to another spelling of the same file changes its spelling, as on
// APFS; onto another file it replaces that file.
func (f *folding) Rename(old, name string, c *fuse.Context) fuse.Status {
	from, to := f.real(old), f.real(name)
	if want := path.Join(path.Dir(to), path.Base(name)); to != want {
		// name is another spelling of an entry the folder holds: of the
		// one renamed, whose spelling then changes, or of another file,
		// which is replaced.
		a, err1 := os.Lstat(filepath.Join(f.dir, from))
		b, err2 := os.Lstat(filepath.Join(f.dir, to))
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			to = want
		}
	}
	if from == to {
		return fuse.OK
	}
	return f.FileSystem.Rename(from, to, c)
}

func (f *folding) Rmdir(name string, c *fuse.Context) fuse.Status {
	return f.FileSystem.Rmdir(f.real(name), c)
}

func (f *folding) Unlink(name string, c *fuse.Context) fuse.Status {
	return f.FileSystem.Unlink(f.real(name), c)
}

func (f *folding) GetXAttr(name, attr string, c *fuse.Context) ([]byte, fuse.Status) {
	return f.FileSystem.GetXAttr(f.real(name), attr, c)
}

func (f *folding) ListXAttr(name string, c *fuse.Context) ([]string, fuse.Status) {
	return f.FileSystem.ListXAttr(f.real(name), c)
}

func (f *folding) RemoveXAttr(name, attr string, c *fuse.Context) fuse.Status {
	return f.FileSystem.RemoveXAttr(f.real(name), attr, c)
}

func (f *folding) SetXAttr(name, attr string, data []byte, flags int, c *fuse.Context) fuse.Status {
	return f.FileSystem.SetXAttr(f.real(name), attr, data, flags, c)
}

func (f *folding) Open(name string, flags uint32, c *fuse.Context) (nodefs.File, fuse.Status) {
	return f.FileSystem.Open(f.real(name), flags, c)
}

func (f *folding) Create(name string, flags, mode uint32, c *fuse.Context) (nodefs.File, fuse.Status) {
	return f.FileSystem.Create(f.real(name), flags, mode, c)
}

func (f *folding) OpenDir(name string, c *fuse.Context) ([]fuse.DirEntry, fuse.Status) {
	return f.FileSystem.OpenDir(f.real(name), c)
}

func (f *folding) Symlink(value, name string, c *fuse.Context) fuse.Status {
	return f.FileSystem.Symlink(value, f.real(name), c)
}

func (f *folding) Readlink(name string, c *fuse.Context) (string, fuse.Status) {
	return f.FileSystem.Readlink(f.real(name), c)
}

func (f *folding) StatFs(name string) *fuse.StatfsOut {
	return f.FileSystem.StatFs(f.real(name))
}
