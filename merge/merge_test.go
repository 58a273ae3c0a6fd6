package merge

import (
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// collect is a Sink keeping copies of every event.
type collect struct {
	ev      []datamodel.GEvent
	ordered bool
}

func (c *collect) Add(ev *datamodel.GEvent) error {
	if n := len(c.ev); n > 0 && ev.Enter < c.ev[n-1].Enter {
		c.ordered = false
	}
	c.ev = append(c.ev, *ev)
	return nil
}

func genRun(t testing.TB, cfg synth.Config) (string, *synth.Truth) {
	t.Helper()
	dir := t.TempDir()
	tr, err := synth.Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tr
}

// loadPass loads the run in dir and prepares a pass over it with the
// default options; the run is closed when the test ends.
func loadPass(t testing.TB, dir string) (*rundir.Run, *Pass) {
	t.Helper()
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	pass, err := Prepare(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return run, pass
}

func analyzeDir(t testing.TB, dir string, opt Options) (*Result, *collect) {
	t.Helper()
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	defer run.Close()
	c := &collect{ordered: true}
	opt.Sinks = append(opt.Sinks, c)
	res, err := Analyze(run, opt)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return res, c
}

// byRankIndex groups collected events per rank in local order, so event i
// of rank r corresponds to Truth.Enter[r][i].
func byRankIndex(evs []datamodel.GEvent, ranks int) [][]datamodel.GEvent {
	out := make([][]datamodel.GEvent, ranks)
	for _, e := range evs {
		out[e.Rank] = append(out[e.Rank], e)
	}
	for _, l := range out {
		sort.SliceStable(l, func(i, j int) bool { return l[i].LocalEnter < l[j].LocalEnter })
	}
	return out
}

func TestAnalyze_CorrectedTimesMatchSynthTruth(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  synth.Config
		mode correct.ClockMode
		tol  float64 // ns
	}{
		{"exact models, interp", synth.Config{Ranks: 8, Steps: 3000, KeepTimes: true, Seed: 11}, correct.ClockInterp, 2},
		{"exact models, init", synth.Config{Ranks: 8, Steps: 3000, KeepTimes: true, Seed: 12}, correct.ClockInit, 2},
		{"large drift, interp", synth.Config{Ranks: 6, NodeSize: 2, Steps: 2000, KeepTimes: true, Seed: 13, MaxDriftPPM: 100, MaxOffsetNS: 5e8}, correct.ClockInterp, 2},
		// noisy slopes: interpolation between the epochs removes the slope error
		{"noisy slope, interp", synth.Config{Ranks: 4, Steps: 3000, KeepTimes: true, Seed: 14, ModelSlopeNoise: 1e-7}, correct.ClockInterp, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, tr := genRun(t, tc.cfg)
			res, c := analyzeDir(t, dir, Options{Clock: tc.mode})
			if !c.ordered {
				t.Errorf("sink stream not ordered by global Enter")
			}
			if got, want := res.Analysis.Events, tr.TotalEvents(); got != want {
				t.Fatalf("events = %d, want %d", got, want)
			}
			per := byRankIndex(c.ev, tc.cfg.Ranks)
			maxErr := 0.0
			for r := range per {
				if len(per[r]) != len(tr.Enter[r]) {
					t.Fatalf("rank %d: %d events, truth %d", r, len(per[r]), len(tr.Enter[r]))
				}
				o := float64(res.Analysis.OriginNS)
				for i, e := range per[r] {
					maxErr = math.Max(maxErr, math.Abs(o+e.Enter-tr.Enter[r][i]))
					maxErr = math.Max(maxErr, math.Abs(o+e.Exit-tr.Exit[r][i]))
				}
			}
			t.Logf("max |corrected - truth| = %.2f ns over %d events", maxErr, len(c.ev))
			if maxErr > tc.tol {
				t.Errorf("max |corrected - truth| = %.1f ns, want <= %.1f", maxErr, tc.tol)
			}
			if res.Analysis.Clock.Violations != 0 {
				t.Errorf("violations = %d with a correct clock", res.Analysis.Clock.Violations)
			}
		})
	}
}

