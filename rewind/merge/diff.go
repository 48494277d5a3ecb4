package merge

// hunk replaces a[a0:a1] by b[b0:b1].
type hunk struct{ a0, a1, b0, b1 int }

// maxEdits bounds the search for a shortest edit script: past it (two
// files differing in more lines than that, after their common start and
// end), the part between is taken as one replaced block. The diff is still
// right, only coarser, so a merge may conflict where a finer one would not.
const maxEdits = 4000

// diff is a shortest edit script from a to b (Myers' O(ND) algorithm,
// after the common start and end are cut off), as hunks in order.
func diff[T comparable](a, b []T) []hunk {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	delA, insB := make([]bool, len(a)), make([]bool, len(b))
	myers(a[pre:len(a)-suf], b[pre:len(b)-suf], delA[pre:], insB[pre:])
	compact(a, delA, insB)
	compact(b, insB, delA)
	return hunks(delA, insB)
}

// myers marks in del the lines of a and in ins the lines of b that a
// shortest edit script from a to b deletes and inserts.
func myers[T comparable](a, b []T, del, ins []bool) {
	n, m := len(a), len(b)
	all := func() {
		for i := range n {
			del[i] = true
		}
		for j := range m {
			ins[j] = true
		}
	}
	if n == 0 || m == 0 {
		all()
		return
	}
	off := n + m
	v := make([]int, 2*off+2)
	// trace[d] is v for diagonals -d..d as it was before step d.
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if d > maxEdits {
			all()
			return
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				backtrack(trace, n, m, del, ins)
				return
			}
		}
	}
}

// backtrack follows the trace back from (n, m), marking the lines deleted
// from a and inserted from b.
func backtrack(trace [][]int, n, m int, delA, insB []bool) {
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		tv := trace[d] // diagonals -d..d before step d: index k+d
		k := x - y
		var pk int
		if k == -d || (k != d && tv[k-1+d] < tv[k+1+d]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := tv[pk+d]
		py := px - pk
		if pk == k+1 {
			insB[py] = true
		} else {
			delA[px] = true
		}
		x, y = px, py
	}
}

// hunks gathers the marked lines into hunks: unmarked lines pair up in
// order.
func hunks(delA, insB []bool) []hunk {
	n, m := len(delA), len(insB)
	var hs []hunk
	i, j := 0, 0
	for i < n || j < m {
		if i < n && j < m && !delA[i] && !insB[j] {
			i++
			j++
			continue
		}
		h := hunk{a0: i, b0: j}
		for i < n && delA[i] {
			i++
		}
		for j < m && insB[j] {
			j++
		}
		h.a1, h.b1 = i, j
		hs = append(hs, h)
	}
	return hs
}

// compact moves each run of changed lines of a (marked in chg; other holds
// the other side's marks) to where git's diff puts it among the places it
// could equally be (a run "x y x" deleted as "x y" or "y x"): as low as it
// slides, unless it can sit against a run of changes in the other side, so
// that a replaced block reads as one. Runs that meet are joined.
func compact[T comparable](a []T, chg, other []bool) {
	changed := func(c []bool, i int) bool { return i >= 0 && i < len(c) && c[i] }
	type group struct{ start, end int }
	first := func(c []bool) group {
		g := group{}
		for changed(c, g.end) {
			g.end++
		}
		return g
	}
	next := func(c []bool, g *group) bool {
		if g.end >= len(c) {
			return false
		}
		g.start = g.end + 1
		g.end = g.start
		for changed(c, g.end) {
			g.end++
		}
		return true
	}
	prev := func(c []bool, g *group) {
		g.end = g.start - 1
		g.start = g.end
		for changed(c, g.start-1) {
			g.start--
		}
	}
	slideUp := func(g *group) bool {
		if g.start == 0 || a[g.start-1] != a[g.end-1] {
			return false
		}
		g.start--
		g.end--
		chg[g.start], chg[g.end] = true, false
		for changed(chg, g.start-1) {
			g.start--
		}
		return true
	}
	slideDown := func(g *group) bool {
		if g.end >= len(a) || a[g.start] != a[g.end] {
			return false
		}
		chg[g.start], chg[g.end] = false, true
		g.start++
		g.end++
		for changed(chg, g.end) {
			g.end++
		}
		return true
	}
	g, o := first(chg), first(other)
	for {
		if g.end != g.start {
			var size, earliest int
			matching := -1
			for {
				size = g.end - g.start
				matching = -1
				for slideUp(&g) {
					prev(other, &o)
				}
				earliest = g.end
				if o.end > o.start {
					matching = g.end
				}
				for slideDown(&g) {
					next(other, &o)
					if o.end > o.start {
						matching = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			if g.end != earliest && matching != -1 {
				for o.end == o.start {
					slideUp(&g)
					prev(other, &o)
				}
			}
		}
		if !next(chg, &g) {
			return
		}
		next(other, &o)
	}
}
