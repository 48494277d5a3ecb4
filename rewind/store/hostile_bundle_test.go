package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/bundle"
	"rewind.dev/rewind/store/record"
)

// The hostile-bundle corpus: export archives an attacker could send, each
// refused by import before anything is written outside a temporary folder.
// The archives are in testdata/hostile-bundles/, made from hostileBundles by
//
//	go test ./rewind/store -run TestHostileBundles -update
//
// Each is a valid export but for its one hostile part, so that the check it
// meets is the one named in want. Paths an archive aims at lie under
// hostileTarget, which the test checks is never made.

var update = flag.Bool("update", false, "rewrite testdata/hostile-bundles from hostileBundles")

// hostileTarget is where the corpus's absolute paths point.
const hostileTarget = "/tmp/rewind-hostile-target"

// bundleParts is an export archive before it is written: build makes every
// hash, size and count in it agree with its parts (as an attacker can), so
// that what is hostile is only what a case changes.
type bundleParts struct {
	top        string // the archive's folder; "" for rewind-export-<checkpoint>
	info       bundle.Info
	cp         Metadata
	transcript []byte     // the conversation's bytes; nil for none
	tree       []tarEntry // tree.tar.gz's entries
	// keep leaves export.json's counts and the transcript's cursor as a
	// case set them, not made to agree.
	keep bool
	// infoJSON and cpJSON, when set, replace the encoded files.
	infoJSON, cpJSON func([]byte) []byte
	// raw, when set, replaces a member's bytes before its hash is taken, and
	// tamper after (what export.json records then no longer holds).
	raw, tamper func(name string, b []byte) []byte
	// members, when set, changes the archive's members at the end, and final
	// its bytes.
	members func(ms []tarMember) []tarMember
	final   func(b []byte) []byte
}

type tarEntry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) tarEntry {
	return tarEntry{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body}
}

func folder(name string) tarEntry {
	return tarEntry{hdr: tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755}}
}

func special(h tar.Header) tarEntry { return tarEntry{hdr: h} }

// baseParts is a valid export of a checkpoint of a small tree and a Claude
// Code conversation, as Export writes it (its tree rebuilt from entries).
func baseParts(t testing.TB) bundleParts {
	t.Helper()
	transcript := fixtureBytes(t)
	id := "20261120_101500_001"
	created := time.Date(2026, 11, 20, 10, 15, 0, 0, time.UTC)
	sid := "ebb31263-7b6a-4122-bff9-6eef5ee5652d"
	orig := "/home/alice/.claude/projects/-home-alice-app/" + sid + ".jsonl"
	cp := Metadata{Version: Version, ID: id, CreatedAt: created, Description: "before the refactor",
		Trigger:       Trigger{Kind: TriggerManual},
		Snapshot:      Snapshot{Files: 3, Dirs: 1, TreeHash: "sha256:" + strings.Repeat("ab", 32)},
		HasTranscript: true,
		Transcript:    &Transcript{Agent: "claude", OriginalPath: orig, SessionID: sid, Snapshot: TranscriptFile}}
	info := bundle.Info{Type: bundle.Format, Version: bundle.Version, CreatedAt: created, Agent: "claude",
		SourceFolder: "/home/alice/app", SessionID: sid, Transcript: orig, Checkpoint: id, TakenAt: created,
		Description: cp.Description, TreeHash: cp.Snapshot.TreeHash}
	return bundleParts{info: info, cp: cp, transcript: transcript,
		tree: []tarEntry{file("main.go", "package main\n"), folder("a/"), file("a/b.txt", "two\n"), file("c.txt", "c\n")}}
}

