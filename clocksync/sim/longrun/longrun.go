// Package longrun simulates a long recorded run on clocksync/sim (issue 38
// §5): every rank syncs fully at the start (as in MPI_Init), then resyncs
// with the offset-only tree (clocksync.NewResyncAlg, one algorithm reused,
// its prior set to the last model) at the intervals the recorder's
// adaptive policy chooses (clocksync.NextResyncInterval, the recorder's), and once more at
// the end (as in MPI_Finalize). The node clocks carry the recorder's
// injected non-linear shapes (trace.FakeTerm: random-walk frequency,
// frequency step). Each rank's knots become trace.Epochs, corrected as
// tracemerge corrects them (correct.NewCorrector); the corrected timestamps
// are compared with the simulator's exact truth at many times between the
// knots, not only at them.
package longrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/clocksync/sim"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
)

// Shape is the non-linear clock error of the nodes.
type Shape int

const (
	// RandomWalk: every node's frequency random-walks, rw(1s, 0.05ppm)
	// (the shape of the real-MPI tests and section 4 of the bench).
	RandomWalk Shape = iota
	// StepWander: rw(1s, 0.05ppm) plus a frequency step of ±1 ppm at a
	// time uniform over the run's middle 80 %.
	StepWander
)

func (s Shape) String() string {
	if s == StepWander {
		return "1 ppm step + random walk 0.05 ppm/√s"
	}
	return "random walk 0.05 ppm/√s"
}

// Config is one long simulated run.
type Config struct {
	Ranks, Nodes int
	Seed         uint64
	// Duration of the run (simulated s).
	Duration float64
	Shape    Shape
	// Resync is GCLOCK_RESYNC (s, default 2); 0 with NoResync.
	Resync float64
	// NoAdapt keeps the interval at Resync (GCLOCK_RESYNC_ADAPT=0; no
	// budget then).
	NoAdapt bool
	// Budget is GCLOCK_RESYNC_BUDGET (default clocksync.ResyncBudget;
	// negative: none).
	Budget float64
	// NoResync: only the syncs at start and end (the control).
	NoResync bool
	// Samples is the number of true times sampled per knot interval and
	// rank (default 8: 7 at fixed fractions, 1 random), plus every knot.
	Samples int
	// Mode is the correction (default correct.ClockInterp: the smooth model).
	Mode correct.ClockMode
	// Workers bound the goroutines that correct (default GOMAXPROCS).
	Workers int
}

// Result is what one run measured. Errors are |corrected − truth| (s).
type Result struct {
	Config Config `json:"-"`
	Shape  string
	Ranks  int
	Nodes  int
	// Knots per rank (epochs: init, resyncs, finalize).
	Knots int
	// MinInterval and MaxInterval: the resync intervals rank 0 chose (s).
	MinInterval, MaxInterval float64
	// MaxErr and P99Err over every sampled timestamp of every rank;
	// WorstRank and WorstT (simulated s) where MaxErr was.
	MaxErr, P99Err, MedianErr float64
	WorstRank                 int
	WorstT                    float64
	// KnotMaxErr: the worst error at the knots themselves.
	KnotMaxErr float64
	// Samples: timestamps compared.
	Samples int64
	// ResyncVirtual: the mean virtual time of one resync epoch (slowest
	// rank, s); ResyncShare its share of the run.
	ResyncVirtual, ResyncShare float64
	// SimWall and CorrectWall: wall time of the simulation and of the
	// correction (s).
	SimWall, CorrectWall float64
}

// rankKnots holds one rank's knots compactly (a 16,384-rank hour has
// millions): the model's offset at the knot (ns) and the sync-path bound
// (ns, -1 unknown); the slopes of the first and last model. The knots'
// true times are shared (knotT: the ranks leave every epoch together) and
// their local times follow from the simulator's clocks.
type rankKnots struct {
	off        []float64
	bound      []float32
	slope0, sl float64
}

// terms builds node n's non-linear clock terms.
func terms(c Config, n int) []trace.FakeTerm {
	span := (c.Duration*1.1 + 60) * 1e9
	ts := []trace.FakeTerm{{Kind: "rw", StepNS: 1e9, SigmaPPM: 0.05, Seed: c.Seed*1_000_003 + uint64(n) + 1, SpanNS: span}}
	if c.Shape == StepWander {
		rng := rand.New(rand.NewPCG(c.Seed, uint64(n)+0x5eed))
		ppm := 1.0
		if rng.IntN(2) == 0 {
			ppm = -1
		}
		ts = append(ts, trace.FakeTerm{Kind: "step", AtNS: (0.1 + 0.8*rng.Float64()) * c.Duration * 1e9, PPM: ppm})
	}
	for i := range ts {
		if ts[i].Kind == "rw" {
			ts[i].Walk() // built before the ranks read it concurrently
		}
	}
	return ts
}

