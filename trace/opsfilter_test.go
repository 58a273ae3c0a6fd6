package trace

import (
	"strings"
	"testing"
)

func TestParseOpsFilter(t *testing.T) {
	has := func(ops []Op, o Op) bool {
		for _, x := range ops {
			if x == o {
				return true
			}
		}
		return false
	}
	all, _ := opsOfClass("all")
	for _, tc := range []struct {
		spec        string
		off, kept   []Op
		nOff        int // -1: do not check the count
		errContains string
	}{
		{spec: "", nOff: 0},
		{spec: "  ", nOff: 0},
		{spec: "-MPI_Send,-recv", off: []Op{OpSend, OpRecv}, kept: []Op{OpIsend, OpAllreduce, OpPcontrol}, nOff: 2},
		{spec: "-p2p", off: []Op{OpSend, OpIrecv, OpProbe, OpStartall}, kept: []Op{OpWaitall, OpBarrier, OpIbcast, OpPcontrol}, nOff: -1},
		{spec: "Allreduce,MPI_Barrier", off: []Op{OpBcast, OpSend, OpWaitall}, kept: []Op{OpAllreduce, OpBarrier, OpPcontrol}, nOff: len(all) - 3},
		{spec: "coll,-MPI_Bcast", off: []Op{OpBcast, OpSend, OpIbarrier}, kept: []Op{OpBarrier, OpExscan, OpPcontrol}, nOff: -1},
		{spec: "all,-wait", off: []Op{OpWait, OpTestsome}, kept: []Op{OpIsend, OpIprobe}, nOff: -1},
		{spec: "-all,+nbc", off: []Op{OpBarrier, OpSend}, kept: []Op{OpIallreduce, OpPcontrol}, nOff: -1},
		{spec: "-MPI_Pcontrol", off: []Op{OpPcontrol}, nOff: 1},
		{spec: "coll", off: []Op{OpSend}, kept: []Op{OpPcontrol}, nOff: -1},
		{spec: "-gclock_flush", errContains: `"gclock_flush" is neither`},
		{spec: "MPI_Allreduce,,Barrier", errContains: "empty item"},
		{spec: "Allredcue", errContains: "coll, nbc, p2p, wait"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			off, err := ParseOpsFilter(tc.spec)
			if tc.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errContains) {
					t.Fatalf("error %v, want one containing %q", err, tc.errContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range tc.off {
				if !has(off, o) {
					t.Errorf("%s not excluded (excluded: %v)", o, off)
				}
			}
			for _, o := range tc.kept {
				if has(off, o) {
					t.Errorf("%s excluded", o)
				}
			}
			if tc.nOff >= 0 && len(off) != tc.nOff {
				t.Errorf("%d ops excluded, want %d: %v", len(off), tc.nOff, off)
			}
			for _, o := range off {
				if o.IsRecorder() || o == OpPolls {
					t.Errorf("recorder event %s excluded", o)
				}
			}
		})
	}
}
