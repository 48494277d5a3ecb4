package store

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"rewind.dev/rewind/store/bundle"
	"rewind.dev/rewind/store/record"
)

// sumField opens metadata.json's last field, its checksum, as every
// version has written it.
const sumField = ",\n  \"sum\": \""

// asVersion1 is metadata.json as Rewind wrote it before every key was
// snake_case: "hasTranscript", and the checksum over that text.
func asVersion1(t *testing.T, raw []byte) []byte {
	t.Helper()
	i := bytes.LastIndex(raw, []byte(sumField))
	if i < 0 || !bytes.Contains(raw, []byte(`"has_transcript": `)) {
		t.Fatalf("no has_transcript or no sum in\n%s", raw)
	}
	body := bytes.Replace(raw[:i], []byte(`"has_transcript": `), []byte(`"hasTranscript": `), 1)
	sum := sha256.Sum256(append(bytes.Clone(body), "\n}"...))
	out := fmt.Appendf(body, "%s%x\"\n}\n", sumField, sum)
	if err := record.CheckSum(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A checkpoint's metadata.json writes has_transcript; one an earlier
// version wrote (hasTranscript, its checksum over that text) is read as
// it was meant, and rewritten (a pin) with today's name, its checksum anew.
// What Save and Pin leave in memory is what the file says, sum and all.
func TestMetadataOfAnEarlierVersion(t *testing.T) {
	t.Parallel()
	s := project(t)
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(tr, fixtureBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	c := save(t, s, SaveOptions{TranscriptPath: tr, Agent: "claude"})
	file := filepath.Join(c.Dir, MetadataFile)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"has_transcript": true`)) || bytes.Contains(raw, []byte("hasTranscript")) {
		t.Fatalf("a new metadata.json:\n%s", raw)
	}
	if c.Sum == "" || !bytes.HasSuffix(raw, fmt.Appendf(nil, "%s%s\"\n}\n", sumField, c.Sum)) {
		t.Errorf("the checkpoint Save returned has sum %q; its metadata.json:\n%s", c.Sum, raw)
	}
	if err := os.WriteFile(file, asVersion1(t, raw), 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := s.Load(c.ID)
	if err != nil {
		t.Fatalf("an earlier version's metadata.json: %v", err)
	}
	if !old.HasTranscript || old.Transcript == nil {
		t.Errorf("an earlier version's metadata.json read without its transcript: %+v", old.Metadata)
	}
	if _, err := s.Pin(ctx, old, PinOptions{Label: "keep"}); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"has_transcript": true`)) || bytes.Contains(raw, []byte("hasTranscript")) {
		t.Errorf("rewritten by a pin:\n%s", raw)
	}
	again, err := s.Load(c.ID)
	if err != nil || !again.HasTranscript || again.Pinned != "keep" {
		t.Errorf("after the pin: %v %+v", err, again)
	}
	if again != nil && again.Sum != old.Sum {
		t.Errorf("the pin left sum %q in memory, wrote %q", old.Sum, again.Sum)
	}
	if probs, _, err := s.Validate(ctx); err != nil || len(probs) > 0 {
		t.Errorf("validate: %v %v", err, probs)
	}
}

// An archive of format version 1 (testdata/bundles/version-1.tar, written
// by 'rewind export' before has_transcript was named so) imports, its
// conversation with it; new archives are of version 2.
func TestImportsAnArchiveOfVersion1(t *testing.T) {
	archive, err := filepath.Abs(filepath.Join("testdata", "bundles", "version-1.tar"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(ctx, archive)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if b.Info.Version != 1 || !b.Checkpoint.HasTranscript {
		t.Errorf("version %d, has_transcript %v", b.Info.Version, b.Checkpoint.HasTranscript)
	}
	sb := newSandbox(t)
	res, err := Import(ctx, archive, ImportOptions{Cwd: sb.cwd})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID == "" || res.Transcript == "" || res.Files != 1 {
		t.Errorf("imported %+v", res)
	}

	_, ms := exportFixture(t)
	for _, m := range ms {
		if filepath.Base(m.hdr.Name) == bundle.ManifestName && !bytes.Contains(m.data, fmt.Appendf(nil, `"version": %d,`, bundle.Version)) {
			t.Errorf("a new archive's export.json:\n%s", m.data)
		}
		if filepath.Base(m.hdr.Name) == bundle.CheckpointName && (!bytes.Contains(m.data, []byte(`"has_transcript": true`)) || bytes.Contains(m.data, []byte("hasTranscript"))) {
			t.Errorf("a new archive's checkpoint.json:\n%s", m.data)
		}
	}
}