// barrier is a reusable barrier of the rank goroutines that also gathers
// each rank's verdict and epoch time, as the recorder's closing allgather.
type barrier struct {
	mu          sync.Mutex
	n, arrived  int
	gen         chan struct{}
	anyDis, all bool
	maxCost     float64
	maxEnd      float64
	// results of the last round
	rDis, rCalm bool
	rCost, rEnd float64
}

func newBarrier(n int) *barrier {
	return &barrier{n: n, gen: make(chan struct{}), all: true}
}

func (b *barrier) wait(v clocksync.KnotVerdict, cost, end float64) (anyDis, allCalm bool, maxCost, maxEnd float64) {
	b.mu.Lock()
	b.anyDis = b.anyDis || v == clocksync.KnotDisagree
	b.all = b.all && v == clocksync.KnotCalm
	b.maxCost = max(b.maxCost, cost)
	b.maxEnd = max(b.maxEnd, end)
	b.arrived++
	ch := b.gen
	if b.arrived == b.n {
		b.rDis, b.rCalm, b.rCost, b.rEnd = b.anyDis, b.all, b.maxCost, b.maxEnd
		b.arrived, b.anyDis, b.all, b.maxCost, b.maxEnd = 0, false, true, 0, 0
		b.gen = make(chan struct{})
		close(ch)
		b.mu.Unlock()
		return b.rDis, b.rCalm, b.rCost, b.rEnd
	}
	b.mu.Unlock()
	<-ch
	// the next round cannot complete before this rank arrives, so the
	// results are still this round's
	return b.rDis, b.rCalm, b.rCost, b.rEnd
}

// agreeLatency is the virtual time of the closing agreement (an
// allgather of one int: about 2·log2(p) inter-node hops).
func agreeLatency(w *sim.World) float64 {
	return 2 * math.Log2(float64(w.P.Ranks)+1) * (w.P.InterLatency + w.P.InterJitter)
}

