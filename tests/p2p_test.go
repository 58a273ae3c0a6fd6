package tests

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// needP2P compiles the p2p program for Open MPI on first use (progs in
// main_test.go lists the programs of the collective recorder's tests;
// mpiImpl.prog compiles for other MPIs).
func needP2P(t *testing.T) {
	t.Helper()
	needSetup(t)
	openMPI.prog(t, "p2p")
}

// p2pLine is one expected event of progs/p2p.c.
type p2pLine struct {
	Op, Label       string
	Seq             uint32
	Root, Peer, Tag int32
	Sent, Recv      uint64
	Req             uint32
}

func (l p2pLine) String() string {
	return fmt.Sprintf("%s %s seq=%d root=%d peer=%d tag=%d sent=%d recv=%d req=%d",
		l.Op, l.Label, l.Seq, l.Root, l.Peer, l.Tag, l.Sent, l.Recv, l.Req)
}

// readP2PExpect reads expect-<rank>.txt: the event lines and the counted
// unsuccessful polls per op.
func readP2PExpect(t *testing.T, path string) ([]p2pLine, map[string]uint64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("expectations: %v", err)
	}
	defer f.Close()
	var out []p2pLine
	misses := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "# misses "); ok {
			var op string
			var n uint64
			if _, err := fmt.Sscan(rest, &op, &n); err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
			misses[op] += n
			continue
		}
		var l p2pLine
		if _, err := fmt.Sscan(sc.Text(), &l.Op, &l.Label, &l.Seq, &l.Root, &l.Peer, &l.Tag, &l.Sent, &l.Recv, &l.Req); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, l)
	}
	return out, misses
}

// TestP2P_TraceHoldsEveryMessageWithPeerTagBytesAndRequest runs
// progs/p2p.c (blocking ring with Send/Ssend and any-source Recv, Sendrecv
// with MPI_STATUS_IGNORE on a communicator whose ranks differ from world
// ranks, Sendrecv_replace, a halo exchange with Isend/Irecv/Waitall,
// any-source Irecv completed by Waitany, Probe, persistent requests with
// Startall/Start/Request_free, Testsome/Testall/Test/Iprobe loops, and
// nonblocking collectives interleaved with blocking ones) and compares
// every event with the program's own list: op, communicator, sequence
// (position within the call; collective sequence for collectives), root,
// peer as world rank, tag, bytes and request id. Unsuccessful polls must
// add up to the misses the program counted. The output must not change.
func TestP2P_TraceHoldsEveryMessageWithPeerTagBytesAndRequest(t *testing.T) {
	needP2P(t)
	for _, m := range mpis(t) {
		for _, tc := range []struct {
			np     int
			buffer string
		}{{2, "16"}, {4, ""}} {
			t.Run(fmt.Sprintf("%s/np%d", m.Name, tc.np), func(t *testing.T) {
				testP2P(t, m, tc.np, tc.buffer)
			})
		}
	}
}

func testP2P(t *testing.T, m *mpiImpl, np int, buffer string) {
	expectDir, traceDir := runWithAndWithout(t, m, np, "p2p", buffer)
	traces := readTraces(t, traceDir, np)
	for rank, tr := range traces {
		want, misses := readP2PExpect(t, filepath.Join(expectDir, fmt.Sprintf("expect-%d.txt", rank)))
		checkP2PRank(t, rank, tr, want, misses)
	}
}

