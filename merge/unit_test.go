package merge

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

func TestCorrector_InterpolatesBetweenEpochsAndUsesNearestOutside(t *testing.T) {
	// epoch 0 says offset 1000 ns with slope 1e-6 around t=1e9; epoch 1
	// says offset 5000 ns with slope 3e-6 around t=3e9.
	e0 := trace.Epoch{Index: 0, EndNS: 1e9, Model: trace.Model{T0: 1e9, Slope: 1e-6, Intercept: 1000}}
	e1 := trace.Epoch{Index: 1, EndNS: 3e9, Model: trace.Model{T0: 3e9, Slope: 3e-6, Intercept: 5000}}
	c, note := correct.NewCorrector(correct.ClockInterp, []trace.Epoch{e1, e0}, 0)
	if note != "" || c.Mode() != correct.ClockInterp {
		t.Fatalf("mode %v note %q", c.Mode(), note)
	}
	for _, tc := range []struct {
		t    int64
		want float64
	}{
		{1e9, 1000},              // knot 0
		{2e9, 3000},              // midway: linear between the knots
		{3e9, 5000},              // knot 1
		{5e8, 1000 - 0.5e9*1e-6}, // before: epoch 0's own model
		{4e9, 5000 + 1e9*3e-6},   // after: epoch 1's own model
	} {
		if got := c.Offset(tc.t); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Offset(%d) = %v, want %v", tc.t, got, tc.want)
		}
		if got := c.Global(tc.t); math.Abs(got-(float64(tc.t)-tc.want)) > 1e-6 {
			t.Errorf("Global(%d) = %v", tc.t, got)
		}
	}
	// continuity at the knots
	for _, k := range []int64{1e9, 3e9} {
		if d := math.Abs(c.Offset(k-1) - c.Offset(k+1)); d > 1e-2 {
			t.Errorf("offset jumps by %v ns at knot %d", d, k)
		}
	}
	ci, _ := correct.NewCorrector(correct.ClockInit, []trace.Epoch{e0, e1}, 0)
	if got := ci.Offset(3e9); math.Abs(got-(1000+2e9*1e-6)) > 1e-6 {
		t.Errorf("init Offset(3e9) = %v", got)
	}
	cr, _ := correct.NewCorrector(correct.ClockRaw, []trace.Epoch{e0, e1}, 42)
	if got := cr.Global(7); got != 49 {
		t.Errorf("raw Global(7) = %v, want 49 (shift 42)", got)
	}
}

func TestCorrector_FallsBackAndSaysWhy(t *testing.T) {
	good := trace.Epoch{Index: 0, EndNS: 10, Model: trace.Model{Intercept: 5}}
	bad := trace.Epoch{Index: 1, EndNS: 20, Model: trace.Model{Slope: math.NaN()}}
	early := trace.Epoch{Index: 1, EndNS: 5, Model: trace.Model{Intercept: 9}}
	for _, tc := range []struct {
		name   string
		epochs []trace.Epoch
		mode   correct.ClockMode
		note   string
	}{
		{"no epochs", nil, correct.ClockRaw, "no sync epoch"},
		{"only epoch 0", []trace.Epoch{good}, correct.ClockInit, "only epoch 0 present"},
		{"NaN model", []trace.Epoch{good, bad}, correct.ClockInit, "unusable model"},
		{"epoch 1 before epoch 0", []trace.Epoch{good, early}, correct.ClockInit, "ends before the previous one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, note := correct.NewCorrector(correct.ClockInterp, tc.epochs, 0)
			if c.Mode() != tc.mode || !strings.Contains(note, tc.note) {
				t.Errorf("mode %v note %q, want %v and %q", c.Mode(), note, tc.mode, tc.note)
			}
			if g := c.Global(100); math.IsNaN(g) || math.IsInf(g, 0) {
				t.Errorf("Global = %v", g)
			}
		})
	}
}

