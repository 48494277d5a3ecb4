package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file or folder of a release archive.
type entry struct {
	name string      // slash path in the archive; a folder's ends in "/"
	mode fs.FileMode // permission bits: 0o755 for folders and programs, else 0o644
	src  string      // the file to copy; "" for a folder or data
	data []byte
}

// archiveName is the name of p's archive, without its extension: rewind_0.4.0_linux_amd64. It
// is also the one folder inside.
func (r *release) archiveName(p Platform) string {
	return fmt.Sprintf("rewind_%s_%s_%s", r.version, p.OS, p.Arch)
}

// archiveExt is ".zip" for Windows, where unpacking a zip needs nothing installed, else ".tar.gz".
func archiveExt(p Platform) string {
	if p.OS == "windows" {
		return ".zip"
	}
	return ".tar.gz"
}

// archiveEntries lists p's archive, sorted (a folder before what it holds): the binaries,
// install.sh, README.md, LICENSE, man/*.1 and completions/, in one folder.
func (r *release) archiveEntries(p Platform, bins string, completions map[string][]byte) ([]entry, error) {
	top := r.archiveName(p) + "/"
	es := []entry{{name: top, mode: 0o755}}
	for _, name := range r.binaries() {
		es = append(es, entry{name: top + p.Exe(name), mode: 0o755, src: filepath.Join(bins, p.Exe(name))})
	}
	es = append(es,
		entry{name: top + "install.sh", mode: 0o755, src: filepath.Join(r.root, "install.sh")},
		entry{name: top + "README.md", mode: 0o644, src: filepath.Join(r.root, "README.md")},
		entry{name: top + "LICENSE", mode: 0o644, src: filepath.Join(r.root, "LICENSE")},
		entry{name: top + "man/", mode: 0o755},
	)
	pages, err := filepath.Glob(filepath.Join(r.root, "man", "*.1"))
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("no man pages in %s", filepath.Join(r.root, "man"))
	}
	for _, page := range pages {
		es = append(es, entry{name: top + "man/" + filepath.Base(page), mode: 0o644, src: page})
	}
	if len(completions) > 0 {
		es = append(es, entry{name: top + "completions/", mode: 0o755})
		for name, data := range completions {
			es = append(es, entry{name: top + "completions/" + name, mode: 0o644, data: data})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	return es, nil
}

// writeArchive writes p's archive into dir and returns its file name.
func (r *release) writeArchive(dir string, p Platform, bins string, completions map[string][]byte) (string, error) {
	es, err := r.archiveEntries(p, bins, completions)
	if err != nil {
		return "", err
	}
	name := r.archiveName(p) + archiveExt(p)
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	if archiveExt(p) == ".zip" {
		err = writeZip(f, es, r.time)
	} else {
		err = writeTarGz(f, es, r.time)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return name, nil
}

// open returns e's content and size.
func (e entry) open() (io.ReadCloser, int64, error) {
	if e.src == "" {
		return io.NopCloser(strings.NewReader(string(e.data))), int64(len(e.data)), nil
	}
	f, err := os.Open(e.src)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", e.src)
	}
	return f, fi.Size(), nil
}

// writeTarGz writes es as a gzip-compressed tar. Two runs over the same files write the same
// bytes: every entry has the time mtime, owner 0 with no names, and gzip's header no name and
// no time.
func writeTarGz(w io.Writer, es []entry, mtime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range es {
		hdr := &tar.Header{Name: e.name, Mode: int64(e.mode.Perm()), ModTime: mtime.Truncate(time.Second), Format: tar.FormatUSTAR}
		if strings.HasSuffix(e.name, "/") {
			hdr.Typeflag = tar.TypeDir
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		rc, size, err := e.open()
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, size
		if err := tw.WriteHeader(hdr); err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(tw, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	// Both flush on Close: their errors are the archive's.
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeZip writes es as a zip, with the same care as writeTarGz; the time is written in UTC.
func writeZip(w io.Writer, es []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range es {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
		mode := e.mode.Perm()
		if strings.HasSuffix(e.name, "/") {
			hdr.Method = zip.Store
			mode |= fs.ModeDir
		}
		hdr.SetMode(mode)
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if mode.IsDir() {
			continue
		}
		rc, _, err := e.open()
		if err != nil {
			return err
		}
		_, err = io.Copy(fw, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// writeChecksums writes dir/checksums.txt: the SHA-256 of each named file of dir, as sha256sum
// prints them (sha256sum -c checksums.txt checks them), sorted by name.
func writeChecksums(dir string, names []string) error {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var b strings.Builder
	for _, name := range sorted {
		sum, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
