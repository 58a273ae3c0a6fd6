package merge

import (
	"fmt"
	"math"
	"sort"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
)

// Controlled logical clock repair (issue 10 §4; after Scalasca's CLC,
// Becker, Rabenseifner and Wolf, "Replay-based synchronization of
// timestamps in event traces of massively parallel applications", 2009).
//
// What the refinement (refine.go) cannot fix, a clock-condition violation
// that remains on the corrected timeline, is repaired here: the event that
// happened after another (a receive's completion after its send began;
// an N×N collective's exit after its last member entered) but is stamped
// before it is moved forward by exactly the violation, and its rank's
// neighbouring events are moved along by less and less the further they
// are from it, at a rate of at most CLCRate: the move is a "tent" of
// height d and slope CLCRate on each side. A rank's move is the upper
// envelope of its tents, so it is continuous and its slope stays within
// ±CLCRate: local order is kept and no local interval changes by more than
// CLCRate of its length (CLC's forward and backward amortisation in one
// shape). Moves only go forward in time, as CLC's do.
//
// A repair moves a rank's events after the violation too, so it can create
// a violation elsewhere (a send moved past its receive); tracemerge repeats
// the repair pass while violations remain, up to CLCPasses times, and
// reports what is left.

// CLCRate is the largest relative change of a local interval the repair
// allows (the tents' slope).
const CLCRate = 0.02

// CLCPasses is how many repair passes tracemerge runs at most.
const CLCPasses = 3

// MaxRepairs bounds the violations a pass collects for repair; beyond it
// the largest are kept (Repairs.Dropped counts the others).
const MaxRepairs = 1 << 20

// repairs collects a pass's violations.
type repairs struct {
	list    []datamodel.Repair
	dropped int
}

func (r *repairs) add(rank int32, g, d float64) {
	if !(d > 0) || math.IsInf(d, 0) || math.IsNaN(g) {
		return
	}
	if len(r.list) >= MaxRepairs {
		r.dropped++
		return
	}
	r.list = append(r.list, datamodel.Repair{Rank: rank, G: g, D: d})
}

// CLC is the repair a pass applies: per world rank its tents (sorted by
// time) with the prefix and suffix maxima that evaluate their envelope in
// O(log n).
type CLC struct {
	Origin int64
	ranks  map[int32]*clcRank
	// Repairs is the number of violations repaired so far (all passes),
	// MaxNS the largest move.
	Repairs int
	MaxNS   float64
	// Before: the violations of the refined timeline before any repair.
	Before int
}

type clcRank struct {
	g, d []float64
	// preA[i] = max_{k<=i} d_k + rate*g_k; sufB[i] = max_{k>=i} d_k - rate*g_k
	preA, sufB []float64
}

// NewCLC returns the repair for the violations found by a pass over a run
// whose global times are relative to origin, on top of prev (the repair
// the pass applied, nil for none): the tents of both.
func NewCLC(origin int64, prev *CLC, found []datamodel.Repair) *CLC {
	c := &CLC{Origin: origin, ranks: map[int32]*clcRank{}}
	all := map[int32][][2]float64{}
	if prev != nil {
		c.Repairs, c.MaxNS = prev.Repairs, prev.MaxNS
		for rank, cr := range prev.ranks {
			for i := range cr.g {
				all[rank] = append(all[rank], [2]float64{cr.g[i], cr.d[i]})
			}
		}
	}
	for _, r := range found {
		// The violation was measured on times the previous repair had
		// already moved: the tent adds to the move there.
		// Its time before that move, g0 with g0 + prev(g0) = G, by a few
		// fixed-point steps (prev's slope is at most CLCRate).
		base := 0.0
		if prev != nil {
			for i := 0; i < 4; i++ {
				base = prev.at(r.Rank, r.G-base)
			}
		}
		// (+1 ns: the repaired event lands just after the one it follows)
		all[r.Rank] = append(all[r.Rank], [2]float64{r.G - base, base + r.D + 1})
		c.Repairs++
		c.MaxNS = max(c.MaxNS, base+r.D+1)
	}
	for rank, ts := range all {
		sort.Slice(ts, func(i, j int) bool { return ts[i][0] < ts[j][0] })
		cr := &clcRank{g: make([]float64, len(ts)), d: make([]float64, len(ts)),
			preA: make([]float64, len(ts)), sufB: make([]float64, len(ts))}
		for i, t := range ts {
			cr.g[i], cr.d[i] = t[0], t[1]
		}
		for i := range ts {
			a := cr.d[i] + CLCRate*cr.g[i]
			if i > 0 {
				a = max(a, cr.preA[i-1])
			}
			cr.preA[i] = a
		}
		for i := len(ts) - 1; i >= 0; i-- {
			b := cr.d[i] - CLCRate*cr.g[i]
			if i < len(ts)-1 {
				b = max(b, cr.sufB[i+1])
			}
			cr.sufB[i] = b
		}
		c.ranks[rank] = cr
	}
	return c
}

// Ranks is the number of ranks the repair moves.
func (c *CLC) Ranks() int {
	if c == nil {
		return 0
	}
	return len(c.ranks)
}

