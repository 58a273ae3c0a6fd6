package merge

// Per-rank decoding: read chunks, correct timestamps, assign call sites.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// batchPool recycles per-rank event batches between decoders and merger.
type batch struct{ ev []datamodel.GEvent }

type pcSlot struct {
	pc   uint64
	site int32
	ok   bool
}

// maxBatch bounds the events of one batch handed from a decoder to the
// merger, so memory per rank stays ≈ the reader's chunk plus a few
// batches, whatever the chunk size.
const maxBatch = 2048

// batchSize is the batch length for a run of n ranks: maxBatch for up to
// 64 ranks, then smaller (at least 32 events) so that one batch of every
// rank together stays near 2^17 events (≈ 15 MB; a rank has up to four
// batches in flight). The floor was 128 before 2026-11-27 evening: at
// 10,000 ranks × 2,000 events the default run's peak RSS 1.66 GB against
// 1.06 GB at 32, same output and time within 4 %; at 16, 0.93–0.95 GB
// but 12–15 % slower (docs/explanation/tracemerge.md).
func batchSize(n int) int {
	return max(32, min(maxBatch, (1<<17)/max(n, 1)))
}

// pcCacheLen is the length of a rank's call-site cache (a power of two)
// in a run of n ranks: 256 up to 256 ranks, then smaller, at least 16, so
// that all ranks' caches together stay near 1.5 MB (at 16,384 ranks the
// 6 kB of 256 slots were 100 MB; a rank has a few call sites, and a miss
// costs one lookup in the rank's own map).
func pcCacheLen(n int) int {
	l := 256
	for l > 16 && l*n > 1<<16 {
		l /= 2
	}
	return l
}

// syncRanks is the number of ranks above which the serial analysis
// decodes a rank on the merge goroutine, when the rank's cursor needs its
// next batch, instead of in a goroutine per rank: at 16,384 ranks the
// goroutines' stacks were 128 MB and the batches in flight between them
// and the merge another 64 MB, and each batch cost two goroutine switches.
var syncRanks = 4096

// rawFree holds raw-event buffers between the pieces decoders convert.
var rawFree = make(chan []trace.Event, 64)

// testPiece, when > 0, makes every PieceSource be read in pieces of that
// many events (tests).
var testPiece int

// decState is one rank's decoder: its source, its order and the piece it
// holds. A decoder runs in its own goroutine (decode), or, with thousands
// of ranks, on the merge goroutine whenever the rank's cursor needs a
// batch (syncRanks).
type decState struct {
	a      *analyzer
	rs     *rankState
	d      *rankOrder
	raw    []trace.Event
	rest   []int64 // the earliest entry of raw[i:]
	empty  int
	hs     rundir.HorizonSource
	next   func(dst []trace.Event) ([]trace.Event, error)
	pooled bool
	ended  bool
	ready  []*batch // sync: batches sent and not yet taken, in order
	// spare: sync: the batch the cursor gave back, for the next step (a
	// field of the state the step touches anyway: the rank's channel of
	// free batches cost two channel operations on a cold channel a step)
	spare *batch
}

// newDecState prepares rank rs's decoder; with sync its batches queue in
// ready instead of going to rs.out.
func (a *analyzer) newDecState(rs *rankState, done <-chan struct{}, sync bool) *decState {
	st := &decState{a: a, rs: rs}
	st.d = &rankOrder{rs: rs, done: done, lastSent: math.Inf(-1), size: batchSize(len(a.rn.Ranks))}
	if sync {
		st.d.sync = st
	}
	// Above 64 ranks (smaller batches) a trace file is read in pieces of
	// one batch: every rank's decoder holds its unconverted events at
	// once, and a whole chunk each (590 KB, touched fresh for every rank)
	// cost more than decoding it (1024 ranks, 2026-11-25: docs/explanation/tracemerge.md).
	st.hs, _ = rs.in.Src.(rundir.HorizonSource)
	st.next = rs.in.Src.NextChunk
	if ps, ok := rs.in.Src.(rundir.PieceSource); ok && (st.d.size < maxBatch || testPiece > 0) {
		piece := st.d.size
		if testPiece > 0 {
			piece = testPiece
		}
		st.next = func(dst []trace.Event) ([]trace.Event, error) { return ps.NextEvents(dst, piece) }
	}
	// Pieces: a decoder needs its raw events only while it converts them,
	// so the buffers are shared (rawFree) instead of one per rank held
	// while the rank waits for the merge (37 MB at 16,384 ranks).
	st.pooled = st.d.size < maxBatch && testPiece == 0
	return st
}

// decode is one rank's decoder goroutine: read chunks, correct, batch.
func (a *analyzer) decode(rs *rankState, done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(rs.out)
	defer func() {
		if r := recover(); r != nil {
			rs.err = fmt.Errorf("reader failed: %v", r)
		}
	}()
	st := a.newDecState(rs, done, false)
	for st.step() {
	}
}

// syncStep is step on the merge goroutine: a panic of the reader ends the
// rank with an error, as in a decoder goroutine.
func (st *decState) syncStep() {
	defer func() {
		if r := recover(); r != nil {
			st.rs.err = fmt.Errorf("reader failed: %v", r)
			st.ended = true
		}
	}()
	if !st.step() {
		st.ended = true
	}
}

