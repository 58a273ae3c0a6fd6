package tests

// MPI-4 large-count variants (issue 11 §4, docs/explanation/recorder.md "Large
// counts"): progs/largecount.c calls the `_c` functions where mpi.h is
// MPI-4 (MPICH 4.0) and their int-count twins otherwise (Open MPI 4.1);
// progs/largecount_int.c is the same program with the twins everywhere.
// Both must give the same trace, event by event.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

const largeNP = 2

// largeWant is each rank's events per op in progs/largecount.c (MPI_Waitall
// and MPI_Sendrecv write one event per message; the second MPI_Gather
// collects the printed line).
var largeWant = map[trace.Op]int{
	trace.OpSend: 1, trace.OpRecv: 1, trace.OpIsend: 1, trace.OpIrecv: 1, trace.OpWaitall: 2, trace.OpSendrecv: 2,
	trace.OpBcast: 1, trace.OpReduce: 1, trace.OpAllreduce: 1, trace.OpGather: 2, trace.OpScatter: 1,
	trace.OpAllgather: 1, trace.OpAlltoall: 1, trace.OpReduceScatterBlock: 1, trace.OpScan: 1, trace.OpExscan: 1,
	trace.OpGatherv: 1, trace.OpScatterv: 1, trace.OpAllgatherv: 1, trace.OpAlltoallv: 1, trace.OpAlltoallw: 1,
	trace.OpReduceScatter: 1, trace.OpIalltoallv: 1,
	trace.OpIallreduce: 1, trace.OpWait: 2, trace.OpWinCreate: 1, trace.OpWinFence: 4, trace.OpPut: 1, trace.OpGet: 1,
	trace.OpAccumulate: 1, trace.OpWinFree: 1,
}

// largeCalls are the `_c` functions progs/largecount.c calls on an MPI-4
// library.
var largeCalls = []string{"MPI_Send_c", "MPI_Recv_c", "MPI_Isend_c", "MPI_Irecv_c", "MPI_Sendrecv_c", "MPI_Bcast_c",
	"MPI_Reduce_c", "MPI_Allreduce_c", "MPI_Gather_c", "MPI_Scatter_c", "MPI_Allgather_c", "MPI_Alltoall_c",
	"MPI_Reduce_scatter_block_c", "MPI_Scan_c", "MPI_Exscan_c", "MPI_Iallreduce_c", "MPI_Win_create_c", "MPI_Put_c",
	"MPI_Get_c", "MPI_Accumulate_c", "MPI_Gatherv_c", "MPI_Scatterv_c", "MPI_Allgatherv_c", "MPI_Alltoallv_c",
	"MPI_Alltoallw_c", "MPI_Reduce_scatter_c", "MPI_Ialltoallv_c"}

func TestLargeCount_RecordedLikeTheirIntTwins(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) { testLargeCount(t, m) })
	}
}

// undefinedMPI returns the MPI_ functions binary calls (nm: U).
func undefinedMPI(t *testing.T, binary string) map[string]bool {
	t.Helper()
	out, err := exec.Command("nm", binary).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", binary, err)
	}
	u := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "U" {
			u[strings.SplitN(f[1], "@", 2)[0]] = true
		}
	}
	return u
}

func testLargeCount(t *testing.T, m *mpiImpl) {
	// Which calls the program makes, and which the library wraps: MPICH
	// 4.0 has the `_c` functions, Open MPI 4.1 none (its build of the
	// library must not define them either).
	calls := undefinedMPI(t, m.prog(t, "largecount"))
	lib, err := exec.Command("nm", "-D", "--defined-only", m.Lib).Output()
	if err != nil {
		t.Fatalf("nm -D %s: %v", m.Lib, err)
	}
	for _, f := range largeCalls {
		exported := strings.Contains(string(lib), " T "+f+"\n")
		switch m.Name {
		case "mpich":
			if !calls[f] || !exported {
				t.Errorf("%s: program calls it: %v, library wraps it: %v; want both (MPICH 4 has it)", f, calls[f], exported)
			}
		default:
			if calls[f] || exported {
				t.Errorf("%s: program calls it: %v, library wraps it: %v; want neither (Open MPI 4.1 has no large-count functions)", f, calls[f], exported)
			}
		}
	}

	_, dir := runWithAndWithout(t, m, largeNP, "largecount", "")
	_, intDir := runWithAndWithout(t, m, largeNP, "largecount_int", "")
	large, ints := readTraces(t, dir, largeNP), readTraces(t, intDir, largeNP)
	for rank := range large {
		evs, twins := withoutFlush(large[rank].Events), withoutFlush(ints[rank].Events)
		got := map[trace.Op]int{}
		for _, e := range evs {
			got[e.Op]++
			// The v/w calls move both ranks' blocks of K = 4 ints.
			if (e.Op == trace.OpAlltoallv || e.Op == trace.OpAlltoallw || e.Op == trace.OpAllgatherv) && e.Recv != 32 {
				t.Errorf("rank %d: %s received %d bytes, want 32", rank, e.Op, e.Recv)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(largeWant) {
			t.Errorf("rank %d: events per op\n got %v\nwant %v", rank, got, largeWant)
		}
		if len(evs) != len(twins) {
			t.Errorf("rank %d: %d events with the _c calls, %d with their twins", rank, len(evs), len(twins))
			continue
		}
		for i, e := range evs {
			w := twins[i]
			if e.Op != w.Op || e.Seq != w.Seq || e.Root != w.Root || e.Sent != w.Sent || e.Recv != w.Recv ||
				e.Peer != w.Peer || e.Tag != w.Tag || (e.Req == 0) != (w.Req == 0) {
				t.Errorf("rank %d event %d: %s seq %d root %d sent %d recv %d peer %d tag %d req %d; the int twins: %s seq %d root %d sent %d recv %d peer %d tag %d req %d",
					rank, i, e.Op, e.Seq, e.Root, e.Sent, e.Recv, e.Peer, e.Tag, e.Req, w.Op, w.Seq, w.Root, w.Sent, w.Recv, w.Peer, w.Tag, w.Req)
			}
		}
	}
	for _, d := range []string{dir, intDir} {
		run, err := rundir.Load(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := merge.Analyze(run, merge.Options{})
		run.Close()
		if err != nil {
			t.Fatal(err)
		}
		a := res.Analysis
		if a.Clock.Violations != 0 || len(a.Problems) != 0 {
			t.Errorf("%s: %d clock-condition violations, problems %v", filepath.Base(d), a.Clock.Violations, a.Problems)
		}
	}
}
