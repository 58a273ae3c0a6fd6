package tests

// A program that creates and frees a communicator every step
// (progs/commloop.c; docs/explanation/recorder.md "Communicators created in a loop").

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/gclock/gclock/trace"
)

var commloopAnon = regexp.MustCompile(`commloop: rank (\d+) anon (\d+) (\d+)`)

// TestCommLoop_MemoryFlatTraceSmallEveryCollectiveMatched: 280,000 steps
// on 2 ranks (more communicators than the 65,536 local indexes tracemerge
// once allowed) under the preload:
//   - the output is unchanged;
//   - the rank's anonymous memory grows by less than 1 MiB over the second
//     half of the steps (+132 to +516 kB measured; the library of
//     2026-11-27 morning kept every communicator's member list, ≈ 34 B per
//     step at 2 ranks, 4.7 MB over such a half, 4 kB per step at 1,024).
//     The Go half's heap settles slowly (since its COMM frames are encoded
//     by hand it collects less often): +440 to +964 kB between 70,000 and
//     140,000 steps, +76 kB between 280,000 and 560,000;
//   - tracemerge matches every collective and reports no problem (it left
//     those on communicators past the 65,536th on an "undefined
//     communicator");
//   - a rank file grows per step by the same bytes at 6 ranks as at 2
//     (each COMM frame carried its member list: +40 B per step at 6).
func TestCommLoop_MemoryFlatTraceSmallEveryCollectiveMatched(t *testing.T) {
	needSetup(t)
	const steps = 280000
	args := []string{strconv.Itoa(steps)}
	plain := mpirun(t, run{NP: 2, Prog: "commloop", Args: args})
	if plain.Code != 0 || plain.Stdout != fmt.Sprintf("steps %d sum %d\n", steps, 2*2*steps-2*steps/10) {
		t.Fatalf("commloop without the preload: exit %d, stdout %q\n%s", plain.Code, plain.Stdout, plain.Stderr)
	}
	dir := filepath.Join(t.TempDir(), "tr")
	traced := mpirun(t, run{NP: 2, Prog: "commloop", Args: args, Preload: true, Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
	if traced.Code != 0 || traced.Stdout != plain.Stdout {
		t.Fatalf("commloop under the preload: exit %d, stdout %q (without: %q)\n%s", traced.Code, traced.Stdout, plain.Stdout, traced.Stderr)
	}
	ms := commloopAnon.FindAllStringSubmatch(traced.Stderr, -1)
	if len(ms) != 2 {
		t.Fatalf("want 2 memory lines, got %q", traced.Stderr)
	}
	for _, m := range ms {
		early, _ := strconv.Atoi(m[2])
		late, _ := strconv.Atoi(m[3])
		if early <= 0 || late-early >= 1024 {
			t.Errorf("rank %s: anonymous memory %d kB after %d steps, %d kB after %d: grows by %d kB (want < 1024)",
				m[1], early, steps/2, late, steps, late-early)
		}
	}
	if a := analyzeDir(t, dir); len(a.Problems) != 0 || a.Incomplete != 0 || a.Instances < steps {
		t.Errorf("tracemerge: %d instances (want at least %d), %d incomplete, problems %q", a.Instances, steps, a.Incomplete, a.Problems)
	}

	// Bytes per step at 2 and at 6 ranks.
	const few = 2000
	perStep := func(np int) float64 {
		d := filepath.Join(t.TempDir(), "tr")
		r := mpirun(t, run{NP: np, Prog: "commloop", Args: []string{strconv.Itoa(few)}, Preload: true,
			Env: []string{"GCLOCK_DIR=" + d, "GCLOCK_QUIET=1"}})
		if r.Code != 0 {
			t.Fatalf("commloop on %d ranks under the preload: exit %d\n%s", np, r.Code, r.Stderr)
		}
		st, err := os.Stat(filepath.Join(d, "rank-00000.gct"))
		if err != nil {
			t.Fatal(err)
		}
		return float64(st.Size()) / few
	}
	two, six := perStep(2), perStep(6)
	if six-two > 10 {
		t.Errorf("rank 0's file grows by %.1f B per step at 6 ranks, %.1f at 2: the member lists are repeated", six, two)
	}
}

// TestManyCommunicators_EveryCallRecorded: 10,000 communicators live at
// once on 2 ranks (the shim's table held 4,094 besides MPI_COMM_WORLD and
// MPI_COMM_SELF, and calls on the others were silently not recorded: 4,094
// of 10,000 barriers per rank), each with a barrier and an allreduce: every
// call is in the trace and tracemerge matches every instance.
func TestManyCommunicators_EveryCallRecorded(t *testing.T) {
	needSetup(t)
	const np, n = 2, 10000
	args := []string{strconv.Itoa(n)}
	want := fmt.Sprintf("communicators %d sum %d\n", n, np*n)
	dir := filepath.Join(t.TempDir(), "tr")
	r := mpirun(t, run{NP: np, Prog: "manycomms", Args: args, Preload: true, Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("manycomms under the preload: exit %d, stdout %q (want %q)\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
	for rank, rt := range readTraces(t, dir, np) {
		got := map[trace.Op]int{}
		for _, e := range withoutFlush(rt.Events) {
			got[e.Op]++
		}
		if got[trace.OpBarrier] != n || got[trace.OpAllreduce] != n {
			t.Errorf("rank %d: %d barriers and %d allreduces recorded, want %d each", rank, got[trace.OpBarrier], got[trace.OpAllreduce], n)
		}
	}
	if a := analyzeDir(t, dir); a.Instances != 2*n || a.Incomplete != 0 || len(a.Problems) != 0 {
		t.Errorf("tracemerge: %d instances (want %d), %d incomplete, problems %q", a.Instances, 2*n, a.Incomplete, a.Problems)
	}
}

// TestManyRequests_EveryMessageMatched: 20,000 receives posted at once on
// each of 2 ranks, then 20,000 sends, all completed by one MPI_Waitall of
// 40,000 requests, on Open MPI and MPICH. Before, the shim's request table
// (16,384 slots) lost the completions of the requests it had no room for,
// and a call's first 1,024 requests were all it remembered: 0 of 40,000
// messages matched, 77,952 of 80,000 requests never completed. Now every
// message is matched and every request completed.
func TestManyRequests_EveryMessageMatched(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np, n = 2, 20000
			dir := filepath.Join(t.TempDir(), "tr")
			r := mpirun(t, run{MPI: m, NP: np, Prog: "manyreq", Args: []string{strconv.Itoa(n)}, Preload: true,
				Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}})
			want := fmt.Sprintf("requests %d sum %d\n", n, n*(n-1)/2)
			if r.Code != 0 || r.Stdout != want {
				t.Fatalf("manyreq under the preload: exit %d, stdout %q (want %q)\n%s", r.Code, r.Stdout, want, r.Stderr)
			}
			if p := p2pOfDir(t, dir); p.Messages != np*n || p.Requests != 2*np*n || p.Uncompleted != 0 || p.UnmatchedSends != 0 || p.UnmatchedRecvs != 0 {
				t.Errorf("point-to-point: %d messages (want %d), %d requests (want %d), %d never completed, unmatched %d/%d",
					p.Messages, np*n, p.Requests, 2*np*n, p.Uncompleted, p.UnmatchedSends, p.UnmatchedRecvs)
			}
		})
	}
}

// TestManyRequests_NoMemoryForTheTableSaidOnce: when no memory is left for
// another request table (GCLOCK_TEST_FAULT=reqtable stands in for a failed
// allocation), the starts that find no slot are recorded without their
// completion, the program runs on unchanged, and each rank says how many
// at the end, once (before 2026-11-27 the count was kept and never told).
func TestManyRequests_NoMemoryForTheTableSaidOnce(t *testing.T) {
	needSetup(t)
	const np, n = 2, 20000
	dir := filepath.Join(t.TempDir(), "tr")
	r := mpirun(t, run{NP: np, Prog: "manyreq", Args: []string{strconv.Itoa(n)}, Preload: true,
		Env: []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "GCLOCK_TEST_FAULT=reqtable"}})
	want := fmt.Sprintf("requests %d sum %d\n", n, n*(n-1)/2)
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("manyreq under the preload: exit %d, stdout %q (want %q)\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
	said := regexp.MustCompile(`gclock: rank (\d+): (\d+) requests were recorded without their completion`).FindAllStringSubmatch(r.Stderr, -1)
	ranks := map[string]bool{}
	for _, m := range said {
		if ranks[m[1]] {
			t.Errorf("rank %s said it twice", m[1])
		}
		ranks[m[1]] = true
		if k, _ := strconv.Atoi(m[2]); k <= 0 || k > 2*n {
			t.Errorf("rank %s: %s requests without completion, want 1..%d", m[1], m[2], 2*n)
		}
	}
	if len(ranks) != np {
		t.Errorf("%d ranks said how many requests lost their completion, want %d:\n%s", len(ranks), np, r.Stderr)
	}
	if p := p2pOfDir(t, dir); p.Uncompleted == 0 {
		t.Errorf("the analysis counts no request without completion")
	}
}
