package merge

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// stepSync is a wait state (OnSync) with the step of the serial order it
// was found at: the event's enter time, rank and ordinal in its rank
// (1-based, as the decoders count; +Inf, the waiting rank and the
// largest ordinal for those found at the end of the run).
type stepSync struct {
	enter float64
	rank  int32
	ord   uint64
	y     P2PSync
}

func (x stepSync) String() string {
	return fmt.Sprintf("step (%g, rank %d, #%d): %+v", x.enter, x.rank, x.ord, x.y)
}

// rcSteps wraps the root-cause stream of a serial pass and names the step
// of every event it takes, for the wait states its point-to-point stream
// reports (serialSyncs).
type rcSteps struct {
	rc     *RootCauseStream
	ord    []uint64
	at     stepSync
	p2p    bool // the event being added is point-to-point
	ended  bool // the events are done: the steps of the run's end
	syncs  []stepSync
	atCall int // wait states found at a call that is not point-to-point
}

func (w *rcSteps) Add(e *datamodel.GEvent) error {
	if e.Rank >= 0 {
		for int(e.Rank) >= len(w.ord) {
			w.ord = append(w.ord, 0)
		}
		w.ord[e.Rank]++
		w.at = stepSync{enter: e.Enter, rank: e.Rank, ord: w.ord[e.Rank]}
		w.p2p = e.Op.IsPointToPoint() || e.Op.IsNonblockingCollective()
	}
	return w.rc.Add(e)
}

// serialSyncs runs the serial pass of dir with the root-cause stream
// driving the point-to-point one, as tracemerge does by default, and
// returns the wait states that stream reported with their steps (those of
// its result's end included), and how many were found at a call that is
// not point-to-point.
func serialSyncs(t *testing.T, dir string, opt Options) ([]stepSync, int) {
	t.Helper()
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	pass, err := Prepare(run, opt)
	if err != nil {
		t.Fatal(err)
	}
	ps := NewP2PStream(run, P2POptions{}, pass.SiteName())
	w := &rcSteps{rc: NewRootCauseStream(run, RootCauseOptions{TopN: 10, Stream: ps}, pass.SiteName())}
	inner := ps.opt.OnSync
	ps.opt.OnSync = func(y P2PSync) {
		at := w.at
		if w.ended {
			at = stepSync{enter: math.Inf(1), rank: y.Waiter, ord: math.MaxUint64}
		} else if !w.p2p {
			w.atCall++
		}
		at.y = y
		w.syncs = append(w.syncs, at)
		inner(y)
	}
	pass.AddStreamSink(w)
	if _, err := pass.Run(); err != nil {
		t.Fatal(err)
	}
	w.ended = true
	ps.Result()
	return w.syncs, w.atCall
}

