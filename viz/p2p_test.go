package viz

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

func testMessages(n int) []datamodel.Message {
	var out []datamodel.Message
	for i := 0; i < n; i++ {
		t := float64(1000 * i)
		out = append(out, datamodel.Message{Src: int32(i % 2), Dst: int32(1 - i%2), Tag: 5, Bytes: 64,
			SendOp: trace.OpIsend, RecvOp: trace.OpWaitall, SendStart: t, SendExit: t + 10, RecvEnter: t + 100, RecvExit: t + 300})
	}
	return out
}

// TestPerfetto_MessagesBecomeFlowPairsBoundToTheirCalls: each message is
// an "s" event on the sender at the send's start and an "f" event (bound
// to the enclosing slice) on the receiver inside its completing call, with
// the same id, in a document that still parses.
func TestPerfetto_MessagesBecomeFlowPairsBoundToTheirCalls(t *testing.T) {
	var buf bytes.Buffer
	p := NewPerfetto(&buf, []RankMeta{{Rank: 0}, {Rank: 1}})
	ev := datamodel.GEvent{Rank: 0, Op: trace.OpIsend, Enter: 0, Exit: 10}
	if err := p.Add(&ev); err != nil {
		t.Fatal(err)
	}
	if err := p.AddMessages(testMessages(3)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, buf.String())
	}
	starts, finishes := map[float64]map[string]any{}, map[float64]map[string]any{}
	for _, e := range doc.TraceEvents {
		switch e["ph"] {
		case "s":
			starts[e["id"].(float64)] = e
		case "f":
			finishes[e["id"].(float64)] = e
			if e["bp"] != "e" {
				t.Errorf("flow end not bound to the enclosing slice: %v", e)
			}
		}
	}
	if len(starts) != 3 || len(finishes) != 3 {
		t.Fatalf("%d flow starts, %d ends, want 3 each", len(starts), len(finishes))
	}
	s, f := starts[2], finishes[2]
	if s["pid"].(float64) != 1 || f["pid"].(float64) != 0 || s["ts"].(float64) != 1.0 || f["ts"].(float64) != 1.2 {
		t.Errorf("message 2: start %v, end %v", s, f)
	}
}

// TestGantt_MessageLinesOnlyWhenZoomedIn: a few messages in the window are
// drawn as lines with a tooltip; too many are not drawn and the chart
// says so.
func TestGantt_MessageLinesOnlyWhenZoomedIn(t *testing.T) {
	for _, tc := range []struct {
		n     int
		lines bool
	}{{4, true}, {50, false}} {
		g := NewGantt(GanttOptions{Width: 400, WorldSize: 2, Start: 0, End: 60000})
		for i := 0; i < tc.n; i++ {
			ev := datamodel.GEvent{Rank: int32(i % 2), Op: trace.OpIsend, Enter: float64(1000 * i), Exit: float64(1000*i + 10)}
			if err := g.Add(&ev); err != nil {
				t.Fatal(err)
			}
		}
		g.SetMessages(testMessages(tc.n), 10)
		var buf bytes.Buffer
		if err := g.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		n := strings.Count(svg, "MPI_Isend rank 0 → MPI_Waitall rank 1") + strings.Count(svg, "MPI_Isend rank 1 → MPI_Waitall rank 0")
		if tc.lines && n != tc.n {
			t.Errorf("%d messages: %d lines drawn", tc.n, n)
		}
		if !tc.lines && (n != 0 || !strings.Contains(svg, "too many to draw as lines")) {
			t.Errorf("%d messages: %d lines drawn, or no note", tc.n, n)
		}
	}
}

// TestHTML_PointToPointSection: with a point-to-point analysis the report
// has its section (late-sender pairs, per-rank waiting, call sites); without
// one, none.
func TestHTML_PointToPointSection(t *testing.T) {
	an := &datamodel.Analysis{JobID: "j", WorldSize: 2}
	p := &datamodel.P2PResult{Messages: 7, Bytes: 56,
		LateSender: datamodel.PairWaits{Count: 1, TotalNS: 2e6, MaxNS: 2e6, Pairs: []datamodel.PairWait{{Culprit: 1, Victim: 0, Count: 1, NS: 2e6}}},
		Ranks:      []datamodel.P2PRank{{Rank: 0, Recvs: 7, WaitCalls: 3, WaitTimeNS: 2.5e6, WaitedFor: []datamodel.RankAmount{{Rank: 1, NS: 2e6}}}},
		Sites:      []datamodel.P2PSite{{Site: "halo (amg.c:244)", Op: "MPI_Waitall", Calls: 3, TimeNS: 2.5e6, Ranks: 1}}}
	for _, with := range []bool{true, false} {
		r := Report{Analysis: an}
		if with {
			r.P2P = p
		}
		var b bytes.Buffer
		if err := WriteHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		has := strings.Contains(html, `id="p2p"`)
		if has != with {
			t.Fatalf("with analysis %v: section present %v", with, has)
		}
		if with {
			for _, want := range []string{"7 messages matched", "halo (amg.c:244)", "<td>1</td><td>0</td><td>1</td>"} {
				if !strings.Contains(html, want) {
					t.Errorf("section lacks %q", want)
				}
			}
		}
	}
}

// TestPerfetto_OneSlicePerPointToPointCall: the records of one MPI_Waitall
// (Seq 0, 1, ...) become one slice, not a stack of identical ones.
func TestPerfetto_OneSlicePerPointToPointCall(t *testing.T) {
	var buf bytes.Buffer
	p := NewPerfetto(&buf, nil)
	for seq := uint32(0); seq < 3; seq++ {
		ev := datamodel.GEvent{Rank: 0, Op: trace.OpWaitall, Seq: seq, Enter: 100, Exit: 200}
		if err := p.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	ev := datamodel.GEvent{Rank: 0, Op: trace.OpAllreduce, Seq: 7, Enter: 300, Exit: 400}
	if err := p.Add(&ev); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"ph":"X"`); n != 2 {
		t.Errorf("%d slices, want 2 (one Waitall, one Allreduce):\n%s", n, buf.String())
	}
}
