package tests

// Threads that come and go (progs/threadchurn.c; docs/explanation/recorder.md
// "Threads").

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/gclock/gclock/trace"
)

var threadchurnFile = regexp.MustCompile(`threadchurn: rank (\d+) file (\d+) (\d+)`)

// TestThreadChurn_BuffersReusedEveryCallRecorded: 2 ranks run 60 rounds of
// 4 threads that each make 50 barriers and 50 Isend/Irecv/Waitall to
// themselves, on Open MPI and MPICH:
//   - the output is unchanged;
//   - the file-backed memory grows by less than 8 MiB over the second half
//     of the rounds (an exited thread's buffer is taken over by the next
//     thread; before, every thread kept a new sidecar region: ≈ 1.2 MB of
//     mapped pages per thread, ≈ 140 MB over those rounds);
//   - every call of every thread is in the trace, and tracemerge matches
//     every message and reports no problem (the rank's stream in time
//     order).
func TestThreadChurn_BuffersReusedEveryCallRecorded(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) { testThreadChurn(t, m) })
	}
}

func testThreadChurn(t *testing.T, m *mpiImpl) {
	const np, rounds, threads, calls = 2, 60, 4, 50
	args := []string{strconv.Itoa(rounds), strconv.Itoa(threads), strconv.Itoa(calls)}
	plain := mpirun(t, run{MPI: m, NP: np, Prog: "threadchurn", Args: args})
	want := fmt.Sprintf("rounds %d threads %d calls per thread %d\n", rounds, threads, 4*calls)
	if plain.Code != 0 || plain.Stdout != want {
		t.Fatalf("threadchurn without the preload: exit %d, stdout %q\n%s", plain.Code, plain.Stdout, plain.Stderr)
	}
	dir := filepath.Join(t.TempDir(), "tr")
	traced := mpirun(t, run{MPI: m, NP: np, Prog: "threadchurn", Args: args, Preload: true,
		Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
	if traced.Code != 0 || traced.Stdout != want {
		t.Fatalf("threadchurn under the preload: exit %d, stdout %q\n%s", traced.Code, traced.Stdout, traced.Stderr)
	}
	ms := threadchurnFile.FindAllStringSubmatch(traced.Stderr, -1)
	if len(ms) != np {
		t.Fatalf("want %d memory lines, got %q", np, traced.Stderr)
	}
	for _, mm := range ms {
		half, _ := strconv.Atoi(mm[2])
		end, _ := strconv.Atoi(mm[3])
		if half <= 0 || end-half >= 8192 {
			t.Errorf("rank %s: file-backed memory %d kB after half the rounds, %d kB at the end: +%d kB (want < 8192)",
				mm[1], half, end, end-half)
		}
	}
	traces := readTraces(t, dir, np)
	for rank, rt := range traces {
		got := map[trace.Op]int{}
		for _, e := range withoutFlush(rt.Events) {
			got[e.Op]++
		}
		perThread := rounds * threads * calls
		for op, n := range map[trace.Op]int{trace.OpBarrier: perThread + 1, trace.OpIsend: perThread,
			trace.OpIrecv: perThread, trace.OpWaitall: 2 * perThread} {
			if got[op] != n {
				t.Errorf("rank %d: %d %s events, want %d (all: %v)", rank, got[op], op, n, got)
			}
		}
	}
	p := p2pOfDir(t, dir)
	if msgs := np * rounds * threads * calls; p.Messages != msgs || p.UnmatchedSends != 0 || p.UnmatchedRecvs != 0 || p.Uncompleted != 0 {
		t.Errorf("point-to-point: %d messages (want %d), unmatched %d/%d, uncompleted %d", p.Messages, msgs,
			p.UnmatchedSends, p.UnmatchedRecvs, p.Uncompleted)
	}
	problems := analyzeDir(t, dir).Problems
	// Before: 27,000 of a rank's 60,000 events out of time order with the
	// library that kept every thread's buffer to the end.
	if len(problems) != 0 {
		t.Errorf("tracemerge problems: %q", problems)
	}
}

// TestThreadsAtOnce_RankStreamInTimeOrder: 4 threads per rank call MPI at
// once for 20,000 steps (400,000 events per rank; each thread's buffer
// fills and flushes side by side with the others, so the rank's chunks
// overlap in time), on Open MPI and MPICH. The recorder marks each chunk's
// first and last entry time (SPAN frames) and tracemerge emits an event
// once no chunk still to come can start before it: the rank's stream is
// in time order. Before, within a window of 32,768 events, 60,722 and
// 69,140 events per rank came after later ones.
func TestThreadsAtOnce_RankStreamInTimeOrder(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np, threads, steps = 2, 4, 20000
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{MPI: m, NP: np, Prog: "threadchurn", Args: []string{"1", strconv.Itoa(threads), strconv.Itoa(steps)},
				Preload: true, Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			if r.Code != 0 {
				t.Fatalf("threadchurn under the preload: exit %d\n%s", r.Code, r.Stderr)
			}
			chunks := 0
			for _, ri := range loadRun(t, dir).Ranks {
				chunks += ri.Meta.EventChunks
			}
			if chunks < np*threads*2 {
				t.Errorf("%d chunks in all: the threads' buffers did not fill side by side", chunks)
			}
			// the program's calls, one barrier each rank, and the
			// recorder's own gclock_flush events
			if a := analyzeDir(t, dir); len(a.Problems) != 0 || a.Events < np*(threads*steps*5+1) {
				t.Errorf("tracemerge: %d events (want at least %d), problems %q", a.Events, np*(threads*steps*5+1), a.Problems)
			}
		})
	}
}

// TestSlowThread_ReadWhenItStarts: the main thread of each rank calls
// MPI_Barrier(MPI_COMM_SELF) 2,000,000 times while a second thread calls a
// barrier every 5 ms (progs/slowthread.c). The slow thread's buffer half
// stays open for the whole run, so its one chunk reaches the file last but
// starts first. tracemerge read chunks in file order and held every later
// event back until it came, up to its limit of 524,288, then gave up on
// order: 44 of the slow thread's 54 calls per rank came after later ones
// at 3,000,000 calls (218 of 228 at 10,000,000, 437 MB peak). Now it reads a rank's chunks in the
// order they start (trace.Reader.InStartOrder): none out of order.
func TestSlowThread_ReadWhenItStarts(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np, fast = 2, 2_000_000
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{MPI: m, NP: np, Prog: "slowthread", Args: []string{strconv.Itoa(fast), "5"},
				Preload: true, Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			var slow int
			if _, err := fmt.Sscanf(r.Stdout, "slowthread fast 2000000 slow %d", &slow); err != nil || r.Code != 0 {
				t.Fatalf("slowthread under the preload: exit %d, %v, stdout %q\n%s", r.Code, err, r.Stdout, r.Stderr)
			}
			if slow < 5 {
				t.Fatalf("the slow thread called only %d times: the run is too short to test it", slow)
			}
			if a := analyzeDir(t, dir); len(a.Problems) != 0 || a.Events < np*fast+slow {
				t.Errorf("tracemerge: %d events (want at least %d), problems %q", a.Events, np*fast+slow, a.Problems)
			}
		})
	}
}
