package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"rewind.dev/rewind/store/bundle"
)

// hostileCmd is the testscript command 'hostile IN OUT': it writes OUT, the
// export archive IN with a tree.tar.gz that also holds ../escaped.txt, and
// export.json's hashes made to match, so that only the tree's own checks can
// refuse it.
func hostileCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hostile IN OUT")
	}
	in, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer in.Close()
	type member struct {
		hdr  *tar.Header
		data []byte
	}
	var ms []member
	tr := tar.NewReader(in)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		ts.Check(err)
		data, err := io.ReadAll(tr)
		ts.Check(err)
		ms = append(ms, member{hdr, data})
	}
	var evil bytes.Buffer
	zw := gzip.NewWriter(&evil)
	tw := tar.NewWriter(zw)
	ts.Check(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "../escaped.txt", Size: 3, Mode: 0o644}))
	_, err = tw.Write([]byte("hi\n"))
	ts.Check(err)
	ts.Check(tw.Close())
	ts.Check(zw.Close())
	var info bundle.Info
	for i := range ms {
		if strings.HasSuffix(ms[i].hdr.Name, "/"+bundle.TreeName) {
			ms[i].data = evil.Bytes()
		}
		if strings.HasSuffix(ms[i].hdr.Name, "/"+bundle.ManifestName) {
			ts.Check(json.Unmarshal(ms[i].data, &info))
		}
	}
	for i := range info.Members {
		for _, m := range ms {
			if strings.HasSuffix(m.hdr.Name, "/"+info.Members[i].Name) {
				sum := sha256.Sum256(m.data)
				info.Members[i].Size, info.Members[i].SHA256 = int64(len(m.data)), hex.EncodeToString(sum[:])
			}
		}
	}
	out, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	defer out.Close()
	ow := tar.NewWriter(out)
	for _, m := range ms {
		if strings.HasSuffix(m.hdr.Name, "/"+bundle.ManifestName) {
			m.data, err = json.Marshal(info)
			ts.Check(err)
		}
		m.hdr.Size = int64(len(m.data))
		ts.Check(ow.WriteHeader(m.hdr))
		_, err = ow.Write(m.data)
		ts.Check(err)
	}
	ts.Check(ow.Close())
}
