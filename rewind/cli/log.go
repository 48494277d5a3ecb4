package cli

import (
	"container/heap"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"rewind.dev/internal/cmdline"
	"rewind.dev/rewind/store"
)

type logCmd struct {
	common
	graph bool
	all   bool
}

func (c *logCmd) RegisterFlags(fs *flag.FlagSet) {
	c.register(fs)
	fs.BoolVar(&c.graph, "graph", false, "draw the sessions and forks as a tree, like git log --graph")
	fs.BoolVar(&c.all, "all", false, "also show the backups restores took")
}

// logSession is one line of log --json: a session, parents before their forks.
type logSession struct {
	Type string `json:"type"` // "session"
	*store.Session
	Checkpoints []logCheckpoint `json:"checkpoints"` // newest first
}

// logCheckpoint is a checkpoint as log --json lists it: the object list,
// show and save print, and, until the next release, the fields log printed
// before it printed that (see JSON OUTPUT in rewind(1)).
type logCheckpoint struct {
	checkpointJSON
	OldID        string    `json:"id"`
	OldCreatedAt time.Time `json:"created_at"`
	OldTrigger   string    `json:"trigger"` // list's words: prompt, before edit FILE, manual, …
	OldPrompt    string    `json:"prompt,omitempty"`
	OldPinned    string    `json:"pinned,omitempty"`
}

func (c *logCmd) Exec(ctx context.Context, e *env, args []string) error {
	if err := needArgs(args, 0, 0, "log"); err != nil {
		return err
	}
	s, err := c.open(e)
	if err != nil {
		return err
	}
	sessions, err := s.Sessions(ctx)
	if err != nil {
		return err
	}
	ns := positions(sessions)
	for _, se := range sessions {
		se.Checkpoints = slices.DeleteFunc(se.Checkpoints, func(cp *store.Checkpoint) bool { return cp.Backup() && !c.all })
	}
	if len(sessions) == 0 {
		return store.ErrNoCheckpoints
	}
	if c.json {
		for _, se := range sessions {
			out := logSession{Type: "session", Session: se, Checkpoints: []logCheckpoint{}}
			for _, cp := range se.Checkpoints {
				var n *int
				if i, ok := ns[cp.ID]; ok {
					n = &i
				}
				prompt, _ := promptOf(cp) // (whole, and a description as it is: no quotes)
				out.Checkpoints = append(out.Checkpoints, logCheckpoint{checkpointJSON: newCheckpointJSON(cp, n), OldID: cp.ID,
					OldCreatedAt: cp.CreatedAt, OldTrigger: triggerWords(cp), OldPrompt: prompt, OldPinned: cp.Pinned})
			}
			if err := e.json(out); err != nil {
				return err
			}
		}
		return nil
	}
	width := e.width()
	for i, tree := range trees(sessions) {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		for _, line := range drawTree(tree, ns, c.graph) {
			if width > 0 {
				line = cut(line, width)
			}
			fmt.Fprintln(e.stdout, line)
		}
	}
	return nil
}

// positions numbers the checkpoints as list does (@0 the newest, backups not counted).
func positions(sessions []*store.Session) map[string]int {
	var ids []string
	for _, se := range sessions {
		for _, cp := range se.Checkpoints {
			if !cp.Backup() {
				ids = append(ids, cp.ID)
			}
		}
	}
	slices.SortFunc(ids, store.CompareIDs)
	ns := map[string]int{}
	for i, id := range ids {
		ns[id] = len(ids) - 1 - i
	}
	return ns
}

// trees groups the sessions by the session they all descend from, the tree
// with the newest session first.
func trees(sessions []*store.Session) [][]*store.Session {
	byPath := map[string]*store.Session{}
	for _, se := range sessions {
		byPath[se.Path] = se
	}
	root := func(se *store.Session) *store.Session {
		for n := 0; se.Parent != nil && n < len(sessions); n++ {
			se = byPath[se.Parent.Path]
		}
		return se
	}
	var out [][]*store.Session
	index := map[*store.Session]int{}
	for _, se := range sessions { // parents first
		r := root(se)
		i, ok := index[r]
		if !ok {
			i = len(out)
			index[r] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], se)
	}
	newest := func(tree []*store.Session) time.Time {
		var t time.Time
		for _, se := range tree {
			if se.Start.After(t) {
				t = se.Start
			}
			if len(se.Checkpoints) > 0 && se.Checkpoints[0].CreatedAt.After(t) {
				t = se.Checkpoints[0].CreatedAt
			}
		}
		return t
	}
	slices.SortStableFunc(out, func(a, b []*store.Session) int { return newest(b).Compare(newest(a)) })
	return out
}

// node is one row of the graph: a checkpoint, or a session's start (its
// fork from the parent, or its beginning).
type node struct {
	text   string
	at     time.Time
	parent int // the node below it in its line of history; -1 for none
	kids   int // nodes not yet drawn whose parent it is
	seq    int // creation order: ties in time keep it
	// open is no row but a session's line going on above its newest row,
	// into the present: a column from the top (see drawTree).
	open bool
}

