package viz

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/trace"
)

// Gantt is a level-of-detail Gantt chart builder (see NewGantt). It is not
// safe for concurrent use.
//
// Internally every lane keeps 2×Width cells over the time window. An event
// at least one pixel wide is kept as an individual bar (a lane holds at
// most a few per pixel column, since a rank's calls do not overlap); a
// narrower one is spread over the cells it covers, adding its duration and
// wait to the cell's busy and wait time and its op to a weighted majority
// sketch (Boyer–Moore) that yields the dominant op. Memory is therefore
// O(lanes × Width) whatever the number of events.
type Gantt struct {
	opt     GanttOptions
	k       int             // ranks per lane (RanksPerLane resolved)
	sel     []int32         // GanttOptions.Ranks: lane -> rank
	laneIdx []int32         // with sel: rank -> lane, -1 not drawn
	msgs    []merge.Message // point-to-point lines (p2p.go)
	maxMsgs int
	width   int // plot width, px
	nb      int // cells per lane
	maxBars int
	fixed   bool    // window given by the caller
	have    bool    // window initialised
	lo, hi  float64 // cell window (view timebase, ns)
	dataLo  float64 // extent of drawn data
	dataHi  float64
	lanes   []lane
	nbars   int
	opsSeen [256]bool
	opsMore map[trace.Op]bool

	pend      []pendRef // min-heap by global exit
	slots     []pending // pending events, referenced by pend
	free      []int32   // free slots
	inst      map[instKey]instState
	lastEnter float64

	events, clipped, invalid, outOfOrder int64
}

type cell struct {
	busy, wait, candW float32
	cand              trace.Op
}

func (c *cell) add(op trace.Op, d, w float64) {
	c.busy += float32(d)
	c.wait += float32(w)
	sketchAdd(&c.cand, &c.candW, op, float32(d))
}

// sketchAdd is one step of the weighted Boyer–Moore majority vote: the
// surviving candidate is the op holding more than half of the weight, if
// any op does.
func sketchAdd(cand *trace.Op, w *float32, op trace.Op, d float32) {
	switch {
	case *cand == op || *w == 0:
		*cand, *w = op, *w+d
	case *w >= d:
		*w -= d
	default:
		*cand, *w = op, d-*w
	}
}

func mergeCells(a, b cell) cell {
	c := cell{busy: a.busy + b.busy, wait: a.wait + b.wait, cand: a.cand, candW: a.candW}
	if b.busy > 0 || b.candW > 0 {
		sketchAdd(&c.cand, &c.candW, b.cand, b.candW)
	}
	return c
}

type bar struct {
	enter, exit, wait float64 // view timebase; wait measured from enter
	comm              uint64
	sent, recv        uint64
	seq               uint32
	op                trace.Op
}

type lane struct {
	cells []cell
	bars  []bar
}

type instKey struct {
	comm uint64
	seq  uint32
}

// instState is what the members of one instance seen so far tell about
// the waits of the pending ones (view timebase), per merge.WaitClass and
// its data rule: only members that send data are recorded as someone to
// wait for (every member of a Barrier).
type instState struct {
	maxEnter   float64 // latest sending member's enter seen (N×N)
	rootEnter  float64 // the root's enter, if it sends (late broadcast)
	maxNonRoot float64 // latest sending non-root enter (early reduce)
	haveMax    bool
	haveRoot   bool
	haveOther  bool
	refs       int             // members still pending
	prefix     []commRankEnter // scans: every sending member seen
}

// sends and receives apply merge's data rule (merge.FlowOf) to one
// member's bytes: MPI_Barrier synchronises without data.
func (b *bar) sends() bool    { return b.op == trace.OpBarrier || b.sent > 0 }
func (b *bar) receives() bool { return b.op == trace.OpBarrier || b.recv > 0 }

type commRankEnter struct {
	pos   int32
	enter float64
}

type pending struct {
	rank int32
	pos  int32 // comm rank, -1 unknown
	root int32 // comm rank of the root, -1 none
	b    bar
}

// pendRef is a heap entry: small, so sifting moves 16 bytes.
type pendRef struct {
	gexit float64 // global exit: resolution time
	slot  int32
}

// Lane grouping defaults (GanttOptions.RanksPerLane 0): one lane per rank
// up to MaxRankLanes ranks; a larger world is drawn in about
// AggregateLanes lanes of consecutive ranks.
const (
	MaxRankLanes   = 512
	AggregateLanes = 256
)

// ranksPerLane resolves GanttOptions.RanksPerLane.
func ranksPerLane(opt GanttOptions) int {
	if opt.RanksPerLane > 0 {
		return opt.RanksPerLane
	}
	if opt.WorldSize > MaxRankLanes {
		return (opt.WorldSize + AggregateLanes - 1) / AggregateLanes
	}
	return 1
}