// TestInterp_BeatsInitWithSlopeError: with a wrong epoch-0 slope the
// init-only correction drifts over the run, interpolation does not.
func TestInterp_BeatsInitWithSlopeError(t *testing.T) {
	dir, tr := genRun(t, synth.Config{Ranks: 4, Steps: 4000, KeepTimes: true, Seed: 21, ModelSlopeNoise: 1e-6})
	errOf := func(mode correct.ClockMode) float64 {
		res, c := analyzeDir(t, dir, Options{Clock: mode})
		per := byRankIndex(c.ev, 4)
		m := 0.0
		o := float64(res.Analysis.OriginNS)
		for r := range per {
			for i, e := range per[r] {
				m = math.Max(m, math.Abs(o+e.Enter-tr.Enter[r][i]))
			}
		}
		return m
	}
	ei, en := errOf(correct.ClockInterp), errOf(correct.ClockInit)
	t.Logf("max error: interp %.1f ns, init %.1f ns", ei, en)
	if !(ei < en/5) {
		t.Errorf("interp max error %.0f ns, init %.0f ns: interp should be far better", ei, en)
	}
}

// truthMetrics recomputes per-op metrics from the synth truth, grouping
// events by (comm, seq) from the merged stream.
type truthOp struct {
	count             int
	entrySkew, wait   float64 // totals
	exitSkew, maxSkew float64
	lateness          map[int32]float64
	waitByRank        map[int32]float64
	pair              map[[2]int32]float64 // [last, waiter]
}

func truthMetrics(evs [][]datamodel.GEvent, tr *synth.Truth) map[trace.Op]*truthOp {
	type k struct {
		c uint64
		s uint32
	}
	type mem struct {
		r, pos int32 // world rank, comm rank
		e, x   float64
	}
	groups := map[k][]mem{}
	ops := map[k]trace.Op{}
	for r := range evs {
		for i, e := range evs[r] {
			kk := k{e.CommID, e.Seq}
			groups[kk] = append(groups[kk], mem{int32(r), e.CommRank, tr.Enter[r][i], tr.Exit[r][i]})
			ops[kk] = e.Op
		}
	}
	out := map[trace.Op]*truthOp{}
	for kk, ms := range groups {
		op := ops[kk]
		to := out[op]
		if to == nil {
			to = &truthOp{lateness: map[int32]float64{}, waitByRank: map[int32]float64{}, pair: map[[2]int32]float64{}}
			out[op] = to
		}
		fe, le, fx, lx := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		var last int32
		for _, m := range ms {
			if m.e < fe {
				fe = m.e
			}
			if m.e > le {
				le, last = m.e, m.r
			}
			fx, lx = math.Min(fx, m.x), math.Max(lx, m.x)
		}
		to.count++
		to.entrySkew += le - fe
		to.exitSkew += lx - fx
		to.maxSkew = math.Max(to.maxSkew, le-fe)
		// Waits per wait-state pattern, written out per class (synth's
		// root is comm rank 0); each capped at the member's own call.
		rootIdx := -1
		for i, m := range ms {
			if m.pos == 0 {
				rootIdx = i
			}
		}
		for i, m := range ms {
			cause, until := int32(-1), 0.0
			switch {
			case op.Synchronizing():
				cause, until = last, le
			case op == trace.OpBcast || op == trace.OpScatter || op == trace.OpScatterv:
				if i != rootIdx {
					cause, until = ms[rootIdx].r, ms[rootIdx].e
				}
			case op == trace.OpReduce || op == trace.OpGather || op == trace.OpGatherv:
				if i == rootIdx {
					lnr := math.Inf(-1)
					for j, o := range ms {
						if j != rootIdx && o.e > lnr {
							lnr, cause = o.e, o.r
						}
					}
					until = lnr
				}
			case op == trace.OpScan || op == trace.OpExscan:
				lo := math.Inf(-1)
				for _, o := range ms {
					if o.pos < m.pos && o.e > lo {
						lo, cause = o.e, o.r
					}
				}
				until = lo
			}
			w := math.Min(math.Max(0, until-m.e), m.x-m.e)
			if cause < 0 || w <= 0 {
				continue
			}
			to.wait += w
			to.waitByRank[m.r] += w
			to.lateness[cause] += w
			to.pair[[2]int32{cause, m.r}] += w
		}
	}
	return out
}

