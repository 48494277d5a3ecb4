//go:build reliability && unix

package reliability

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// Bounds a hostile input must stay within (generous: they catch a
// runaway, not a slow machine).
const (
	maxRSSKB   = 512 << 10 // 512 MiB
	maxRunTime = 90 * time.Second
)

type tarEntry struct {
	hdr  tar.Header
	body io.Reader
}

func reg(name, body string) tarEntry {
	return tarEntry{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, strings.NewReader(body)}
}

func entry(h tar.Header) tarEntry { return tarEntry{hdr: h} }

// writeArchive writes entries as a tar.gz.
func writeArchive(t *testing.T, path string, entries []tarEntry, raw func(*gzip.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if raw != nil {
		raw(zw)
		zw.Close()
		return
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if e.body != nil {
			if _, err := io.Copy(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	zw.Close()
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestHostileArchives runs crafted archives through rewind-snap restore and
// through rewind restore (as a tampered checkpoint): no panic, bounded
// memory and time, nothing written outside the project, and a refusal
// leaves the tree as it was, naming the entry.
func TestHostileArchives(t *testing.T) {
	deep := strings.Repeat("d/", 200) + "f"
	long := strings.Repeat("x", 250) + "/" + strings.Repeat("y", 250)
	for len(long) < 5000 {
		long += "/" + strings.Repeat("z", 250)
	}
	cases := []struct {
		name    string
		entries []tarEntry
		raw     func(*gzip.Writer)
		refuse  string // a word the error must hold ("" = may be accepted)
	}{
		{"traversal", []tarEntry{reg("../evil.txt", "pwned")}, nil, "evil"},
		{"traversal inside", []tarEntry{reg("a/../../evil.txt", "pwned")}, nil, "evil"},
		{"absolute", []tarEntry{reg("/tmp/rewind-evil-abs.txt", "pwned")}, nil, "evil"},
		{"symlink escape then write through it", []tarEntry{
			entry(tar.Header{Name: "out", Typeflag: tar.TypeSymlink, Linkname: "../outside", Mode: 0o777}),
			reg("out/evil.txt", "pwned")}, nil, "out"},
		{"symlink chain escape", []tarEntry{
			entry(tar.Header{Name: "a", Typeflag: tar.TypeSymlink, Linkname: ".", Mode: 0o777}),
			entry(tar.Header{Name: "b", Typeflag: tar.TypeSymlink, Linkname: "a/a/a/../..", Mode: 0o777}),
			reg("b/evil.txt", "pwned")}, nil, "b"},
		{"absolute symlink (restored as a link)", []tarEntry{entry(tar.Header{Name: "etc", Typeflag: tar.TypeSymlink, Linkname: "/etc", Mode: 0o777})}, nil, ""},
		{"hard link", []tarEntry{reg("f", "x"), entry(tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "f"})}, nil, "h"},
		{"hard link outside", []tarEntry{entry(tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "../outside/canary"})}, nil, "h"},
		{"char device", []tarEntry{entry(tar.Header{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3, Mode: 0o666})}, nil, "null"},
		{"block device", []tarEntry{entry(tar.Header{Name: "sda", Typeflag: tar.TypeBlock, Devmajor: 8, Mode: 0o666})}, nil, "sda"},
		{"fifo", []tarEntry{entry(tar.Header{Name: "pipe", Typeflag: tar.TypeFifo, Mode: 0o666})}, nil, "pipe"},
		{"duplicate names", []tarEntry{reg("dup.txt", "one"), reg("dup.txt", "two")}, nil, "dup"},
		{"file then folder", []tarEntry{reg("x", "file"), reg("x/y", "under a file")}, nil, "x"},
		{"folder then file", []tarEntry{entry(tar.Header{Name: "x/", Typeflag: tar.TypeDir, Mode: 0o755}), reg("x", "file")}, nil, "x"},
		{"case-colliding names", []tarEntry{reg("Makefile", "a"), reg("makefile", "b")}, nil, ""},
		{"too deep", []tarEntry{reg(deep, "deep")}, nil, "d/d/d"},
		{"path too long", []tarEntry{reg(long, "long")}, nil, "xxxx"},
		{"setuid", []tarEntry{{tar.Header{Name: "suid", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 2}, strings.NewReader("hi")}}, nil, ""},
		{"dot entries", []tarEntry{reg("./a/./b", "x"), reg(".", "")}, nil, ""},
		{"size lie", []tarEntry{{tar.Header{Name: "big", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 40}, nil}}, nil, "big"},
		{"truncated archive", nil, func(zw *gzip.Writer) {
			var b bytes.Buffer
			tw := tar.NewWriter(&b)
			tw.WriteHeader(&tar.Header{Name: "a", Typeflag: tar.TypeReg, Size: 100000, Mode: 0o644})
			tw.Write(bytes.Repeat([]byte("a"), 100000))
			tw.Close()
			zw.Write(b.Bytes()[:50000])
		}, "a"},
		{"not gzip garbage", nil, func(zw *gzip.Writer) { zw.Write(bytes.Repeat([]byte{0xff, 0x00}, 5000)) }, ""},
		{"zip bomb 512 MiB of zeros", []tarEntry{{tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: 512 << 20}, io.LimitReader(zeros{}, 512<<20)}}, nil, ""},
		{"many entries", manyEntries(30000), nil, ""},
	}
	failures := 0
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			// The bomb goes to disk, not to tmpfs (memory).
			base := t.TempDir()
			if !strings.Contains(c.name, "bomb") {
				base = workDir(t)
			}
			archive := filepath.Join(base, "evil.tar.gz")
			writeArchive(t, archive, c.entries, c.raw)
			outside := filepath.Join(base, "outside")
			writeFile(t, filepath.Join(outside, "canary"), []byte("canary\n"), 0o644)
			for _, via := range []string{"rewind-snap", "rewind"} {
				project := filepath.Join(base, via, "p")
				genTree(t, project, 50, 3)
				env := []string{"HOME=" + filepath.Join(base, "home")}
				var p proc
				if via == "rewind-snap" {
					p = proc{name: "rewind-snap", args: []string{"restore", "--root", project, "--from", archive}, env: env}
				} else {
					mustRun(t, proc{name: "rewind", args: []string{"init", "--mode", "project", "-C", project}, env: env})
					mustRun(t, proc{name: "rewind", args: []string{"save", "x", "-C", project}, env: env})
					ids := checkpoints(t, project, env)
					// A tampered checkpoint: its archive (shared with layers/)
					// overwritten, and the tree changed so that the restore
					// has to read it.
					copyFile(t, archive, filepath.Join(project, ".agent/rewind/checkpoints", ids[0], "snapshot.tar.gz"))
					mutateTree(t, project, 9)
					p = proc{name: "rewind", args: []string{"restore", ids[0], "--code-only", "--yes", "-C", project}, env: env}
				}
				before := treeDigest(t, project)
				parentBefore := listDir(t, filepath.Dir(project))
				r := run(t, p)
				var errs []string
				if r.maxRSSKB > maxRSSKB {
					errs = append(errs, fmt.Sprintf("used %d MiB of memory", r.maxRSSKB>>10))
				}
				if r.dur > maxRunTime {
					errs = append(errs, fmt.Sprintf("took %v", r.dur))
				}
				if b, _ := os.ReadFile(filepath.Join(outside, "canary")); string(b) != "canary\n" || listDir(t, outside) != "canary" {
					errs = append(errs, "wrote outside the project (../outside)")
				}
				if got := listDir(t, filepath.Dir(project)); got != parentBefore {
					errs = append(errs, "wrote beside the project: "+got)
				}
				if _, err := os.Lstat("/tmp/rewind-evil-abs.txt"); err == nil {
					os.Remove("/tmp/rewind-evil-abs.txt")
					errs = append(errs, "wrote an absolute path")
				}
				if l := leftovers(project); len(l) > 0 {
					errs = append(errs, "left staging behind: "+strings.Join(l, ", "))
				}
				switch {
				case r.code != 0:
					if got := treeDigest(t, project); got.sum() != before.sum() {
						errs = append(errs, "a refused restore changed the tree: "+before.diff(got))
					}
					if via == "rewind-snap" && c.refuse != "" && !strings.Contains(r.stderr, c.refuse) {
						errs = append(errs, fmt.Sprintf("the error does not name the entry (%q): %q", c.refuse, strings.TrimSpace(r.stderr)))
					}
					if r.code == 2 {
						errs = append(errs, "exit 2 (usage) for bad input")
					}
				case c.refuse != "" && via == "rewind-snap":
					errs = append(errs, "accepted")
				case via == "rewind":
					errs = append(errs, "a tampered checkpoint restored without an error")
				}
				if c.name == "setuid" && r.code == 0 {
					if fi, err := os.Stat(filepath.Join(project, "suid")); err == nil && fi.Mode()&os.ModeSetuid != 0 {
						errs = append(errs, "kept the setuid bit")
					}
				}
				if len(errs) > 0 {
					failures++
					t.Errorf("%s: %s (exit %d: %s)", via, strings.Join(errs, "; "), r.code, firstLine(r.stderr))
				} else {
					t.Logf("%s: exit %d in %v, %d MiB: %s", via, r.code, r.dur.Round(time.Millisecond), r.maxRSSKB>>10, firstLine(r.stderr))
				}
				os.RemoveAll(filepath.Join(base, via))
			}
		})
	}
	figures(t, "hostile-archives", 2*len(cases), 2*len(cases), failures)
}