// Run simulates c and measures its corrected timestamps against the truth.
func Run(c Config) (*Result, error) {
	if c.Resync == 0 {
		c.Resync = 2
	}
	if c.Samples <= 0 {
		c.Samples = 8
	}
	if c.Budget == 0 {
		c.Budget = clocksync.ResyncBudget
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Ranks < 2 || c.Nodes < 1 || c.Duration <= 0 {
		return nil, fmt.Errorf("longrun: need ≥ 2 ranks, ≥ 1 node and a duration, got %d, %d, %g", c.Ranks, c.Nodes, c.Duration)
	}
	p := sim.DefaultParams(c.Ranks, c.Nodes, c.Seed)
	p.FastPath = true
	w := sim.New(p)
	for n := range w.Clocks {
		in := &trace.Injection{Terms: terms(c, n)}
		w.Clocks[n].Extra = func(T float64) float64 { return in.Extra(T*1e9) * 1e-9 }
	}
	res := &Result{Config: c, Shape: c.Shape.String(), Ranks: c.Ranks, Nodes: c.Nodes, MinInterval: math.Inf(1)}
	ks := make([]rankKnots, c.Ranks)
	bar := newBarrier(c.Ranks)
	cfg := clocksync.DefaultConfig()
	lat := agreeLatency(w)
	var costSum, prevT0 float64
	var epochs int
	var knotT []float64 // the knots' true times (s), the same on every rank
	start := time.Now()
	err := w.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
		k := &ks[r]
		cc := cfg
		cc.NodeID, cc.SocketID = w.NodeOf(r), w.NodeOf(r)
		s, err := clocksync.Sync(cc, tr, clk)
		if err != nil {
			return fmt.Errorf("init sync: %w", err)
		}
		m, _ := clocksync.FlattenTo(s.Global, clk)
		add := func(m clocksync.LinearModel, b float64) clocksync.KnotPoint {
			T := w.Now(r)
			if r == 0 {
				knotT = append(knotT, T)
			}
			t := int64(math.Round(w.LocalTime(r, T) * 1e9))
			off := trace.Model{Slope: m.Slope, Intercept: m.Intercept * 1e9}.Offset(t)
			k.off = append(k.off, off)
			if b >= 0 {
				b *= 1e9
			}
			k.bound = append(k.bound, float32(b))
			if len(k.off) == 1 {
				k.slope0 = m.Slope
			}
			k.sl = m.Slope
			return clocksync.KnotPoint{T: t, Off: off}
		}
		// leave the init sync together (recorder.epoch)
		_, _, _, end := bar.wait(clocksync.KnotKeep, 0, w.Now(r))
		w.Advance(r, end+lat-w.Now(r))
		last := []clocksync.KnotPoint{add(m, clocksync.SyncBound(tr, s.Global))}
		alg, err := clocksync.NewResyncAlg(cc, m)
		if err != nil {
			return err
		}
		// the recorder's resync epochs measure with GCLOCK_RESYNC_PINGPONGS'
		// default (pmpi/resync.go; D63), a loose pair's repeats with the
		// full syncs' (D84)
		alg.SetPingPongs(clocksync.ResyncPingPongs)
		alg.SetLoosePingPongs(max(cc.PingPongs, clocksync.ResyncPingPongs))
		prior := m
		interval := c.Resync
		var spend clocksync.ResyncSpend // the same on every rank: rank 0's
		at := w.Now(r)                  // every rank's time after the init epoch: equal
		for i := 0; ; i++ {
			next := at + interval
			if !c.NoAdapt {
				// the budget: as the recorder's rank 0, with the run's
				// start at simulated time 0 (the first resync is free:
				// the simulator does not time the end anchor)
				next = max(next, spend.Earliest(c.Budget))
			}
			final := c.NoResync || next > c.Duration
			if final {
				next = c.Duration
			}
			w.Advance(r, max(0, next-w.Now(r)))
			t0 := w.Now(r)
			alg.SetPrior(prior)
			g, err := alg.SyncClocks(tr, clk)
			if err != nil {
				return fmt.Errorf("resync %d: %w", i, err)
			}
			m, _ := clocksync.FlattenTo(g, clk)
			tk := int64(math.Round(w.LocalTime(r, w.Now(r)) * 1e9))
			v, _ := clocksync.JudgeKnot(last, clocksync.KnotPoint{T: tk, Off: trace.Model{Slope: m.Slope, Intercept: m.Intercept * 1e9}.Offset(tk)})
			dis, allCalm, cost, end := bar.wait(v, w.Now(r)-t0, w.Now(r))
			w.Advance(r, end+lat-w.Now(r))
			spend.Book(t0, cost, c.Budget)
			if !c.NoAdapt && !final {
				interval = clocksync.NextResyncInterval(interval, c.Resync, dis, allCalm)
			}
			prior = m
			last = append(last, add(m, clocksync.SyncBound(tr, g)))
			if len(last) > 4 {
				last = last[1:]
			}
			if r == 0 {
				costSum += cost
				epochs++
				if !final && i > 0 {
					// the spacing of the knots (the interval rule and the budget)
					res.MinInterval = min(res.MinInterval, t0-prevT0)
					res.MaxInterval = max(res.MaxInterval, t0-prevT0)
				}
				prevT0 = t0
			}
			at = w.Now(r)
			if final {
				return nil
			}
		}
	})
	if err != nil {
		return nil, err
	}
	res.SimWall = time.Since(start).Seconds()
	res.Knots = len(knotT)
	for r := range ks {
		if len(ks[r].off) != len(knotT) {
			return nil, fmt.Errorf("longrun: rank %d has %d knots, rank 0 %d", r, len(ks[r].off), len(knotT))
		}
	}
	if epochs > 0 {
		res.ResyncVirtual = costSum / float64(epochs)
		res.ResyncShare = costSum / c.Duration
	}
	if res.MinInterval > res.MaxInterval {
		res.MinInterval, res.MaxInterval = 0, 0
	}
	start = time.Now()
	if err := correctRanks(c, w, knotT, ks, res); err != nil {
		return nil, err
	}
	res.CorrectWall = time.Since(start).Seconds()
	return res, nil
}

// The percentiles come from a histogram of relative bin width histStep
// (0.1 %) from histMin to 1 s.
const (
	histMin  = 1e-12
	histStep = 1.001
)

var histBins = int(math.Ceil(math.Log(1/histMin)/math.Log(histStep))) + 2

