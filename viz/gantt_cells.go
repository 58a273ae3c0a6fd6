package viz

// The Gantt chart's level-of-detail store: per lane, bars for events at
// least a pixel wide and 2×Width cells (busy and wait time, dominant op)
// for the narrower ones; an automatic window grows by merging cells
// pairwise, and the bars beyond MaxBars fold into the cells.

import (
	"math"
	"sort"

	"github.com/gclock/gclock/trace"
)

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

type lane struct {
	cells []cell
	bars  []bar
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