func checkP2PRank(t *testing.T, rank int, tr rankTrace, want []p2pLine, misses map[string]uint64) {
	t.Helper()
	label := func(local uint32) string {
		c, ok := tr.Meta.CommByLocal(local)
		if !ok {
			return fmt.Sprintf("local%d", local)
		}
		switch c.Kind {
		case "world":
			return "world"
		case "split":
			return "rev"
		case "dup":
			return "dup"
		case "self":
			return "self"
		}
		return c.Kind
	}
	var got []p2pLine
	gotMisses := map[string]uint64{}
	var prev *trace.Event
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.ExitNS < e.EnterNS {
			t.Errorf("rank %d event %d (%s): exit before enter", rank, i, e.Op)
		}
		// The recorder's own events (e.g. a buffer flush, which can fall
		// between the records of one call) are not the program's.
		if !e.Op.IsCollective() && !e.Op.IsPointToPoint() && !e.Op.IsNonblockingCollective() {
			continue
		}
		if e.Op == trace.OpPolls {
			if e.Req == 0 {
				t.Errorf("rank %d: a gclock_polls event counting 0 calls", rank)
			}
			gotMisses[trace.Op(e.Tag).String()] += uint64(e.Req)
			continue
		}
		// events of one call share their times
		p := prev
		prev = e
		if e.Seq > 0 && e.Op.IsPointToPoint() {
			if p == nil || p.Op != e.Op || p.EnterNS != e.EnterNS || p.ExitNS != e.ExitNS || p.Callsite != e.Callsite || p.Seq != e.Seq-1 {
				t.Errorf("rank %d event %d: %s record %d does not follow record %d of the same call", rank, i, e.Op, e.Seq, e.Seq-1)
			}
		}
		got = append(got, p2pLine{Op: e.Op.String(), Label: label(e.Comm), Seq: e.Seq, Root: e.Root,
			Peer: e.Peer, Tag: e.Tag, Sent: e.Sent, Recv: e.Recv, Req: e.Req})
	}
	n := max(len(got), len(want))
	bad := 0
	for i := 0; i < n; i++ {
		var g, w string
		if i < len(got) {
			g = got[i].String()
		}
		if i < len(want) {
			w = want[i].String()
		}
		if g != w {
			if bad++; bad <= 8 {
				t.Errorf("rank %d event %d:\n got %s\nwant %s", rank, i, g, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("rank %d: %d of %d events differ (%d recorded, %d expected)", rank, bad, n, len(got), len(want))
	}
	for op, m := range misses {
		if gotMisses[op] != m {
			t.Errorf("rank %d: %d unsuccessful %s calls recorded, the program counted %d", rank, gotMisses[op], op, m)
		}
	}
	for op, m := range gotMisses {
		if _, ok := misses[op]; !ok {
			t.Errorf("rank %d: %d unsuccessful %s calls recorded, the program counted none", rank, m, op)
		}
	}
}

// TestP2P_LateSenderNamedWithItsWaitWithinClockError runs progs/p2p.c's
// late mode on 4 ranks, each its own emulated node with an injected clock
// offset of ±5 ms and drift of ±100 ppm: in halo round 2 the last rank
// posts its sends 20 ms late, and rank 1 sends a blocking message to rank
// 0 20 ms after rank 0 entered MPI_Recv. The point-to-point analysis must
// match every message, name the late senders with the waits they caused,
// and those waits must equal the truth (from the injected clocks) within
// the clock error; the clock condition must hold within it too.
func TestP2P_LateSenderNamedWithItsWaitWithinClockError(t *testing.T) {
	needP2P(t)
	const np, lateMS, tolNS = 4, 20.0, 50e3
	dir := t.TempDir()
	traceDir := filepath.Join(dir, "tr")
	res := mpirun(t, run{NP: np, Preload: true, Prog: "p2p", Args: []string{dir, "late", fmt.Sprint(lateMS)},
		Env: []string{"GCLOCK_DIR=" + traceDir, "GCLOCK_NODE_SIZE=1", "GCLOCK_FAKE_CLOCK=5000000:100,-5000000:-100"}})
	if res.Code != 0 {
		t.Fatalf("p2p late exited %d:\n%s", res.Code, res.Stderr)
	}
	runDir, err := rundir.Load(traceDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer runDir.Close()
	an, err := merge.AnalyzeP2P(runDir, merge.P2POptions{Clock: correct.ClockInterp, TopN: 50})
	if err != nil {
		t.Fatal(err)
	}
	// 5 halo rounds x 2 receives x 4 ranks, and the blocking one
	if an.Messages != 5*2*np+1 || an.UnmatchedSends != 0 || an.UnmatchedRecvs != 0 || an.Unresolved != 0 || an.Uncompleted != 0 {
		t.Errorf("messages %d (want %d), unmatched sends %d, receives %d, unresolved %d, uncompleted %d",
			an.Messages, 5*2*np+1, an.UnmatchedSends, an.UnmatchedRecvs, an.Unresolved, an.Uncompleted)
	}
	if an.MaxViolationNS > tolNS {
		t.Errorf("%d clock-condition violations, largest %.1f us: beyond the clock error", an.Violations, an.MaxViolationNS/1e3)
	}
	inject := map[int32]*trace.Injection{}
	for _, ri := range runDir.Ranks {
		inject[int32(ri.Rank)] = ri.Meta.Header.Inject
		if ri.Meta.Header.Inject == nil {
			t.Fatalf("rank %d: no injection recorded", ri.Rank)
		}
	}
	truth := func(m datamodel.LateMessage) float64 {
		return inject[m.Src].TrueTime(m.SendLocal) - inject[m.Dst].TrueTime(m.WaitLocal)
	}
	last := int32(np - 1)
	found := map[[2]int32]bool{}
	for _, m := range an.Worst {
		if d := m.WaitNS - truth(m); math.Abs(d) > tolNS {
			t.Errorf("late message %d->%d tag %d: wait %.1f us, truth %.1f us (off by %.1f us)",
				m.Src, m.Dst, m.Tag, m.WaitNS/1e3, truth(m)/1e3, d/1e3)
		}
		// rank 0 enters MPI_Recv up to one halo round after rank 1
		// starts sleeping, so that wait is shorter than lateMS
		if m.WaitNS > 0.5*lateMS*1e6 {
			found[[2]int32{m.Src, m.Dst}] = true
		}
	}
	for _, p := range [][2]int32{{last, 0}, {last, last - 1}, {1, 0}} {
		if !found[p] {
			t.Errorf("late sender %d -> %d (about %.0f ms) not among the worst messages: %+v", p[0], p[1], lateMS, an.Worst)
		}
	}
	// the neighbours of the late rank name it as the one they waited for
	for _, rs := range an.Ranks {
		if rs.Rank != last-1 {
			continue
		}
		if len(rs.WaitedFor) == 0 || rs.WaitedFor[0].Rank != last || rs.WaitedFor[0].NS < 0.8*lateMS*1e6 {
			t.Errorf("rank %d waited for %+v, want rank %d first with about %.0f ms", rs.Rank, rs.WaitedFor, last, lateMS)
		}
	}
	// The largest wait is the largest true one (the worst list holds every
	// late message of this run): a loaded machine stretches the late rank's
	// sleep, so the wait is compared with the truth, not with lateMS above.
	maxTruth := 0.0
	for _, m := range an.Worst {
		maxTruth = max(maxTruth, truth(m))
	}
	if an.LateSender.MaxNS < 0.8*lateMS*1e6 || math.Abs(an.LateSender.MaxNS-maxTruth) > tolNS {
		t.Errorf("largest late-sender wait %.1f ms, want at least %.0f ms and the largest true wait %.3f ms within %.0f us",
			an.LateSender.MaxNS/1e6, 0.8*lateMS, maxTruth/1e6, tolNS/1e3)
	}

	// tracemerge reports it: text section, p2p.json, Perfetto flows and
	// Gantt message lines (few messages: drawn for the whole run)
	tm := filepath.Join(binDir, "tracemerge")
	if out, err := exec.Command("go", "build", "-o", tm, filepath.Join(repoRoot, "cmd", "tracemerge")).CombinedOutput(); err != nil {
		t.Fatalf("building tracemerge: %v\n%s", err, out)
	}
	outDir := filepath.Join(dir, "report")
	rep := runCmd(t, dir, nil, tm, traceDir, "-o", outDir, "--formats", "txt,json,svg,perfetto,perfetto-json")
	if rep.Code != 0 {
		t.Fatalf("tracemerge exited %d:\n%s", rep.Code, rep.Stderr)
	}
	for _, want := range []string{fmt.Sprintf("Point-to-point: %d messages matched", 5*2*np+1), "Late Sender (receiver waits", "Worst late senders"} {
		if !strings.Contains(rep.Stdout, want) {
			t.Errorf("tracemerge report lacks %q:\n%s", want, rep.Stdout)
		}
	}
	for file, want := range map[string]string{"p2p.json": `"late_sender"`, "trace.json": `"ph":"f","bp":"e"`, "gantt.svg": "MPI_Isend rank"} {
		b, err := os.ReadFile(filepath.Join(outDir, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, or it lacks %q", file, err, want)
		}
	}
}

// TestP2P_ThreadsEveryRequestLinkedOnce: with MPI_THREAD_MULTIPLE two
// threads per rank run ring exchanges at the same time (Open MPI hands
// both threads the same shared handle for inline sends): every request is
// started once and completed once with its own peer and tag, and the
// analysis matches every message.
func TestP2P_ThreadsEveryRequestLinkedOnce(t *testing.T) {
	needP2P(t)
	const np, perThread = 3, 200
	dir := t.TempDir()
	traceDir := filepath.Join(dir, "tr")
	res := mpirun(t, run{NP: np, Preload: true, Prog: "p2p", Args: []string{dir, "threads"},
		Env: []string{"GCLOCK_DIR=" + traceDir, "GCLOCK_BUFFER=256"}})
	if res.Code != 0 {
		t.Fatalf("p2p threads exited %d:\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "provided multiple") {
		t.Fatalf("MPI_THREAD_MULTIPLE not provided: %s", res.Stdout)
	}
	for rank, tr := range readTraces(t, traceDir, np) {
		type start struct {
			ev   trace.Event
			done int
		}
		starts := map[uint32]*start{}
		for _, e := range tr.Events {
			switch {
			case e.Op == trace.OpIsend || e.Op == trace.OpIrecv:
				if e.Req == 0 || starts[e.Req] != nil {
					t.Fatalf("rank %d: request id %d started twice or 0", rank, e.Req)
				}
				starts[e.Req] = &start{ev: e}
			case e.Op == trace.OpWaitall:
				s := starts[e.Req]
				if s == nil {
					t.Errorf("rank %d: Waitall completes unknown request %d", rank, e.Req)
					continue
				}
				s.done++
				if s.ev.Peer != e.Peer || s.ev.Tag != e.Tag {
					t.Errorf("rank %d: request %d started as %s peer %d tag %d, completed as peer %d tag %d",
						rank, e.Req, s.ev.Op, s.ev.Peer, s.ev.Tag, e.Peer, e.Tag)
				}
			}
		}
		if len(starts) != 2*2*perThread {
			t.Errorf("rank %d: %d requests started, want %d", rank, len(starts), 2*2*perThread)
		}
		for id, s := range starts {
			if s.done != 1 {
				t.Errorf("rank %d: request %d (%s) completed %d times", rank, id, s.ev.Op, s.done)
			}
		}
	}
	runDir, err := rundir.Load(traceDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer runDir.Close()
	an, err := merge.AnalyzeP2P(runDir, merge.P2POptions{Clock: correct.ClockInterp})
	if err != nil {
		t.Fatal(err)
	}
	if an.Messages != np*2*perThread || an.UnmatchedSends+an.UnmatchedRecvs+an.Unresolved+an.Uncompleted != 0 {
		t.Errorf("messages %d (want %d), unmatched %d/%d, unresolved %d, uncompleted %d", an.Messages, np*2*perThread,
			an.UnmatchedSends, an.UnmatchedRecvs, an.Unresolved, an.Uncompleted)
	}
}
