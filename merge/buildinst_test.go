package merge

import (
	"fmt"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// TestBuildInstance_MakesEachMemberArrayOnceAtItsSize: an instance's
// per-member arrays (ranks, enter, exit, sent, recv and the call sites
// behind them) are each made once, at the number of members that
// arrived, whatever the communicator's size: grown by append, a
// 16,384-member instance made its 1 MB of arrays twice over in garbage.
func TestBuildInstance_MakesEachMemberArrayOnceAtItsSize(t *testing.T) {
	for _, tc := range []struct{ members, arrived int }{{4, 4}, {4, 3}, {1024, 1024}, {16384, 16384}, {16384, 100}} {
		t.Run(fmt.Sprintf("members=%d/arrived=%d", tc.members, tc.arrived), func(t *testing.T) {
			n := tc.members
			cs := &commState{id: 7, members: make([]int32, n)}
			in := &openInst{comm: cs, op: trace.OpAllreduce, root: -1, got: tc.arrived, state: make([]uint8, n),
				enter: make([]float64, n), exit: make([]float64, n), rawEnter: make([]float64, n), rawExit: make([]float64, n),
				site: make([]int32, n), pc: make([]uint64, n), sent: make([]uint64, n), recv: make([]uint64, n)}
			for p := range n {
				cs.members[p] = int32(p)
				in.enter[p], in.exit[p] = float64(p), float64(2*n)
				if p < tc.arrived {
					in.state[p] = stArrived
				}
			}
			a := &analyzer{}
			var inst datamodel.Instance
			allocs := testing.AllocsPerRun(3, func() { inst = a.buildInstance(in, false) })
			if len(inst.Ranks) != tc.arrived || cap(inst.Ranks) != tc.arrived || cap(inst.Enter) != tc.arrived || cap(inst.Recv) != tc.arrived {
				t.Errorf("ranks %d (cap %d), enter cap %d, recv cap %d: want %d each", len(inst.Ranks), cap(inst.Ranks), cap(inst.Enter), cap(inst.Recv), tc.arrived)
			}
			// seven arrays (five of the instance, sites and pcs) and a
			// few small ones of its metrics, none growing with members
			if allocs > 12 {
				t.Errorf("%.0f allocations building one instance, want at most 12", allocs)
			}
		})
	}
}
