package viz

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

func ganttSVG(t testing.TB, g *Gantt) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := g.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func feed(t testing.TB, g *Gantt, evs []datamodel.GEvent) {
	t.Helper()
	for i := range evs {
		if err := g.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGantt_SVGIsWellFormed(t *testing.T) {
	std := synthRun{Ranks: 6, Iters: 50, Seed: 3, Compute: 20000, Latency: 4000, Offset: 50000, Drift: 1e-5,
		Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier}}
	for _, c := range []struct {
		name string
		opt  GanttOptions
		run  synthRun
	}{
		{"global auto window", GanttOptions{WorldSize: 6}, std},
		{"raw clocks", GanttOptions{WorldSize: 6, Raw: true}, std},
		{"fixed window clips", GanttOptions{WorldSize: 6, Start: 1.0001e9, End: 1.0005e9}, std},
		{"lanes grow without world size", GanttOptions{}, std},
		{"many lanes", GanttOptions{Width: 800}, synthRun{Ranks: 300, Iters: 20, Seed: 1, Compute: 1e5, Latency: 1e4}},
		{"no events", GanttOptions{WorldSize: 4}, synthRun{}},
		{"hostile title and hosts", GanttOptions{WorldSize: 6, Title: hostile, Hosts: []string{hostile, "a&b", "\x01ctl", `"q"`}}, std},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewGantt(c.opt)
			if err := c.run.run(g.Add); err != nil {
				t.Fatal(err)
			}
			svg := ganttSVG(t, g)
			root, _ := wellFormed(t, svg)
			if root != "svg" {
				t.Fatalf("root element %q, want svg", root)
			}
		})
	}
}

func TestGantt_EscapesTraceStrings(t *testing.T) {
	g := NewGantt(GanttOptions{WorldSize: 2, Title: "job " + hostile, Hosts: []string{hostile, "ok"}})
	feed(t, g, []datamodel.GEvent{{Rank: 0, Op: trace.OpBarrier, Enter: 0, Exit: 1000}, {Rank: 1, Op: trace.OpBarrier, Enter: 10, Exit: 1000}})
	svg := ganttSVG(t, g)
	if bytes.Contains(svg, []byte("<script")) {
		t.Fatal("unescaped <script> in SVG")
	}
	_, text := wellFormed(t, svg)
	for _, want := range []string{"job " + hostile, "rank 0 (" + truncate(hostile, 28) + ")"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q not found after unescaping", want)
		}
	}
}

