package tests

// MPI_Cancel (issue 11 §4): progs/cancel.c cancels one receive per rank
// and then exchanges real messages with the same source and tag; the
// cancelled receive must not take one of them.

import (
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

func TestCancel_CancelledReceiveIsNoMessage(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np = 3
			_, dir := runWithAndWithout(t, m, np, "cancel", "")
			for rank, rt := range readTraces(t, dir, np) {
				cancelled := 0
				for _, e := range rt.Events {
					if e.Op == trace.OpWait && e.Tag == trace.TagCancelled {
						cancelled++
						if e.Recv != 0 {
							t.Errorf("rank %d: cancelled receive completed with %d bytes", rank, e.Recv)
						}
					}
				}
				if cancelled != 1 {
					t.Errorf("rank %d: %d cancelled completions, want 1", rank, cancelled)
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
			if p2p.Messages != 3*np || p2p.Cancelled != np || p2p.UnmatchedSends != 0 || p2p.UnmatchedRecvs != 0 || p2p.Violations != 0 {
				t.Errorf("point-to-point: %d messages (want %d), %d cancelled (want %d), unmatched %d/%d, violations %d",
					p2p.Messages, 3*np, p2p.Cancelled, np, p2p.UnmatchedSends, p2p.UnmatchedRecvs, p2p.Violations)
			}
		})
	}
}
