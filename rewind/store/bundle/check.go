package bundle

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"rewind.dev/internal/layout"
	"rewind.dev/jsonl"
	"rewind.dev/rewind/store/record"
)

// check holds export.json to its grammar and to the checkpoint's metadata
// cp: every name that may become a path, or a word on the screen, is one it
// may be, and what both files say they say alike. hasTranscript says whether
// the archive holds the conversation.
func (i *Info) check(cp *record.Metadata, hasTranscript bool) error {
	if !record.IsID(i.Checkpoint) {
		return fmt.Errorf("checkpoint %q is not a checkpoint id", i.Checkpoint)
	}
	if cp.ID != i.Checkpoint {
		return fmt.Errorf("%s is of checkpoint %q, %s of %q", CheckpointName, cp.ID, ManifestName, i.Checkpoint)
	}
	if err := i.checkText(); err != nil {
		return err
	}
	if err := i.checkRedaction(hasTranscript); err != nil {
		return err
	}
	return i.checkAgrees(cp, hasTranscript)
}

// checkText holds export.json's text fields to their grammar: of a bounded
// length and UTF-8, folders clean absolute paths, the agent one Rewind
// knows, the session id an agent's, the counts in range.
func (i *Info) checkText() error {
	for _, f := range []struct{ name, v string }{
		{"rewind_version", i.RewindVersion}, {"agent_version", i.AgentVersion}, {"source_folder", i.SourceFolder},
		{"transcript", i.Transcript}, {"description", i.Description}, {"prompt", i.Prompt},
	} {
		if len(f.v) > fieldLimit || !utf8.ValidString(f.v) {
			return fmt.Errorf("%s is longer than %d bytes or not UTF-8", f.name, fieldLimit)
		}
	}
	if !cleanAbs(i.SourceFolder) {
		return fmt.Errorf("source_folder %q is not a clean absolute path", i.SourceFolder)
	}
	if i.Transcript != "" && !cleanAbs(i.Transcript) {
		return fmt.Errorf("transcript %q is not a clean absolute path", i.Transcript)
	}
	if i.Agent != "" {
		if d, err := jsonl.LookupDialect(i.Agent); err != nil || d.Name != i.Agent {
			return fmt.Errorf("agent %q is not one Rewind knows (%s)", i.Agent, strings.Join(jsonl.DialectNames(), ", "))
		}
	}
	if i.SessionID != "" && !layout.ValidSessionID(i.SessionID) {
		return fmt.Errorf("session_id %q is not an agent's session id", i.SessionID)
	}
	if i.Files < 0 || i.TranscriptBytes < 0 || i.TranscriptBytes > textLimit {
		return fmt.Errorf("its counts are out of range")
	}
	return nil
}

// checkRedaction holds what export.json says --redact did to its grammar:
// relative paths, fields a secret is masked in, counts in range.
func (i *Info) checkRedaction(hasTranscript bool) error {
	for _, r := range i.Redacted {
		if !filepath.IsLocal(r) || layout.HasControl(r) {
			return fmt.Errorf("redacted path %q is not a relative path", r)
		}
	}
	for _, m := range i.Masked {
		if !filepath.IsLocal(m.Path) || layout.HasControl(m.Path) || m.Count <= 0 {
			return fmt.Errorf("masked path %q is not a relative path, or its count is out of range", m.Path)
		}
	}
	for _, f := range i.MaskedFields {
		if !slices.Contains(maskableFields, f) {
			return fmt.Errorf("masked field %q is not one a secret is masked in", f)
		}
	}
	if i.TranscriptMasked < 0 || i.TranscriptMasked > 0 && !hasTranscript {
		return fmt.Errorf("transcript_masked is out of range")
	}
	return nil
}

// checkAgrees checks that every field export.json shares with the
// checkpoint's metadata cp says what cp says, and that both say alike
// whether the archive holds a transcript.
func (i *Info) checkAgrees(cp *record.Metadata, hasTranscript bool) error {
	same := func(field string, a, b any) error {
		if a != b {
			return fmt.Errorf("%s says %s %v where %s says %v", ManifestName, field, a, CheckpointName, b)
		}
		return nil
	}
	t := cp.Transcript
	if hasTranscript != (t != nil && t.Snapshot != "") || hasTranscript != cp.HasTranscript {
		return fmt.Errorf("%s and %s disagree on whether it holds a transcript", ManifestName, CheckpointName)
	}
	errs := []error{
		same("taken_at", i.TakenAt.UTC(), cp.CreatedAt.UTC()), same("description", i.Description, cp.Description),
		same("prompt", i.Prompt, cp.Trigger.Prompt), same("tree_hash", i.TreeHash, cp.Snapshot.TreeHash),
	}
	if hasTranscript {
		if i.TranscriptBytes <= 0 || i.PrefixSHA256 == "" || i.TailSHA256 == "" {
			return fmt.Errorf("its transcript has no cursor in %s", ManifestName)
		}
		errs = append(errs, same("agent", i.Agent, t.Agent), same("session_id", i.SessionID, t.SessionID),
			same("transcript", i.Transcript, t.OriginalPath), same("transcript_bytes", i.TranscriptBytes, t.Cursor.ByteOffsetEnd))
	} else if i.Agent != "" || i.SessionID != "" || i.TranscriptBytes != 0 {
		return fmt.Errorf("%s names a conversation the archive does not hold", ManifestName)
	}
	return errors.Join(errs...)
}

// checkTranscript inflates an archive's transcript, the file name, and
// checks that it is exactly the bytes export.json's cursor says: its length
// and the hashes of its first and last bytes. It stops a byte past that
// length, so a transcript that inflates without end is refused there.
func checkTranscript(name string, i *Info) error {
	r, err := record.OpenTranscript([]string{name})
	if err != nil {
		return err
	}
	defer r.Close()
	t := (*record.TranscriptSum)(nil).Clone()
	defer t.Recycle()
	buf := make([]byte, 64<<10)
	lr := io.LimitReader(r, i.TranscriptBytes+1)
	for {
		n, err := lr.Read(buf)
		t.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("does not inflate: %w", err)
		}
	}
	return t.Check(jsonl.Cursor{ByteOffsetEnd: i.TranscriptBytes, PrefixSHA256: i.PrefixSHA256, TailSHA256: i.TailSHA256})
}

// cleanAbs reports whether p is an absolute path as its system writes one
// (this system's, or the other family's: an archive may come from Windows),
// clean, without control characters.
func cleanAbs(p string) bool {
	if p == "" || layout.HasControl(p) {
		return false
	}
	if strings.HasPrefix(p, "/") {
		return path.Clean(p) == p
	}
	if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') { // C:\…
		return !strings.Contains(p, "..")
	}
	return false
}