// drawTree lays out one tree's rows, newest first, each after every row
// above it in its history (its checkpoints before its session's start, a
// fork before the checkpoint it branched after), as git log --graph draws
// commits: a column per line of history, '*' on the row's own column, '/'
// where a fork joins the line it left. Without graph only the rows are
// returned.
func drawTree(tree []*store.Session, ns map[string]int, graph bool) []string {
	return drawNodes(treeNodes(tree, ns), graph)
}

// treeNodes are one tree's rows, each linked to the row above it in its history, with the
// count of rows below that link to it.
func treeNodes(tree []*store.Session, ns map[string]int) []*node {
	var nodes []*node
	add := func(n *node) int {
		n.seq = len(nodes)
		nodes = append(nodes, n)
		return n.seq
	}
	start := map[string]int{}  // session path → its start node
	newest := map[string]int{} // session path → its newest node
	byID := map[string]int{}   // checkpoint id → node
	var latest time.Time
	for _, se := range tree {
		var ids []int
		for _, cp := range se.Checkpoints {
			i := add(&node{text: checkpointRow(cp, ns), at: cp.CreatedAt, parent: -1})
			byID[cp.ID] = i
			ids = append(ids, i)
		}
		st := add(&node{text: sessionRow(se), at: se.Start, parent: -1})
		start[se.Path] = st
		ids = append(ids, st)
		for k := 0; k+1 < len(ids); k++ {
			nodes[ids[k]].parent = ids[k+1]
		}
		newest[se.Path] = ids[0]
	}
	for _, n := range nodes {
		if n.at.After(latest) {
			latest = n.at
		}
	}
	opened := map[string]bool{}
	for _, se := range tree {
		b := se.Parent
		if b == nil {
			continue
		}
		p, ok := byID[b.After]
		if !ok {
			p, ok = start[b.Path]
		}
		if !ok {
			continue
		}
		nodes[start[se.Path]].parent = p
		// A fork Rewind cut before a prompt its parent still shows leaves a
		// parent that went on past the cut. When the parent has no row
		// after the one the fork branches off (the prompts after it were
		// not checkpointed), the fork would be that row's only child and
		// carry on its column, as a commit with one child does in git log
		// --graph, drawing no branch: the parent's line is kept open above
		// it instead, a column from the top.
		if b.By == store.BranchRewind && b.Prompt != "" && p == newest[b.Path] && !opened[b.Path] {
			opened[b.Path] = true
			add(&node{open: true, at: latest.Add(time.Nanosecond), parent: p})
		}
	}
	for _, n := range nodes {
		if n.parent >= 0 {
			nodes[n.parent].kids++
		}
	}
	return nodes
}

