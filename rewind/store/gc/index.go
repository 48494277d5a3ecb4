package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"rewind.dev/internal/durable"
	"rewind.dev/internal/layout"
	"rewind.dev/rewind/store/record"
)

// The store's index lets retention at a hook plan without reading every
// checkpoint: one line per checkpoint saying when it was made, how many
// bytes its folder holds (as gc counts them for max_bytes), whether it is a
// restore's backup (the policy counts only the checkpoints list shows),
// what its manifest is a delta over, what its transcript builds on and
// which archives its manifest file names — what gc reads every
// checkpoint's metadata and manifest for. It is a JSON header line, then one
// tab-separated line per checkpoint:
//
//	id  created_ns  bytes  kind  parent  base  archive...  crc
//
// kind is "b" for a restore's backup, "-" for a checkpoint list shows;
// parent and base are "-" for none (parent a path when the manifest is a
// delta over one that is not a checkpoint's), archives are relative to the
// store (quoted), and a line whose only archive field is "=<id>" names the
// same archives as that checkpoint's (a save that hard-linked its
// manifest). A checkpoint gc could not read has "!" for its created time.
// Each line ends in the CRC-32 of the rest (hex), so a damaged line is
// known as one.
//
// Who keeps it: a save appends its line (unsynced: a line lost is a
// checkpoint the index lacks, which makes it stale), gc removes it durably
// before it changes a checkpoint and writes it whole when done. It is used
// only when it lists exactly the checkpoints in checkpoints/ and every line
// reads; otherwise retention reads the store, as gc does, and writes it
// anew. What it says only proposes: the checkpoints retention deletes, and
// the ones that build on them, are read for real and judged by gc's rules.

// indexEntry is one checkpoint's line.
type indexEntry struct {
	created  int64 // ns; 0 for a checkpoint gc could not read
	bytes    int64 // its folder's, as dirBytes counts them
	backup   bool  // a restore's backup (Checkpoint.Backup)
	damaged  bool
	parent   string
	base     string
	archives []string // absolute
	sameAs   string   // "=<id>" before resolving
}

// indexHeader is the index's first line.
type indexHeader struct {
	Type    string `json:"type"` // "index"
	Version int    `json:"version"`
}

// indexVersion is the index's format: 2 says which checkpoints are restore
// backups, which an index of version 1 does not (it is read as stale, and
// written anew).
const indexVersion = 2

func (st Store) indexPath() string { return st.Dir + "/index" }

// readIndex reads the index, and reports whether it lists exactly ids.
func (st Store) readIndex(ids []string) (map[string]*indexEntry, bool) {
	b, err := os.ReadFile(st.indexPath())
	if err != nil {
		return nil, false
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	var h indexHeader
	if json.Unmarshal([]byte(head), &h) != nil || h.Type != "index" || h.Version != indexVersion {
		return nil, false
	}
	idx := make(map[string]*indexEntry, len(ids))
	for line := range strings.Lines(rest) {
		body, sum, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t#")
		if !ok || !strings.HasSuffix(line, "\n") || sum != lineSum(body) {
			return nil, false // (a torn last line too)
		}
		id, e, err := st.parseIndexLine(body)
		if err != nil {
			return nil, false
		}
		idx[id] = e // (a later line replaces an earlier: see IndexChanged)
	}
	if len(idx) != len(ids) {
		return nil, false
	}
	for _, id := range ids {
		if idx[id] == nil {
			return nil, false
		}
	}
	// A line "=<id>" names what that checkpoint's manifest file names, the
	// same file linked into another folder: an archive in that folder is
	// the one linked into this.
	var resolve func(id string, e *indexEntry, depth int) bool
	resolve = func(id string, e *indexEntry, depth int) bool {
		if e.sameAs == "" {
			return true
		}
		o := idx[e.sameAs]
		if o == nil || depth > len(idx) || !resolve(e.sameAs, o, depth+1) {
			return false
		}
		from := filepath.Join(st.checkpointsDir(), e.sameAs) + string(filepath.Separator)
		e.archives = make([]string, len(o.archives))
		for i, a := range o.archives {
			if rest, ok := strings.CutPrefix(a, from); ok {
				a = filepath.Join(st.checkpointsDir(), id, rest)
			}
			e.archives[i] = a
		}
		e.sameAs = ""
		return true
	}
	for id, e := range idx {
		if !resolve(id, e, 0) {
			return nil, false
		}
	}
	return idx, true
}

func (st Store) parseIndexLine(line string) (string, *indexEntry, error) {
	f := strings.Split(line, "\t")
	if len(f) < 2 || !record.IsID(f[0]) {
		return "", nil, errors.New("bad line")
	}
	e := &indexEntry{}
	if f[1] == "!" {
		e.damaged = true
		return f[0], e, nil
	}
	if len(f) < 6 {
		return "", nil, errors.New("bad line")
	}
	var err error
	if e.created, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return "", nil, err
	}
	if e.bytes, err = strconv.ParseInt(f[2], 10, 64); err != nil {
		return "", nil, err
	}
	switch f[3] {
	case "b":
		e.backup = true
	case "-":
	default:
		return "", nil, errors.New("bad line")
	}
	if e.parent, err = unquoteField(f[4]); err != nil {
		return "", nil, err
	}
	if e.base, err = unquoteField(f[5]); err != nil {
		return "", nil, err
	}
	if len(f) == 7 && strings.HasPrefix(f[6], "=") {
		e.sameAs = f[6][1:]
		return f[0], e, nil
	}
	for _, a := range f[6:] {
		p, err := strconv.Unquote(a)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(st.Dir, filepath.FromSlash(p))
		}
		e.archives = append(e.archives, p)
	}
	return f[0], e, nil
}

