package tests

// Communicator constructors (issue 11 §4): progs/topo.c makes a
// communicator with every wrapped constructor and runs a collective on
// each; every one must be known (no "unknown" communicator) and have an id
// all its members agree on, so its collectives match as complete
// instances. The neighbourhood collectives on those communicators are
// recorded with one block per neighbour.

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

func TestTopo_EveryConstructorGetsAnAgreedID(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			const np = 4
			_, dir := runWithAndWithout(t, m, np, "topo", "")
			traces := readTraces(t, dir, np)
			// id -> ranks that have a communicator with it
			holders := map[uint64]map[int]bool{}
			for rank, rt := range traces {
				kinds := map[string]int{}
				for _, c := range rt.Meta.Comms {
					kinds[c.Kind]++
					if holders[c.ID] == nil {
						holders[c.ID] = map[int]bool{}
					}
					holders[c.ID][rank] = true
				}
				want := map[string]int{"cart": 1, "cart_sub": 1, "graph": 1, "dist_graph": 2, "idup": 1, "intercomm": 1, "merge": 1}
				if rank%2 == 0 {
					want["create_group"] = 1
				}
				for k, n := range want {
					if kinds[k] != n {
						t.Errorf("rank %d: %d communicators of kind %q, want %d (all: %v)", rank, kinds[k], k, n, kinds)
					}
				}
				if kinds["unknown"] != 0 {
					t.Errorf("rank %d: %d unknown communicators (all: %v)", rank, kinds["unknown"], kinds)
				}
			}
			// neighbourhood collectives: events and bytes (4-byte ints; the
			// torus has 4 neighbours, the graph 2, the distributed graphs 1)
			nbWant := map[trace.Op][3]uint64{ // events, sent, recv per rank
				trace.OpNeighborAllgather: {1, 16, 16}, trace.OpIneighborAllgather: {1, 16, 16},
				trace.OpNeighborAllgatherv: {1, 8, 8}, trace.OpNeighborAlltoall: {1, 4, 4}, trace.OpNeighborAlltoallv: {1, 4, 4},
				trace.OpNeighborAlltoallw: {1, 16, 16}, trace.OpIneighborAlltoallw: {1, 8, 8},
			}
			for rank, rt := range traces {
				got := map[trace.Op][3]uint64{}
				for _, e := range rt.Events {
					if e.Op.IsNeighborhood() {
						g := got[e.Op]
						got[e.Op] = [3]uint64{g[0] + 1, g[1] + e.Sent, g[2] + e.Recv}
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(nbWant) {
					t.Errorf("rank %d: neighbourhood collectives (events, sent, recv)\n got %v\nwant %v", rank, got, nbWant)
				}
			}
			// every member of every communicator holds the same id
			for rank, rt := range traces {
				for _, c := range rt.Meta.Comms {
					if strings.HasPrefix(c.Kind, "win_") {
						continue
					}
					var missing []int
					for _, m := range c.Members {
						if !holders[c.ID][int(m)] {
							missing = append(missing, int(m))
						}
					}
					if len(missing) > 0 {
						sort.Ints(missing)
						t.Errorf("rank %d: %s communicator %#x (members %v): ranks %v have no communicator with that id", rank, c.Kind, c.ID, c.Members, missing)
					}
				}
			}
			run, err := rundir.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			res, err := merge.Analyze(run, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			an := res.Analysis
			if an.Incomplete != 0 || an.Clock.Violations != 0 || len(an.Problems) != 0 {
				t.Errorf("%d incomplete instances, %d clock-condition violations, problems %v", an.Incomplete, an.Clock.Violations, an.Problems)
			}
		})
	}
}
