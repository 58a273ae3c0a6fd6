package tests

// Matched probes (issue 11 §4): progs/mprobe.c receives every message
// through MPI_Mprobe + MPI_Mrecv or MPI_Improbe + MPI_Imrecv (what
// mpi4py's lower-case recv does); the receives must be recorded on the
// probed message's communicator, source and tag, so every send matches.

import (
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

func TestMprobe_MatchedReceivesRecordedAndMatched(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np, n = 3, 6
			_, dir := runWithAndWithout(t, m, np, "mprobe", "")
			for rank, rt := range readTraces(t, dir, np) {
				got := map[trace.Op]int{}
				left := int32((rank + np - 1) % np)
				for _, e := range withoutFlush(rt.Events) {
					got[e.Op]++
					switch e.Op {
					case trace.OpMprobe, trace.OpMrecv, trace.OpImprobe:
						if e.Peer != left {
							t.Errorf("rank %d: %s from peer %d, want %d", rank, e.Op, e.Peer, left)
						}
						if e.Op == trace.OpMrecv && e.Recv != 4 {
							t.Errorf("rank %d: MPI_Mrecv of %d bytes, want 4", rank, e.Recv)
						}
					case trace.OpImrecv:
						if e.Peer != left || e.Req == 0 {
							t.Errorf("rank %d: MPI_Imrecv peer %d request %d, want %d and a request", rank, e.Peer, e.Req, left)
						}
					}
				}
				for op, want := range map[trace.Op]int{trace.OpMprobe: n, trace.OpMrecv: n, trace.OpImprobe: n, trace.OpImrecv: n, trace.OpIsend: 2 * n} {
					if got[op] != want {
						t.Errorf("rank %d: %d %s events, want %d (all: %v)", rank, got[op], op, want, got)
					}
				}
			}
			run, err := rundir.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			p2p, err := merge.AnalyzeP2P(run, merge.P2POptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 * n * np; p2p.Messages != want || p2p.UnmatchedSends != 0 || p2p.UnmatchedRecvs != 0 || p2p.Violations != 0 {
				t.Errorf("point-to-point: %d messages (want %d), unmatched sends %d, receives %d, clock violations %d",
					p2p.Messages, want, p2p.UnmatchedSends, p2p.UnmatchedRecvs, p2p.Violations)
			}
		})
	}
}