func TestAnalyze_MetricsMatchSynthTruth(t *testing.T) {
	cfg := synth.Config{Ranks: 8, Steps: 4000, KeepTimes: true, Seed: 31}
	dir, tr := genRun(t, cfg)
	res, c := analyzeDir(t, dir, Options{})
	an := res.Analysis
	truth := truthMetrics(byRankIndex(c.ev, cfg.Ranks), tr)
	totalInst := 0
	for _, n := range tr.Instances {
		totalInst += n
	}
	if an.Instances != totalInst {
		t.Errorf("instances = %d, truth %d", an.Instances, totalInst)
	}
	if an.Incomplete != 0 {
		t.Errorf("incomplete = %d on an intact run", an.Incomplete)
	}
	close := func(name string, got, want float64) {
		t.Helper()
		if tol := 1e-6*math.Abs(want) + 2*float64(cfg.Ranks); math.Abs(got-want) > tol {
			t.Errorf("%s = %.1f, truth %.1f", name, got, want)
		}
	}
	waitByRank := map[int32]float64{}
	lateByRank := map[int32]float64{}
	pair := map[[2]int32]float64{}
	for _, o := range an.Ops {
		op, _ := trace.OpByName(o.Op)
		to := truth[op]
		if to == nil {
			t.Errorf("op %s not in truth", o.Op)
			continue
		}
		if o.Count != to.count {
			t.Errorf("%s count = %d, truth %d", o.Op, o.Count, to.count)
		}
		if o.Calls != tr.Ops[op] {
			t.Errorf("%s calls = %d, truth %d", o.Op, o.Calls, tr.Ops[op])
		}
		close(o.Op+" entry skew total", o.EntrySkew.Total, to.entrySkew)
		close(o.Op+" exit skew total", o.ExitSkew.Total, to.exitSkew)
		close(o.Op+" entry skew max", o.EntrySkew.Max, to.maxSkew)
		close(o.Op+" wait total", o.Wait.Total, to.wait)
		if o.Wait.Median > o.Wait.P95 || o.Wait.P95 > o.Wait.Max {
			t.Errorf("%s wait quantiles not ordered: %+v", o.Op, o.Wait)
		}
		for r, w := range to.waitByRank {
			waitByRank[r] += w
		}
		for r, l := range to.lateness {
			lateByRank[r] += l
		}
		for k, v := range to.pair {
			pair[k] += v
		}
	}
	for _, rs := range an.Ranks {
		close("rank wait", rs.TotalWait, waitByRank[rs.Rank])
		close("rank lateness", rs.TotalLateness, lateByRank[rs.Rank])
		for _, m := range rs.MadeWait {
			close("made wait", m.NS, pair[[2]int32{rs.Rank, m.Rank}])
		}
		for _, m := range rs.WaitedFor {
			close("waited for", m.NS, pair[[2]int32{m.Rank, rs.Rank}])
		}
		// the top entry is the largest in the truth row
		best := 0.0
		for k, v := range pair {
			if k[0] == rs.Rank && v > best {
				best = v
			}
		}
		if best > 0 && (len(rs.MadeWait) == 0 || math.Abs(rs.MadeWait[0].NS-best) > 1e-6*best+20) {
			t.Errorf("rank %d made-wait top %v, truth max %.0f", rs.Rank, rs.MadeWait, best)
		}
	}
	// Worst instance = the largest entry skew overall.
	maxSkew := 0.0
	for _, to := range truth {
		maxSkew = math.Max(maxSkew, to.maxSkew)
	}
	if len(an.Worst) == 0 || math.Abs(an.Worst[0].EntrySkew-maxSkew) > 2 {
		t.Errorf("worst instance skew %v, truth %.1f", an.Worst, maxSkew)
	}
	if w := an.Worst[0]; w.LastSite == "" || w.MaxWaitSite == "" || w.MaxWaitRank < 0 || w.MaxWaitRank == w.LastRank {
		t.Errorf("worst instance call sites: last %q (rank %d), max wait %q (rank %d)", w.LastSite, w.LastRank, w.MaxWaitSite, w.MaxWaitRank)
	}
	for i := 1; i < len(an.Worst); i++ {
		if an.Worst[i].EntrySkew > an.Worst[i-1].EntrySkew {
			t.Errorf("worst list not sorted")
		}
	}
	if len(an.Callsites) == 0 {
		t.Errorf("no call sites")
	}
	for _, h := range an.Hists {
		if len(h.Wait.Edges) != len(h.Wait.Counts)+1 {
			t.Errorf("histogram edges/counts mismatch")
		}
	}
}

