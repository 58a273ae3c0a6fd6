package merge

import (
	"math"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// memRank describes one in-memory rank: its collective calls on world as
// (seq, enter) pairs; exit = enter + 100.
type memRank struct {
	rank  int
	seqs  []uint32
	start int64 // enter of the first call; calls are 1000 ns apart
	extra []trace.Event
}

func worldComm(size int) trace.Comm {
	m := make([]int32, size)
	for i := range m {
		m[i] = int32(i)
	}
	return trace.Comm{ID: trace.CommWorldID, Local: 0, Kind: "world", Members: m}
}

// memRun builds a Run of in-memory sources with identity clock models.
func memRun(world int, ranks []memRank) *rundir.Run {
	run := &rundir.Run{Dir: "mem", JobID: "mem", WorldSize: world}
	have := map[int]bool{}
	for _, mr := range ranks {
		have[mr.rank] = true
		var evs []trace.Event
		for i, s := range mr.seqs {
			t := mr.start + int64(i)*1000
			evs = append(evs, trace.Event{Op: trace.OpAllreduce, Comm: 0, Seq: s, Root: -1, EnterNS: t, ExitNS: t + 100, Callsite: 0x1000})
		}
		evs = append(evs, mr.extra...)
		src := &rundir.MemSource{M: rundir.RankMeta{
			Header: trace.Header{Rank: mr.rank, WorldSize: world, JobID: "mem", Host: "h"},
			Comms:  []trace.Comm{worldComm(world), {ID: trace.CommSelfID, Local: 1, Kind: "self", Members: []int32{int32(mr.rank)}}},
			Epochs: []trace.Epoch{{Index: 0, EndNS: 0}, {Index: 1, EndNS: 1 << 40}},
			Footer: &trace.Footer{Events: uint64(len(evs))},
		}, Events: evs, ChunkSize: 3}
		run.Ranks = append(run.Ranks, &rundir.RankInput{Path: trace.RankFileName(mr.rank), Rank: mr.rank, Meta: src.Meta(), Src: src})
	}
	for r := 0; r < world; r++ {
		if !have[r] {
			run.Missing = append(run.Missing, r)
		}
	}
	return run
}

func seqRange(lo, hi uint32, skip ...uint32) []uint32 {
	var out []uint32
next:
	for s := lo; s < hi; s++ {
		for _, k := range skip {
			if s == k {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

func TestMatcher_CompletesAndReleasesInstances(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		world                 int
		ranks                 []memRank
		instances, incomplete int
		problem               string
	}{
		{"all present", 3, []memRank{{0, seqRange(0, 10), 0, nil}, {1, seqRange(0, 10), 10, nil}, {2, seqRange(0, 10), 20, nil}}, 10, 0, ""},
		{"one event lost on rank 1", 3, []memRank{{0, seqRange(0, 10), 0, nil}, {1, seqRange(0, 10, 4), 10, nil}, {2, seqRange(0, 10), 20, nil}}, 10, 1, "1 of 10 instances are incomplete"},
		{"rank file missing", 3, []memRank{{0, seqRange(0, 10), 0, nil}, {1, seqRange(0, 10), 10, nil}}, 10, 10, "10 of 10 instances are incomplete"},
		{"rank stream ends early", 3, []memRank{{0, seqRange(0, 10), 0, nil}, {1, seqRange(0, 10), 10, nil}, {2, seqRange(0, 5), 20, nil}}, 10, 5, ""},
		// rank 0 runs far ahead and lost seq 6: instance 6 is created by rank
		// 1 after instance 7 opened, i.e. before the deque's base.
		{"instance older than the open ones", 2, []memRank{{0, seqRange(0, 8, 6), 0, nil}, {1, seqRange(0, 8), 1 << 20, nil}}, 8, 1, ""},
		{"repeated seq ignored", 2, []memRank{{0, []uint32{0, 1, 1, 2}, 0, nil}, {1, seqRange(0, 3), 10, nil}}, 3, 0, "repeat or go back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := memRun(tc.world, tc.ranks)
			res, err := Analyze(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			an := res.Analysis
			if an.Instances != tc.instances || an.Incomplete != tc.incomplete {
				t.Errorf("instances %d (incomplete %d), want %d (%d); problems %q", an.Instances, an.Incomplete, tc.instances, tc.incomplete, an.Problems)
			}
			if tc.problem != "" && !strings.Contains(strings.Join(an.Problems, "\n"), tc.problem) {
				t.Errorf("problems %q lack %q", an.Problems, tc.problem)
			}
		})
	}
}

// TestMatcher_OpenInstancesStayBounded: with one member lagging by a fixed
// time, open instances stay at the lag (not the trace length), and a lost
// event is resolved as soon as the member moves past it.
func TestMatcher_OpenInstancesStayBounded(t *testing.T) {
	var m matcher
	m.ended = make([]bool, 2)
	m.memberOf = make([][]memberRef, 2)
	idx := m.addComm(trace.CommWorldID, []int32{0, 1}, 2)
	done := 0
	m.fin = func(*openInst) { done++ }
	const n = 100000
	const lag = 5
	for s := 0; s < n+lag; s++ {
		if s < n {
			m.add(&datamodel.GEvent{Op: trace.OpBarrier, Seq: uint32(s), CommIdx: idx, CommRank: 0})
		}
		if s >= lag && s-lag != 777 { // rank 1 lags by 5 and lost seq 777
			m.add(&datamodel.GEvent{Op: trace.OpBarrier, Seq: uint32(s - lag), CommIdx: idx, CommRank: 1})
		}
	}
	if m.maxOpen > lag+2 {
		t.Errorf("max open instances %d, want <= %d", m.maxOpen, lag+2)
	}
	if done != n {
		t.Errorf("finalized %d instances, want %d", done, n)
	}
	if m.nOpen != 0 {
		t.Errorf("%d instances still open", m.nOpen)
	}
}

func TestAnalyze_SelfAndUnknownComms(t *testing.T) {
	self := []trace.Event{{Op: trace.OpBarrier, Comm: 1, Seq: 0, EnterNS: 5000, ExitNS: 5006}}
	unknown := []trace.Event{{Op: trace.OpBarrier, Comm: 9, Seq: 0, EnterNS: 5007, ExitNS: 5008}}
	run := memRun(2, []memRank{{0, seqRange(0, 3), 100, self}, {1, seqRange(0, 3), 100, unknown}})
	res, err := Analyze(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	an := res.Analysis
	// 3 world instances + 1 self instance (rank 0); the unknown comm event
	// is reported, not matched.
	if an.Instances != 4 || an.Incomplete != 0 || an.Events != 8 {
		t.Errorf("instances %d incomplete %d events %d", an.Instances, an.Incomplete, an.Events)
	}
	if !strings.Contains(strings.Join(an.Problems, "\n"), "1 collective events on an undefined communicator") {
		t.Errorf("problems %q", an.Problems)
	}
}

// threadedRank builds a rank whose file holds per-thread chunks that
// overlap in time: thread t's events are at times t, t+threads, ... and
// each chunk holds chunk consecutive events of one thread.
func threadedRank(rank, threads, perThread, chunk int) *rundir.MemSource {
	var evs []trace.Event
	for start := 0; start < perThread; start += chunk {
		for t := 0; t < threads; t++ {
			for i := start; i < min(start+chunk, perThread); i++ {
				ts := int64(i*threads+t) * 100
				evs = append(evs, trace.Event{Op: trace.OpUnknown, EnterNS: ts, ExitNS: ts + 50})
			}
		}
	}
	return &rundir.MemSource{M: rundir.RankMeta{Header: trace.Header{Rank: rank, WorldSize: 1}, Footer: &trace.Footer{}}, Events: evs, ChunkSize: chunk}
}

// spannedSource is a MemSource whose file marks where its chunks start
// (HorizonSource, as a trace file with SPAN frames).
type spannedSource struct{ *rundir.MemSource }

func (s spannedSource) Horizon() (int64, bool) {
	h := int64(math.MaxInt64)
	for _, e := range s.Rest() {
		h = min(h, e.EnterNS)
	}
	return h, true
}

func TestAnalyze_ReordersOverlappingThreadChunks(t *testing.T) {
	for _, tc := range []struct {
		name          string
		threads, per  int
		chunk         int
		spanned       bool
		wantUnordered bool
	}{
		{"4 threads, small chunks", 4, 5000, 100, false, false},
		{"2 threads, chunks of 2000", 2, 20000, 2000, false, false},
		{"overlap deeper than the window", 2, 3 * ReorderWindow, 2 * ReorderWindow, false, true},
		// With spans the overlap is resolved exactly up to ExactReorderLimit.
		{"the same, chunks spanned", 2, 4 * ReorderWindow, 2 * ReorderWindow, true, false},
		{"8 threads of full chunks, spanned", 8, 2 * ReorderWindow, ReorderWindow, true, false},
		// 16 chunks fill the limit; the 17th forces events out (still in order,
		// its own come sorted), the 18th starts before them.
		{"more threads at once than the exact limit holds", ExactReorderLimit/ReorderWindow + 2, ReorderWindow, ReorderWindow, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var src rundir.Source = threadedRank(0, tc.threads, tc.per, tc.chunk)
			if tc.spanned {
				src = spannedSource{src.(*rundir.MemSource)}
			}
			run := &rundir.Run{Dir: "mem", JobID: "mem", WorldSize: 1, Ranks: []*rundir.RankInput{{Path: "rank-00000.gct", Rank: 0, Meta: src.Meta(), Src: src}}}
			c := &collect{ordered: true}
			res, err := Analyze(run, Options{Clock: correct.ClockRaw, Sinks: []datamodel.Sink{c}})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.ev) != tc.threads*tc.per {
				t.Fatalf("%d events, want %d", len(c.ev), tc.threads*tc.per)
			}
			problems := strings.Join(res.Analysis.Problems, "\n")
			unordered := strings.Contains(problems, "come after later ones")
			if unordered != tc.wantUnordered || c.ordered == tc.wantUnordered {
				t.Errorf("stream ordered %v, problem reported %v (%q); want unordered %v", c.ordered, unordered, problems, tc.wantUnordered)
			}
		})
	}
}

// TestAnalyze_ManyCommunicators: a program that creates and frees a
// communicator per step numbers them past 65,536 (the recorder never reuses
// a local index); a collective on each is matched, and a local index far
// beyond the file's definitions (damage) is ignored rather than sizing a
// table.
func TestAnalyze_ManyCommunicators(t *testing.T) {
	const n = 70000
	ranks := make([]memRank, 2)
	for r := range ranks {
		var evs []trace.Event
		for i := 0; i < n; i++ {
			t0 := int64(10_000 + i*1000)
			evs = append(evs, trace.Event{Op: trace.OpAllreduce, Comm: uint32(2 + i), Seq: 0, Root: -1, EnterNS: t0, ExitNS: t0 + 100})
		}
		ranks[r] = memRank{rank: r, start: 100, extra: evs}
	}
	run := memRun(2, ranks)
	for _, ri := range run.Ranks {
		src := ri.Src.(*rundir.MemSource)
		for i := 0; i < n; i++ {
			src.M.Comms = append(src.M.Comms, trace.Comm{ID: trace.CommID(trace.CommWorldID, uint32(i), 0),
				Local: uint32(2 + i), Parent: trace.CommWorldID, Kind: "dup", Members: []int32{0, 1}})
		}
		src.M.Comms = append(src.M.Comms, trace.Comm{ID: 77, Local: 1 << 31, Kind: "dup", Members: []int32{0, 1}})
		src.M.Footer.Events = uint64(len(src.Events))
		ri.Meta = src.Meta()
	}
	res, err := Analyze(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	an := res.Analysis
	if an.Instances != n || an.Incomplete != 0 || len(an.Problems) != 0 {
		t.Errorf("instances %d (want %d), incomplete %d, problems %q", an.Instances, n, an.Incomplete, an.Problems)
	}
}