// TestGantt_WaitFollowsOpClass checks the streaming wait computation
// against merge's per-class semantics on hand-made instances: N×N waits for
// the last entrant; a Bcast non-root waits for the root (a root that
// enters first makes nobody wait, a late root does); a Reduce root waits
// for the last contributor, non-roots do not; a Scan member waits for the
// latest lower comm rank.
func TestGantt_WaitFollowsOpClass(t *testing.T) {
	e := func(rank int32, op trace.Op, seq uint32, root int32, enter, exit float64) datamodel.GEvent {
		ev := datamodel.GEvent{Rank: rank, CommRank: rank, Root: root, Op: op, CommID: 1, Seq: seq, Enter: enter, Exit: exit}
		ev.Sent, ev.Recv = eventBytes(op, rank, root, 8)
		return ev
	}
	evs := []datamodel.GEvent{
		e(0, trace.OpAllreduce, 0, -1, 0, 40e3),
		e(1, trace.OpAllreduce, 0, -1, 10e3, 41e3),
		e(2, trace.OpAllreduce, 0, -1, 30e3, 42e3),
		e(0, trace.OpBcast, 1, 0, 50e3, 55e3), // early root: nobody waits
		e(1, trace.OpBcast, 1, 0, 60e3, 80e3),
		e(2, trace.OpBcast, 1, 0, 70e3, 81e3),
		e(1, trace.OpBcast, 2, 0, 90e3, 110e3), // late root: 1 and 2 wait for it
		e(2, trace.OpBcast, 2, 0, 95e3, 110e3),
		e(0, trace.OpBcast, 2, 0, 105e3, 108e3),
		e(0, trace.OpReduce, 3, 0, 120e3, 150e3), // early root waits for rank 2
		e(1, trace.OpReduce, 3, 0, 130e3, 132e3),
		e(2, trace.OpReduce, 3, 0, 140e3, 142e3),
		e(1, trace.OpScan, 4, -1, 160e3, 190e3), // rank 1 waits for rank 0; rank 2 for rank 1 is none
		e(2, trace.OpScan, 4, -1, 165e3, 190e3),
		e(0, trace.OpScan, 4, -1, 170e3, 190e3),
	}
	want := map[[2]int]float64{
		{0, 0}: 30e3, {1, 0}: 20e3, {2, 0}: 0,
		{0, 1}: 0, {1, 1}: 0, {2, 1}: 0,
		{0, 2}: 0, {1, 2}: 15e3, {2, 2}: 10e3,
		{0, 3}: 20e3, {1, 3}: 0, {2, 3}: 0,
		{0, 4}: 0, {1, 4}: 10e3, {2, 4}: 5e3,
	}
	g := NewGantt(GanttOptions{WorldSize: 3, Start: 0, End: 200e3, Width: 1000})
	feed(t, g, evs)
	g.resolve(math.Inf(1))
	for r, l := range g.lanes {
		if len(l.bars) != 5 {
			t.Fatalf("rank %d: %d bars, want 5", r, len(l.bars))
		}
		for _, b := range l.bars {
			if w := want[[2]int{r, int(b.seq)}]; math.Abs(b.wait-w) > 1e-6 {
				t.Errorf("rank %d seq %d (%s): wait %v, want %v", r, b.seq, b.op, b.wait, w)
			}
		}
	}
	if len(g.inst) != 0 || len(g.pend) != 0 {
		t.Errorf("state left after flush: %d instances, %d pending", len(g.inst), len(g.pend))
	}
}

func TestGantt_WaitSemanticsUnchangedForNxN(t *testing.T) {
	evs := []datamodel.GEvent{
		{Rank: 0, Op: trace.OpBarrier, CommID: 1, Seq: 0, Root: -1, Enter: 0, Exit: 40e3},
		{Rank: 1, Op: trace.OpBarrier, CommID: 1, Seq: 0, Root: -1, CommRank: 1, Enter: 10e3, Exit: 41e3},
	}
	want := map[[2]int]float64{{0, 0}: 10e3, {1, 0}: 0}
	g := NewGantt(GanttOptions{WorldSize: 2, Start: 0, End: 100e3, Width: 1000})
	feed(t, g, evs)
	g.resolve(math.Inf(1))
	for r, l := range g.lanes {
		if len(l.bars) != 1 {
			t.Fatalf("rank %d: %d bars, want 1", r, len(l.bars))
		}
		for _, b := range l.bars {
			if w := want[[2]int{r, int(b.seq)}]; math.Abs(b.wait-w) > 1e-6 {
				t.Errorf("rank %d seq %d: wait %v, want %v", r, b.seq, b.wait, w)
			}
		}
	}
	if len(g.inst) != 0 || len(g.pend) != 0 {
		t.Errorf("state left after flush: %d instances, %d pending", len(g.inst), len(g.pend))
	}
}