func TestAccum_ExactBelowReservoirAndCloseAbove(t *testing.T) {
	var a accum
	for i := 1; i <= 101; i++ {
		a.add(float64(i))
	}
	s := a.stats()
	if s.Count != 101 || s.Total != 5151 || s.Mean != 51 || s.Median != 51 || s.Max != 101 || math.Abs(s.P95-96) > 1e-9 {
		t.Errorf("small stats %+v", s)
	}
	var b accum
	const n = 1_000_000
	for i := 0; i < n; i++ {
		b.add(float64((i * 7919) % n)) // a permutation of 0..n-1
	}
	s = b.stats()
	if len(b.res) != ReservoirSize {
		t.Errorf("reservoir holds %d samples", len(b.res))
	}
	if s.Count != n || s.Max != n-1 || math.Abs(s.Mean-(n-1)/2.0) > 1e-6 {
		t.Errorf("exact parts wrong: %+v", s)
	}
	// rank error ~ 1/sqrt(8192) ≈ 1.1%; allow 3%
	if math.Abs(s.Median-n/2) > 0.03*n || math.Abs(s.P95-0.95*n) > 0.03*n {
		t.Errorf("median %v p95 %v, want ≈ %v and %v", s.Median, s.P95, n/2, 0.95*n)
	}
}

func TestHist_LogBinsCoverEveryValue(t *testing.T) {
	var h hist
	vals := []float64{0, -5, 1, 10, 11, 99, 100, 1e6, 1e11, 1e20, math.Inf(1)}
	for _, v := range vals {
		h.add(v)
	}
	out := h.export()
	total := 0
	for _, c := range out.Counts {
		total += c
	}
	if total != len(vals) || len(out.Edges) != len(out.Counts)+1 {
		t.Fatalf("counts %d of %d, edges %d bins %d", total, len(vals), len(out.Edges), len(out.Counts))
	}
	if out.Counts[0] != 5 || out.Counts[len(out.Counts)-1] != 3 { // 0,-5,1,10,11 (< 10^1.2); 1e11,1e20,Inf
		t.Errorf("first/last bins %d/%d", out.Counts[0], out.Counts[len(out.Counts)-1])
	}
	if !sort.Float64sAreSorted(out.Edges) || out.Edges[0] != HistMinNS {
		t.Errorf("edges %v", out.Edges)
	}
}

// TestHist_ExponentStartMatchesBinarySearch checks hist.add's bin (from
// the binary exponent) against the plain binary search, clamped, on every
// edge, its neighbouring floats, random values over the whole range and
// the special values.
func TestHist_ExponentStartMatchesBinarySearch(t *testing.T) {
	vals := []float64{math.NaN(), math.Inf(-1), math.Inf(1), -0.0, 0, -1, 5e-324, 9.999999, 1e300, math.MaxFloat64}
	for _, e := range histEdges {
		vals = append(vals, e, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1)))
	}
	for e := -10; e < 60; e++ {
		x := math.Ldexp(1, e)
		vals = append(vals, x, math.Nextafter(x, 0))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		vals = append(vals, math.Pow(10, rng.Float64()*13-1))
	}
	nb := HistDecades * HistPerDecade
	for _, x := range vals {
		want := min(max(histBinSearch(x), 0), nb-1)
		var h hist
		h.add(x)
		if h.counts[want] != 1 {
			got := -1
			for i, c := range h.counts {
				if c != 0 {
					got = i
				}
			}
			t.Fatalf("hist.add(%v) counted in bin %d, the binary search says %d", x, got, want)
		}
	}
}

