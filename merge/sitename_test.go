package merge

import (
	"fmt"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// shiftedSource moves one rank's call sites by delta, as if ASLR had
// loaded its executable at another base.
type shiftedSource struct {
	rundir.Source
	delta uint64
}

func (s shiftedSource) NextChunk(dst []trace.Event) ([]trace.Event, error) {
	out, err := s.Source.NextChunk(dst)
	for i := range out {
		out[i].Callsite += s.delta
	}
	return out, err
}

// Under ASLR the same executable sits at a different base on each rank, so
// the same absolute pc names different sites on different ranks. The
// exports must resolve each event's pc in its own rank's objects.
func TestSiteName_ResolvesPerRankUnderASLR(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 2, NodeSize: 1, Steps: 300, Seed: 71})
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	const delta = 0x800 // rank 1 loaded 2 KiB higher: its text overlaps rank 0's
	r1 := run.Ranks[1]
	objs := append([]trace.Object(nil), r1.Meta.Header.Objects...)
	for i := range objs {
		objs[i].Base += delta
		objs[i].Lo += delta
		objs[i].Hi += delta
	}
	r1.Meta.Header.Objects = objs
	r1.Src = shiftedSource{r1.Src, delta}
	base := run.Ranks[0].Meta.Header.Objects[0].Base

	var evs []datamodel.GEvent
	col := sinkFunc(func(ev *datamodel.GEvent) error { evs = append(evs, *ev); return nil })
	p, err := Prepare(run, Options{Sinks: []datamodel.Sink{col}})
	if err != nil {
		t.Fatal(err)
	}
	name, byPC := p.SiteName(), p.PCName()
	if _, err := p.Run(); err != nil {
		t.Fatal(err)
	}
	wrongBefore := 0
	for _, ev := range evs {
		pc := ev.Callsite
		if ev.Rank == 1 {
			pc -= delta
		}
		want := fmt.Sprintf("amg+%#x", pc-base)
		if got := name(ev.Rank, ev.Callsite); got != want {
			t.Fatalf("rank %d pc %#x: %q, want %q", ev.Rank, ev.Callsite, got, want)
		}
		if byPC(ev.Callsite) != want {
			wrongBefore++
		}
	}
	t.Logf("%d events; the pc-only lookup (lowest rank's objects) misnames %d of them", len(evs), wrongBefore)
	if wrongBefore == 0 {
		t.Errorf("the fixture does not exercise ASLR: pc-only lookup names every event right")
	}
}

type sinkFunc func(ev *datamodel.GEvent) error

func (f sinkFunc) Add(ev *datamodel.GEvent) error { return f(ev) }
