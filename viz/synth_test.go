package viz

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/trace"
)

// synthRun describes a synthetic bulk-synchronous run: per iteration every
// rank computes for a random time, then calls a collective. Raw clocks get a
// per-rank offset and drift so raw views are visibly wrong.
type synthRun struct {
	Ranks   int
	Iters   int
	Seed    uint64
	Compute float64 // mean compute time between calls, ns
	Latency float64 // collective latency after the last enter, ns
	Offset  float64 // raw clock offset scale, ns
	Drift   float64 // raw clock drift scale (dimensionless)
	Ops     []trace.Op
	Slow    int // this rank computes 3x longer (the late arriver)
}

// run emits the events in global Enter order. Memory is one iteration.
func (s synthRun) run(fn func(*merge.GEvent) error) error {
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	if len(s.Ops) == 0 {
		s.Ops = []trace.Op{trace.OpAllreduce}
	}
	off := make([]float64, s.Ranks)
	drift := make([]float64, s.Ranks)
	for r := range off {
		off[r] = (rng.Float64()*2 - 1) * s.Offset
		drift[r] = (rng.Float64()*2 - 1) * s.Drift
	}
	if s.Ranks > 0 {
		off[0], drift[0] = 0, 0
	}
	now := make([]float64, s.Ranks)
	for r := range now {
		now[r] = 1e9
	}
	enter := make([]float64, s.Ranks)
	var buf []merge.GEvent
	raw := func(r int, t float64) float64 { return t + off[r] + drift[r]*(t-1e9) }
	for it := 0; it < s.Iters; it++ {
		op := s.Ops[it%len(s.Ops)]
		maxEnter := math.Inf(-1)
		for r := range enter {
			c := s.Compute * (0.5 + rng.Float64())
			if r == s.Slow {
				c *= 3
			}
			enter[r] = now[r] + c
			maxEnter = math.Max(maxEnter, enter[r])
		}
		for r := range enter {
			ex := maxEnter + s.Latency*(0.8+0.4*rng.Float64())
			if !op.Synchronizing() && r == 0 { // root leaves early
				ex = enter[r] + s.Latency
			}
			buf = append(buf, merge.GEvent{
				Rank: int32(r), Op: op, CommID: 1, Seq: uint32(it), Root: -1,
				Sent: 8, Recv: 8,
				LocalEnter: int64(raw(r, enter[r])), LocalExit: int64(raw(r, ex)),
				Enter: enter[r], Exit: ex, RawEnter: raw(r, enter[r]), RawExit: raw(r, ex),
				Callsite: 0x401000 + uint64(it%3)*16,
			})
			now[r] = ex
		}
		bound := math.Inf(1)
		for _, t := range now {
			bound = math.Min(bound, t)
		}
		sort.Slice(buf, func(i, j int) bool { return buf[i].Enter < buf[j].Enter })
		n := 0
		for n < len(buf) && buf[n].Enter <= bound {
			if err := fn(&buf[n]); err != nil {
				return err
			}
			n++
		}
		buf = append(buf[:0], buf[n:]...)
	}
	for i := range buf {
		if err := fn(&buf[i]); err != nil {
			return err
		}
	}
	return nil
}
