package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRootCause_AttributionRingKeepsEveryNamedRecord stores attribution
// records as the analysis does (mostly for a rank's newest call, some
// for older calls still in its segment ring, some replacing a call's
// record) and checks that every segment in the ring reads back the
// record last stored for it, across the ring's wrap, its pads, its
// doublings and the 2^32 boundary of the records' names, and that the
// ring stays within a few times the records the segments name. With
// the slots for records of one entry (rcRank.one), such records live
// there, through the segment ring's doublings, beside the ring's.
func TestRootCause_AttributionRingKeepsEveryNamedRecord(t *testing.T) {
	type ringCase struct {
		name  string
		start uint64 // the ring's first absolute position
		older float64
		one   bool // with slots for records of one entry
	}
	cases := []ringCase{{"in order from 0", 0, 0, false}, {"out of order from 0", 0, 0.2, false}}
	for j := uint64(0); j < 12; j++ {
		cases = append(cases, ringCase{fmt.Sprintf("across the 2^32 names from 2^32-%d", 300-j), 1<<32 - 300 + j, 0.2, false})
	}
	for _, tc := range slices.Clone(cases) {
		tc.name += ", records of one entry in their slots"
		tc.one = true
		cases = append(cases, tc)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const hist = 64
			s := &RootCauseStream{hist: hist}
			r := &rcRank{segs: make([]rcSeg, 16), vecHead: tc.start, vecTail: tc.start}
			if tc.one {
				r.one = make([]rcEnt, 16)
			}
			inSlot := 0
			want := map[uint64]rcVec{} // by segment position
			rng := rand.New(rand.NewPCG(1, 2))
			maxRing := 0
			for step := 0; step < 20000; step++ {
				s.push(r, rcSeg{start: float64(step), dur: 1})
				seg := r.n - 1
				if rng.Float64() < tc.older { // an older call still in the ring
					seg = r.oldest() + rng.Uint64N(r.n-r.oldest())
				}
				if rng.Float64() < 0.3 {
					continue // a call without a wait
				}
				v := rcVec{other: rng.Float64()}
				for i, n := 0, rng.IntN(rcVecK+1); i < n; i++ {
					v.ent = append(v.ent, rcEnt{int64(rng.IntN(100)), rng.Float64()})
					v.total += v.ent[i].amt
				}
				v.total += v.other
				if rng.Float64() < 0.5 { // one cause, nothing else: the common record
					a := rng.Float64()
					v = rcVec{ent: []rcEnt{{int64(rng.IntN(100)), a}}, total: a}
				}
				r.vecStore(seg, &v)
				if g := r.seg(seg); g.res == rcResOne {
					if !tc.one {
						t.Fatalf("step %d: a record in a slot without slots", step)
					}
					inSlot++
				}
				want[seg] = rcVec{ent: slices.Clone(v.ent), other: v.other, total: v.total}
				maxRing = max(maxRing, len(r.vecs))
				if step%97 != 0 && step > 300 { // every step through the doublings
					continue
				}
				var got rcVec
				for p := r.oldest(); p < r.n; p++ {
					w, ok := want[p]
					g := r.seg(p)
					if !ok {
						if g.res != 0 {
							t.Fatalf("step %d: segment %d names a record, none stored", step, p)
						}
						continue
					}
					if g.res == 0 {
						t.Fatalf("step %d: segment %d lost its record", step, p)
					}
					r.vecLoad(g.res, p, &got)
					if got.other != w.other || got.total != w.total || !slices.Equal(got.ent, w.ent) {
						t.Fatalf("step %d: segment %d reads %+v, stored %+v", step, p, got, w)
					}
				}
				for p := range want {
					if p < r.oldest() {
						delete(want, p)
					}
				}
			}
			if tc.one && inSlot < 1000 {
				t.Errorf("%d records of one entry were kept in their slots, want most of the about 7,000", inSlot)
			}
			// at most rcVecK+2 entries per segment in the ring, times 4
			// (records that died out of order, pads, a power of two)
			if bound := 4 * (rcVecK + 2) * hist; maxRing > bound {
				t.Errorf("the ring grew to %d entries, want at most %d", maxRing, bound)
			}
		})
	}
}

// TestRootCause_RingRecordIsNeverNamedAsASlotRecord stores a record of
// no entries (the smallest a ring record can be) where the ring's head
// is at position 2^32 − 2, whose name would be rcResOne, and checks that
// the ring skips that position and the record reads back.
func TestRootCause_RingRecordIsNeverNamedAsASlotRecord(t *testing.T) {
	for _, one := range []bool{false, true} {
		r := &rcRank{segs: make([]rcSeg, 16), vecs: make([]rcEnt, 16), vecHead: 1<<32 - 2, vecTail: 1<<32 - 2}
		if one {
			r.one = make([]rcEnt, 16)
		}
		s := &RootCauseStream{hist: 16}
		s.push(r, rcSeg{dur: 1})
		v := rcVec{other: 0.5, total: 0.5}
		r.vecStore(0, &v)
		g := r.seg(0)
		if g.res == rcResOne || g.res == 0 {
			t.Fatalf("slots %v: the record is named %#x", one, g.res)
		}
		var got rcVec
		r.vecLoad(g.res, 0, &got)
		if got.other != 0.5 || got.total != 0.5 || len(got.ent) != 0 {
			t.Errorf("slots %v: the record reads %+v, stored %+v", one, got, v)
		}
	}
}