// build writes p as an export archive.
func (p bundleParts) build(t testing.TB) []byte {
	t.Helper()
	info, cp := p.info, p.cp
	var tree bytes.Buffer
	zw := gzip.NewWriter(&tree)
	tw := tar.NewWriter(zw)
	files := 0
	for _, e := range p.tree {
		h := e.hdr
		if h.Typeflag == tar.TypeReg {
			files++
		}
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("tree entry %q: %v", h.Name, err)
		}
		if e.body != "" {
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	members := map[string][]byte{bundle.TreeName: tree.Bytes()}
	if p.transcript != nil {
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		w.Write(p.transcript)
		w.Close()
		members[bundle.TranscriptName] = gz.Bytes()
	}
	if p.raw != nil {
		for name, b := range members {
			members[name] = p.raw(name, b)
		}
	}
	if !p.keep {
		info.Files = files
		if p.transcript != nil {
			info.TranscriptBytes, info.PrefixSHA256, info.TailSHA256 = cursorOf(p.transcript)
			n := info.TranscriptBytes
			if cp.Transcript != nil {
				cp.Transcript.Cursor.ByteOffsetEnd = n
				cp.Transcript.Cursor.PrefixSHA256, cp.Transcript.Cursor.TailSHA256 = info.PrefixSHA256, info.TailSHA256
			}
		}
	}
	cpJSON, err := record.Encode(&cp)
	if err != nil {
		t.Fatal(err)
	}
	if p.cpJSON != nil {
		cpJSON = p.cpJSON(cpJSON)
	}
	members[bundle.CheckpointName] = cpJSON
	info.Members = nil
	for _, name := range bundle.MemberNames() {
		if b, ok := members[name]; ok && name != bundle.ManifestName {
			sum := sha256.Sum256(b)
			info.Members = append(info.Members, bundle.Member{Name: name, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
		}
	}
	ij, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if p.infoJSON != nil {
		ij = p.infoJSON(ij)
	}
	members[bundle.ManifestName] = ij
	top := p.top
	if top == "" {
		top = bundle.Top(info.Checkpoint)
	}
	var ms []tarMember
	for _, name := range bundle.MemberNames() {
		b, ok := members[name]
		if !ok {
			continue
		}
		if p.tamper != nil {
			b = p.tamper(name, b)
		}
		ms = append(ms, tarMember{tar.Header{Name: top + "/" + name, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: info.CreatedAt}, b})
	}
	if p.members != nil {
		ms = p.members(ms)
	}
	var out bytes.Buffer
	w := tar.NewWriter(&out)
	for _, m := range ms {
		h := m.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m.data))
		}
		if err := w.WriteHeader(&h); err != nil {
			t.Fatalf("member %q: %v", h.Name, err)
		}
		w.Write(m.data)
	}
	w.Close()
	if p.final != nil {
		return p.final(out.Bytes())
	}
	return out.Bytes()
}