// cellsPerLane is 2 × Width, or Width when the lanes are so many that the
// cells would exceed about 128 MB (beyond ~2600 lanes at the default width).
func cellsPerLane(opt GanttOptions, lanes int) int {
	nb := 2 * opt.Width
	if int64(lanes)*int64(nb)*16 > 128<<20 {
		nb = opt.Width
	}
	return nb
}

func newGantt(opt GanttOptions) *Gantt {
	if opt.Width <= 0 {
		opt.Width = 1600
	}
	if opt.MaxBars <= 0 {
		opt.MaxBars = 6000
	}
	k := ranksPerLane(opt)
	nlanes := (opt.WorldSize + k - 1) / k
	var sel, laneIdx []int32
	if len(opt.Ranks) > 0 && opt.WorldSize > 0 {
		k, laneIdx = 1, make([]int32, opt.WorldSize)
		for i := range laneIdx {
			laneIdx[i] = -1
		}
		for _, r := range opt.Ranks {
			if r >= 0 && int(r) < opt.WorldSize && laneIdx[r] < 0 {
				laneIdx[r] = int32(len(sel))
				sel = append(sel, r)
			}
		}
		nlanes = len(sel)
	}
	g := &Gantt{
		opt:     opt,
		k:       k,
		sel:     sel,
		laneIdx: laneIdx,
		width:   opt.Width,
		nb:      cellsPerLane(opt, nlanes),
		maxBars: opt.MaxBars,
		inst:    make(map[instKey]instState),
		dataLo:  math.Inf(1),
		dataHi:  math.Inf(-1),
		// global times are relative to the run origin and may be negative
		lastEnter: math.Inf(-1),
	}
	if opt.Start != 0 || opt.End != 0 {
		g.fixed, g.have = true, true
		g.lo, g.hi = opt.Start, opt.End
		if !(g.hi > g.lo) {
			g.hi = g.lo + 1
		}
	}
	if opt.WorldSize > 0 {
		g.lanes = make([]lane, nlanes)
	}
	return g
}

// Add consumes one event of the merged stream (ordered by global Enter).
// Collective events are held until the stream passes their global Exit so
// that their wait is known; WriteSVG flushes the rest.
func (g *Gantt) Add(ev *merge.GEvent) error {
	if ev.Rank < 0 || (g.opt.WorldSize > 0 && int(ev.Rank) >= g.opt.WorldSize) {
		return fmt.Errorf("viz: gantt: event of rank %d outside world size %d (%s comm %d seq %d)",
			ev.Rank, g.opt.WorldSize, ev.Op, ev.CommID, ev.Seq)
	}
	g.events++
	if !finite(ev.Enter) || !finite(ev.Exit) {
		g.invalid++
		return nil
	}
	if ev.Enter < g.lastEnter {
		g.outOfOrder++
	} else {
		g.lastEnter = ev.Enter
	}
	g.resolve(ev.Enter)
	b := bar{enter: ev.Enter, exit: ev.Exit, comm: ev.CommID, seq: ev.Seq, sent: ev.Sent, recv: ev.Recv, op: ev.Op}
	if g.opt.Raw {
		b.enter, b.exit = ev.RawEnter, ev.RawExit
	}
	if !ev.Op.IsCollective() {
		if ev.Continuation() {
			return nil // same call, same times as its record 0: drawn once
		}
		g.draw(ev.Rank, b)
		return nil
	}
	k := instKey{ev.CommID, ev.Seq}
	st := g.inst[k]
	if b.sends() {
		if !st.haveMax || b.enter > st.maxEnter {
			st.maxEnter, st.haveMax = b.enter, true
		}
		switch merge.WaitClassOf(ev.Op) {
		case merge.WaitLateBroadcast, merge.WaitEarlyReduce:
			if ev.Root >= 0 && ev.CommRank == ev.Root {
				st.rootEnter, st.haveRoot = b.enter, true
			} else if !st.haveOther || b.enter > st.maxNonRoot {
				st.maxNonRoot, st.haveOther = b.enter, true
			}
		case merge.WaitPrefix:
			st.prefix = append(st.prefix, commRankEnter{ev.CommRank, b.enter})
		}
	}
	st.refs++
	g.inst[k] = st
	g.push(ev.Exit, pending{rank: ev.Rank, pos: ev.CommRank, root: ev.Root, b: b})
	return nil
}

