package merge

// Tests of what a partitioned pass's processes hold and send (D58): buffers sized to the share, the worst instances fetched
// at the end, compact records, rounds, decoding on one core.

import (
	"bytes"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace/synth"
)

// TestPartFetchWorst_OnlyTheKeptInstancesCrossAndAMissingOneIsCounted:
// at the end of a partitioned pass process 0 asks each owner for the
// worst instances its replay kept; the owner answers with exactly those
// (from its own top-N candidates), an instance the owner no longer has is
// counted as missing (the pass then runs again the event-shipping way),
// and the fetched instances take the places of their entries.
func TestPartFetchWorst_OnlyTheKeptInstancesCrossAndAMissingOneIsCounted(t *testing.T) {
	key := func(enter float64, seq uint32) partKey {
		return partKey{mergeKey: mergeKey{enter: enter, rank: 3, ord: 7}, comm: 1, seq: seq}
	}
	inst := func(skew float64, seq uint32) *partWorst {
		return &partWorst{Inst: datamodel.Instance{Seq: seq, EntrySkew: skew, Ranks: []int32{0, 1}}, Raw: datamodel.Instance{Seq: seq, EntrySkew: skew + 1}}
	}
	for _, tc := range []struct {
		name        string
		kept        []partKey // process 0's worst entries, all of owner 1
		wantSeq     []uint32  // the instances they hold afterwards (0: still a placeholder)
		wantMissing int
	}{
		{"every kept instance is the owner's", []partKey{key(10, 2), key(30, 5)}, []uint32{2, 5}, 0},
		{"one the owner dropped", []partKey{key(10, 2), key(20, 4)}, []uint32{2, 0}, 1},
		{"none kept: an empty request", nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &tagNet{ch: map[[3]int]chan []byte{}}
			net0, net1 := newPartNet(&tagTransport{n, 0}, 0), newPartNet(&tagTransport{n, 1}, 1)
			defer net0.stopWatch()
			defer net1.stopWatch()
			pl := &partPlan{procs: 2, owner0: 1}
			// owner 1's candidates: seq 2 (skew 10) and 5 (skew 30); seq 4 was dropped
			o := &partOwner{}
			o.worst = ownWorstHeap{{skew: 10, key: key(10, 2), w: inst(10, 2)}, {skew: 30, key: key(30, 5), w: inst(30, 5)}}
			req := net1.listen(0, tagWorstReq)
			done := make(chan error, 1)
			go func() {
				m, err := req.get(-1)
				if err == nil {
					err = o.serveWorst(net1, m.body)
				}
				done <- err
			}()
			a := &analyzer{}
			for _, k := range tc.kept {
				a.worst = append(a.worst, worstEntry{inst: datamodel.Instance{EntrySkew: k.enter}, ref: &partWorstRef{q: 0, key: k}})
			}
			net0.listen(1, tagWorstRes)
			p := &partReplay{a: a}
			if err := p.fetchWorst(pl, net0); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if p.missing != tc.wantMissing {
				t.Errorf("%d missing, want %d", p.missing, tc.wantMissing)
			}
			for i, w := range a.worst {
				if got := w.inst.Seq; got != tc.wantSeq[i] {
					t.Errorf("entry %d holds instance %d, want %d", i, got, tc.wantSeq[i])
				}
				if tc.wantSeq[i] != 0 && (w.ref != nil || w.raw.EntrySkew != w.inst.EntrySkew+1 || len(w.inst.Ranks) != 2) {
					t.Errorf("entry %d: not the owner's instance: %+v", i, w)
				}
			}
		})
	}
}

// TestPartNet_ReceiveBufferIsSizedToTheMessage: a received event message
// takes a buffer of its own size (or a pooled one), never a fresh one of
// partChunk events: a worker receives many small messages, and 2 MB per
// message was most of a K=8 worker's heap.
func TestPartNet_ReceiveBufferIsSizedToTheMessage(t *testing.T) {
	for _, events := range []int{1, 10, partChunk} {
		n := &tagNet{ch: map[[3]int]chan []byte{}}
		net0, net1 := newPartNet(&tagTransport{n, 0}, 0), newPartNet(&tagTransport{n, 1}, 1)
		box := net0.listen(1, tagData)
		if _, err := net1.sendEv(0, tagData, partHdr{kind: pkEv, eos: true}, make([]datamodel.GEvent, events)); err != nil {
			t.Fatal(err)
		}
		m, err := box.get(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.ev) != events || cap(m.ev) != events {
			t.Errorf("%d events received into a buffer of length %d, capacity %d", events, len(m.ev), cap(m.ev))
		}
		net0.stopWatch()
		net1.stopWatch()
	}
}