func TestAnalyze_DamagedRunKeepsIntactInstances(t *testing.T) {
	dir := t.TempDir()
	cfg := synth.Config{Ranks: 4, Steps: 30000, Seed: 71, ChunkEvents: 4096, CorruptChunks: []synth.ChunkRef{{Rank: 1, Chunk: 2}}}
	tr, err := synth.Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := analyzeDir(t, dir, Options{})
	an := res.Analysis
	total := 0
	for _, n := range tr.Instances {
		total += n
	}
	if an.Instances != total {
		t.Errorf("instances %d, truth %d (lost events must leave incomplete instances, not drop them)", an.Instances, total)
	}
	// rank 1 lost one chunk of 4096 events: each was one instance
	if an.Incomplete != 4096 {
		t.Errorf("incomplete = %d, want 4096", an.Incomplete)
	}
	if an.Events != tr.TotalEvents()-4096 {
		t.Errorf("events %d, want %d", an.Events, tr.TotalEvents()-4096)
	}
	if !strings.Contains(strings.Join(an.Problems, "\n"), "rank-00001.gct: chunk 2 at byte") {
		t.Errorf("problems %q", an.Problems)
	}
}

func TestGEvent_ContractFieldsUnchanged(t *testing.T) {
	// merge may add fields to the contract types, never rename or remove.
	want := []string{"Rank", "Op", "CommID", "Seq", "Root", "Sent", "Recv", "LocalEnter", "LocalExit", "Enter", "Exit", "RawEnter", "RawExit", "Callsite"}
	typ := reflect.TypeOf(datamodel.GEvent{})
	for _, f := range want {
		if _, ok := typ.FieldByName(f); !ok {
			t.Errorf("GEvent.%s missing", f)
		}
	}
}

// orderSink records the sequence numbers it sees; fails after failAt.
type orderSink struct {
	seen   []uint32
	failAt int
}

func (o *orderSink) Add(ev *datamodel.GEvent) error {
	if o.failAt > 0 && len(o.seen) == o.failAt {
		return errors.New("disk full")
	}
	o.seen = append(o.seen, ev.Seq)
	return nil
}

