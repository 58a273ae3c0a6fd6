package viz

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
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
func (s synthRun) run(fn func(*datamodel.GEvent) error) error {
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
	var buf []datamodel.GEvent
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
			buf = append(buf, datamodel.GEvent{
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

// demoInstances returns one Allreduce over n ranks (rank n-1 arrives last)
// and the same instance on raw clocks whose offsets make some ranks appear
// to leave before the last one entered.
func demoInstances(n int) (datamodel.Instance, datamodel.Instance) {
	inst := datamodel.Instance{CommID: 1, Seq: 42, Op: trace.OpAllreduce, OpName: "MPI_Allreduce", Complete: true}
	raw := inst
	for i := 0; i < n; i++ {
		e := 1e6 + float64(i*i)*400
		x := 1e6 + float64((n-1)*(n-1))*400 + 30000 + float64(i%3)*700
		inst.Ranks = append(inst.Ranks, int32(i))
		inst.Enter = append(inst.Enter, e)
		inst.Exit = append(inst.Exit, x)
		off := float64((i*7919)%11-5) * 9000
		raw.Enter = append(raw.Enter, e+off)
		raw.Exit = append(raw.Exit, x+off)
	}
	raw.Ranks = inst.Ranks
	return inst, raw
}

// hostile is a name that breaks markup unless escaped.
const hostile = `<script>alert("x")</script>&'"`

// logHist returns a log-spaced histogram with a bump around peak ns.
func logHist(peak float64, n int) datamodel.Histogram {
	var h datamodel.Histogram
	for i := 0; i <= 24; i++ {
		h.Edges = append(h.Edges, 100*math.Pow(10, float64(i)/4))
	}
	for i := 0; i < 24; i++ {
		x := math.Log10(h.Edges[i] / peak)
		h.Counts = append(h.Counts, int(float64(n)*math.Exp(-x*x*4)))
	}
	return h
}

// demoAnalysis is a plausible analysis of an 8-rank run with hostile
// strings in every field that comes from a trace.
func demoAnalysis(injected bool) *datamodel.Analysis {
	st := func(mean float64) datamodel.Stats {
		return datamodel.Stats{Count: 1000, Total: mean * 1000, Mean: mean, Median: mean * 0.8, P95: mean * 2.5, Max: mean * 6}
	}
	a := &datamodel.Analysis{
		Dir: "/tmp/gclock-trace/" + hostile, JobID: "4711" + hostile, WorldSize: 8, Events: 123456,
		StartNS: 1e9, EndNS: 1e9 + 2.35e6,
		Clock: datamodel.ClockQuality{Mode: "interp", Injected: injected, InjectSpec: "nodes=4,offset=30us,drift=1e-5" + hostile,
			CheckMaxNS: []float64{180, 420}, Algorithms: []string{"H2HCA(HCA3+clone)"}, Violations: 3, MaxViolationNS: 810,
			Warnings: []string{"epoch 1 residual above 1 µs on rank 5 " + hostile}},
		Ops: []datamodel.OpSummary{
			{Op: "MPI_Allreduce", Count: 500, Calls: 4000, TotalTime: 9e7, EntrySkew: st(20000), ExitSkew: st(1400), Wait: st(11000), Latency: st(30000), Span: st(50000), Violations: 3, MaxViolation: 810, WaitClass: merge.WaitNxN.String()},
			{Op: "MPI_Bcast", Count: 250, Calls: 2000, TotalTime: 2e7, EntrySkew: st(15000), ExitSkew: st(9000), Wait: st(5000), Span: st(20000), WaitClass: merge.WaitLateBroadcast.String()},
			{Op: "MPI_Barrier", Count: 250, Calls: 2000, TotalTime: 3e7, EntrySkew: st(18000), ExitSkew: st(800), Wait: st(9000), Latency: st(3000), Span: st(21000), WaitClass: merge.WaitNxN.String()},
		},
		Problems: []string{"rank-0003.gct: chunk 12 at byte 81920: checksum mismatch " + hostile},
	}
	for i := 0; i < 6; i++ {
		a.Callsites = append(a.Callsites, datamodel.CallsiteSummary{Callsite: 0x401000 + uint64(i)*16,
			Function: "hypre_" + hostile, File: "par_csr" + hostile + ".c", Line: 100 + i, Object: "amg2013",
			Op: "MPI_Allreduce", Calls: 1000 - i*100, TotalTime: 1e7 / float64(i+1), Wait: st(9000 / float64(i+1))})
	}
	for r := 0; r < 8; r++ {
		rs := datamodel.RankSummary{Rank: int32(r), Host: "node" + strconv.Itoa(r/2) + hostile, Events: 15432,
			TimeInMPI: 1.4e7, TotalWait: 1e7 * float64(8-r) / 8}
		if r == 5 {
			rs.TotalWait, rs.TotalLateness, rs.LastCount, rs.CausedCount = 2e5, 6e7, 700, 650
			rs.MadeWait = []datamodel.RankAmount{{Rank: 2, NS: 2e7}, {Rank: 0, NS: 1.5e7}, {Rank: 7, NS: 1e7}}
		} else {
			rs.WaitedFor = []datamodel.RankAmount{{Rank: 5, NS: 5e6}}
		}
		a.Ranks = append(a.Ranks, rs)
	}
	inst, _ := demoInstances(8)
	inst.EntrySkew, inst.ExitSkew, inst.Latency, inst.Span, inst.LastRank = 19600, 1400, 30000, 51000, 7
	for i := 0; i < 5; i++ {
		in := inst
		in.Seq = uint32(40 + i)
		in.EntrySkew -= float64(i) * 1000
		if i == 2 {
			in.Violation = 810
		}
		in.LastSite, in.MaxWaitRank, in.MaxWaitSite, in.CauseRank = "hypre_solve (par_csr.c:120)"+hostile, 0, "main (amg.c:88)", 7
		a.Worst = append(a.Worst, in)
	}
	a.ExitDelays = []datamodel.ExitDelay{{Op: "MPI_Barrier", Comm: 1, Instances: 250, Ranks: []int32{0, 1, 2, 3, 4, 5, 6, 7},
		MeanNS: []float64{0, 300, 500, 700, 900, 1100, 1300, 40000}, CI95NS: []float64{0, 30, 40, 50, 60, 70, 80, 900}}}
	a.Hists = []datamodel.OpHistograms{
		{Op: "MPI_Allreduce", ExitSkew: logHist(1400, 400), Wait: logHist(11000, 3000)},
		{Op: "MPI_Bcast", ExitSkew: logHist(9000, 200), Wait: logHist(5000, 1500)},
	}
	return a
}

// demoReport builds a full report from the synthetic run and fixtures.
func demoReport(t testing.TB, injected bool) Report {
	t.Helper()
	a := demoAnalysis(injected)
	hosts := make([]string, 8)
	for r := range hosts {
		hosts[r] = a.Ranks[r].Host
	}
	g := NewGantt(GanttOptions{WorldSize: 8, Title: "job " + a.JobID, Hosts: hosts})
	s := synthRun{Ranks: 8, Iters: 40, Seed: 1, Compute: 20000, Latency: 5000, Offset: 30000, Drift: 1e-5, Slow: 5,
		Ops: []trace.Op{trace.OpAllreduce, trace.OpAllreduce, trace.OpBcast, trace.OpBarrier}}
	if err := s.run(g.Add); err != nil {
		t.Fatal(err)
	}
	var gs bytes.Buffer
	if err := g.WriteSVG(&gs); err != nil {
		t.Fatal(err)
	}
	gr := NewGantt(GanttOptions{WorldSize: 8, Title: "job " + a.JobID + " (raw clocks)", Hosts: hosts, Raw: true})
	if err := s.run(gr.Add); err != nil {
		t.Fatal(err)
	}
	var grs bytes.Buffer
	if err := gr.WriteSVG(&grs); err != nil {
		t.Fatal(err)
	}
	inst, raw := demoInstances(8)
	var is bytes.Buffer
	if err := InstanceSVG(&is, inst, &raw, "MPI_Allreduce comm 1 #42 "+hostile); err != nil {
		t.Fatal(err)
	}
	return Report{Analysis: a, GanttSVG: gs.Bytes(), RawGanttSVG: grs.Bytes(), Instances: []NamedSVG{{Name: "worst MPI_Allreduce " + hostile, SVG: is.Bytes()}},
		Resolve: func(pc uint64) string { return "fn" + hostile }, Generated: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), Version: "test"}
}
