package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind.dev/rewind/store/bundle"
)

// Planted secrets, written in pieces so that this file holds no token a
// push-protection scanner would take for a live one.
var (
	plantedGitHub    = "gh" + "p_" + "R2pYk8dQmZ4vL7nW1xC9bT6hF3sJ0aEuGiKo"
	plantedAWSKeyID  = "AK" + "IA" + "ZQ3WX7RT5YUPLM2B"
	plantedAWSSecret = "wJa" + "lrXUtnFK7MDENGbPxRfiCYz9Q2vB8nL4kT6hS3dW"
	plantedKeyBody   = "MIIEpQIBAAKCAQEAn6/O8li+SX4m98LLYt/PKSzEmQ++ZBD7Loh9P13f4yQ92EF3"
	plantedKey       = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + plantedKeyBody + "\n" +
		"yxR5MsXFu9PRsrYQA7/4UTPHiC4y2sAVCBg4C2yyBpUEtMQjyCESi6Y=\n-----END RSA PRIVATE KEY-----\n"
	planted = []string{plantedGitHub, plantedAWSKeyID, plantedAWSSecret, plantedKeyBody}
)

// secretsCheckpoint saves a checkpoint whose tree, transcript and prompt
// hold secrets: an AWS key id in a Go file, a private key in a text file, a
// GitHub token in YAML; in the conversation, a prompt with an AWS secret
// key and a GitHub token between escaped line breaks.
func secretsCheckpoint(t *testing.T) (*Store, *Checkpoint, []byte) {
	t.Helper()
	s := project(t)
	write(t, s.Project, "cloud/aws.go", "package cloud\n\nconst keyID = \""+plantedAWSKeyID+"\"\n")
	write(t, s.Project, "notes.txt", "the deploy key:\n"+plantedKey+"that's all\n")
	write(t, s.Project, ".github/ci.yml", "env:\n  token: "+plantedGitHub+"\n")
	write(t, s.Project, "clean.txt", "nothing to see\n")
	prompt, _ := json.Marshal("deploy with\nAWS_SECRET_ACCESS_KEY=" + plantedAWSSecret + "\nand the token\n" + plantedGitHub + "\nthanks")
	tr := bytes.Replace(fixtureBytes(t), []byte(`"role":"user","content":"write src/main.go=package main; write notes.txt=first"`), []byte(`"role":"user","content":`+string(prompt)), 1)
	if bytes.Equal(tr, fixtureBytes(t)) {
		t.Fatal("the fixture's prompt was not found")
	}
	name := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(name, tr, 0o600); err != nil {
		t.Fatal(err)
	}
	cp := save(t, s, SaveOptions{TranscriptPath: name, Agent: "claude", Trigger: Trigger{Kind: TriggerManual, Prompt: "use " + plantedGitHub}})
	return s, cp, tr
}

// Without --redact, an export reports every secret, place by place, and
// carries them; with it, none is left anywhere in the archive, the
// transcript keeps its length and its lines stay JSON, and the archive
// imports: the tree and the new session hold the masked text.
func TestExportSecrets(t *testing.T) {
	s, cp, tr := secretsCheckpoint(t)
	out := filepath.Join(t.TempDir(), "plain.tar")
	res, err := s.Export(ctx, cp, ExportOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Found
	var tree []string
	for _, x := range f.Tree {
		tree = append(tree, x.Path+":"+x.Rule)
	}
	if got := strings.Join(tree, " "); got != ".github/ci.yml:github-pat cloud/aws.go:aws-access-token notes.txt:private-key" {
		t.Errorf("tree: %s", got)
	}
	if len(f.Transcript) != 2 || f.Transcript[0].Rule != "generic-api-key" || f.Transcript[1].Rule != "github-pat" || f.Transcript[0].Line != 3 {
		t.Errorf("transcript: %+v", f.Transcript)
	}
	if len(f.Checkpoint) != 1 || f.Checkpoint[0] != (FieldSecret{"prompt", "github-pat"}) {
		t.Errorf("checkpoint: %+v", f.Checkpoint)
	}
	if res.Masked != nil || res.TranscriptMasked != 0 || res.MaskedFields != nil {
		t.Errorf("masked without --redact: %+v", res)
	}
	if all := archiveText(t, out); !strings.Contains(all, plantedGitHub) || !strings.Contains(all, plantedAWSSecret) {
		t.Error("the secrets are not in the archive made without --redact")
	}

	red := filepath.Join(t.TempDir(), "red.tar")
	res, err = s.Export(ctx, cp, ExportOptions{Out: red, Redact: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Masked) != 3 || res.TranscriptMasked != 2 || strings.Join(res.MaskedFields, ",") != "prompt" {
		t.Errorf("masked %+v, in the transcript %d, fields %v", res.Masked, res.TranscriptMasked, res.MaskedFields)
	}
	all := archiveText(t, red)
	for _, p := range planted {
		if strings.Contains(all, p) {
			t.Errorf("%q is in the archive made with --redact", p)
		}
	}
	var text []byte
	for _, m := range readTar(t, red) {
		if strings.HasSuffix(m.hdr.Name, bundle.TranscriptName) {
			text = gunzip(t, m.data)
		}
	}
	if len(text) != len(tr) {
		t.Errorf("the transcript is %d bytes, not %d", len(text), len(tr))
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n")) {
		if !json.Valid(l) {
			t.Errorf("line %d is not JSON: %s", i+1, l)
		}
	}

	sb := newSandbox(t)
	imp, err := Import(ctx, red, ImportOptions{Cwd: sb.cwd})
	if err != nil {
		t.Fatal(err)
	}
	aws := read(t, filepath.Join(imp.Dir, "cloud/aws.go"))
	if want := "package cloud\n\nconst keyID = \"" + strings.Repeat("*", len(plantedAWSKeyID)) + "\"\n"; aws != want {
		t.Errorf("imported aws.go: %q", aws)
	}
	if got := read(t, filepath.Join(imp.Dir, "notes.txt")); len(got) != len("the deploy key:\n"+plantedKey+"that's all\n") || strings.Contains(got, plantedKeyBody) {
		t.Errorf("imported notes.txt: %q", got)
	}
	session := read(t, imp.Transcript)
	for _, p := range planted {
		if strings.Contains(session, p) {
			t.Errorf("%q is in the imported session", p)
		}
	}
	if !strings.Contains(session, `deploy with\nAWS_SECRET_ACCESS_KEY=****`) {
		t.Errorf("the imported session does not hold the masked prompt")
	}
}

// archiveText is every member of an export archive, and the transcript and
// the tree's files inflated, as one string.
func archiveText(t *testing.T, name string) string {
	t.Helper()
	var all strings.Builder
	for _, m := range readTar(t, name) {
		all.Write(m.data)
		switch {
		case strings.HasSuffix(m.hdr.Name, bundle.TranscriptName):
			all.Write(gunzip(t, m.data))
		case strings.HasSuffix(m.hdr.Name, bundle.TreeName):
			tr := tar.NewReader(bytes.NewReader(gunzip(t, m.data)))
			for {
				if _, err := tr.Next(); err != nil {
					break
				}
				io.Copy(&all, tr)
			}
		}
	}
	return all.String()
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