func TestAsyncSink_PreservesOrderAndReportsErrors(t *testing.T) {
	o := &orderSink{}
	a := NewAsyncSink(o)
	const n = 3*asyncBatch + 17
	for i := 0; i < n; i++ {
		if err := a.Add(&datamodel.GEvent{Seq: uint32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if len(o.seen) != n {
		t.Fatalf("saw %d events, want %d", len(o.seen), n)
	}
	for i, s := range o.seen {
		if s != uint32(i) {
			t.Fatalf("event %d has seq %d: order lost", i, s)
		}
	}
	bad := NewAsyncSink(&orderSink{failAt: 10})
	for i := 0; i < n; i++ {
		_ = bad.Add(&datamodel.GEvent{})
	}
	if err := bad.Close(); err == nil || err.Error() != "disk full" {
		t.Errorf("Close = %v, want the sink's error", err)
	}
}

// filterSink is an orderSink that wants one operation only (OpFilter).
type filterSink struct {
	orderSink
	op trace.Op
}

func (f *filterSink) Wants(op trace.Op) bool { return op == f.op }

// TestAsyncSink_OpFilterGetsOnlyWantedInOrder: an AsyncSink over an
// OpFilter hands over exactly the events of the wanted operations, in order.
func TestAsyncSink_OpFilterGetsOnlyWantedInOrder(t *testing.T) {
	for _, op := range trace.Ops() {
		if op >= wantLowOps {
			t.Fatalf("op %s (%d) is beyond the AsyncSink's cached filter answers (%d)", op, op, wantLowOps)
		}
	}
	// trace.Op(300): an op of a newer recorder, asked of the filter itself
	ops := []trace.Op{trace.OpSend, trace.OpAllreduce, trace.OpRecv, trace.OpSend, trace.Op(300)}
	for _, want := range []trace.Op{trace.OpSend, trace.OpAllreduce, trace.OpBarrier, trace.Op(300)} {
		t.Run(want.String(), func(t *testing.T) {
			f := &filterSink{op: want}
			a := NewAsyncSink(f)
			var exp []uint32
			for i := 0; i < 2*asyncBatch+5; i++ {
				op := ops[i%len(ops)]
				if op == want {
					exp = append(exp, uint32(i))
				}
				if err := a.Add(&datamodel.GEvent{Seq: uint32(i), Op: op}); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if len(f.seen) != len(exp) {
				t.Fatalf("saw %d events, want %d", len(f.seen), len(exp))
			}
			for i := range exp {
				if f.seen[i] != exp[i] {
					t.Fatalf("event %d: seq %d, want %d", i, f.seen[i], exp[i])
				}
			}
		})
	}
}

// TestCorrector_InterpolatesThroughEveryKnot: with resync epochs the
// offset curve passes through each epoch's knot (the offset its model
// gives at its end), not the chord between the first and last; with
// --clock linear it is straight between knots, with interp (three knots)
// the parabola through them.
func TestCorrector_InterpolatesThroughEveryKnot(t *testing.T) {
	// offsets 0 at t=1e9, 1000 at t=3e9, -500 at t=5e9 (ns), slopes 0
	eps := []trace.Epoch{
		{Index: 0, EndNS: 1e9, Model: trace.Model{T0: 0, Intercept: 0}},
		{Index: 1, EndNS: 3e9, Model: trace.Model{T0: 0, Intercept: 1000}, Params: map[string]string{"resync": "1"}},
		{Index: 2, EndNS: 5e9, Model: trace.Model{T0: 0, Intercept: -500}},
	}
	// the parabola through the knots: 1000 − 312.5·(x−3)² − 125·(x−3), x in s
	par := func(x float64) float64 { return 1000 - 312.5*(x-3)*(x-3) - 125*(x-3) }
	for _, mode := range []correct.ClockMode{correct.ClockLinear, correct.ClockInterp} {
		c, note := correct.NewCorrector(mode, eps, 0)
		if c.Mode() != mode {
			t.Fatalf("mode %v: %s", c.Mode(), note)
		}
		for _, tc := range []struct {
			t      int64
			linear float64 // offset
		}{
			{1e9, 0}, {2e9, 500}, {3e9, 1000}, {4e9, 250}, {5e9, -500},
		} {
			want := tc.linear
			if mode == correct.ClockInterp {
				want = par(float64(tc.t) / 1e9)
			}
			if got := float64(tc.t) - c.Global(tc.t); math.Abs(got-want) > 1e-6 {
				t.Errorf("%v: offset at %d: %v, want %v", mode, tc.t, got, want)
			}
		}
	}
}

// TestPCCache_CallSitesOfOneLoopStayCached: the call sites of a loop lie
// a few bytes to a few hundred bytes apart (the synthetic halo
// exchange's: its starts 8 bytes apart, its MPI_Waitall 64 bytes after
// the first, its collective elsewhere); in the 16 slots a rank has at
// 16,384 ranks none evicts another, so after the first step every
// lookup hits (a miss is a map lookup).
func TestPCCache_CallSitesOfOneLoopStayCached(t *testing.T) {
	for _, base := range []uint64{0x401000, 0x55d4c3a2b140, 0x7f3a12345678} {
		cache := make([]pcSlot, pcCacheLen(16384))
		pcs := []uint64{base, base + 8, base + 16, base + 24, base + 0x40, base + 0x1000}
		misses := 0
		for step := 0; step < 100; step++ {
			for _, pc := range pcs {
				slot, hit := pcLookup(cache, pc)
				if !hit {
					misses++
					slot.pc, slot.site, slot.ok = pc, int32(pc), true
				} else if slot.site != int32(pc) {
					t.Fatalf("base %#x: pc %#x found with site %d", base, pc, slot.site)
				}
			}
		}
		if misses != len(pcs) {
			t.Fatalf("base %#x: %d misses in 100 steps over %d call sites, want one each", base, misses, len(pcs))
		}
	}
}