func TestAnalyze_RawModeShowsViolationsAndWarns(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 8, Steps: 2000, Seed: 41, MaxOffsetNS: 2e6})
	res, _ := analyzeDir(t, dir, Options{Clock: correct.ClockRaw})
	q := res.Analysis.Clock
	t.Logf("raw: %d violations, max %.0f ns", q.Violations, q.MaxViolationNS)
	if q.Violations == 0 || q.MaxViolationNS < 1e4 {
		t.Errorf("raw mode: violations %d (max %.0f ns), want many with ms offsets", q.Violations, q.MaxViolationNS)
	}
	joined := strings.Join(q.Warnings, "\n")
	for _, want := range []string{"CLOCK MODE RAW", "CLOCK ERROR WAS INJECTED", "clock-condition violations"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q lack %q", joined, want)
		}
	}
	res2, _ := analyzeDir(t, dir, Options{})
	if res2.Analysis.Clock.Violations != 0 {
		t.Errorf("interp: %d violations", res2.Analysis.Clock.Violations)
	}
}

func TestAnalyze_WindowSelectsEventsAndInstances(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 4, Steps: 3000, Seed: 51})
	all, call := analyzeDir(t, dir, Options{})
	span := all.Analysis.EndNS - all.RunStartNS
	from, to := span/4, span/2
	win, cwin := analyzeDir(t, dir, Options{From: from, To: to, HasTo: true})
	lo, hi := all.RunStartNS+from, all.RunStartNS+to
	want := 0
	for _, e := range call.ev {
		if e.Enter >= lo && e.Enter <= hi {
			want++
		}
	}
	if len(cwin.ev) != want || win.Analysis.Events != want {
		t.Errorf("window events: sink %d, analysis %d, want %d", len(cwin.ev), win.Analysis.Events, want)
	}
	if !(win.Analysis.Instances > 0 && win.Analysis.Instances < all.Analysis.Instances) {
		t.Errorf("window instances %d of %d", win.Analysis.Instances, all.Analysis.Instances)
	}
}

func TestAnalyze_CaptureInstanceRawAndCorrected(t *testing.T) {
	dir, tr := genRun(t, synth.Config{Ranks: 8, Steps: 500, Seed: 61, KeepTimes: true})
	res, _ := analyzeDir(t, dir, Options{Capture: []InstanceKey{{trace.CommWorldID, 7}, {trace.CommWorldID, 1 << 30}}})
	z := res.Zooms
	if len(z) != 2 || !z[0].Found || z[1].Found {
		t.Fatalf("zooms = %+v", z)
	}
	if len(z[0].Inst.Ranks) != 8 || len(z[0].Raw.Ranks) != 8 || !z[0].Inst.Complete {
		t.Errorf("captured instance %+v", z[0].Inst)
	}
	_ = tr
	same := true
	for i := range z[0].Inst.Enter {
		if z[0].Inst.Enter[i] != z[0].Raw.Enter[i] {
			same = false
		}
	}
	if same {
		t.Errorf("raw and corrected times identical despite injected offsets")
	}
}