// headerSize sets the size field of the tar header at offset at to n, and its checksum.
func headerSize(b []byte, at int, n int64) []byte {
	b = bytes.Clone(b)
	h := b[at : at+512]
	copy(h[124:136], fmt.Sprintf("%011o\x00", n))
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// cursorOf is a transcript's length and the hashes of its first and last
// jsonl.HashWindow bytes, as a cursor records them.
func cursorOf(b []byte) (n int64, head, tail string) {
	n = int64(len(b))
	h, t := sha256.Sum256(b[:min(n, 64<<10)]), sha256.Sum256(b[max(0, n-64<<10):])
	return n, hex.EncodeToString(h[:]), hex.EncodeToString(t[:])
}

// hostileBundle is one case of the corpus: how it departs from the base, and
// a part of the refusal's text.
type hostileBundle struct {
	name string
	edit func(p *bundleParts)
	want string
}

// jsonEdit replaces old by new in a JSON file's text.
func jsonEdit(old, new string) func([]byte) []byte {
	return func(b []byte) []byte {
		if !bytes.Contains(b, []byte(old)) {
			panic(fmt.Sprintf("jsonEdit: %q not in %s", old, b))
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
}

// retop renames every member into folder top.
func retop(top string) func(ms []tarMember) []tarMember {
	return func(ms []tarMember) []tarMember {
		for i := range ms {
			_, rest, _ := strings.Cut(ms[i].hdr.Name, "/")
			ms[i].hdr.Name = top + "/" + rest
		}
		return ms
	}
}

// addMember appends a member to the archive.
func addMember(h tar.Header, data string) func(ms []tarMember) []tarMember {
	return func(ms []tarMember) []tarMember { return append(ms, tarMember{h, []byte(data)}) }
}

func hostileBundles() []hostileBundle {
	top := "rewind-export-20261120_101500_001/"
	reg := func(name string) tar.Header { return tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644} }
	return []hostileBundle{
		// The archive's members.
		{"member-traversal", func(p *bundleParts) { p.members = addMember(reg(top+"../../../.bashrc"), "x") }, "not a clean relative name"},
		{"member-absolute", func(p *bundleParts) { p.members = addMember(reg(hostileTarget+"/abs"), "x") }, "not a clean relative name"},
		{"member-other-folder", func(p *bundleParts) { p.members = addMember(reg("elsewhere/export.json"), "{}") }, "outside"},
		{"top-not-export", func(p *bundleParts) { p.members = retop("home") }, "outside"},
		{"top-names-other-checkpoint", func(p *bundleParts) { p.members = retop("rewind-export-20261120_101500_002") }, "does not name its checkpoint"},
		{"member-symlink", func(p *bundleParts) {
			p.members = addMember(tar.Header{Name: top + "tree.tar.gz", Typeflag: tar.TypeSymlink, Linkname: hostileTarget}, "")
		}, "not a regular file"},
		{"member-hardlink", func(p *bundleParts) {
			p.members = func(ms []tarMember) []tarMember {
				ms[0] = tarMember{tar.Header{Name: ms[0].hdr.Name, Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}, nil}
				return ms
			}
		}, "not a regular file"},
		{"member-device", func(p *bundleParts) {
			p.members = addMember(tar.Header{Name: top + "transcript.jsonl.gz", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}, "")
		}, "not a regular file"},
		{"member-fifo", func(p *bundleParts) {
			p.members = func(ms []tarMember) []tarMember {
				ms[1] = tarMember{tar.Header{Name: ms[1].hdr.Name, Typeflag: tar.TypeFifo}, nil}
				return ms
			}
		}, "not a regular file"},
		{"member-folder", func(p *bundleParts) {
			p.members = addMember(tar.Header{Name: top + "tree.tar.gz", Typeflag: tar.TypeDir, Mode: 0o755}, "")
		}, "not a regular file"},
		{"member-size-beyond-archive", func(p *bundleParts) {
			p.final = func(b []byte) []byte { return headerSize(b, 0, 1<<33) } // checkpoint.json's header: 8 GiB
		}, "more than the archive holds"},
		{"member-twice", func(p *bundleParts) {
			p.members = func(ms []tarMember) []tarMember { return append(ms[:1:1], ms...) }
		}, "appears twice"},
		{"member-unknown", func(p *bundleParts) { p.members = addMember(reg(top+"run.sh"), "#!/bin/sh\n") }, "unknown member"},
		{"tree-missing", func(p *bundleParts) {
			p.members = func(ms []tarMember) []tarMember {
				return slices.DeleteFunc(ms, func(m tarMember) bool { return strings.HasSuffix(m.hdr.Name, bundle.TreeName) })
			}
		}, `"tree.tar.gz" is missing`},
		{"checkpoint-missing", func(p *bundleParts) {
			p.members = func(ms []tarMember) []tarMember { return ms[1:] }
		}, `"checkpoint.json" is missing`},
		{"member-not-listed", func(p *bundleParts) {
			p.infoJSON = func(b []byte) []byte {
				var i bundle.Info
				json.Unmarshal(b, &i)
				i.Members = i.Members[1:]
				out, _ := json.Marshal(i)
				return out
			}
		}, "not listed"},
		{"member-listed-twice", func(p *bundleParts) {
			p.infoJSON = func(b []byte) []byte {
				var i bundle.Info
				json.Unmarshal(b, &i)
				i.Members = append(i.Members, i.Members[0])
				out, _ := json.Marshal(i)
				return out
			}
		}, "twice"},
		{"member-size-lies", func(p *bundleParts) {
			p.tamper = func(name string, b []byte) []byte {
				if name == bundle.TreeName {
					return append(b, 0)
				}
				return b
			}
		}, "bytes where export.json records"},
		{"tree-changed-after-export", func(p *bundleParts) {
			p.tamper = func(name string, b []byte) []byte {
				if name == bundle.TreeName {
					b = bytes.Clone(b)
					b[len(b)/2] ^= 0x40
				}
				return b
			}
		}, "SHA-256 differs"},
		{"export-json-not-json", func(p *bundleParts) { p.infoJSON = func([]byte) []byte { return []byte("#!/bin/sh\nrm -rf ~\n") } }, "export.json"},
		{"export-json-two-values", func(p *bundleParts) { p.infoJSON = func(b []byte) []byte { return append(b, "{}"...) } }, "more than one JSON value"},

		// export.json's fields.
		{"unknown-field", func(p *bundleParts) { p.infoJSON = jsonEdit(`"type":`, `"run": "sh -c id", "type":`) }, `unknown field "run"`},
		{"unknown-field-checkpoint", func(p *bundleParts) {
			p.cpJSON = func(b []byte) []byte {
				var m map[string]any
				json.Unmarshal(b, &m)
				delete(m, "sum")
				m["exec"] = "/bin/sh"
				out, _ := json.Marshal(m)
				return out
			}
		}, `unknown field "exec"`},
		{"type-other", func(p *bundleParts) { p.info.Type = "rewind-backdoor" }, `not "rewind-export"`},
		{"version-newer", func(p *bundleParts) { p.info.Version = 99 }, "format version 99"},
		{"checkpoint-traversal", func(p *bundleParts) {
			p.info.Checkpoint, p.cp.ID = "/../../"+hostileTarget+"/.config/git", "/../../"+hostileTarget+"/.config/git"
			p.top = "rewind-export-x"
		}, "does not name its checkpoint"},
		{"checkpoint-traversal-empty-source", func(p *bundleParts) {
			id := "/../../" + hostileTarget + "/.config/git"
			p.info.Checkpoint, p.cp.ID, p.info.SourceFolder = id, id, ""
		}, "not a clean relative name"},
		{"checkpoint-id-not-one", func(p *bundleParts) {
			p.info.Checkpoint, p.cp.ID = "20261120_101500_001;sh", "20261120_101500_001;sh"
		}, "not a checkpoint id"},
		{"checkpoint-id-dots", func(p *bundleParts) {
			p.info.Checkpoint, p.cp.ID = "..", ".."
			p.members = retop("rewind-export-..")
		}, "not a checkpoint id"},
		{"checkpoint-differs", func(p *bundleParts) { p.cp.ID = "20261120_101500_002" }, "is of checkpoint"},
		{"source-folder-empty", func(p *bundleParts) { p.info.SourceFolder = "" }, "source_folder"},
		{"source-folder-relative", func(p *bundleParts) { p.info.SourceFolder = "../../.ssh" }, "source_folder"},
		{"source-folder-unclean", func(p *bundleParts) { p.info.SourceFolder = "/home/alice/app/../../../etc" }, "source_folder"},
		{"source-folder-control", func(p *bundleParts) { p.info.SourceFolder = "/home/alice/\x1b]0;pwned\x07app" }, "source_folder"},
		{"agent-unknown", func(p *bundleParts) { p.info.Agent = "evil"; p.cp.Transcript.Agent = "evil" }, `agent "evil" is not one Rewind knows`},
		{"agent-spelled-otherwise", func(p *bundleParts) { p.info.Agent = " Claude"; p.cp.Transcript.Agent = " Claude" }, "not one Rewind knows"},
		{"session-traversal", func(p *bundleParts) {
			p.info.SessionID, p.cp.Transcript.SessionID = "../../../.ssh/id_ed25519", "../../../.ssh/id_ed25519"
		}, "not an agent's session id"},
		{"session-proc-cwd-opencode", func(p *bundleParts) {
			p.info.Agent, p.cp.Transcript.Agent = "opencode", "opencode"
			p.info.SessionID, p.cp.Transcript.SessionID = "/proc/self/cwd/bin", "/proc/self/cwd/bin"
		}, "not an agent's session id"},
		{"transcript-path-relative", func(p *bundleParts) {
			p.info.Transcript, p.cp.Transcript.OriginalPath = "../../x.jsonl", "../../x.jsonl"
		}, "transcript"},
		{"agent-disagrees", func(p *bundleParts) { p.info.Agent = "codex" }, "says agent codex"},
		{"session-disagrees", func(p *bundleParts) { p.info.SessionID = "01a208ba-80f4-7df0-93a2-89e9f4e529e3" }, "says session_id"},
		{"tree-hash-disagrees", func(p *bundleParts) { p.info.TreeHash = "sha256:" + strings.Repeat("cd", 32) }, "says tree_hash"},
		{"taken-at-disagrees", func(p *bundleParts) { p.info.TakenAt = p.info.TakenAt.Add(time.Hour) }, "says taken_at"},
		{"files-count-lies", func(p *bundleParts) {
			p.keep = true
			p.info.Files = 999
			var n int64
			n, p.info.PrefixSHA256, p.info.TailSHA256 = cursorOf(p.transcript)
			p.info.TranscriptBytes, p.cp.Transcript.Cursor = n, jsonl.Cursor{ByteOffsetEnd: n, PrefixSHA256: p.info.PrefixSHA256, TailSHA256: p.info.TailSHA256}
		}, "holds 3 files where export.json records 999"},
		{"redacted-traversal", func(p *bundleParts) { p.info.Redacted = []string{"../../.ssh"} }, "redacted path"},
		{"conversation-without-transcript", func(p *bundleParts) {
			p.transcript = nil
			p.cp.HasTranscript, p.cp.Transcript = false, nil
		}, "names a conversation"},
		{"checkpoint-sum-wrong", func(p *bundleParts) { p.cpJSON = jsonEdit(`"before the refactor"`, `"before the refactoR"`) }, "checksum differs"},

		// The conversation.
		{"transcript-bytes-lie", func(p *bundleParts) {
			p.keep = true
			n := int64(len(p.transcript))
			p.info.TranscriptBytes, p.info.PrefixSHA256, p.info.TailSHA256 = n+100, "x", "y"
			p.cp.Transcript.Cursor.ByteOffsetEnd = n + 100
		}, "transcript holds"},
		{"transcript-changed-hashes-kept", func(p *bundleParts) {
			p.keep = true
			var n int64
			n, p.info.PrefixSHA256, p.info.TailSHA256 = cursorOf(p.transcript)
			p.info.TranscriptBytes, p.cp.Transcript.Cursor.ByteOffsetEnd = n, n
			p.transcript = bytes.Replace(p.transcript, []byte("sed"), []byte("rm "), 1)
		}, "first bytes differ"},
		{"transcript-inflates-without-end", func(p *bundleParts) {
			p.keep = true
			var n int64
			n, p.info.PrefixSHA256, p.info.TailSHA256 = cursorOf(p.transcript)
			p.info.TranscriptBytes, p.cp.Transcript.Cursor.ByteOffsetEnd = n, n
			p.transcript = append(p.transcript, make([]byte, 32<<20)...) // 32 MiB of zeros: 32 KiB compressed
		}, "transcript holds"},
		{"transcript-not-gzip", func(p *bundleParts) {
			p.raw = func(name string, b []byte) []byte {
				if name == bundle.TranscriptName {
					return []byte("plain text, not gzip\n")
				}
				return b
			}
		}, "does not inflate"},

		// The tree.
		{"tree-absolute", func(p *bundleParts) { p.tree = append(p.tree, file(hostileTarget+"/planted", "x")) }, "tree.tar.gz"},
		{"tree-traversal", func(p *bundleParts) { p.tree = append(p.tree, file("a/../../../.bashrc", "evil")) }, "tree.tar.gz"},
		{"tree-symlink-pivot", func(p *bundleParts) {
			p.tree = append(p.tree, special(tar.Header{Name: "pivot", Typeflag: tar.TypeSymlink, Linkname: hostileTarget}), file("pivot/planted", "x"))
		}, "tree.tar.gz"},
		{"tree-hardlink", func(p *bundleParts) {
			p.tree = append(p.tree, special(tar.Header{Name: "passwd", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}))
		}, "tree.tar.gz"},
		{"tree-device", func(p *bundleParts) {
			p.tree = append(p.tree, special(tar.Header{Name: "null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3}))
		}, "tree.tar.gz"},
		{"tree-fifo", func(p *bundleParts) {
			p.tree = append(p.tree, special(tar.Header{Name: "pipe", Typeflag: tar.TypeFifo, Mode: 0o644}))
		}, "tree.tar.gz"},
		{"tree-duplicate", func(p *bundleParts) { p.tree = append(p.tree, file("c.txt", "again\n")) }, "tree.tar.gz"},
		{"tree-git-folder", func(p *bundleParts) {
			p.tree = append(p.tree, folder(".git/"), file(".git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n"))
		}, "tree.tar.gz"},
		{"tree-store-folder", func(p *bundleParts) {
			p.tree = append(p.tree, folder(".agent/"), folder(".agent/rewind/"), file(".agent/rewind/session.json", `{"transcript_path":"/root/.ssh/id_ed25519"}`))
		}, "tree.tar.gz"},
		{"tree-not-gzip", func(p *bundleParts) {
			p.raw = func(name string, b []byte) []byte {
				if name == bundle.TreeName {
					return []byte("not an archive")
				}
				return b
			}
		}, "tree.tar.gz"},
	}
}

// TestHostileBundles imports every archive of the corpus into a sandbox:
// each is refused as a bundle.Error naming what is wrong, and nothing is
// left anywhere but what was there: no folder made, no file of the sandbox
// changed, the temporary folder emptied, nothing under hostileTarget.
func TestHostileBundles(t *testing.T) {
	dir := filepath.Join("testdata", "hostile-bundles")
	cases := hostileBundles()
	if *update {
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			p := baseParts(t)
			c.edit(&p)
			if err := os.WriteFile(filepath.Join(dir, c.name+".tar"), p.build(t), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(cases) < 40 {
		t.Fatalf("the corpus has %d archives; it is to have at least 40", len(cases))
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name+".tar"] = true
	}
	on, _ := os.ReadDir(dir)
	for _, e := range on {
		if !names[e.Name()] {
			t.Errorf("%s/%s is no case of hostileBundles: run with -update", dir, e.Name())
		}
	}
	// The base itself imports: the refusals are the cases', not the base's.
	t.Run("base", func(t *testing.T) {
		p := baseParts(t)
		sb := newSandbox(t)
		file := filepath.Join(sb.root, "base.tar")
		os.WriteFile(file, p.build(t), 0o600)
		res, err := Import(ctx, file, ImportOptions{Cwd: sb.cwd})
		if err != nil {
			t.Fatalf("the base archive: %v", err)
		}
		if res.Dir != filepath.Join(sb.cwd, "app") || res.Files != 3 || res.SessionID == "" {
			t.Errorf("the base archive: %+v", res)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			archive, err := filepath.Abs(filepath.Join(dir, c.name+".tar"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(archive); err != nil {
				t.Fatalf("%v: run with -update", err)
			}
			sb := newSandbox(t)
			before := sb.list(t)
			_, err = Import(ctx, archive, ImportOptions{Cwd: sb.cwd})
			var be *bundle.Error
			if !errors.As(err, &be) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("import: %v\nwant a bundle.Error saying %q", err, c.want)
			}
			if strings.ContainsFunc(err.Error(), func(r rune) bool { return r < 0x20 }) {
				t.Errorf("the error holds a control character: %q", err)
			}
			if after := sb.list(t); !slices.Equal(before, after) {
				t.Errorf("the sandbox changed:\nbefore %q\nafter  %q", before, after)
			}
			if left, _ := os.ReadDir(sb.tmp); len(left) > 0 {
				t.Errorf("the temporary folder holds %v", left)
			}
			if _, err := os.Lstat(hostileTarget); err == nil {
				t.Errorf("%s exists", hostileTarget)
			}
		})
	}
}

// sandbox is a user's world for an import: a home with agents' folders, a
// current folder, and a temporary folder of its own.
type sandbox struct{ root, home, cwd, tmp string }

func newSandbox(t *testing.T) sandbox {
	root := t.TempDir()
	sb := sandbox{root: root, home: filepath.Join(root, "home"), cwd: filepath.Join(root, "cwd"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{sb.cwd, sb.tmp, filepath.Join(sb.home, ".claude", "projects"), filepath.Join(sb.home, ".ssh"), filepath.Join(sb.home, ".config", "git")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(sb.home, ".ssh", "id_ed25519"), []byte("PRIVATE KEY\n"), 0o600)
	os.WriteFile(filepath.Join(sb.home, ".bashrc"), []byte("# bashrc\n"), 0o644)
	t.Setenv("HOME", sb.home)
	t.Setenv("REWIND_HOME", filepath.Join(sb.home, ".rewind"))
	t.Setenv("TMPDIR", sb.tmp)
	for _, k := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("PATH", "/usr/bin:/bin") // (git; no opencode)
	return sb
}

// list is every path under the sandbox's root with its size and mode, but
// for the temporary folder's contents.
func (sb sandbox) list(t *testing.T) []string {
	var out []string
	filepath.WalkDir(sb.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %v %d", strings.TrimPrefix(p, sb.root), fi.Mode(), fi.Size()))
		if p == sb.tmp {
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// An archive whose session id is one the user has already: the import makes a new session
// beside it and leaves the user's as it was.
func TestImportNeverOverAnExistingSession(t *testing.T) {
	p := baseParts(t)
	sb := newSandbox(t)
	archive := filepath.Join(sb.root, "a.tar")
	os.WriteFile(archive, p.build(t), 0o600)
	dest := filepath.Join(sb.cwd, "app")
	mine := filepath.Join(sb.home, ".claude", "projects", dashedName(dest), p.info.SessionID+".jsonl")
	os.MkdirAll(filepath.Dir(mine), 0o700)
	if err := os.WriteFile(mine, []byte("{\"mine\":true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Import(ctx, archive, ImportOptions{Cwd: sb.cwd})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID == p.info.SessionID || res.Transcript == mine {
		t.Errorf("the import took the session id %s the user has", res.SessionID)
	}
	if b, _ := os.ReadFile(mine); string(b) != "{\"mine\":true}\n" {
		t.Errorf("the user's session changed: %q", b)
	}
	if filepath.Dir(res.Transcript) != filepath.Dir(mine) {
		t.Errorf("the session went to %s, not beside the project's sessions", res.Transcript)
	}
}