func histIndex(e float64) int {
	if e <= histMin {
		return 0
	}
	return min(histBins-1, 1+int(math.Log(e/histMin)/math.Log(histStep)))
}

// histUpper is the upper edge of bin i.
func histUpper(i int) float64 { return histMin * math.Pow(histStep, float64(i)) }

type partial struct {
	max, knotMax float64
	worstRank    int
	worstT       float64
	n            int64
	hist         []int64
}

// correctRanks builds every rank's corrector from its knots and compares it
// with the truth at the knots and at c.Samples times in every interval.
func correctRanks(c Config, w *sim.World, knotT []float64, ks []rankKnots, res *Result) error {
	next := make(chan int, 64)
	parts := make([]*partial, c.Workers)
	errs := make([]error, c.Workers)
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = &partial{hist: make([]int64, histBins)}
		wg.Add(1)
		go func(pt *partial, ep *error) {
			defer wg.Done()
			for r := range next {
				if err := correctRank(c, w, r, knotT, &ks[r], pt); err != nil && *ep == nil {
					*ep = err
				}
			}
		}(parts[i], &errs[i])
	}
	for r := range ks {
		next <- r
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	hist := make([]int64, len(parts[0].hist))
	for _, pt := range parts {
		if pt.max > res.MaxErr {
			res.MaxErr, res.WorstRank, res.WorstT = pt.max, pt.worstRank, pt.worstT
		}
		res.KnotMaxErr = max(res.KnotMaxErr, pt.knotMax)
		res.Samples += pt.n
		for i, x := range pt.hist {
			hist[i] += x
		}
	}
	res.P99Err = quantile(hist, res.Samples, 0.99)
	res.MedianErr = quantile(hist, res.Samples, 0.5)
	return nil
}

func quantile(hist []int64, n int64, q float64) float64 {
	want := int64(math.Ceil(q * float64(n)))
	var acc int64
	for i, x := range hist {
		acc += x
		if acc >= want {
			return histUpper(i)
		}
	}
	return histUpper(len(hist) - 1)
}

func correctRank(c Config, w *sim.World, r int, knotT []float64, k *rankKnots, pt *partial) error {
	n := len(knotT)
	eps := make([]trace.Epoch, n)
	for i := range eps {
		t := int64(math.Round(w.LocalTime(r, knotT[i]) * 1e9))
		// The interior models are only read at their own knot (the
		// corrector takes each epoch's offset at its end): the slope
		// matters for the first and last only, beyond the knots.
		sl := 0.0
		switch i {
		case 0:
			sl = k.slope0
		case n - 1:
			sl = k.sl
		}
		m := trace.Model{Slope: sl, Intercept: k.off[i] - sl*float64(t)}
		eps[i] = trace.Epoch{Index: i, EndNS: t, StartNS: t, Model: m}
		if b := k.bound[i]; b >= 0 {
			eps[i].Params = map[string]string{"bound_ns": strconv.FormatFloat(float64(b), 'f', 1, 64)}
		}
	}
	cor, note := correct.NewCorrector(c.Mode, eps, 0)
	if cor.Mode() != c.Mode {
		return fmt.Errorf("rank %d: correction fell back to %v: %s", r, cor.Mode(), note)
	}
	rng := rand.New(rand.NewPCG(c.Seed^0xc0ffee, uint64(r)))
	check := func(T float64, atKnot bool) {
		local := int64(math.Round(w.LocalTime(r, T) * 1e9))
		truth := w.RefTime(T) * 1e9
		e := math.Abs(cor.Global(local)-truth) * 1e-9
		if atKnot {
			pt.knotMax = max(pt.knotMax, e)
		}
		if e > pt.max {
			pt.max, pt.worstRank, pt.worstT = e, r, T
		}
		pt.n++
		pt.hist[histIndex(e)]++
	}
	fr := fractions(c.Samples - 1)
	for i := 0; i < n; i++ {
		check(knotT[i], true)
		if i == n-1 {
			break
		}
		a, b := knotT[i], knotT[i+1]
		for _, f := range fr {
			check(a+f*(b-a), false)
		}
		check(a+rng.Float64()*(b-a), false)
	}
	return nil
}

// fractions are m evenly spread points inside (0, 1).
func fractions(m int) []float64 {
	out := make([]float64, max(m, 0))
	for i := range out {
		out[i] = float64(i+1) / float64(m+1)
	}
	sort.Float64s(out)
	return out
}
