package viz

import (
	"fmt"
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
	marks   []merge.Mark    // root causes and the critical path (marks.go)
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

	pend      []pendRef         // min-heap by global exit
	slots     []pending         // pending events, referenced by pend
	free      []int32           // free slots
	inst      map[instKey]int32 // open instance -> index into states
	states    []instState       // open instances' states (free ones listed in freeSt)
	freeSt    []int32
	recent    [256]int32 // direct-mapped cache in front of inst: state index + 1
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
	key        instKey // while refs > 0
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
	st   int32 // its instance's state (Gantt.states)
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
		inst:    make(map[instKey]int32),
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
	// One map lookup per member: the state lives in a slab and the pending
	// member keeps its index (the map's struct-key hashing was ≈ 10% of
	// the CPU of a default run, 2026-11-25).
	k := instKey{ev.CommID, ev.Seq}
	idx := g.stateOf(k)
	st := &g.states[idx]
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
	g.push(ev.Exit, pending{rank: ev.Rank, pos: ev.CommRank, root: ev.Root, st: idx, b: b})
	return nil
}

// stateOf returns the index of instance k's state, made if new. The
// members of an instance arrive close together, so a small direct-mapped
// cache answers most lookups; it is checked against the state's own key,
// so a state freed or reused for another instance is never taken for k.
func (g *Gantt) stateOf(k instKey) int32 {
	h := (k.comm ^ uint64(k.seq)*0x9E3779B97F4A7C15) >> 56
	if c := g.recent[h]; c > 0 {
		if st := &g.states[c-1]; st.refs > 0 && st.key == k {
			return c - 1
		}
	}
	idx, ok := g.inst[k]
	if !ok {
		idx = g.newState()
		g.states[idx].key = k
		g.inst[k] = idx
	}
	g.recent[h] = idx + 1
	return idx
}

// newState returns the index of a cleared instState (a free one, or a new
// one at the end of the slab).
func (g *Gantt) newState() int32 {
	if n := len(g.freeSt); n > 0 {
		idx := g.freeSt[n-1]
		g.freeSt = g.freeSt[:n-1]
		return idx
	}
	g.states = append(g.states, instState{})
	return int32(len(g.states) - 1)
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
				w = max(w, m.enter-p.b.enter)
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
		st := &g.states[p.st]
		p.b.wait = waitOf(&p, st)
		if st.refs--; st.refs <= 0 {
			delete(g.inst, instKey{p.b.comm, p.b.seq})
			*st = instState{prefix: st.prefix[:0]}
			g.freeSt = append(g.freeSt, p.st)
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
	waitEnd := b.enter + max(0, b.wait)
	if g.fixed {
		if b.exit < g.lo || b.enter > g.hi {
			g.clipped++
			return
		}
		b.enter, b.exit = max(b.enter, g.lo), min(b.exit, g.hi)
	} else {
		g.cover(b.enter, b.exit)
	}
	b.wait = min(max(0, waitEnd-b.enter), b.exit-b.enter)
	g.dataLo, g.dataHi = min(g.dataLo, b.enter), max(g.dataHi, b.exit)
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
		ov := min(e, hi) - max(a, lo)
		if ov <= 0 {
			continue
		}
		wov := max(0, min(we, hi)-max(a, lo))
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
		span := max(4*(b-a), 1000)
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