// waitOf is the wait of pending member p given the members seen up to its
// global exit (merge.CollectiveWaitsFlow's semantics and data rule; draw
// clamps it to the call). A root not seen by then entered before every
// member still held (its state was dropped once it was drawn), so it made
// nobody wait. A member that receives no data waits for nobody, except in
// a Barrier.
func waitOf(p *pending, st *instState) float64 {
	switch merge.WaitClassOf(p.b.op) {
	case merge.WaitNxN:
		if !p.b.receives() || !st.haveMax {
			return 0
		}
		return st.maxEnter - p.b.enter
	case merge.WaitLateBroadcast:
		if p.root < 0 || p.pos == p.root || !st.haveRoot || !p.b.receives() {
			return 0
		}
		return st.rootEnter - p.b.enter
	case merge.WaitEarlyReduce:
		if p.root < 0 || p.pos != p.root || !st.haveOther {
			return 0
		}
		return st.maxNonRoot - p.b.enter
	case merge.WaitPrefix:
		if !p.b.receives() {
			return 0
		}
		w := 0.0
		for _, m := range st.prefix {
			if m.pos >= 0 && m.pos < p.pos {
				w = math.Max(w, m.enter-p.b.enter)
			}
		}
		return w
	}
	return 0
}

// resolve draws every pending collective whose global exit lies before now:
// no member entering later can have made it wait.
func (g *Gantt) resolve(now float64) {
	for len(g.pend) > 0 && g.pend[0].gexit < now {
		p := g.pop()
		k := instKey{p.b.comm, p.b.seq}
		st := g.inst[k]
		p.b.wait = waitOf(&p, &st)
		if st.refs--; st.refs <= 0 {
			delete(g.inst, k)
		} else {
			g.inst[k] = st
		}
		g.draw(p.rank, p.b)
	}
}