// TestGantt_AggregatesConserveBusyTime: events narrower than a pixel are
// not lost, whether the window is fixed or grows by doubling.
func TestGantt_AggregatesConserveBusyTime(t *testing.T) {
	run := synthRun{Ranks: 4, Iters: 20000, Seed: 9, Compute: 3000, Latency: 800, Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast}}
	var busy [4]float64
	var lo, hi = math.Inf(1), math.Inf(-1)
	run.run(func(ev *datamodel.GEvent) error {
		busy[ev.Rank] += ev.Exit - ev.Enter
		lo, hi = math.Min(lo, ev.Enter), math.Max(hi, ev.Exit)
		return nil
	})
	for _, c := range []struct {
		name string
		opt  GanttOptions
	}{
		{"auto window", GanttOptions{WorldSize: 4, Width: 400}},
		{"fixed window", GanttOptions{WorldSize: 4, Width: 400, Start: lo, End: hi}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewGantt(c.opt)
			if err := run.run(g.Add); err != nil {
				t.Fatal(err)
			}
			g.resolve(math.Inf(1))
			for r, l := range g.lanes {
				got := 0.0
				for _, cl := range l.cells {
					got += float64(cl.busy)
				}
				for _, b := range l.bars {
					got += b.exit - b.enter
				}
				if rel := math.Abs(got-busy[r]) / busy[r]; rel > 1e-3 {
					t.Errorf("rank %d: busy %v, want %v (rel err %.2g)", r, got, busy[r], rel)
				}
			}
		})
	}
}

// TestGantt_DominantOpIsMajority checks the weighted majority sketch, also
// across cell merges (window doubling).
func TestGantt_DominantOpIsMajority(t *testing.T) {
	for _, c := range []struct {
		name string
		seq  []trace.Op
		w    []float32
		want trace.Op
	}{
		{"single op", []trace.Op{4, 4, 4}, []float32{1, 1, 1}, 4},
		{"weighted majority beats count", []trace.Op{2, 2, 2, 4}, []float32{1, 1, 1, 5}, 4},
		{"majority interleaved", []trace.Op{1, 4, 2, 4, 3, 4, 4}, []float32{1, 1, 1, 1, 1, 1, 1}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			var whole cell
			var a, b cell
			for i, o := range c.seq {
				whole.add(o, float64(c.w[i]), 0)
				if i%2 == 0 {
					a.add(o, float64(c.w[i]), 0)
				} else {
					b.add(o, float64(c.w[i]), 0)
				}
			}
			if whole.cand != c.want {
				t.Errorf("sketch: %v, want %v", whole.cand, c.want)
			}
			if m := mergeCells(a, b); m.cand != c.want {
				t.Errorf("merged sketch: %v, want %v", m.cand, c.want)
			}
		})
	}
}

func TestGantt_RejectsRankOutsideWorld(t *testing.T) {
	g := NewGantt(GanttOptions{WorldSize: 2})
	err := g.Add(&datamodel.GEvent{Rank: 2, Op: trace.OpBarrier, Enter: 1, Exit: 2})
	if err == nil || !strings.Contains(err.Error(), "rank 2") {
		t.Fatalf("err = %v, want a rank-outside-world error", err)
	}
}

// TestGantt_AxisLabelsUseFittingUnits: the tick labels read in the unit of
// the window and step by 1, 2, 2.5 or 5 × 10^k.
func TestGantt_AxisLabelsUseFittingUnits(t *testing.T) {
	for _, c := range []struct {
		span float64
		unit string
		want []string
	}{
		{800, "ns", []string{"0", "100 ns", "200 ns", "700 ns"}},
		{50e3, "µs", []string{"0", "10 µs", "20 µs", "50 µs"}},
		{3.2e6, "ms", []string{"0", "0.5 ms", "1.0 ms", "3.0 ms"}},
		{20e6, "ms", []string{"0", "2.5 ms", "20.0 ms"}},
		{45e9, "s", []string{"0", "5 s", "40 s"}},
	} {
		t.Run(c.unit+"/"+fmtDur(c.span), func(t *testing.T) {
			g := NewGantt(GanttOptions{WorldSize: 1, Width: 1000})
			feed(t, g, []datamodel.GEvent{{Rank: 0, Op: trace.OpBarrier, Enter: 5e9, Exit: 5e9 + c.span}})
			texts := svgTexts(t, ganttSVG(t, g))
			set := map[string]bool{}
			for _, s := range texts {
				set[s] = true
			}
			for _, w := range c.want {
				if !set[w] {
					t.Errorf("tick label %q missing; texts: %q", w, texts)
				}
			}
			found := false
			for _, s := range texts {
				if strings.HasPrefix(s, "time ["+c.unit+"]") {
					found = true
				}
			}
			if !found {
				t.Errorf("axis title with unit [%s] missing", c.unit)
			}
		})
	}
}