// TestRaw_AlignsTimebasesSecondsApart: raw timebases more than 1 s apart
// (MPI_Wtime, other hosts) are aligned at MPI_Init for the raw view, while
// the corrected times stay exact.
func TestRaw_AlignsTimebasesSecondsApart(t *testing.T) {
	dir, tr := genRun(t, synth.Config{Ranks: 4, NodeSize: 1, Steps: 500, Seed: 81, KeepTimes: true,
		Nodes: []synth.NodeClock{{}, {OffsetNS: 3e9}, {OffsetNS: -7e9}, {OffsetNS: 2e6}}})
	res, c := analyzeDir(t, dir, Options{})
	per := byRankIndex(c.ev, 4)
	for r := range per {
		first := per[r][0]
		if d := math.Abs(first.RawEnter - per[0][0].RawEnter); d > 1e9 {
			t.Errorf("rank %d raw start %.3g ns from rank 0's: not aligned", r, d)
		}
		if math.Abs(float64(res.Analysis.OriginNS)+first.Enter-tr.Enter[r][0]) > 2 {
			t.Errorf("rank %d corrected %.1f, truth %.1f", r, first.Enter, tr.Enter[r][0])
		}
	}
	// the 2 ms offset of rank 3 is kept in the raw view
	if d := per[3][0].RawEnter - per[0][0].RawEnter; math.Abs(d) < 1e6 {
		t.Errorf("rank 3 raw offset %.0f ns: the small raw error was aligned away", d)
	}
}

// TestAnalyze_ExitDelaysMatchTruth: the per-rank exit profile (HCA paper
// Sec. 4.6) of MPI_Allreduce on MPI_COMM_WORLD equals the truth's.
func TestAnalyze_ExitDelaysMatchTruth(t *testing.T) {
	cfg := synth.Config{Ranks: 8, Steps: 3000, KeepTimes: true, Seed: 91}
	dir, tr := genRun(t, cfg)
	res, c := analyzeDir(t, dir, Options{})
	per := byRankIndex(c.ev, cfg.Ranks)
	exits := map[uint32][]float64{}
	for r := range per {
		for i, e := range per[r] {
			if e.CommID == trace.CommWorldID && e.Op == trace.OpAllreduce {
				if exits[e.Seq] == nil {
					exits[e.Seq] = make([]float64, cfg.Ranks)
				}
				exits[e.Seq][r] = tr.Exit[r][i]
			}
		}
	}
	sum := make([]float64, cfg.Ranks)
	for _, xs := range exits {
		first := xs[0]
		for _, x := range xs {
			first = math.Min(first, x)
		}
		for r, x := range xs {
			sum[r] += x - first
		}
	}
	var got *datamodel.ExitDelay
	for i, e := range res.Analysis.ExitDelays {
		if e.Op == "MPI_Allreduce" && e.Comm == trace.CommWorldID {
			got = &res.Analysis.ExitDelays[i]
		}
	}
	if got == nil || got.Instances != len(exits) {
		t.Fatalf("no world Allreduce profile with %d instances: %+v", len(exits), got)
	}
	for r := range sum {
		want := sum[r] / float64(len(exits))
		if math.Abs(got.MeanNS[r]-want) > 1 || got.CI95NS[r] < 0 {
			t.Errorf("rank %d mean exit delay %.1f ± %.1f, truth %.1f", r, got.MeanNS[r], got.CI95NS[r], want)
		}
	}
}

// TestAnalyze_MoreRanksThanOpenFiles: a run of 64 ranks analysed with room
// for 8 open files (trace.SetOpenFileLimit; a 10,000-rank run under an
// open-file limit of 4,096 lost 5,913 ranks as "too many open files") is
// analysed whole, with the same result as with every file open.
func TestAnalyze_MoreRanksThanOpenFiles(t *testing.T) {
	dir, tr := genRun(t, synth.Config{Ranks: 64, Steps: 400, Seed: 21, ChunkEvents: 64, Halo: true})
	all, allEv := analyzeDir(t, dir, Options{})
	defer trace.SetOpenFileLimit(trace.SetOpenFileLimit(8))
	few, fewEv := analyzeDir(t, dir, Options{})
	if few.Analysis.Events != tr.TotalEvents() || len(few.Analysis.Problems) != len(all.Analysis.Problems) {
		t.Fatalf("with 8 open files: %d events, problems %q; want %d events and %q", few.Analysis.Events, few.Analysis.Problems, tr.TotalEvents(), all.Analysis.Problems)
	}
	if !reflect.DeepEqual(few.Analysis.Instances, all.Analysis.Instances) || !reflect.DeepEqual(fewEv.ev, allEv.ev) {
		t.Errorf("with 8 open files the analysis differs from the one with all files open")
	}
}