// step reads, corrects and hands on one piece (or chunk) of the rank's
// events; false when the rank's stream has ended or the analysis stopped.
func (st *decState) step() bool {
	a, rs, d := st.a, st.rs, st.d
	var err error
	if st.pooled && st.raw == nil {
		select {
		case st.raw = <-rawFree:
		default:
		}
	}
	st.raw, err = st.next(st.raw[:0])
	raw := st.raw
	if err != nil {
		if !errors.Is(err, io.EOF) {
			rs.err = err
		}
		if r, ok := rs.in.Src.(rundir.Releaser); ok {
			r.Release()
		}
		d.finish()
		return false
	}
	if len(raw) == 0 {
		if st.empty++; st.empty > 1<<20 {
			rs.err = errors.New("reader returns empty chunks without end")
			d.finish()
			return false
		}
		return true
	}
	st.empty = 0
	srcH, hok := int64(0), false
	if st.hs != nil {
		srcH, hok = st.hs.Horizon()
	}
	if hok { // the earliest entry of raw from each position on
		st.rest = slices.Grow(st.rest[:0], len(raw)+1)[:len(raw)+1]
		st.rest[len(raw)] = math.MaxInt64
		for i := len(raw) - 1; i >= 0; i-- {
			st.rest[i] = min(st.rest[i+1], raw[i].EnterNS)
		}
	}
	for off := 0; off < len(raw); off += d.size {
		end := min(off+d.size, len(raw))
		part := raw[off:end]
		b := d.newBatch()
		a.convert(rs, part, b)
		// What is still to come: the rest of raw and what the source
		// has not returned (its horizon).
		d.hasHorizon = hok
		if hok {
			d.horizon = rs.corr.Global(min(srcH, st.rest[end]))
		}
		if st.pooled && end == len(raw) {
			select {
			case rawFree <- raw[:0]:
			default:
			}
			st.raw = nil
		}
		if !d.add(b) {
			return false
		}
	}
	return true
}

// convert corrects one piece of a rank's raw events into b, sorted by
// global Enter.
func (a *analyzer) convert(rs *rankState, raw []trace.Event, b *batch) {
	if cap(b.ev) < len(raw) {
		b.ev = make([]datamodel.GEvent, len(raw))
	}
	b.ev = b.ev[:len(raw)]
	rank := int32(rs.in.Rank)
	corr := rs.corr
	cache := rs.pcCache
	sorted := true
	last := math.Inf(-1)
	for i := range raw {
		e := &raw[i]
		g := &b.ev[i]
		g.Rank = rank
		g.Op = e.Op
		g.Seq = e.Seq
		g.Root = e.Root
		g.Sent = e.Sent
		g.Recv = e.Recv
		g.LocalEnter = e.EnterNS
		g.LocalExit = e.ExitNS
		g.Callsite = e.Callsite
		g.Peer, g.Tag, g.Req = e.Peer, e.Tag, e.Req
		// pc cache in front of the per-rank map
		slot, hit := pcLookup(cache, e.Callsite)
		if !hit {
			slot.pc, slot.site, slot.ok = e.Callsite, a.siteOf(rs, e.Callsite), true
		}
		g.Site = slot.site
		g.RawEnter = corr.Raw(e.EnterNS)
		g.RawExit = corr.Raw(e.ExitNS)
		g.Enter = corr.Global(e.EnterNS)
		g.Exit = corr.Global(e.ExitNS)
		if e.ExitNS < e.EnterNS {
			rs.badTimes++
		}
		if int(e.Comm) < len(rs.commIdx) && rs.commIdx[e.Comm] >= 0 {
			g.CommIdx = rs.commIdx[e.Comm]
			g.CommRank = rs.commPos[e.Comm]
			g.CommID = a.m.comms[g.CommIdx].id
		} else {
			g.CommIdx = -1
			g.CommRank = -1
			g.CommID = 0
			if e.Op.IsCollective() {
				rs.unknown++
			}
		}
		if g.Enter < last {
			sorted = false
		}
		last = g.Enter
	}
	if !sorted {
		sort.SliceStable(b.ev, func(i, j int) bool { return b.ev[i].Enter < b.ev[j].Enter })
	}
}

// pcLookup finds pc in a rank's call-site cache (its length a power of
// two, at least 2): the slot that holds it and true, or the slot to fill
// and false. The cache is two-way: pc's pair of slots is chosen by a
// multiplicative hash of it, and a pc missing from both takes the
// first, its holder moving to the second. A direct-mapped cache by the pc's low bits
// gave two call sites 64 bytes apart (in 16 slots, as a rank has at
// 16,384 ranks) one slot, and a halo exchange's MPI_Irecv and
// MPI_Waitall evicted each other every step: a map lookup per event.
func pcLookup(cache []pcSlot, pc uint64) (*pcSlot, bool) {
	i := int((pc*0x9e3779b97f4a7c15)>>40) & (len(cache) - 1) &^ 1
	a, b := &cache[i], &cache[i+1]
	switch {
	case a.ok && a.pc == pc:
		return a, true
	case b.ok && b.pc == pc:
		return b, true
	case !a.ok:
		return a, false
	}
	*b = *a
	return a, false
}

// siteOf maps a pc of rank rs to a dense call-site index: (object, address
// inside the object), so ranks with different load bases (ASLR) share
// sites. Called from the rank's decoder goroutine: the per-rank cache is
// its own, the shared index is locked (misses are rare: one per distinct pc).
func (a *analyzer) siteOf(rs *rankState, pc uint64) int32 {
	if s, ok := rs.sites[pc]; ok {
		return s
	}
	s := a.siteIndexOf(rs, pc)
	rs.sites[pc] = s
	return s
}

// csAccFor returns the accumulator of (site, op).
func (a *analyzer) csAccFor(site int32, op trace.Op) *csAccum {
	for int(site) >= len(a.csAcc) {
		a.csAcc = append(a.csAcc, nil)
	}
	for _, ca := range a.csAcc[site] {
		if ca.op == op {
			return ca
		}
	}
	ca := &csAccum{site: site, op: op}
	a.csAcc[site] = append(a.csAcc[site], ca)
	return ca
}