func (g *Gantt) push(gexit float64, p pending) {
	var slot int32
	if n := len(g.free); n > 0 {
		slot = g.free[n-1]
		g.free = g.free[:n-1]
		g.slots[slot] = p
	} else {
		slot = int32(len(g.slots))
		g.slots = append(g.slots, p)
	}
	g.pend = append(g.pend, pendRef{gexit: gexit, slot: slot})
	h := g.pend
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].gexit <= h[i].gexit {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (g *Gantt) pop() pending {
	h := g.pend
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].gexit < h[m].gexit {
			m = l
		}
		if r < n && h[r].gexit < h[m].gexit {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	g.pend = h
	p := g.slots[top.slot]
	g.free = append(g.free, top.slot)
	return p
}

func (g *Gantt) lane(rank int32) *lane {
	if int(rank) >= len(g.lanes) {
		n := make([]lane, int(rank)+1)
		copy(n, g.lanes)
		g.lanes = n
	}
	l := &g.lanes[rank]
	if l.cells == nil {
		l.cells = make([]cell, g.nb)
	}
	return l
}

func (g *Gantt) markOp(o trace.Op) {
	if int(o) < len(g.opsSeen) {
		g.opsSeen[o] = true
		return
	}
	if g.opsMore == nil {
		g.opsMore = make(map[trace.Op]bool)
	}
	g.opsMore[o] = true
}

// absSeconds prints origin + rel ns as seconds with 9 decimals, exactly
// (integer arithmetic; a float64 of a CLOCK_REALTIME value would not be).
func absSeconds(origin int64, rel float64) string {
	if !finite(rel) || math.Abs(rel) > 1<<62 {
		return strconv.FormatFloat((float64(origin)+rel)/1e9, 'f', 9, 64)
	}
	ns := origin + int64(math.Round(rel))
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d", sign, ns/1e9, ns%1e9)
}

// draw places one event with its wait into the lane of rank.
func (g *Gantt) draw(rank int32, b bar) {
	if !finite(b.enter) || !finite(b.exit) { // raw times
		g.invalid++
		return
	}
	if b.exit < b.enter {
		b.exit = b.enter
	}
	waitEnd := b.enter + math.Max(0, b.wait)
	if g.fixed {
		if b.exit < g.lo || b.enter > g.hi {
			g.clipped++
			return
		}
		b.enter, b.exit = math.Max(b.enter, g.lo), math.Min(b.exit, g.hi)
	} else {
		g.cover(b.enter, b.exit)
	}
	b.wait = math.Min(math.Max(0, waitEnd-b.enter), b.exit-b.enter)
	g.dataLo, g.dataHi = math.Min(g.dataLo, b.enter), math.Max(g.dataHi, b.exit)
	g.markOp(b.op)
	li := rank / int32(g.k)
	if g.sel != nil {
		if li = g.laneIdx[rank]; li < 0 {
			return // not selected: its waits were counted, it is not drawn
		}
	}
	l := g.lane(li)
	if g.k > 1 {
		// a grouped lane draws the average of its ranks: no single bars
		g.accumulate(l, b, 1/float64(g.k))
		return
	}
	px := (g.hi - g.lo) / float64(g.width)
	if b.exit-b.enter >= px {
		l.bars = append(l.bars, b)
		g.nbars++
		if len(l.bars) > 4*g.width { // only with overlapping calls (threads)
			g.foldNarrowest(l, 2*g.width)
		}
		return
	}
	g.accumulate(l, b, 1)
}

// accumulate spreads b over the cells it overlaps, its time scaled by s
// (1/ranks per lane for a grouped lane).
func (g *Gantt) accumulate(l *lane, b bar, s float64) {
	bw := (g.hi - g.lo) / float64(g.nb)
	a, e, we := b.enter, b.exit, b.enter+b.wait
	i0 := g.cellIndex(a, bw)
	i1 := g.cellIndex(e, bw)
	if i0 == i1 {
		l.cells[i0].add(b.op, (e-a)*s, (we-a)*s)
		return
	}
	for i := i0; i <= i1; i++ {
		lo := g.lo + float64(i)*bw
		hi := lo + bw
		if i == 0 {
			lo = math.Inf(-1)
		}
		if i == g.nb-1 {
			hi = math.Inf(1)
		}
		ov := math.Min(e, hi) - math.Max(a, lo)
		if ov <= 0 {
			continue
		}
		wov := math.Max(0, math.Min(we, hi)-math.Max(a, lo))
		l.cells[i].add(b.op, ov*s, wov*s)
	}
}

func (g *Gantt) cellIndex(t, bw float64) int {
	i := int((t - g.lo) / bw)
	if i < 0 {
		return 0
	}
	if i >= g.nb {
		return g.nb - 1
	}
	return i
}

// cover grows the automatic window until it holds [a, b], doubling its
// span towards the side that is missing and merging cells pairwise.
func (g *Gantt) cover(a, b float64) {
	if !g.have {
		g.have = true
		span := math.Max(4*(b-a), 1000)
		g.lo, g.hi = a, a+span
		return
	}
	for a < g.lo {
		g.grow(true)
	}
	for b > g.hi {
		g.grow(false)
	}
}

func (g *Gantt) grow(left bool) {
	span := g.hi - g.lo
	half := g.nb / 2
	for li := range g.lanes {
		c := g.lanes[li].cells
		if c == nil {
			continue
		}
		if left {
			for j := g.nb - 1; j >= half; j-- {
				k := j - half
				c[j] = mergeCells(c[2*k], c[2*k+1])
			}
			clear(c[:half])
		} else {
			for j := 0; j < half; j++ {
				c[j] = mergeCells(c[2*j], c[2*j+1])
			}
			clear(c[half:])
		}
	}
	if left {
		g.lo -= span
	} else {
		g.hi += span
	}
	// Bars that became narrower than a pixel join the cells.
	px := (g.hi - g.lo) / float64(g.width)
	g.nbars = 0
	for li := range g.lanes {
		l := &g.lanes[li]
		kept := l.bars[:0]
		for _, b := range l.bars {
			if b.exit-b.enter >= px {
				kept = append(kept, b)
			} else {
				g.accumulate(l, b, 1)
			}
		}
		clear(l.bars[len(kept):])
		l.bars = kept
		g.nbars += len(kept)
	}
}

// foldNarrowest keeps the keep widest bars of l and folds the others into
// its cells.
func (g *Gantt) foldNarrowest(l *lane, keep int) {
	if len(l.bars) <= keep {
		return
	}
	sort.SliceStable(l.bars, func(i, j int) bool {
		return l.bars[i].exit-l.bars[i].enter > l.bars[j].exit-l.bars[j].enter
	})
	for _, b := range l.bars[keep:] {
		g.accumulate(l, b, 1)
	}
	g.nbars -= len(l.bars) - keep
	l.bars = l.bars[:keep:keep]
	sort.Slice(l.bars, func(i, j int) bool { return l.bars[i].enter < l.bars[j].enter })
}

// limitBars folds the narrowest bars across all lanes until at most max
// remain.
func (g *Gantt) limitBars(max int) {
	if g.nbars <= max {
		return
	}
	ws := make([]float64, 0, g.nbars)
	for _, l := range g.lanes {
		for _, b := range l.bars {
			ws = append(ws, b.exit-b.enter)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(ws)))
	thr := ws[max] // fold everything at most this wide
	g.nbars = 0
	for li := range g.lanes {
		l := &g.lanes[li]
		kept := l.bars[:0]
		for _, b := range l.bars {
			if b.exit-b.enter > thr {
				kept = append(kept, b)
			} else {
				g.accumulate(l, b, 1)
			}
		}
		l.bars = kept
		g.nbars += len(kept)
	}
}

// column is the aggregate of one lane over one pixel column.
type column struct {
	busy, wait float64
	cand       trace.Op
	candW      float32
}

// WriteSVG flushes pending events and writes the chart as a standalone SVG
// document. Call it after the last Add: collectives still in flight are
// drawn with the waits known so far.
func (g *Gantt) WriteSVG(w io.Writer) error {
	g.resolve(math.Inf(1))
	g.limitBars(g.maxBars)
	bw := bufio.NewWriterSize(w, 256<<10)
	g.render(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("viz: gantt: writing SVG: %w", err)
	}
	return nil
}

type pathKey struct {
	op   trace.Op
	wait bool
}

func (g *Gantt) laneLabel(r int) string {
	if g.sel != nil && r < len(g.sel) {
		r = int(g.sel[r])
	}
	if g.k > 1 {
		lo, hi := r*g.k, r*g.k+g.k-1
		if g.opt.WorldSize > 0 {
			hi = min(hi, g.opt.WorldSize-1)
		}
		s := "ranks " + strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
		if hi < len(g.opt.Hosts) && g.opt.Hosts[lo] != "" && g.opt.Hosts[lo] == g.opt.Hosts[hi] {
			s += " (" + truncate(g.opt.Hosts[lo], 20) + ")"
		}
		return s
	}
	s := "rank " + strconv.Itoa(r)
	if r < len(g.opt.Hosts) && g.opt.Hosts[r] != "" {
		s += " (" + truncate(g.opt.Hosts[r], 28) + ")"
	}
	return s
}

// lanesNote describes the lane grouping for the chart's subtitle.
func (g *Gantt) lanesNote() string {
	if g.sel != nil {
		return fmt.Sprintf("%d of %d ranks (--ranks)", len(g.sel), g.opt.WorldSize)
	}
	if g.k == 1 {
		return fmt.Sprintf("%d ranks", len(g.lanes))
	}
	return fmt.Sprintf("%d ranks in %d lanes of %d (average per lane)", g.opt.WorldSize, len(g.lanes), g.k)
}

func (g *Gantt) render(w *bufio.Writer) {
	const idp = "gcg" // id/class prefix, shared by all Gantt charts (same definitions)
	nl := len(g.lanes)
	if nl == 0 {
		nl = 1
	}
	laneH := g.opt.LaneHeight
	if laneH <= 0 {
		laneH = 20
		if nl <= 8 {
			laneH = 32 // few ranks: lanes tall enough to read when the page scales the chart
		}
		if nl > 16 {
			laneH = int(math.Max(3, math.Min(20, 720/float64(nl))))
		}
	}
	gap := 3
	if laneH < 10 {
		gap = 1
	}
	if laneH < 5 {
		gap = 0
	}
	pitch := laneH + gap
	labelEvery := 1
	if pitch < 12 {
		labelEvery = int(math.Ceil(12 / float64(pitch)))
	}
	labelW := 60
	for r := 0; r < nl; r += labelEvery {
		if n := len([]rune(g.laneLabel(r)))*6 + 14; n > labelW {
			labelW = n
		}
	}
	const top, right = 46, 140
	plotW := g.width
	plotH := nl * pitch
	axisY := top + plotH + 4

	// Legend layout.
	var ops []trace.Op
	for o := range g.opsSeen {
		if g.opsSeen[o] {
			ops = append(ops, trace.Op(o))
		}
	}
	for o := range g.opsMore {
		ops = append(ops, o)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	type item struct {
		x, y  int
		op    trace.Op
		label string
		wait  bool
	}
	var items []item
	lx, ly := 0, axisY+48
	addItem := func(op trace.Op, label string, wait bool) {
		wd := 26 + len([]rune(label))*6 + 16
		if lx+wd > plotW+labelW && lx > 0 {
			lx, ly = 0, ly+18
		}
		items = append(items, item{x: labelW + lx, y: ly, op: op, label: label, wait: wait})
		lx += wd
	}
	for _, o := range ops {
		addItem(o, o.String(), false)
	}
	addItem(trace.OpUnknown, "hatched / light: waiting (N×N: for the last member; Bcast/Scatter: for the root; Reduce/Gather root: for the last contributor; Scan: for lower ranks)", true) // neutral grey swatch
	totalW := labelW + plotW + right
	totalH := ly + 40

	// Window.
	vlo, vhi := g.lo, g.hi
	if !g.fixed {
		vlo, vhi = g.dataLo, g.dataHi
	}
	empty := !(vhi > vlo) || g.dataHi < g.dataLo
	if empty && !g.fixed {
		vlo, vhi = 0, 1000
	}
	if !(vhi > vlo) {
		vhi = vlo + 1
	}
	pw := (vhi - vlo) / float64(plotW)

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica,Arial,sans-serif" font-size="11">`+"\n",
		totalW, totalH, totalW, totalH)
	w.WriteString("<defs>" + hatchDefs(idp, trace.OpUnknown))
	for _, o := range ops {
		if o != trace.OpUnknown {
			w.WriteString(hatchDefs(idp, o))
		}
	}
	w.WriteString("</defs>\n<style>")
	for _, o := range ops {
		fmt.Fprintf(w, ".%s%d{fill:%s}", idp, o, opColor(o))
	}
	fmt.Fprintf(w, ".%sax{stroke:#444;stroke-width:1}.%sgr{stroke:#000;stroke-opacity:.08}</style>\n", idp, idp)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", totalW, totalH)
	title := g.opt.Title
	if title == "" {
		title = "MPI calls per rank"
	}
	clock := "global clock (rank 0 timebase, corrected)"
	if g.opt.Raw {
		clock = "RAW local clocks (uncorrected)"
	}
	fmt.Fprintf(w, `<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", labelW, esc(title))
	fmt.Fprintf(w, `<text x="%d" y="36" fill="#555">%s · %d events · %s · window %s</text>`+"\n",
		labelW, clock, g.events, esc(g.lanesNote()), esc(fmtDur(vhi-vlo)))

	// Lane backgrounds and labels.
	w.WriteString(`<g>`)
	for r := 0; r < nl; r++ {
		y := top + r*pitch
		if r%2 == 0 {
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f3f4f6"/>`, labelW, y, plotW, laneH)
		}
	}
	w.WriteString("</g>\n<g text-anchor=\"end\">")
	fs := 11
	if pitch < 11 {
		fs = int(math.Max(7, float64(pitch*labelEvery)-2))
	}
	for r := 0; r < nl; r += labelEvery {
		y := float64(top+r*pitch) + float64(laneH)/2 + float64(fs)/2 - 1.5
		fmt.Fprintf(w, `<text x="%d" y="%s" font-size="%d">%s</text>`, labelW-6, f1(y), fs, esc(g.laneLabel(r)))
	}
	w.WriteString("</g>\n")

	// Grid and axis.
	ticks, unit := axisTicks(vhi-vlo, int(math.Max(2, float64(plotW)/110)))
	w.WriteString(`<g>`)
	for _, t := range ticks {
		x := float64(labelW) + t.t/pw
		fmt.Fprintf(w, `<line class="%sgr" x1="%s" y1="%d" x2="%s" y2="%d"/>`, idp, f1(x), top, f1(x), top+plotH)
	}
	w.WriteString("</g>\n")

	colPx := 1
	msgNote := ""
	if !empty {
		colPx = g.renderColumns(w, idp, vlo, pw, labelW, top, laneH, pitch)
		g.renderBars(w, idp, vlo, pw, labelW, top, laneH, pitch)
		msgNote = g.renderMessages(w, vlo, vhi, pw, labelW, top, laneH, pitch)
		g.renderLaneShares(w, vlo, vhi, labelW+plotW+8, top, laneH, pitch, labelEvery, fs)
	} else {
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="#888">no events in this window</text>`, labelW+10, top+14)
	}

	fmt.Fprintf(w, `<line class="%sax" x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", idp, labelW, axisY, labelW+plotW, axisY)
	w.WriteString(`<g text-anchor="middle">`)
	for _, t := range ticks {
		x := float64(labelW) + t.t/pw
		fmt.Fprintf(w, `<line class="%sax" x1="%s" y1="%d" x2="%s" y2="%d"/><text x="%s" y="%d">%s</text>`,
			idp, f1(x), axisY, f1(x), axisY+5, f1(x), axisY+17, esc(t.label))
	}
	w.WriteString("</g>\n")
	origin := "t = 0 at " + absSeconds(g.opt.Origin, vlo) + " s"
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" fill="#333">time [%s] — %s of the %s</text>`+"\n",
		labelW+plotW/2, axisY+32, unit.name, origin, map[bool]string{false: "global clock", true: "raw clocks"}[g.opt.Raw])

	// Legend.
	for _, it := range items {
		fill := "." + idp + strconv.Itoa(int(it.op))
		_ = fill
		if it.wait {
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="20" height="11" fill="url(#%sh%d)" stroke="#999" stroke-width=".5"/>`, it.x, it.y-9, idp, it.op)
		} else {
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="20" height="11" class="%s%d"/>`, it.x, it.y-9, idp, it.op)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", it.x+25, it.y, esc(it.label))
	}
	note := fmt.Sprintf("%d calls drawn as bars (≥ 1 px); narrower calls aggregated per %d-px column (%s): colour = dominant op, height = √(share of the column in MPI), light part = waiting. Right: share of the window in MPI and waiting per rank.",
		g.nbars, colPx, fmtDur(pw*float64(colPx)))
	note += msgNote
	if g.clipped > 0 {
		note += fmt.Sprintf(" %d events outside the window.", g.clipped)
	}
	if g.outOfOrder > 0 {
		note += fmt.Sprintf(" %d events arrived out of global order (wait shading approximate).", g.outOfOrder)
	}
	if g.invalid > 0 {
		note += fmt.Sprintf(" %d events with invalid times skipped.", g.invalid)
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" fill="#555" font-size="10">%s</text>`+"\n", labelW, ly+24, esc(note))
	w.WriteString("</svg>\n")
}

