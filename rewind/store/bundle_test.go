package store

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/rewind/store/bundle"
)

// exportFixture saves a checkpoint with a transcript and a layer chain and
// exports it; it returns the archive's members in order (name → bytes).
func exportFixture(t *testing.T) (string, []tarMember) {
	t.Helper()
	s := project(t)
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(tr, fixtureBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, s.Project, "a/b.txt", "one\n")
	save(t, s, SaveOptions{TranscriptPath: tr, Agent: "claude"})
	write(t, s.Project, "a/b.txt", "two\n")
	write(t, s.Project, "c.txt", "c\n")
	cp := save(t, s, SaveOptions{TranscriptPath: tr, Agent: "claude"})
	if !cp.Snapshot.Layer {
		t.Fatal("the second checkpoint is not a layer")
	}
	out := filepath.Join(t.TempDir(), "x.tar")
	res, err := s.Export(ctx, cp, ExportOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 3 || len(res.Members) != 3 {
		t.Fatalf("export: %d files, members %+v", res.Files, res.Members)
	}
	return out, readTar(t, out)
}

type tarMember struct {
	hdr  tar.Header
	data []byte
}

func readTar(t *testing.T, name string) []tarMember {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ms []tarMember
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return ms
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		ms = append(ms, tarMember{*hdr, data})
	}
}

func writeTar(t *testing.T, ms []tarMember) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "y.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		h := m.hdr
		h.Size = int64(len(m.data))
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write(m.data)
	}
	tw.Close()
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	out, ms := exportFixture(t)
	var names []string
	for _, m := range ms {
		names = append(names, m.hdr.Name[strings.IndexByte(m.hdr.Name, '/')+1:])
	}
	if got := strings.Join(names, " "); got != "checkpoint.json transcript.jsonl.gz tree.tar.gz export.json" {
		t.Errorf("members %s", got)
	}
	b, err := bundle.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Info.Agent != "claude" || b.Info.Files != 3 || b.Info.TranscriptBytes != int64(len(fixtureBytes(t))) || b.Checkpoint.ID != b.Info.Checkpoint {
		t.Errorf("info %+v", b.Info)
	}
}

// Every way an archive can be wrong is refused by bundle.Open, as a
// bundle.Error, before anything is made of it.
func TestBundleRefused(t *testing.T) {
	t.Parallel()
	_, ms := exportFixture(t)
	top := ms[0].hdr.Name[:strings.IndexByte(ms[0].hdr.Name, '/')]
	edit := func(name string, f func(m *tarMember)) []tarMember {
		out := make([]tarMember, len(ms))
		for i, m := range ms {
			m.data = bytes.Clone(m.data)
			if strings.HasSuffix(m.hdr.Name, "/"+name) {
				f(&m)
			}
			out[i] = m
		}
		return out
	}
	flip := func(m *tarMember) { m.data[len(m.data)/2] ^= 1 }
	cases := map[string]struct {
		ms   []tarMember
		want string
	}{
		"tree changed":       {edit(bundle.TreeName, flip), "tree.tar.gz's SHA-256 differs"},
		"transcript changed": {edit(bundle.TranscriptName, flip), "transcript.jsonl.gz's SHA-256 differs"},
		"checkpoint changed": {edit(bundle.CheckpointName, flip), "checkpoint.json's SHA-256 differs"},
		"tree cut":           {edit(bundle.TreeName, func(m *tarMember) { m.data = m.data[:len(m.data)-1] }), "bytes where export.json records"},
		"newer version": {edit(bundle.ManifestName, func(m *tarMember) {
			m.data = bytes.Replace(m.data, fmt.Appendf(nil, `"version": %d`, bundle.Version), []byte(`"version": 9`), 1)
		}), "format version 9"},
		"not an export":  {edit(bundle.ManifestName, func(m *tarMember) { m.data = bytes.Replace(m.data, []byte(`rewind-export`), []byte(`rewind-other`), 1) }), "not \"rewind-export\""},
		"no export.json": {ms[:3], "no export.json"},
		"unknown member": {append(ms[:3:3], tarMember{tar.Header{Name: top + "/extra", Typeflag: tar.TypeReg, Mode: 0o644}, []byte("x")}, ms[3]), "unknown member"},
		"member outside": {append([]tarMember{{tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644}, []byte("x")}}, ms...), "outside"},
		"symlink member": {edit(bundle.CheckpointName, func(m *tarMember) { m.hdr.Typeflag, m.hdr.Linkname = tar.TypeSymlink, "/etc/passwd" }), "not a regular file"},
		"member twice":   {append(ms[:1:1], ms...), "appears twice"},
		"member missing": {append(ms[:2:2], ms[3]), `"tree.tar.gz" is missing`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := bundle.Open(ctx, writeTar(t, c.ms))
			var be *bundle.Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a bundle.Error saying %q", err, c.want)
			}
		})
	}
}

func TestClaudeProjectName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/home/me/my proj": "-home-me-my-proj",
		"/tmp/a.b_c":       "-tmp-a-b-c",
		"/x/café":          "-x-caf-",
		"/x/😀":             "-x---",
	} {
		if got := dashedName(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