func unquoteField(f string) (string, error) {
	if f == "-" {
		return "", nil
	}
	return strconv.Unquote(f)
}

func quoteField(s string) string {
	if s == "" {
		return "-"
	}
	return strconv.Quote(s)
}

// indexLine is the line of checkpoint id.
func (st Store) indexLine(id string, e *indexEntry) string {
	if e.damaged {
		return id + "\t!\t#" + lineSum(id+"\t!") + "\n"
	}
	var b strings.Builder
	kind := "-"
	if e.backup {
		kind = "b"
	}
	fmt.Fprintf(&b, "%s\t%d\t%d\t%s\t%s\t%s", id, e.created, e.bytes, kind, quoteField(e.parent), quoteField(e.base))
	if e.sameAs != "" {
		b.WriteString("\t=" + e.sameAs)
	}
	for _, a := range e.archives {
		if rel, err := filepath.Rel(st.Dir, a); err == nil && filepath.IsLocal(rel) {
			a = filepath.ToSlash(rel)
		}
		b.WriteString("\t" + strconv.Quote(a))
	}
	return b.String() + "\t#" + lineSum(b.String()) + "\n"
}

// lineSum is the check an index line ends in.
func lineSum(body string) string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body)))
}

// writeIndex replaces the index (unsynced: one lost or torn is read as
// stale, and rebuilt).
func (st Store) writeIndex(idx map[string]*indexEntry) {
	ids := make([]string, 0, len(idx))
	for id := range idx {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, record.CompareIDs)
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"index","version":%d}`+"\n", indexVersion)
	for _, id := range ids {
		b.WriteString(st.indexLine(id, idx[id]))
	}
	durable.WriteFile(st.indexPath(), []byte(b.String()), layout.FileMode, durable.NoSync)
}

// StartIndex writes the empty index a new store starts with: saves append
// to it, and retention plans from it.
func StartIndex(st Store) { st.writeIndex(nil) }

// CheckIndex reads the index and every checkpoint, and says where the two
// differ: nil when the index can be trusted and says what reading the
// store says.
func CheckIndex(ctx context.Context, st Store) error {
	ids, err := st.IDs()
	if err != nil {
		return err
	}
	idx, ok := st.readIndex(ids)
	if !ok {
		return errors.New("the index is missing or stale")
	}
	cps, bad, err := st.List()
	if err != nil {
		return err
	}
	want := indexFromGraph(st.readGraph(ctx, cps, bad))
	for id := range want {
		if !reflect.DeepEqual(idx[id], want[id]) {
			return fmt.Errorf("index line of %s: %+v, the store says %+v", id, idx[id], want[id])
		}
	}
	if len(idx) != len(want) {
		return fmt.Errorf("index lists %d checkpoints, the store %d", len(idx), len(want))
	}
	return nil
}

// dropIndex removes the index durably, before gc changes a checkpoint's
// files: a crash then leaves no index to trust, rather than one that says
// what a rewritten manifest no longer does.
func (st Store) dropIndex() error {
	err := os.Remove(st.indexPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("gc: remove the store's index: %w", err)
	}
	durable.SyncDir(st.Dir)
	return nil
}

// IndexSaved appends the line of a checkpoint a save just published, when
// there is an index (init starts one; on an older store retention does).
// newest is the checkpoint before it, whose manifest file it may link.
func (st Store) IndexSaved(c *record.Checkpoint, newest *record.Checkpoint) {
	f, err := os.OpenFile(st.indexPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	e := &indexEntry{created: c.CreatedAt.UnixNano(), bytes: dirBytes(c.Dir, false), backup: c.Backup()}
	if c.Transcript != nil {
		e.base = c.Transcript.Base
	}
	if newest != nil && sameFile(c.ManifestPath(), newest.ManifestPath()) { // newest's manifest file, linked: only its header line is read
		parent, err := manifestParent(c.ManifestPath())
		if err != nil {
			return
		}
		e.parent, e.sameAs = st.parentID(parent), newest.ID
	} else {
		n, err := st.readNode(c)
		if err != nil {
			return
		}
		e.parent, e.archives = n.parent, n.archives
	}
	f.WriteString(st.indexLine(c.ID, e))
}

// IndexChanged appends a new line for c, whose metadata changed (a pin),
// when there is an index: read, it replaces the one before.
func (st Store) IndexChanged(c *record.Checkpoint) {
	f, err := os.OpenFile(st.indexPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	n, err := st.readNode(c)
	if err != nil {
		return
	}
	f.WriteString(st.indexLine(c.ID, indexOf(n)))
}

// indexOf is the index line of a node gc read.
func indexOf(n *node) *indexEntry {
	e := &indexEntry{created: n.c.CreatedAt.UnixNano(), bytes: dirBytes(n.c.Dir, false), backup: n.c.Backup(), parent: n.parent, archives: n.archives}
	if n.c.Transcript != nil {
		e.base = n.c.Transcript.Base
	}
	return e
}

// indexFromGraph is the index of what gc read of the whole store.
func indexFromGraph(g *graph) map[string]*indexEntry {
	idx := make(map[string]*indexEntry, len(g.nodes)+len(g.damaged))
	for id, n := range g.nodes {
		idx[id] = indexOf(n)
	}
	for _, id := range g.damaged {
		idx[id] = &indexEntry{damaged: true}
	}
	return idx
}

// sameFile reports whether a and b are one file.
func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