// drawNodes draws the rows newest first, each after every row above it in its history (see
// drawTree).
func drawNodes(nodes []*node, graph bool) []string {
	// Newest first among the rows whose every row above is drawn.
	q := &nodeQueue{nodes: nodes}
	for i, n := range nodes {
		if n.kids == 0 {
			heap.Push(q, i)
		}
	}
	var out []string
	var lanes []int // the node each column waits for
	for q.Len() > 0 {
		i := heap.Pop(q).(int)
		n := nodes[i]
		if p := n.parent; p >= 0 {
			if nodes[p].kids--; nodes[p].kids == 0 {
				heap.Push(q, p)
			}
		}
		if !graph {
			if !n.open {
				out = append(out, n.text)
			}
			continue
		}
		if n.open { // (nothing waits for it: a column of its own, no row)
			lanes = append(lanes, n.parent)
			continue
		}
		var mine []int
		for c, w := range lanes {
			if w == i {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			lanes = append(lanes, i)
			mine = []int{len(lanes) - 1}
		}
		col := mine[0]
		// Fold the other columns waiting for this row into its own, nearest first.
		for k := len(mine) - 1; k >= 1; k-- {
			out = append(out, joinLine(len(lanes), col, mine[k]))
			lanes = slices.Delete(lanes, mine[k], mine[k]+1)
		}
		out = append(out, nodeLine(len(lanes), col)+" "+n.text)
		if n.parent >= 0 {
			lanes[col] = n.parent
			continue
		}
		lanes = slices.Delete(lanes, col, col+1)
		if col < len(lanes) {
			out = append(out, shiftLine(len(lanes)+1, col))
		}
	}
	return out
}

// nodeLine is '|' for each of n columns, '*' at col.
func nodeLine(n, col int) string {
	b := []byte(strings.Repeat("| ", n))
	b[2*col] = '*'
	return strings.TrimRight(string(b), " ")
}

// joinLine draws column from joining column into (into < from) among n
// columns: "|/" beside it, "|_|/" across the columns between, and the
// columns after from moving one to the left.
func joinLine(n, into, from int) string {
	b := []byte(strings.Repeat("| ", n))
	for c := into + 1; c < from; c++ {
		b[2*c-1] = '_'
	}
	b[2*from] = ' '
	b[2*from-1] = '/'
	for c := from + 1; c < n; c++ {
		b[2*c] = ' '
		b[2*c-1] = '/'
	}
	return strings.TrimRight(string(b), " ")
}

// shiftLine draws the columns after the ended column gone moving one to the
// left, among the n columns there were.
func shiftLine(n, gone int) string {
	b := []byte(strings.Repeat("| ", n))
	b[2*gone] = ' '
	for c := gone + 1; c < n; c++ {
		b[2*c] = ' '
		b[2*c-1] = '/'
	}
	return strings.TrimRight(string(b), " ")
}

// checkpointRow is a checkpoint's row, for a person: what came from data
// shown through cmdline.QuoteText, a file's name through cmdline.QuotePath.
func checkpointRow(cp *store.Checkpoint, ns map[string]int) string {
	pos := "backup"
	if i, ok := ns[cp.ID]; ok {
		pos = fmt.Sprintf("@%d", i)
	}
	row := fmt.Sprintf("%s %s %s %s", pos, cmdline.QuoteText(cp.ID), strings.TrimSuffix(ago(cp.CreatedAt), " ago"), triggerText(cp))
	if p := promptText(cp); p != "" {
		row += ": " + cmdline.QuoteText(p)
	}
	return row
}

// sessionRow says which session a line of history is and, for a fork, where
// it came from: "fork 4f2a9c1e (claude) "[Fork] …" of edffe0cd before
// "bravo", by back 3m ago". It is for a person: ids, titles and prompts are
// shown through cmdline.QuoteText, paths through cmdline.QuotePath.
func sessionRow(se *store.Session) string {
	if se.Path == "" {
		return "checkpoints without a transcript"
	}
	var b strings.Builder
	if se.Parent != nil {
		b.WriteString("fork")
	} else {
		b.WriteString("session")
	}
	if se.SessionID != "" {
		b.WriteString(" " + cmdline.QuoteText(short(se.SessionID)))
	}
	if se.Agent != "" {
		fmt.Fprintf(&b, " (%s)", cmdline.QuoteText(se.Agent))
	}
	if se.Title != "" {
		fmt.Fprintf(&b, " %s", quoted(se.Title))
	}
	p := se.Parent
	if p == nil {
		b.WriteString(" " + cmdline.QuotePath(se.Path))
		return b.String()
	}
	parent := cmdline.QuoteText(short(p.SessionID))
	if parent == "" {
		parent = cmdline.QuotePath(p.Path)
	}
	fmt.Fprintf(&b, " of %s", parent)
	if p.Prompt != "" {
		fmt.Fprintf(&b, " before %s", quoted(oneLine(p.Prompt, 60)))
	}
	switch p.By {
	case store.BranchRewind:
		fmt.Fprintf(&b, ", by %s, %s", cmdline.QuoteText(p.What), ago(p.At))
	case store.BranchAgent:
		b.WriteString(", by the agent")
	}
	return b.String()
}

// short is a session id's first 8 characters, as the agents' pickers show them.
func short(id string) string {
	if len(id) > 8 && !strings.ContainsRune(id, '/') {
		return id[:8]
	}
	return id
}

// nodeQueue is a heap of node indexes, newest first, then in creation order.
type nodeQueue struct {
	nodes []*node
	items []int
}

func (q *nodeQueue) Len() int { return len(q.items) }
func (q *nodeQueue) Less(a, b int) bool {
	x, y := q.nodes[q.items[a]], q.nodes[q.items[b]]
	if !x.at.Equal(y.at) {
		return x.at.After(y.at)
	}
	return x.seq < y.seq
}
func (q *nodeQueue) Swap(a, b int) { q.items[a], q.items[b] = q.items[b], q.items[a] }
func (q *nodeQueue) Push(x any)    { q.items = append(q.items, x.(int)) }
func (q *nodeQueue) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}

func (c *logCmd) doc() doc {
	return doc{
		summary: "the sessions, their forks and their checkpoints, newest first",
		text: `Every conversation the store has checkpoints of, and every fork: the ones
Rewind wrote (back, restore; the restore history records them) and the ones
the agent made itself (pi's /fork, Codex's fork: their first line names the
parent). Each checkpoint is a row as in 'rewind list' (@N, id, age, what
took it, the prompt); each session's oldest row says which session it is,
and for a fork, which session it was forked from, before which prompt, by
what and when. --graph draws it as git log --graph does: a column per
session, '*' on a row, '|/' where a fork leaves the session it came from,
right below the fork's oldest row and above the parent's checkpoint it
branched after (the newest one taken before the prompt it was cut before);
a parent with no checkpoint after that one goes on all the same (the prompts
the fork left out), a column from the top.
Unrelated sessions are separate trees, the newest first. --json prints one
object per session, parents before their forks, with its checkpoints.`,
		examples: []string{
			"rewind log --graph",
			"rewind log --json | jq -r 'select(.parent) | .path + \" <- \" + .parent.path'",
		},
	}
}