// partSyncs runs dir's analysis on k in-process processes, the
// point-to-point analysis partitioned (no root-cause stream on process
// 0) with an OnSync on process 0's stream, and returns the wait states
// process 0 replayed from the owners with their steps, and whether the
// partitioned pass was kept.
func partSyncs(t *testing.T, dir string, k int, share0 float64, opt Options) ([]stepSync, bool) {
	t.Helper()
	n := &tagNet{ch: map[[3]int]chan []byte{}}
	wait := startPartWorkers(n, dir, k, opt)
	d := &Dist{Procs: k, Me: 0, T: &tagTransport{n, 0}, Share0: share0, Partition: true}
	var syncs []stepSync
	for {
		syncs = syncs[:0]
		run, err := rundir.Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		pass, err := Prepare(run, opt)
		if err != nil {
			t.Fatal(err)
		}
		pass.SetDist(d)
		var ps *P2PStream
		ps = NewP2PStream(run, P2POptions{OnSync: func(y P2PSync) {
			k := ps.replayKey
			syncs = append(syncs, stepSync{enter: k.enter, rank: k.rank, ord: k.ord, y: y})
		}}, pass.SiteName())
		as := NewAsyncSink(ps)
		pass.AddStreamSink(as)
		_, err = pass.Run()
		if cerr := as.Close(); cerr != nil && err == nil {
			err = cerr
		}
		run.Close()
		if errors.Is(err, ErrPartitionRerun) {
			d.Partition = false
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ps.ownerEnds == 0 {
			t.Fatalf("the point-to-point analysis was not partitioned")
		}
		ps.Result() // the wait states of the run's end
		break
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wait(t)
	return syncs, d.Partition
}

// TestPartition_OwnersFindWaitStatesAtTheSerialStep: the point-to-point
// owners of a partitioned pass (K = 2, 3 and 4 in process, process 0's
// share none or all, small rounds) report exactly the wait states the
// serial root-cause stream's point-to-point stream reports, in the same
// order and each at the same step of the serial order (event enter time,
// rank, ordinal in the rank). The serial stream ends a rank's completion
// call at the rank's next call of any kind, so on these traces most Late
// Sender waits are found at a collective, which an owner sees only
// through the decoders' call-boundary markers (decision D83): the test
// checks that the serial run has such wait states, and fails without the
// markers. The traces: the identity test's propagated delay through a
// halo ring, its halo run, and every form of halo exchange
// (TestPartitionIdentical's mixed run: wildcard receives, synchronous
// sends, persistent requests, a nonblocking collective in the Waitall).
func TestPartition_OwnersFindWaitStatesAtTheSerialStep(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  synth.Config
	}{
		{"propagated", synth.Config{Ranks: 12, Steps: 1200, Seed: 11, ChunkEvents: 256, Halo: true,
			SplitGroups: 2, PatternLen: 4, NoImbalance: true, JitterNS: 20, Slowdown: map[int]float64{5: 2}}},
		{"halo", synth.Config{Ranks: 16, Steps: 800, Seed: 7, ChunkEvents: 512, Halo: true}},
		{"mix", synth.Config{Ranks: 11, Steps: 2000, Seed: 3, ChunkEvents: 256, Halo: true, HaloMix: true,
			SplitGroups: 2, Slowdown: map[int]float64{4: 1.8}}},
	} {
		dir := filepath.Join(tmp, tc.name)
		if _, err := synth.Generate(dir, tc.cfg); err != nil {
			t.Fatal(err)
		}
		opt := Options{Clock: correct.ClockInterp, TopN: 5}
		want, atCall := serialSyncs(t, dir, opt)
		if len(want) == 0 || atCall == 0 {
			t.Fatalf("%s: %d wait states serially, %d of them at a call that is not point-to-point: the trace does not cover the markers",
				tc.name, len(want), atCall)
		}
		t.Logf("%s: %d wait states, %d found at a call that is not point-to-point", tc.name, len(want), atCall)
		for _, k := range []struct {
			k      int
			share  float64
			rounds int64
		}{{2, 0, 0}, {3, 0, 1500}, {3, 1, 1500}, {4, 0, 1500}} {
			t.Run(fmt.Sprintf("%s-k%d-share%g-rounds%d", tc.name, k.k, k.share, k.rounds), func(t *testing.T) {
				defer func(n int64) { partRoundEvents = n }(partRoundEvents)
				if k.rounds > 0 {
					partRoundEvents = k.rounds
				}
				got, parted := partSyncs(t, dir, k.k, k.share, opt)
				if !parted {
					t.Fatalf("the partitioned pass was not kept")
				}
				for i := 0; i < min(len(got), len(want)); i++ {
					if got[i] != want[i] {
						t.Fatalf("wait state %d of %d (owners) / %d (serial) differs:\nowners %v\nserial %v", i, len(got), len(want), got[i], want[i])
					}
				}
				if len(got) != len(want) {
					t.Fatalf("the owners found %d wait states, the serial stream %d", len(got), len(want))
				}
			})
		}
	}
}