// columnBudget bounds the bytes of the aggregate layer; beyond it columns
// are drawn coarser (2, 4, ... px) so that any input stays well under 5 MB.
const columnBudget = 2_000_000

// renderColumns draws the per-pixel aggregates of every lane, run-length
// encoded and grouped into one path per (op, solid|wait). It starts at one
// pixel per column and coarsens until the layer fits columnBudget.
func (g *Gantt) renderColumns(w *bufio.Writer, idp string, vlo, pw float64, x0, top, laneH, pitch int) int {
	colPx := 1
	for {
		paths, size := g.columnPaths(vlo, pw, x0, top, laneH, pitch, colPx)
		if size <= columnBudget || colPx*8 >= g.width {
			keys := make([]pathKey, 0, len(paths))
			for k := range paths {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].op != keys[j].op {
					return keys[i].op < keys[j].op
				}
				return !keys[i].wait && keys[j].wait
			})
			for _, k := range keys {
				if k.wait {
					fmt.Fprintf(w, `<path class="%s%d" fill-opacity=".35" d="`, idp, k.op)
				} else {
					fmt.Fprintf(w, `<path class="%s%d" d="`, idp, k.op)
				}
				w.Write(paths[k].b)
				w.WriteString("\"/>\n")
			}
			return colPx
		}
		colPx *= 2
	}
}