func TestNiceStep_Is125(t *testing.T) {
	for _, span := range []float64{1, 7, 33, 999, 1234, 5e5, 7.7e9} {
		s := niceStep(span, 8)
		m := s / math.Pow(10, math.Floor(math.Log10(s)))
		ok := false
		for _, v := range []float64{1, 2, 2.5, 5} {
			if math.Abs(m-v) < 1e-9 {
				ok = true
			}
		}
		if !ok || span/s > 8.0001 || span/s < 8/5.0-1e-9 {
			t.Errorf("niceStep(%v, 8) = %v (mantissa %v, %v ticks)", span, s, m, span/s)
		}
	}
}

// TestGantt_TenMillionEventsStayUnder5MB is the level-of-detail contract:
// 10^7 events give a readable, well-formed SVG of at most 5 MB, and the
// builder's memory is bounded by lanes × width, not by events.
func TestGantt_TenMillionEventsStayUnder5MB(t *testing.T) {
	total := 10_000_000
	for _, c := range []struct {
		name string
		run  synthRun
	}{
		{"16 ranks bulk synchronous", synthRun{Ranks: 16, Seed: 1, Compute: 20000, Latency: 4000, Slow: 3,
			Ops: []trace.Op{trace.OpAllreduce, trace.OpAllreduce, trace.OpBcast, trace.OpBarrier}}},
		{"128 ranks mixed ops defeat run-length encoding", synthRun{Ranks: 128, Seed: 2, Compute: 5000, Latency: 2000,
			Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier, trace.OpAlltoall, trace.OpGather, trace.OpReduce, trace.OpScan}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.run.Iters = total / c.run.Ranks
			g := NewGantt(GanttOptions{WorldSize: c.run.Ranks, Title: c.name})
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			n := 0
			if err := c.run.run(func(ev *datamodel.GEvent) error { n++; return g.Add(ev) }); err != nil {
				t.Fatal(err)
			}
			maxBars := 0
			for _, l := range g.lanes {
				maxBars = max(maxBars, len(l.bars))
				if len(l.cells) != g.nb {
					t.Fatalf("lane has %d cells, want %d", len(l.cells), g.nb)
				}
			}
			if maxBars > 4*g.width {
				t.Errorf("a lane holds %d bars, bound is %d", maxBars, 4*g.width)
			}
			if len(g.pend) > 4*c.run.Ranks || len(g.inst) > 4*c.run.Ranks {
				t.Errorf("in-flight state not bounded by ranks: %d pending, %d instances", len(g.pend), len(g.inst))
			}
			svg := ganttSVG(t, g)
			t.Logf("%d events, %d ranks: SVG %d bytes (%.2f MB), %d bars", n, c.run.Ranks, len(svg), float64(len(svg))/1e6, g.nbars)
			if len(svg) > 5_000_000 {
				t.Errorf("SVG is %d bytes, limit 5 MB", len(svg))
			}
			wellFormed(t, svg)
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
				t.Errorf("heap grew by %d MB after %d events", grown>>20, n)
			}
		})
	}
}

func BenchmarkGanttAdd(b *testing.B) {
	run := synthRun{Ranks: 16, Iters: 4096, Seed: 1, Compute: 20000, Latency: 4000,
		Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier}}
	var evs []datamodel.GEvent
	run.run(func(ev *datamodel.GEvent) error { evs = append(evs, *ev); return nil })
	span := evs[len(evs)-1].Exit - evs[0].Enter
	g := NewGantt(GanttOptions{WorldSize: 16})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(evs)
		ev := evs[k]
		shift := float64(i/len(evs)) * span
		ev.Enter += shift
		ev.Exit += shift
		ev.Seq += uint32(i / len(evs) * run.Iters)
		if err := g.Add(&ev); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGantt_BarBudgetBoundsSize: when more calls are at least a pixel wide