// TestP2PRecord_KeyAndSiteRoundTripAndATruncatedOneIsBad: a point-to-point
// record's key and call-site fields (varints since the records were made
// smaller) read back as written, extreme values included, and every
// truncation of the record reads as bad, never as a panic.
func TestP2PRecord_KeyAndSiteRoundTripAndATruncatedOneIsBad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   p2pRecKey
		rank  int32
		pc    uint64
		calls int
		polls uint64
	}{
		{"small", p2pRecKey{mergeKey: mergeKey{enter: 1.5, rank: 3, ord: 7}, phase: 1}, 3, 0x401000, 1, 0},
		{"extremes", p2pRecKey{mergeKey: mergeKey{enter: -2e18, rank: -1, ord: 1<<64 - 1}}, 1<<31 - 1, 1<<64 - 1, 1<<31 - 1, 1<<64 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &p2pOwner{key: tc.key}
			o.site(tc.rank, tc.pc, 77, tc.calls, tc.polls, 12.25)
			rec := o.out
			r := recReader{b: rec}
			var k p2pRecKey
			r.readP2PKey(&k)
			if kind := r.u8(); kind != prSite {
				t.Fatalf("kind %d, want %d", kind, prSite)
			}
			rank, pc, op, calls, polls, d := int32(uint32(r.uvarint())), r.uvarint(), r.uvarint(), int(uint32(r.uvarint())), r.uvarint(), r.f64()
			want := tc.key
			if r.bad || r.i != len(rec) || k != want || rank != tc.rank || pc != tc.pc || op != 77 || calls != tc.calls || polls != tc.polls || d != 12.25 {
				t.Errorf("read back key %+v, site %d %#x %d %d %d %g (bad %v, %d of %d bytes); wrote key %+v", k, rank, pc, op, calls, polls, d, r.bad, r.i, len(rec), want)
			}
			for n := 0; n < len(rec); n++ {
				r := recReader{b: rec[:n]}
				r.readP2PKey(&k)
				r.u8()
				r.uvarint()
				r.uvarint()
				r.uvarint()
				r.uvarint()
				r.uvarint()
				r.f64()
				if !r.bad {
					t.Errorf("the record cut to %d of %d bytes reads as good", n, len(rec))
				}
			}
		})
	}
}

// TestPartRoundSize_AProcessHoldsTheSameInFlightWhateverK: up to 8
// processes a round is partRoundEvents events of the run; beyond, it
// grows with the processes, so a process's share of a round (what it
// holds in flight) does not shrink below partRoundEvents/8 and the
// rounds get fewer.
func TestPartRoundSize_AProcessHoldsTheSameInFlightWhateverK(t *testing.T) {
	for _, tc := range []struct {
		procs int
		want  int64
	}{{2, partRoundEvents}, {8, partRoundEvents}, {15, partRoundEvents}, {16, 2 * partRoundEvents}, {1024, 128 * partRoundEvents}} {
		if got := partRoundSize(tc.procs); got != tc.want {
			t.Errorf("%d processes: rounds of %d events, want %d", tc.procs, got, tc.want)
		}
		if tc.procs >= 8 && partRoundSize(tc.procs)/int64(tc.procs) < partRoundEvents/16 {
			t.Errorf("%d processes: a process's share of a round is %d events", tc.procs, partRoundSize(tc.procs)/int64(tc.procs))
		}
	}
}

// TestPartitionIdentical_OneCoreDecodesOnTheMergeGoroutine: with
// GOMAXPROCS=1 (how an oversubscribed job's processes run) a decoder
// decodes its ranks on its merge goroutine instead of one goroutine per
// rank; the partitioned and the event-shipping passes still give the
// serial analysis byte for byte, damaged input included.
func TestPartitionIdentical_OneCoreDecodesOnTheMergeGoroutine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	mix := filepath.Join(t.TempDir(), "mix")
	if _, err := synth.Generate(mix, synth.Config{Ranks: 9, Steps: 800, Seed: 3, ChunkEvents: 256, Halo: true, HaloMix: true,
		SplitGroups: 2, Slowdown: map[int]float64{4: 1.8}}); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged")
	if _, err := synth.Generate(damaged, synth.Config{Ranks: 6, Steps: 1500, Seed: 9, ChunkEvents: 256,
		CorruptChunks: []synth.ChunkRef{{Rank: 2, Chunk: 3}}, MissingRanks: []int{4}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dir   string
		parts bool
	}{{"mix", mix, true}, {"damaged", damaged, false}} {
		opt := Options{Clock: correct.ClockInterp, TopN: 3}
		an1, p1, _ := partAnalyse(t, tc.dir, 1, 0, opt)
		for _, k := range []int{2, 4} {
			ank, pk, parted := partAnalyse(t, tc.dir, k, 0, opt)
			if parted != tc.parts {
				t.Errorf("%s, %d processes: partitioned pass kept: %v, want %v", tc.name, k, parted, tc.parts)
			}
			if !bytes.Equal(an1, ank) || !bytes.Equal(p1, pk) {
				t.Errorf("%s, %d processes: results differ from the serial ones\n%s\n%s", tc.name, k, firstDiff(an1, ank), firstDiff(p1, pk))
			}
		}
	}
}

// TestPartOwnChunk_ADecodersBuffersToTheOwnersKeepBoundedRoomWhateverK:
// the room a decoder keeps in its buffers to the owners together stays
// about partHeld events (at most partChunk/8 a buffer beyond it) for any
// number of owners, and a message to an owner never exceeds partChunk.
func TestPartOwnChunk_ADecodersBuffersToTheOwnersKeepBoundedRoomWhateverK(t *testing.T) {
	for _, owners := range []int{1, 2, 3, 4, 7, 15, 63, 255, 1023} {
		c := partOwnChunk(owners)
		if c < 1 || c > partChunk {
			t.Errorf("%d owners: messages of %d events, want 1..%d", owners, c, partChunk)
		}
		if room := owners * c; room > max(partHeld, owners*(partChunk/8)) {
			t.Errorf("%d owners: room for %d events in the buffers together, want ≤ %d", owners, room, max(partHeld, owners*(partChunk/8)))
		}
		if owners <= partHeld/partChunk && c != partChunk {
			t.Errorf("%d owners: messages of %d events, want partChunk (%d): few owners keep D58's message size", owners, c, partChunk)
		}
	}
}