func manyEntries(n int) []tarEntry {
	out := make([]tarEntry, n)
	for i := range out {
		out[i] = reg(fmt.Sprintf("m/%d/%d", i%100, i), "")
	}
	return out
}

func firstLine(s string) string {
	l := strings.SplitN(strings.TrimSpace(s), "\n", 2)[0]
	if len(l) > 300 {
		l = l[:300] + "…"
	}
	return l
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	des, _ := os.ReadDir(dir)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return strings.Join(names, ",")
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// In place: the checkpoint's archive is a hard link to its layer.
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrokenTranscripts runs broken transcripts through every tool that
// reads one: no panic, bounded memory and time, a clear error or a
// sensible answer, and any fork written is whole lines.
func TestBrokenTranscripts(t *testing.T) {
	base := t.TempDir() // on disk: the 100 MiB line would cost memory on tmpfs
	good := filepath.Join(base, "good.jsonl")
	genTranscript(t, good, 512<<10, 5)
	g, _ := os.ReadFile(good)
	half := bytes.LastIndexByte(g[:len(g)/2], '\n') + 1
	// The 100 MiB line is streamed to the file: the test process must stay
	// small, since a child's RSS high-water mark from wait4 starts at the
	// parent's (exec records the old mm's), and this test measures it.
	hugeLine := func(path string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Write(g[:half])
		f.WriteString(`{"type":"user","uuid":"big","message":{"role":"user","content":"`)
		chunk := bytes.Repeat([]byte("q"), 1<<20)
		for range 100 {
			f.Write(chunk)
		}
		f.WriteString("\"}}\n")
		f.Write(g[half:])
	}
	cases := []struct {
		name  string
		data  func() []byte
		write func(path string) // instead of data, for what must not sit in memory
	}{
		{name: "empty", data: func() []byte { return nil }},
		{name: "truncated mid-line", data: func() []byte { return g[:len(g)-777] }},
		{name: "spliced mid-line", data: func() []byte { return append(append([]byte{}, g[:half+100]...), g[half+333:]...) }},
		{name: "NUL-filled region", data: func() []byte {
			b := append([]byte{}, g...)
			clear(b[half : half+200000])
			return b
		}},
		{name: "all NUL", data: func() []byte { return make([]byte, 1<<20) }},
		{name: "CRLF", data: func() []byte { return bytes.ReplaceAll(g, []byte("\n"), []byte("\r\n")) }},
		{name: "binary garbage", data: func() []byte {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = byte(i*7919 + i>>8)
			}
			return b
		}},
		{name: "deeply nested JSON", data: func() []byte {
			return append(append(append([]byte{}, g[:half]...), []byte(strings.Repeat("[", 1<<20)+strings.Repeat("]", 1<<20)+"\n")...), g[half:]...)
		}},
		{name: "100 MiB line", write: hugeLine},
		{name: "no newline at all", data: func() []byte { return bytes.ReplaceAll(g, []byte("\n"), []byte(" ")) }},
	}
	failures, runs := 0, 0
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			dir := filepath.Join(base, "c")
			os.RemoveAll(dir)
			tpath := filepath.Join(dir, "home/.claude/projects/-p/11111111-2222-4333-8444-555555555555.jsonl")
			if c.write != nil {
				os.MkdirAll(filepath.Dir(tpath), 0o755)
				c.write(tpath)
			} else {
				writeFile(t, tpath, c.data(), 0o644)
			}
			project := filepath.Join(dir, "p")
			genTree(t, project, 20, 4)
			env := []string{"HOME=" + filepath.Join(dir, "home")}
			mustRun(t, proc{name: "rewind", args: []string{"init", "--mode", "project", "-C", project}, env: env})
			procs := []proc{
				{name: "rewind-jsonl", args: []string{"turns", tpath}},
				{name: "rewind-jsonl", args: []string{"turns", "--last", "3", tpath}},
				{name: "rewind-jsonl", args: []string{"back", "1", tpath}},
				{name: "rewind-jsonl", args: []string{"cursor", tpath}},
				{name: "rewind-jsonl", args: []string{"detect", tpath}},
				{name: "rewind-fork", args: []string{"create", "--from", tpath, "--offset", fmt.Sprint(half), "--agent", "claude"}},
				{name: "rewind", args: []string{"save", "--transcript", tpath, "--agent", "claude", "x", "-C", project}},
				{name: "rewind", args: []string{"back", "1", "--transcript", tpath, "--agent", "claude", "-C", project}},
				{name: "rewind", args: []string{"validate", "-C", project}},
			}
			for _, p := range procs {
				runs++
				p.env = append(p.env, env...)
				debug.FreeOSMemory()
				r := run(t, p)
				tag := p.name + " " + p.args[0]
				var errs []string
				if r.maxRSSKB > maxRSSKB {
					errs = append(errs, fmt.Sprintf("used %d MiB of memory", r.maxRSSKB>>10))
				}
				if r.dur > maxRunTime {
					errs = append(errs, fmt.Sprintf("took %v", r.dur))
				}
				if r.code == 2 {
					errs = append(errs, "exit 2 (usage) for bad input")
				}
				if r.code != 0 && !strings.Contains(r.stderr, "error") {
					errs = append(errs, fmt.Sprintf("exit %d without an error line: %q", r.code, r.stderr))
				}
				if tag == "rewind validate" && r.code != 0 {
					errs = append(errs, "the store does not validate after saving a broken transcript: "+firstLine(r.stdout+r.stderr))
				}
				if len(errs) > 0 {
					failures++
					t.Errorf("%s: %s (exit %d: %s)", tag, strings.Join(errs, "; "), r.code, firstLine(r.stderr))
				} else {
					t.Logf("%s: exit %d in %v, %d MiB %s", tag, r.code, r.dur.Round(time.Millisecond), r.maxRSSKB>>10, firstLine(r.stderr))
				}
			}
			// Forks written are whole lines.
			des, _ := os.ReadDir(filepath.Dir(tpath))
			for _, de := range des {
				p := filepath.Join(filepath.Dir(tpath), de.Name())
				if p == tpath || !strings.HasSuffix(p, ".jsonl") {
					continue
				}
				if b, _ := os.ReadFile(p); len(b) > 0 && b[len(b)-1] != '\n' {
					failures++
					t.Errorf("fork %s does not end in a newline", de.Name())
				}
			}
			os.RemoveAll(dir)
		})
	}
	figures(t, "broken-transcripts", runs, runs, failures)
}
