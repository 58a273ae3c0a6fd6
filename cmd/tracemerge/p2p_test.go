package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

// TestP2PText_NamesLateSendersAndSkipsRunsWithoutMessages: the
// point-to-point section names the culprit -> victim pairs and the slowest
// neighbours, and a run without point-to-point traffic adds nothing.
func TestP2PText_NamesLateSendersAndSkipsRunsWithoutMessages(t *testing.T) {
	var empty bytes.Buffer
	writeP2PText(&empty, &datamodel.P2PResult{}, 10, nil)
	writeP2PText(&empty, nil, 10, nil)
	if empty.Len() != 0 {
		t.Errorf("run without messages: %q", empty.String())
	}
	p := &datamodel.P2PResult{Messages: 3, Bytes: 24, Violations: 1, MaxViolationNS: 1500,
		LateSender: datamodel.PairWaits{Count: 2, TotalNS: 3e6, MaxNS: 2e6,
			Pairs: []datamodel.PairWait{{Culprit: 3, Victim: 2, Count: 2, NS: 3e6}}},
		Ranks: []datamodel.P2PRank{{Rank: 2, Recvs: 3, WaitCalls: 2, WaitTimeNS: 3.5e6, LateSenderNS: 3e6,
			WaitedFor: []datamodel.RankAmount{{Rank: 3, NS: 3e6}}}},
		Worst: []datamodel.LateMessage{{Src: 3, Dst: 2, Tag: 5, Bytes: 8, SendOp: "MPI_Isend", RecvOp: "MPI_Waitall", WaitNS: 2e6}},
	}
	var b bytes.Buffer
	writeP2PText(&b, p, 10, nil)
	for _, want := range []string{"Point-to-point: 3 messages matched", "1 receives completed before their send started (largest 1.5 µs)",
		"rank 3 3 ms", "MPI_Isend  MPI_Waitall  2 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
	if w := p2pClockWarning(p); !strings.Contains(w, "1 point-to-point clock-condition violations") {
		t.Errorf("clock warning %q", w)
	}
}
