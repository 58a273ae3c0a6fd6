package merge

import (
	"bytes"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// TestManyRanks_SameAnalysisWithEveryMemorySaving: what many ranks turn
// on to keep memory per rank small (pieces, shared raw buffers, a smaller
// call-site cache, batches sent without holding one back when the horizon
// allows, decoding on the merge goroutine) gives the analysis
// and point-to-point result of whole chunks byte for byte.
func TestManyRanks_SameAnalysisWithEveryMemorySaving(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 300, Steps: 40, Seed: 3, ChunkEvents: 64, Halo: true}); err != nil {
		t.Fatal(err)
	}
	whole := openWhole
	an1, p1 := analyseJSONOpen(t, dir, 1, Options{Clock: correct.ClockInterp}, whole)
	for _, sr := range []int{4096, 100} {
		t.Run(fmt.Sprintf("syncRanks=%d", sr), func(t *testing.T) {
			old := syncRanks
			syncRanks = sr
			defer func() { syncRanks = old }()
			an, p := analyseJSON(t, dir, 1, Options{Clock: correct.ClockInterp})
			if !bytes.Equal(an1, an) || !bytes.Equal(p1, p) {
				t.Errorf("analysis of 300 ranks in pieces differs from whole chunks (%d/%d vs %d/%d bytes)", len(an), len(p), len(an1), len(p1))
			}
		})
	}
}

// TestPcCacheLen_PowerOfTwoBoundedInTotal: the call-site cache of a rank
// is a power of two (it is indexed by a mask), 256 up to 256 ranks, never
// below 16, and all ranks' caches together stay near 2^16 slots.
func TestPcCacheLen_PowerOfTwoBoundedInTotal(t *testing.T) {
	for _, n := range []int{0, 1, 8, 256, 257, 1024, 4096, 16384, 1 << 20} {
		l := pcCacheLen(n)
		if l&(l-1) != 0 || l < 16 || l > 256 {
			t.Errorf("%d ranks: cache length %d, want a power of two in [16, 256]", n, l)
		}
		if n <= 256 && l != 256 {
			t.Errorf("%d ranks: cache length %d, want 256", n, l)
		}
		if n > 256 && l > 16 && l*n > 1<<16 {
			t.Errorf("%d ranks: %d slots in all, want at most 2^16 unless at the floor", n, l*n)
		}
	}
}

// TestP2PRankState_RequestTableActsAsAMap: a rank's open requests (a few
// inline, the rest in a map) behave as one map from request id to chain
// head, through thousands of random starts and completions with up to
// four times the inline slots open.
func TestP2PRankState_RequestTableActsAsAMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var rs p2pRankState
	want := map[uint32]*p2pPending{}
	for i := 0; i < 20000; i++ {
		req := uint32(rng.Intn(4 * pendInline))
		switch op := rng.Intn(3); {
		case op == 0 || len(want) < 2:
			p := &p2pPending{}
			rs.setPending(req, p)
			want[req] = p
		case op == 1:
			rs.setPending(req, nil)
			delete(want, req)
		}
		if got := rs.getPending(req); got != want[req] {
			t.Fatalf("step %d: request %d: got %p, want %p", i, req, got, want[req])
		}
		n := 0
		rs.eachPending(func(p *p2pPending) {
			n++
			found := false
			for _, q := range want {
				found = found || q == p
			}
			if !found {
				t.Fatalf("step %d: eachPending gave a request not open", i)
			}
		})
		if n != len(want) {
			t.Fatalf("step %d: eachPending gave %d requests, want %d", i, n, len(want))
		}
	}
}

// TestP2PStream_ManyOpenRequestsOnOneRank: a rank with more open requests
// than it keeps inline (its map then holds the rest) still has every
// message matched and completed, in order.
func TestP2PStream_ManyOpenRequestsOnOneRank(t *testing.T) {
	const n = 5 * pendInline
	e := func(op trace.Op, t0, t1 int64, peer, tag int32, sent, recv uint64, req uint32) trace.Event {
		return trace.Event{Op: op, EnterNS: t0, ExitNS: t1, Peer: peer, Tag: tag, Sent: sent, Recv: recv, Req: req, Root: -1}
	}
	var r0, r1 []trace.Event
	for i := 0; i < n; i++ {
		r0 = append(r0, e(trace.OpIrecv, int64(10+i), int64(11+i), 1, int32(i), 0, 8, uint32(100+i)))
		r1 = append(r1, e(trace.OpSend, int64(200+10*i), int64(205+10*i), 0, int32(i), 8, 0, 0))
	}
	for i := n - 1; i >= 0; i-- { // completed in reverse order
		r0 = append(r0, e(trace.OpWaitall, 1000, 2000, 1, int32(i), 0, 8, uint32(100+i)))
	}
	run, srcs := p2pRun(map[int][]trace.Event{0: r0, 1: r1})
	an, err := AnalyzeP2P(run, P2POptions{Clock: correct.ClockRaw, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if an.Messages != n || an.UnmatchedSends != 0 || an.UnmatchedRecvs != 0 || an.Uncompleted != 0 || an.Requests != n {
		t.Errorf("messages %d (want %d), unmatched %d/%d, uncompleted %d, requests %d (want %d)",
			an.Messages, n, an.UnmatchedSends, an.UnmatchedRecvs, an.Uncompleted, an.Requests, n)
	}
}