// than MaxBars, the narrowest join the aggregate and the SVG stays small.
func TestGantt_BarBudgetBoundsSize(t *testing.T) {
	run := synthRun{Ranks: 64, Iters: 400, Seed: 5, Compute: 20000, Latency: 60000,
		Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier, trace.OpAlltoall}}
	g := NewGantt(GanttOptions{WorldSize: 64, Hosts: []string{hostile}})
	if err := run.run(g.Add); err != nil {
		t.Fatal(err)
	}
	svg := ganttSVG(t, g)
	t.Logf("%d events: %d bars drawn, SVG %d bytes", run.Ranks*run.Iters, g.nbars, len(svg))
	if g.nbars != g.maxBars {
		t.Errorf("%d bars drawn, want the budget %d (more calls than that are ≥ 1 px)", g.nbars, g.maxBars)
	}
	if len(svg) > 5_000_000 {
		t.Errorf("SVG %d bytes > 5 MB", len(svg))
	}
	wellFormed(t, svg)
}

// TestGantt_HugeWorldStaysBounded: thousands of ranks, one lane each
// (RanksPerLane 1), use Width cells per lane and the SVG keeps its size
// bound; by default they are grouped into AggregateLanes lanes.
func TestGantt_HugeWorldStaysBounded(t *testing.T) {
	run := synthRun{Ranks: 4096, Iters: 250, Seed: 4, Compute: 20000, Latency: 4000,
		Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast, trace.OpBarrier, trace.OpAlltoall}}
	for _, c := range []struct {
		name         string
		perLane      int
		lanes, cells int
		firstLabel   string
	}{
		{"one rank per lane", 1, 4096, 1600, "rank 0"},
		{"grouped by default", 0, 256, 3200, "ranks 0–15"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewGantt(GanttOptions{WorldSize: run.Ranks, RanksPerLane: c.perLane})
			if err := run.run(g.Add); err != nil {
				t.Fatal(err)
			}
			if len(g.lanes) != c.lanes || len(g.lanes[0].cells) != c.cells {
				t.Errorf("%d lanes of %d cells, want %d of %d", len(g.lanes), len(g.lanes[0].cells), c.lanes, c.cells)
			}
			svg := ganttSVG(t, g)
			t.Logf("%d ranks, %d events: SVG %d bytes", run.Ranks, run.Ranks*run.Iters, len(svg))
			if len(svg) > 5_000_000 {
				t.Errorf("SVG %d bytes > 5 MB", len(svg))
			}
			if !strings.Contains(string(svg), ">"+c.firstLabel+"<") {
				t.Errorf("no lane labelled %q", c.firstLabel)
			}
			wellFormed(t, svg)
		})
	}
}