// TestAnalyze_PiecesOfOneThreadKeepTheirOrderWithoutTheHeap: a run of more
// than 64 ranks is read in pieces (trace.Reader.NextEvents; here forced by
// testPiece); a rank with one thread writes chunks that never overlap, so
// no rank's order goes to its heap. Before, the horizon inside a chunk was
// the chunk's own start, which every rank's second piece failed: every
// rank held its whole chunk in a heap (10,000 ranks of 2,000 events: 5.5
// GB peak instead of 1.6).
func TestAnalyze_PiecesOfOneThreadKeepTheirOrderWithoutTheHeap(t *testing.T) {
	dir, tr := genRun(t, synth.Config{Ranks: 8, Steps: 3000, Seed: 22, ChunkEvents: 400})
	defer func(p int) { testPiece = p }(testPiece)
	testPiece = 50
	_, pass := loadPass(t, dir)
	c := &collect{ordered: true}
	pass.AddStreamSink(c)
	res, err := pass.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Analysis.Events != tr.TotalEvents() || !c.ordered {
		t.Fatalf("%d events (want %d), in order %v", res.Analysis.Events, tr.TotalEvents(), c.ordered)
	}
	var heaped []int
	for r, rs := range pass.a.ranks {
		if rs != nil && rs.heaped {
			heaped = append(heaped, r)
		}
	}
	if len(heaped) > 0 {
		t.Errorf("%d of 8 ranks' order went to the heap: %v", len(heaped), heaped)
	}
}

// TestAnalyze_SequenceNumbersThatWrap: a run whose communicators' sequence
// numbers wrap past 2^32 (after 2^32 collectives on one communicator: 36
// hours of 33,000 MPI_Allreduce a second) is analysed as one whose do not:
// every instance complete, none taken for a repeat, the same waits.
func TestAnalyze_SequenceNumbersThatWrap(t *testing.T) {
	cfg := synth.Config{Ranks: 6, Steps: 2000, Seed: 23, SplitGroups: 2, Halo: true, HaloMix: true}
	plainDir, _ := genRun(t, cfg)
	cfg.FirstSeq = math.MaxUint32 - 700
	wrapDir, _ := genRun(t, cfg)
	plain, _ := analyzeDir(t, plainDir, Options{})
	wrap, _ := analyzeDir(t, wrapDir, Options{})
	p, w := plain.Analysis, wrap.Analysis
	if len(w.Problems) != len(p.Problems) || w.Instances != p.Instances || w.Incomplete != p.Incomplete || w.Events != p.Events {
		t.Fatalf("wrapping: %d instances, %d incomplete, %d events, problems %q; without: %d, %d, %d, %q",
			w.Instances, w.Incomplete, w.Events, w.Problems, p.Instances, p.Incomplete, p.Events, p.Problems)
	}
	if len(w.Ops) != len(p.Ops) {
		t.Fatalf("wrapping: %d ops, without: %d", len(w.Ops), len(p.Ops))
	}
	for i := range p.Ops {
		if w.Ops[i].Op != p.Ops[i].Op || w.Ops[i].Count != p.Ops[i].Count || !reflect.DeepEqual(w.Ops[i].Wait, p.Ops[i].Wait) {
			t.Errorf("op %s: wrapping %d instances, wait %v; without %d, %v", p.Ops[i].Op, w.Ops[i].Count, w.Ops[i].Wait, p.Ops[i].Count, p.Ops[i].Wait)
		}
	}
}
