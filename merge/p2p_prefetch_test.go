package merge

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// TestRootCauseStream_PrefetchAndPipeAtManyRanksChangeNothing: from
// prefetchRanks ranks the root-cause stream asks for its point-to-point
// stream's chain of objects in stages, as that stream does alone (a
// default run drives the point-to-point stream through the root-cause
// stream, whose single Prefetch left the chain's later links cold), and
// from pipeRanks it runs that stream on a goroutine of its own
// (p2p_pipe.go). Neither changes anything: the same root-cause and
// point-to-point results as events added one by one on one goroutine
// without prefetches, on a halo run with waits.
func TestRootCauseStream_PrefetchAndPipeAtManyRanksChangeNothing(t *testing.T) {
	const ranks = prefetchRanks + 76
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: ranks, Steps: 6, Seed: 9, ChunkEvents: 64, Halo: true}); err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	pass, err := Prepare(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var c rcCapture
	pass.AddStreamSink(&c)
	if _, err := pass.Run(); err != nil {
		t.Fatal(err)
	}
	// the stream's own point-to-point matching, and the run's (a
	// default tracemerge run: messages kept for drawing, site names)
	siteName := pass.SiteName()
	result := func(deep, pipe, shared bool) []byte {
		old := pipeRanks
		defer func() { pipeRanks = old }()
		if !pipe {
			pipeRanks = 1 << 30
		}
		var opt RootCauseOptions
		if shared {
			opt.Stream = NewP2PStream(run, P2POptions{KeepMessages: 1 << 20, TopN: 10}, siteName)
		}
		rc := NewRootCauseStream(run, opt, siteName)
		if rc.piped() != pipe {
			t.Fatalf("piped %v at %d ranks, want %v", rc.piped(), ranks, pipe)
		}
		if deep {
			dp, ok := any(rc).(DeepPrefetcher)
			if !ok || !dp.PrefetchDeep() {
				t.Fatalf("the root-cause stream at %d ranks asks for no prefetch stages (DeepPrefetcher %v)", ranks, ok)
			}
		}
		for j := 0; j < len(c.evs); j += asyncBatch {
			b := c.evs[j:min(j+asyncBatch, len(c.evs))]
			if deep {
				err = addBatch(rc, rc, b)
			} else {
				for i := range b {
					if err = rc.Add(&b[i]); err != nil {
						break
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		res := rc.Result()
		if res == nil || res.TotalWaitNS <= 0 {
			t.Fatalf("no waits found in the halo run (%+v): the test needs some", res)
		}
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		pj, err := json.Marshal(rc.p2p.Result())
		if err != nil {
			t.Fatal(err)
		}
		return append(js, pj...)
	}
	for _, shared := range []bool{false, true} {
		plain, deep := result(false, false, shared), result(true, false, shared)
		if string(plain) != string(deep) {
			t.Errorf("shared stream %v: root-cause result with prefetch stages differs from the one without (%d vs %d bytes)", shared, len(deep), len(plain))
		}
		if piped := result(true, true, shared); string(plain) != string(piped) {
			t.Errorf("shared stream %v: root-cause result with the point-to-point stream on its own goroutine differs from the one on one goroutine (%d vs %d bytes)", shared, len(piped), len(plain))
		}
	}
}

// TestRootCauseStream_PipedP2PPanicIsTheBatchsError: a panic of the
// point-to-point stream on its own goroutine (p2p_pipe.go) neither
// crashes the process nor hangs the batch: it is the batch's error, as
// a panic on the AsyncSink's goroutine is.
func TestRootCauseStream_PipedP2PPanicIsTheBatchsError(t *testing.T) {
	const ranks = 64
	old := pipeRanks
	defer func() { pipeRanks = old }()
	pipeRanks = ranks
	run := &Run{WorldSize: ranks}
	for r := 0; r < ranks; r++ {
		run.Ranks = append(run.Ranks, &RankInput{Rank: r, Meta: &RankMeta{Header: trace.Header{Rank: r, WorldSize: ranks}}})
	}
	rc := NewRootCauseStream(run, RootCauseOptions{}, nil)
	if !rc.piped() {
		t.Fatalf("not piped at %d ranks with pipeRanks %d", ranks, pipeRanks)
	}
	evs := haloStream(ranks, 20)
	var errs int
	rc.p2p.opt.onMessage = func(src, dst int32, sendEnter, sendExit, recvEnter, recvExit float64) {
		panic("injected")
	}
	for off := 0; off < len(evs); off += asyncBatch {
		err := addBatch(rc, rc, evs[off:min(off+asyncBatch, len(evs))])
		if err != nil {
			if !strings.Contains(err.Error(), "point-to-point analysis failed: injected") {
				t.Fatalf("batch at %d: error %q does not name the panic", off, err)
			}
			errs++
		}
	}
	if errs == 0 {
		t.Fatal("no batch reported the point-to-point stream's panic")
	}
}