// pathBuf accumulates one path's subpaths with relative moves: after "z"
// the current point is the subpath's start, so each run costs about a
// dozen bytes.
type pathBuf struct {
	b      []byte
	lx, ly int
}

func (p *pathBuf) rect(x, y, wd, h int) {
	if len(p.b) == 0 {
		p.b = append(p.b, 'M')
		p.b = strconv.AppendInt(p.b, int64(x), 10)
		p.b = append(p.b, ' ')
		p.b = strconv.AppendInt(p.b, int64(y), 10)
	} else {
		p.b = append(p.b, 'm')
		p.b = strconv.AppendInt(p.b, int64(x-p.lx), 10)
		p.b = append(p.b, ' ')
		p.b = strconv.AppendInt(p.b, int64(y-p.ly), 10)
	}
	p.b = append(p.b, 'h')
	p.b = strconv.AppendInt(p.b, int64(wd), 10)
	p.b = append(p.b, 'v')
	p.b = strconv.AppendInt(p.b, int64(h), 10)
	p.b = append(p.b, 'h', '-')
	p.b = strconv.AppendInt(p.b, int64(wd), 10)
	p.b = append(p.b, 'z')
	p.lx, p.ly = x, y
}

func (g *Gantt) columnPaths(vlo, pw float64, x0, top, laneH, pitch, colPx int) (map[pathKey]*pathBuf, int) {
	paths := map[pathKey]*pathBuf{}
	bw := (g.hi - g.lo) / float64(g.nb)
	size := 0
	emit := func(k pathKey, x, y, wd, h int) {
		if h <= 0 || wd <= 0 {
			return
		}
		p := paths[k]
		if p == nil {
			p = &pathBuf{}
			paths[k] = p
		}
		n := len(p.b)
		p.rect(x, y, wd, h)
		size += len(p.b) - n
	}
	type runKey struct {
		op          trace.Op
		solid, wait int
	}
	cw := pw * float64(colPx)
	for r := range g.lanes {
		cells := g.lanes[r].cells
		if cells == nil {
			continue
		}
		bottom := top + r*pitch + laneH
		var run runKey
		runStart := -1
		flush := func(end int) {
			if runStart < 0 || run.solid+run.wait == 0 {
				return
			}
			emit(pathKey{run.op, false}, x0+runStart, bottom-run.solid, end-runStart, run.solid)
			emit(pathKey{run.op, true}, x0+runStart, bottom-run.solid-run.wait, end-runStart, run.wait)
		}
		for x := 0; x < g.width; x += colPx {
			t0 := vlo + float64(x)*pw
			t1 := t0 + cw
			var col column
			i0 := g.cellIndex(t0, bw)
			i1 := g.cellIndex(t1, bw)
			for i := i0; i <= i1; i++ {
				c := cells[i]
				if c.busy == 0 {
					continue
				}
				clo := g.lo + float64(i)*bw
				f := (math.Min(t1, clo+bw) - math.Max(t0, clo)) / bw
				if f <= 0 {
					continue
				}
				if f > 1 {
					f = 1
				}
				col.busy += float64(c.busy) * f
				col.wait += float64(c.wait) * f
				sketchAdd(&col.cand, &col.candW, c.cand, c.candW*float32(f)+1e-30)
			}
			var k runKey
			if col.busy > 0 {
				// Height ∝ √(share in MPI) so that the typical 5-30 % stay
				// readable; the waiting part keeps its linear share of it.
				tot := int(math.Round(math.Sqrt(math.Min(1, col.busy/cw)) * float64(laneH)))
				if tot < 1 {
					tot = 1
				}
				wt := int(math.Round(float64(tot) * math.Min(1, col.wait/col.busy)))
				k = runKey{op: col.cand, solid: tot - wt, wait: wt}
			}
			if k != run || runStart < 0 {
				flush(x)
				run, runStart = k, x
			}
		}
		flush(g.width)
	}
	return paths, size
}

