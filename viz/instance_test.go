package viz

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

func instSVG(t *testing.T, inst datamodel.Instance, raw *datamodel.Instance, title string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := InstanceSVG(&b, inst, raw, title); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestInstanceSVG_Properties(t *testing.T) {
	inst, raw := demoInstances(8)
	consistentRaw := inst // raw equal to corrected: no violations
	far := raw            // raw offsets of milliseconds: zoom panel needed
	far.Enter, far.Exit = slices.Clone(raw.Enter), slices.Clone(raw.Exit)
	for i := range far.Enter {
		far.Enter[i] += float64(i) * 1e6
		far.Exit[i] += float64(i) * 1e6
	}
	bcast := inst
	bcast.Op, bcast.OpName = trace.OpBcast, "MPI_Bcast"
	bcastRaw := raw
	bcastRaw.Op = trace.OpBcast
	missing := inst
	missing.Enter = slices.Clone(inst.Enter)
	missing.Enter[3] = math.NaN()
	missing.Complete = false
	for _, c := range []struct {
		name          string
		inst          datamodel.Instance
		raw           *datamodel.Instance
		wantViolation bool
		wantZoom      bool
	}{
		{"corrected only", inst, nil, false, false},
		{"raw beside corrected shows violations", inst, &raw, true, false},
		{"raw that agrees has no violations", inst, &consistentRaw, false, false},
		{"raw seconds apart adds a zoomed panel", inst, &far, true, true},
		{"rooted op never violates the clock condition", bcast, &bcastRaw, false, false},
		{"missing member is drawn as missing", missing, nil, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := instSVG(t, c.inst, c.raw, "Allreduce "+hostile)
			root, text := wellFormed(t, svg)
			if root != "svg" {
				t.Fatalf("root %q", root)
			}
			if bytes.Contains(svg, []byte("<script")) {
				t.Fatal("unescaped title")
			}
			if !strings.Contains(text, "Allreduce "+hostile) {
				t.Error("title missing")
			}
			if !strings.Contains(text, "◀ last") {
				t.Error("last arriver not marked")
			}
			if !strings.Contains(text, "entry skew") || !strings.Contains(text, "exit skew") {
				t.Error("skew annotations missing")
			}
			gotViolation := strings.Contains(text, "clock-condition violations (")
			if gotViolation != c.wantViolation {
				t.Errorf("violation marked = %v, want %v", gotViolation, c.wantViolation)
			}
			if got := strings.Contains(text, "zoomed"); got != c.wantZoom {
				t.Errorf("zoom panel = %v, want %v", got, c.wantZoom)
			}
			if !c.inst.Complete && !strings.Contains(text, "INCOMPLETE") {
				t.Error("incomplete instance not flagged")
			}
		})
	}
}

// TestInstanceSVG_PanelsShareTimeScale: the raw and corrected panels have
// the same tick labels at the same spacing.
func TestInstanceSVG_PanelsShareTimeScale(t *testing.T) {
	inst, raw := demoInstances(6)
	svg := instSVG(t, inst, &raw, "scale")
	texts := svgTexts(t, svg)
	var ticks []string
	for _, s := range texts {
		if s == "0" || strings.HasSuffix(s, " µs") && len(s) < 10 { // "50 µs", not annotations
			ticks = append(ticks, s)
		}
	}
	// Tick labels appear once per panel, in the same order.
	if len(ticks)%2 != 0 || len(ticks) < 4 {
		t.Fatalf("tick labels %q: want the same set twice", ticks)
	}
	h := len(ticks) / 2
	if !slices.Equal(ticks[:h], ticks[h:]) {
		t.Errorf("panels have different ticks: %q vs %q", ticks[:h], ticks[h:])
	}
}

func TestInstanceStats_MatchDefinitions(t *testing.T) {
	in := datamodel.Instance{Op: trace.OpAllreduce,
		Enter: []float64{0, 10, 30}, Exit: []float64{25, 41, 42}}
	s := computeInstStats(&in)
	if s.lastEnter-s.firstEnter != 30 || s.lastExit-s.firstExit != 17 || s.last != 2 {
		t.Errorf("entry skew %v exit skew %v last %d", s.lastEnter-s.firstEnter, s.lastExit-s.firstExit, s.last)
	}
	if s.violations != 1 || s.maxViolation != 5 {
		t.Errorf("violations %d max %v, want 1 and 5 (rank 0 left at 25, last entered at 30)", s.violations, s.maxViolation)
	}
}

func TestInstanceSVG_RejectsEmptyInstance(t *testing.T) {
	if err := InstanceSVG(&bytes.Buffer{}, datamodel.Instance{OpName: "MPI_Barrier"}, nil, ""); err == nil {
		t.Fatal("no error for an instance without members")
	}
}