// Move is rank's repair, to attach with correct.Corrector.SetCLC (nil: c is nil
// or does not move rank).
func (c *CLC) Move(rank int32) correct.Move {
	if c == nil || c.ranks[rank] == nil {
		return nil
	}
	return clcMove{c, rank}
}

// clcMove is one rank's repair (correct.Move).
type clcMove struct {
	c    *CLC
	rank int32
}

// At is the rank's forward move at g (CLC.at).
func (m clcMove) At(g float64) float64 { return m.c.at(m.rank, g) }

// at is rank's forward move (ns, >= 0) at global time g (before the move):
// the envelope max(0, max_k d_k - rate*|g - g_k|).
func (c *CLC) at(rank int32, g float64) float64 {
	if c == nil {
		return 0
	}
	cr := c.ranks[rank]
	if cr == nil {
		return 0
	}
	i := sort.SearchFloat64s(cr.g, g) // g_k < g for k < i
	m := 0.0
	if i > 0 {
		m = max(m, cr.preA[i-1]-CLCRate*g)
	}
	if i < len(cr.g) {
		m = max(m, cr.sufB[i]+CLCRate*g)
	}
	return m
}

// factsPass is --clock refined's first pass (o: correct.ClockInterp): the
// collectives' happened-before facts and, from a point-to-point stream
// configured by popt, the messages' with rank 0 (Pass.p2pFacts). The
// stream is a plain stream sink, not an AsyncSink: every message it
// matches is a fact before the pass computes its refinement.
func factsPass(load func() (*rundir.Run, error), o Options, popt P2POptions) (*Result, error) {
	run, err := load()
	if err != nil {
		return nil, err
	}
	defer run.Close()
	pass, err := Prepare(run, o)
	if err != nil {
		return nil, err
	}
	po := popt
	po.Clock, po.KeepMessages, po.CollectRepairs, po.OnSync = o.Clock, 0, false, nil
	po.onMessage = pass.p2pFacts()
	pass.AddStreamSink(NewP2PStream(run, po, nil))
	return pass.Run()
}

// RefinedPlan is what PlanRefined found: the options of the final pass
// and what the repair passes saw.
type RefinedPlan struct {
	Options Options
	// Before is the clock-condition violations (collectives and
	// point-to-point) of the refined timeline before any repair; Passes
	// the repair passes run; Left the violations the last one still saw
	// (-1: not measured, the final pass reports them).
	Before, Passes, Left int
}

// PlanRefined runs the passes that --clock refined needs before its final
// one: a pass with correct.ClockInterp collecting the happened-before facts
// (Options.Refine), then up to CLCPasses passes with the refinement (and
// the repair so far) applied that list the clock-condition violations left,
// collectives' and point-to-point, and add their repair (Options.CLC).
// load opens the run afresh for every pass; popt configures the
// point-to-point stream of the repair passes.
func PlanRefined(load func() (*rundir.Run, error), opt Options, popt P2POptions) (*RefinedPlan, error) {
	// analyze runs one pass; with p2p set also the point-to-point stream
	// configured by popt (whose Result it returns).
	analyze := func(o Options, p2p bool) (*Result, *datamodel.P2PResult, error) {
		run, err := load()
		if err != nil {
			return nil, nil, err
		}
		defer run.Close()
		pass, err := Prepare(run, o)
		if err != nil {
			return nil, nil, err
		}
		var st *P2PStream
		var as *AsyncSink
		if p2p {
			po := popt
			po.Clock, po.KeepMessages, po.CollectRepairs = o.Clock, 0, true
			st = NewP2PStream(run, po, nil)
			as = NewAsyncSink(st)
			pass.AddStreamSink(as)
		}
		res, err := pass.Run()
		if as != nil {
			if cerr := as.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}
		if err != nil {
			return nil, nil, err
		}
		if st != nil {
			return res, st.Result(), nil
		}
		return res, nil, nil
	}
	fo := opt
	fo.Clock, fo.Capture, fo.Sinks, fo.StreamSinks, fo.Progress = correct.ClockInterp, nil, nil, nil, nil
	r1, err := factsPass(load, fo, popt)
	if err != nil {
		return nil, fmt.Errorf("refinement pass: %w", err)
	}
	plan := &RefinedPlan{Options: RefinedOptions(opt, r1), Left: -1}
	var clc *CLC
	for pass := 0; pass < CLCPasses; pass++ {
		ro := plan.Options
		ro.Capture, ro.Sinks, ro.StreamSinks, ro.Progress = nil, nil, nil, nil
		ro.CLC, ro.CollectRepairs = clc, true
		res, pr, err := analyze(ro, true)
		if err != nil {
			return nil, fmt.Errorf("repair pass %d: %w", pass+1, err)
		}
		found := append(append([]datamodel.Repair(nil), res.Repairs...), pr.Repairs...)
		n := res.Analysis.Clock.Violations + pr.Violations
		if pass == 0 {
			plan.Before = n
		}
		plan.Left = n
		if len(found) == 0 {
			break
		}
		plan.Passes++
		clc = NewCLC(res.OriginNS, clc, found)
		plan.Left = -1
	}
	if clc != nil {
		clc.Before = plan.Before
	}
	plan.Options.CLC = clc
	return plan, nil
}