// renderBars draws the calls at least one pixel wide, each with a tooltip,
// the wait part hatched.
func (g *Gantt) renderBars(w *bufio.Writer, idp string, vlo, pw float64, x0, top, laneH, pitch int) {
	w.WriteString("<g>\n")
	for r := range g.lanes {
		bars := g.lanes[r].bars
		y := top + r*pitch
		for _, b := range bars {
			xa := float64(x0) + (b.enter-vlo)/pw
			xw := float64(x0) + (b.enter+b.wait-vlo)/pw
			xe := float64(x0) + (b.exit-vlo)/pw
			fmt.Fprintf(w, `<g><title>rank %d · %s · comm %d seq %d · at %s · %s`, r, b.op, b.comm, b.seq, fmtDur(b.enter-vlo), fmtDur(b.exit-b.enter))
			if b.wait > 0 {
				fmt.Fprintf(w, ` (waiting %s)`, fmtDur(b.wait))
			}
			if b.sent > 0 || b.recv > 0 {
				fmt.Fprintf(w, ` · %d B sent, %d B received`, b.sent, b.recv)
			}
			w.WriteString(`</title>`)
			if xe-xw > 0.05 {
				fmt.Fprintf(w, `<rect class="%s%d" x="%s" y="%d" width="%s" height="%d"/>`, idp, b.op, f1(xw), y, f1(math.Max(0.1, xe-xw)), laneH)
			}
			if xw-xa > 0.05 {
				fmt.Fprintf(w, `<rect fill="url(#%sh%d)" x="%s" y="%d" width="%s" height="%d"/>`, idp, b.op, f1(xa), y, f1(math.Max(0.1, xw-xa)), laneH)
			}
			w.WriteString("</g>\n")
		}
	}
	w.WriteString("</g>\n")
}