// TestGantt_GroupedLaneIsTheAverageOfItsRanks: a lane that groups k ranks
// holds, summed over its cells, the mean busy time of those ranks; and a
// 16,384-rank world stays a few hundred lanes and a small SVG.
func TestGantt_GroupedLaneIsTheAverageOfItsRanks(t *testing.T) {
	run := synthRun{Ranks: 64, Iters: 400, Seed: 12, Compute: 3000, Latency: 800, Ops: []trace.Op{trace.OpAllreduce, trace.OpBcast}}
	busy := make([]float64, run.Ranks)
	run.run(func(ev *datamodel.GEvent) error {
		busy[ev.Rank] += ev.Exit - ev.Enter
		return nil
	})
	const k = 8
	g := NewGantt(GanttOptions{WorldSize: run.Ranks, RanksPerLane: k, Width: 400})
	if err := run.run(g.Add); err != nil {
		t.Fatal(err)
	}
	g.resolve(math.Inf(1))
	if len(g.lanes) != run.Ranks/k {
		t.Fatalf("%d lanes, want %d", len(g.lanes), run.Ranks/k)
	}
	for li, l := range g.lanes {
		want := 0.0
		for r := li * k; r < (li+1)*k; r++ {
			want += busy[r] / k
		}
		got := 0.0
		for _, c := range l.cells {
			got += float64(c.busy)
		}
		if len(l.bars) != 0 {
			t.Errorf("lane %d: %d single bars on a grouped lane", li, len(l.bars))
		}
		if rel := math.Abs(got-want) / want; rel > 1e-3 {
			t.Errorf("lane %d: busy %v, want the ranks' mean %v", li, got, want)
		}
	}

	huge := synthRun{Ranks: 16384, Iters: 20, Seed: 13, Compute: 20000, Latency: 4000, Ops: []trace.Op{trace.OpAllreduce, trace.OpAlltoall}}
	g = NewGantt(GanttOptions{WorldSize: huge.Ranks})
	if err := huge.run(g.Add); err != nil {
		t.Fatal(err)
	}
	svg := ganttSVG(t, g)
	t.Logf("16384 ranks: %d lanes, SVG %d bytes", len(g.lanes), len(svg))
	if len(g.lanes) != AggregateLanes || len(svg) > 2_000_000 {
		t.Errorf("16384 ranks: %d lanes (want %d), SVG %d bytes (want < 2 MB)", len(g.lanes), AggregateLanes, len(svg))
	}
	if !strings.Contains(string(svg), "16384 ranks in 256 lanes of 64") {
		t.Errorf("subtitle does not say how ranks are grouped")
	}
}

func TestFmtDur_Units(t *testing.T) {
	for _, c := range []struct {
		ns            float64
		full, compact string
	}{
		{0, "0", "0"}, {850, "850 ns", "850 ns"}, {1000, "1.00 µs", "1 µs"}, {12345, "12.3 µs", "12.3 µs"},
		{2.5e6, "2.50 ms", "2.5 ms"}, {1e9, "1.00 s", "1 s"}, {-40800, "-40.8 µs", "-40.8 µs"}, {0.5, "0.5 ns", "0.5 ns"},
	} {
		if got := fmtDur(c.ns); got != c.full {
			t.Errorf("fmtDur(%v) = %q, want %q", c.ns, got, c.full)
		}
		if got := fmtDurCompact(c.ns); got != c.compact {
			t.Errorf("fmtDurCompact(%v) = %q, want %q", c.ns, got, c.compact)
		}
	}
}

// TestGantt_SkipsInvalidTimes: NaN or infinite times are counted and
// reported, and do not block the collectives behind them.
func TestGantt_SkipsInvalidTimes(t *testing.T) {
	for _, raw := range []bool{false, true} {
		g := NewGantt(GanttOptions{WorldSize: 2, Raw: raw})
		feed(t, g, []datamodel.GEvent{
			{Rank: 0, Op: trace.OpAllreduce, Seq: 0, Enter: 0, Exit: math.NaN(), RawEnter: 0, RawExit: math.NaN()},
			{Rank: 1, Op: trace.OpAllreduce, Seq: 0, Enter: 10, Exit: 5000, RawEnter: math.Inf(1), RawExit: 5000},
			{Rank: 0, Op: trace.OpAllreduce, Seq: 1, Enter: 6000, Exit: 9000, RawEnter: 6000, RawExit: 9000},
			{Rank: 1, Op: trace.OpAllreduce, Seq: 1, Enter: 7000, Exit: 9000, RawEnter: 7000, RawExit: 9000},
		})
		svg := ganttSVG(t, g)
		_, text := wellFormed(t, svg)
		wantInvalid := "1 events with invalid times skipped"
		if raw {
			wantInvalid = "2 events with invalid times skipped"
		}
		if !strings.Contains(text, wantInvalid) {
			t.Errorf("raw=%v: note %q missing", raw, wantInvalid)
		}
		drawn := 0
		for _, l := range g.lanes {
			drawn += len(l.bars)
		}
		if want := map[bool]int{false: 3, true: 2}[raw]; drawn != want {
			t.Errorf("raw=%v: %d calls drawn, want %d", raw, drawn, want)
		}
	}
}
