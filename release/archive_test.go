package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func testEntries(t *testing.T) []entry {
	src := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return []entry{
		{name: "top/", mode: 0o755},
		{name: "top/README.md", mode: 0o644, data: []byte("read me\n")},
		{name: "top/man/", mode: 0o755},
		{name: "top/man/x.1", mode: 0o644, data: []byte(".Dd\n")},
		{name: "top/prog", mode: 0o755, src: src},
	}
}

var mtime = time.Date(2026, 11, 28, 10, 0, 0, 0, time.FixedZone("elsewhere", 5*3600))

func TestWriteTarGz(t *testing.T) {
	es := testEntries(t)
	var a, b bytes.Buffer
	if err := writeTarGz(&a, es, mtime); err != nil {
		t.Fatal(err)
	}
	if err := writeTarGz(&b, es, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same files differ")
	}
	zr, err := gzip.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header has a time %v or a name %q", zr.ModTime, zr.Name)
	}
	tr := tar.NewReader(zr)
	for i := 0; ; i++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			if i != len(es) {
				t.Errorf("%d entries, want %d", i, len(es))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e := es[i]
		if hdr.Name != e.name || fs.FileMode(hdr.Mode) != e.mode || !hdr.ModTime.Equal(mtime) || hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || hdr.Gname != "" {
			t.Errorf("entry %d: %q mode %o time %v owner %d/%d %q/%q; want %q mode %o time %v, owner 0",
				i, hdr.Name, hdr.Mode, hdr.ModTime, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname, e.name, e.mode, mtime)
		}
		if e.name == "top/prog" {
			data, _ := io.ReadAll(tr)
			if string(data) != "#!/bin/sh\n" {
				t.Errorf("top/prog holds %q", data)
			}
		}
	}
}

func TestWriteZip(t *testing.T) {
	es := testEntries(t)
	var a, b bytes.Buffer
	if err := writeZip(&a, es, mtime); err != nil {
		t.Fatal(err)
	}
	if err := writeZip(&b, es, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same files differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != len(es) {
		t.Fatalf("%d entries, want %d", len(zr.File), len(es))
	}
	for i, f := range zr.File {
		e := es[i]
		if f.Name != e.name || f.Mode().Perm() != e.mode || !f.Modified.Equal(mtime) {
			t.Errorf("entry %d: %q mode %v time %v; want %q mode %v time %v", i, f.Name, f.Mode(), f.Modified, e.name, e.mode, mtime)
		}
	}
}

func TestWriteChecksums(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"b.zip": "b", "a.tar.gz": "a"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeChecksums(dir, []string{"b.zip", "a.tar.gz"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// sha256sum's format: the sum, two spaces, the name; sorted by name.
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.zip\n"
	if string(got) != want {
		t.Errorf("checksums.txt:\n%s\nwant:\n%s", got, want)
	}
}

func TestParsePlatforms(t *testing.T) {
	ps, err := parsePlatforms(" linux/amd64,windows/amd64,linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0] != (Platform{"linux", "amd64"}) || ps[1].Exe("rewind") != "rewind.exe" || archiveExt(ps[1]) != ".zip" {
		t.Errorf("parsePlatforms = %v", ps)
	}
	for _, bad := range []string{"", "linux", "linux/", "/amd64", "linux/amd64/x"} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("parsePlatforms(%q) accepted", bad)
		}
	}
}