// laneShare is the time a lane spends in MPI and waiting inside [lo, hi].
func (g *Gantt) laneShare(l *lane, lo, hi float64) (busy, wait float64) {
	bw := (g.hi - g.lo) / float64(g.nb)
	for i, c := range l.cells {
		if c.busy == 0 {
			continue
		}
		clo := g.lo + float64(i)*bw
		f := (math.Min(hi, clo+bw) - math.Max(lo, clo)) / bw
		if f <= 0 {
			continue
		}
		f = math.Min(f, 1)
		busy += float64(c.busy) * f
		wait += float64(c.wait) * f
	}
	for _, b := range l.bars {
		busy += math.Max(0, math.Min(hi, b.exit)-math.Max(lo, b.enter))
		wait += math.Max(0, math.Min(hi, b.enter+b.wait)-math.Max(lo, b.enter))
	}
	return busy, wait
}

// renderLaneShares prints each lane's share of the window spent in MPI and
// waiting, right of the plot.
func (g *Gantt) renderLaneShares(w *bufio.Writer, vlo, vhi float64, x, top, laneH, pitch, every, fs int) {
	span := vhi - vlo
	if span <= 0 {
		return
	}
	fmt.Fprintf(w, `<g font-size="%d" fill="#444">`, min(fs, 10))
	fmt.Fprintf(w, `<text x="%d" y="%d">in MPI · waiting</text>`, x, top-4)
	for r := 0; r < len(g.lanes); r += every {
		busy, wait := g.laneShare(&g.lanes[r], vlo, vhi)
		y := float64(top+r*pitch) + float64(laneH)/2 + float64(min(fs, 10))/2 - 1.5
		fmt.Fprintf(w, `<text x="%d" y="%s">%s · %s</text>`, x, f1(y), pct(busy, span), pct(wait, span))
	}
	w.WriteString("</g>\n")
}
