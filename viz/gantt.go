package viz

import (
	"fmt"
	"math"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
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
	k       int                 // ranks per lane (RanksPerLane resolved)
	sel     []int32             // GanttOptions.Ranks: lane -> rank
	laneIdx []int32             // with sel: rank -> lane, -1 not drawn
	msgs    []datamodel.Message // point-to-point lines (p2p.go)
	marks   []datamodel.Mark    // root causes and the critical path (marks.go)
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

type bar struct {
	enter, exit, wait float64 // view timebase; wait measured from enter
	comm              uint64
	sent, recv        uint64
	seq               uint32
	op                trace.Op
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
func (g *Gantt) Add(ev *datamodel.GEvent) error {
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
