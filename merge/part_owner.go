// The owner role of a partitioned pass (part.go): match the instances it
// owns with the serial matcher and send process 0 one record per
// finalised instance, tagged with its serial position.

package merge

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"

	"github.com/gclock/gclock/merge/datamodel"
)

// Record flags.
const (
	rfComplete = 1 << iota
	rfMismatch
	rfWindow
	rfLatency
	rfZero
	rfExit
	rfWorst
	rfOpRange
)

// partWorst is a candidate for the worst instances, with its call sites
// as (rank, pc) for process 0 to index.
type partWorst struct {
	Inst, Raw datamodel.Instance
	Sites     [2][3]partSite // [inst, raw][last, wait, cause]
}

type partSite struct {
	Ok   bool
	Rank int32
	PC   uint64
}

// partOwner is an owner's state.
type partOwner struct {
	a     *analyzer
	pl    *partPlan
	key   partKey
	out   []byte
	worst ownWorstHeap // local min-heap by entry skew (TopN): candidates for process 0's worst instances
	n     int          // records
	err   error
	// Call sites: the owner's own indices (siteIndexOf); each one is
	// defined to process 0 (rank, pc) in the message before its first use.
	xl      [][]int32 // by source: the decoder's site index -> the owner's
	defined []bool
	defs    []byte
	// Histograms are counts, order-free: the owner keeps them and sends
	// them at the end, process 0 adds them up.
	hists [256]partHists
}

// partHists are one op's histogram counts on an owner.
type partHists struct {
	used       bool
	exit, wait hist
}

// siteRef returns the owner's site index s (of world rank rank's pc),
// defining it to process 0 first if it is new.
func (o *partOwner) siteRef(s int32, rank int32, pc uint64) int32 {
	if s < 0 {
		return -1
	}
	for int(s) >= len(o.defined) {
		o.defined = append(o.defined, false)
	}
	if !o.defined[s] {
		o.defined[s] = true
		o.defs = binary.LittleEndian.AppendUint32(o.defs, uint32(s))
		o.defs = binary.LittleEndian.AppendUint32(o.defs, uint32(rank))
		o.defs = binary.LittleEndian.AppendUint64(o.defs, pc)
	}
	return s
}

// site maps a decoder's call-site index of ev (from source src) to the
// owner's.
func (o *partOwner) site(ev *datamodel.GEvent, src int) int32 {
	a := o.a
	for src >= len(o.xl) {
		o.xl = append(o.xl, nil)
	}
	x := o.xl[src]
	if ws := ev.Site; ws >= 0 && int(ws) < len(x) && x[ws] >= 0 {
		return x[ws]
	}
	rs := a.ranks[ev.Rank]
	if rs == nil {
		return -1
	}
	s := a.siteIndexOf(rs, ev.Callsite)
	if ws := ev.Site; ws >= 0 && ws < 1<<20 {
		for int(ws) >= len(x) {
			x = append(x, -1)
		}
		x[ws] = s
		o.xl[src] = x
	}
	return s
}

// emit computes the metrics of one finalised instance (finalize's
// computing half) and appends its record.
func (o *partOwner) emit(in *openInst) {
	a := o.a
	defer func() { in.comm.pool = append(in.comm.pool, in) }()
	cs := in.comm
	n := len(cs.members)
	fe, le, fx, lx, lastPos, ok := in.extent()
	if !ok {
		return
	}
	var flags uint16
	if in.opMismatch {
		flags |= rfMismatch
	}
	inWin := !(fe < a.wFrom || fe > a.wTo)
	if !inWin && flags == 0 {
		return
	}
	k := o.key
	k.comm, k.seq = cs.idx, in.seq
	b := appendKey(o.out, &k)
	flagAt := len(b)
	b = binary.LittleEndian.AppendUint16(b, flags)
	o.n++
	if !inWin {
		o.out = b
		return
	}
	flags |= rfWindow
	complete := in.got == n
	if complete {
		flags |= rfComplete
	}
	op := in.op
	b = binary.LittleEndian.AppendUint16(b, uint16(op))
	if int(op) >= len(a.ops) {
		flags |= rfOpRange
		binary.LittleEndian.PutUint16(b[flagAt:], flags)
		o.out = b
		return
	}
	exitProf := complete && op.Synchronizing() && n >= 2 && n <= MaxExitProfile
	cls := WaitClassOf(op)
	entrySkew, exitSkew := le-fe, lx-fx
	r := a.instWaits(in, false)
	latency := 0.0
	if cls.HasLatency() && r.synced {
		flags |= rfLatency
		latency = fx - le
		if complete {
			a.hbFacts(in)
		}
	}
	if r.zero {
		flags |= rfZero
	}
	if len(o.worst) < a.opt.TopN || entrySkew > o.worst[0].skew {
		worst := &partWorst{Inst: a.buildInstance(in, false), Raw: a.buildInstance(in, true)}
		c := ownWorst{skew: entrySkew, key: k, w: worst, instSkew: worst.Inst.EntrySkew}
		if len(o.worst) < a.opt.TopN {
			heap.Push(&o.worst, c)
		} else {
			o.worst[0] = c
			heap.Fix(&o.worst, 0)
		}
		for i, inst := range []*datamodel.Instance{&worst.Inst, &worst.Raw} {
			for p, w := range cs.members {
				if in.state[p] != stArrived {
					continue
				}
				s := partSite{Ok: true, Rank: w, PC: in.pc[p]}
				if w == inst.LastRank {
					worst.Sites[i][0] = s
				}
				if w == inst.MaxWaitRank {
					worst.Sites[i][1] = s
				}
				if w == inst.CauseRank {
					worst.Sites[i][2] = s
				}
			}
		}
		flags |= rfWorst
	}
	if exitProf {
		flags |= rfExit
	}
	binary.LittleEndian.PutUint16(b[flagAt:], flags)
	o.hists[op].used = true
	o.hists[op].exit.add(exitSkew)
	b = binary.LittleEndian.AppendUint32(b, uint32(in.got))
	b = binary.LittleEndian.AppendUint32(b, uint32(cs.members[lastPos]))
	for _, v := range []float64{entrySkew, exitSkew, latency, lx - fe, r.viol} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.pos)))
	for i, p := range r.pos {
		cr := int32(-1)
		if c := r.cause[i]; c >= 0 {
			cr = cs.members[r.pos[c]]
		}
		// world rank, causing rank + 1 and site + 1 (0: none) as varints,
		// wait and duration (19–22 bytes a member; 28 before)
		b = binary.AppendUvarint(b, uint64(uint32(cs.members[p])))
		b = binary.AppendUvarint(b, uint64(uint32(cr+1)))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.wait[i]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(in.exit[p]-in.enter[p]))
		b = binary.AppendUvarint(b, uint64(uint32(o.siteRef(in.site[p], cs.members[p], in.pc[p])+1)))
		o.hists[op].wait.add(r.wait[i])
	}
	if exitProf {
		for _, x := range in.exit {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x-fx))
		}
	}
	if flags&rfWorst != 0 {
		// the candidate's own entry skew, which process 0's heap of the
		// worst instances compares with (the instance follows at the end)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(o.worst.skewOf(k)))
	}
	o.out = b
}

// ownWorst is a candidate for the worst instances: its entry skew, its
// record's key, and the instance, which process 0 asks for at the end
// when the serial replay kept it (partFetchWorst).
type ownWorst struct {
	skew     float64
	key      partKey
	w        *partWorst
	instSkew float64 // w.Inst.EntrySkew
}

// skewOf is the instance entry skew of the candidate with key k (0 when
// it is none).
func (h ownWorstHeap) skewOf(k partKey) float64 {
	for _, c := range h {
		if c.key == k {
			return c.instSkew
		}
	}
	return 0
}

// ownWorstHeap is a min-heap of candidates by entry skew; the same
// operations on the same skews as the float heap it replaces, so it
// keeps the same candidates.
type ownWorstHeap []ownWorst

func (h ownWorstHeap) Len() int           { return len(h) }
func (h ownWorstHeap) Less(i, j int) bool { return h[i].skew < h[j].skew }
func (h ownWorstHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ownWorstHeap) Push(x any)        { *h = append(*h, x.(ownWorst)) }
func (h *ownWorstHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// serveWorst answers process 0's request for the worst instances it
// kept (a list of record keys) with those instances, gob-encoded in the
// request's order; a key no longer among the owner's candidates gets
// none (Ok false: process 0 then runs the pass again the event-shipping
// way, as when a record lacked its instance before).
func (o *partOwner) serveWorst(net *partNet, req []byte) error {
	r := recReader{b: req}
	var out []partWorstReply
	for r.i < len(r.b) {
		var k partKey
		r.readKey(&k)
		if r.bad {
			return errors.New("parallel analysis: bad request for the worst instances")
		}
		var rep partWorstReply
		for _, c := range o.worst {
			if c.key == k {
				rep = partWorstReply{Ok: true, W: *c.w}
				break
			}
		}
		out = append(out, rep)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(out); err != nil {
		return fmt.Errorf("parallel analysis: encoding the worst instances: %w", err)
	}
	return net.send(0, tagWorstRes, partHdr{kind: pkEnd}, nil, buf.Bytes())
}

// partWorstReply is one requested worst instance.
type partWorstReply struct {
	Ok bool
	W  partWorst
}

type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// siteIndexOf is siteOf without the rank's own cache (which its decoder
// owns): the shared site index of pc in rank rs's objects. The raw pc a
// site keeps (siteKey.pc, in the outputs) is the lowest rank's, whichever
// decoder got there first: the outputs do not depend on the goroutines'
// order.
func (a *analyzer) siteIndexOf(rs *rankState, pc uint64) int32 {
	k := siteKey{addr: pc, pc: pc}
	objs := rs.objs
	lo, hi := 0, len(objs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if objs[m].Hi > pc {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if i := lo; i < len(objs) && objs[i].Lo <= pc && pc < objs[i].Hi {
		k.obj = objs[i].Path
		k.addr = pc - objs[i].Base
	}
	lookup := siteKey{obj: k.obj, addr: k.addr}
	a.siteMu.Lock()
	defer a.siteMu.Unlock()
	s, ok := a.siteIndex[lookup]
	switch {
	case !ok:
		s = int32(len(a.sites))
		a.siteIndex[lookup] = s
		a.sites = append(a.sites, k)
		a.siteRank = append(a.siteRank, int32(rs.in.Rank))
	case int32(rs.in.Rank) < a.siteRank[s]:
		a.sites[s].pc, a.siteRank[s] = pc, int32(rs.in.Rank)
	}
	return s
}

// partOwn is an owner: it matches its instances and sends their records.
func (a *analyzer) partOwn(pl *partPlan, net *partNet, decs []int) error {
	o := &partOwner{a: a, pl: pl}
	var ps *P2PStream // the point-to-point analysis of this owner's ranks
	if pl.p2p {
		ps = newP2POwner(a.rn, pl.p2pOptions(), p2pOwners(pl, a.rn), net.me)
		if pl.p2pSync {
			ps.opt.OnSync = ps.part.sync
		}
	}
	a.m.fin = o.emit
	a.m.part = true
	for r, rs := range a.ranks {
		if rs == nil {
			a.m.endRank(int32(r))
		}
	}
	worstReq := net.listen(0, tagWorstReq)
	srcs := make([]*partSource, len(decs))
	for i, p := range decs {
		srcs[i] = &partSource{p: p, box: net.listen(p, tagData), done: -1}
	}
	last := int32(pl.rounds - 1)
	cs := make([]*evCursor, len(srcs))
	handle := func(ev *datamodel.GEvent, src int) error {
		if ev.Rank < 0 {
			r := -1 - ev.Rank
			o.key = partKey{mergeKey: mergeKey{enter: ev.Enter, rank: r, ord: uint64(ev.LocalEnter)}, sub: 1}
			a.m.endRank(r)
			return o.err
		}
		if ev.Op == opCallEnd { // a call-boundary marker (p2p_part.go)
			if ps == nil {
				return errors.New("parallel analysis: a call-boundary marker without point-to-point analysis")
			}
			ps.callEnd(ev)
			return nil
		}
		if ps != nil && (ev.Op.IsPointToPoint() || ev.Op.IsNonblockingCollective()) {
			ps.part.key.ord = getOrd(ev)
			return ps.Add(ev)
		}
		o.key = partKey{mergeKey: mergeKey{enter: ev.Enter, rank: ev.Rank, ord: uint64(ev.LocalEnter)}}
		if ev.CommIdx < 0 || int(ev.CommIdx) >= len(a.m.comms) || ev.CommRank < 0 ||
			int(ev.CommRank) >= len(a.m.comms[ev.CommIdx].members) {
			return fmt.Errorf("parallel analysis: an event on an unknown communicator")
		}
		if ev.Rank >= int32(len(a.ranks)) {
			return fmt.Errorf("parallel analysis: an event of rank %d of %d", ev.Rank, len(a.ranks))
		}
		ev.Site = o.site(ev, src)
		a.m.add(ev)
		return o.err
	}
	for r := int32(0); r <= last; r++ {
		for i, s := range srcs {
			if err := s.fill(r, last); err != nil {
				return err
			}
			cs[i] = &evCursor{segs: s.take(r)}
		}
		if err := mergeRound(cs, handle); err != nil {
			return err
		}
		for _, c := range cs {
			net.putSegs(c.segs)
		}
		if r == last {
			o.key = partKey{mergeKey: mergeKey{enter: math.Inf(1), rank: math.MaxInt32, ord: math.MaxUint64}, sub: 2}
			a.m.flush()
			if ps != nil {
				ps.endCalls()
			}
		}
		if o.err != nil {
			return o.err
		}
		// Every round, records or none: process 0 and the decoders wait
		// for it.
		out := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(o.defs)+len(o.out)), uint32(len(o.defs)/16))
		out = append(append(out, o.defs...), o.out...)
		o.out, o.defs = o.out[:0], o.defs[:0]
		if err := net.send(0, tagRes, partHdr{kind: pkRec, eos: r == last, round: r, done: r}, nil, out); err != nil {
			return err
		}
		if ps != nil {
			out := append([]byte(nil), ps.part.out...)
			ps.part.out = ps.part.out[:0]
			if err := net.send(0, tagP2PRes, partHdr{kind: pkRec, eos: r == last, round: r, done: r}, nil, out); err != nil {
				return err
			}
		}
		for _, p := range decs {
			if err := net.send(p, tagAckOwn, partHdr{kind: pkAck, eos: r == last, round: r, done: r}, nil, nil); err != nil {
				return err
			}
		}
	}
	end := partOwnEnd{Irregular: a.m.irregular, Records: o.n, MaxOpen: a.m.maxOpen}
	if ps != nil {
		end.P2P = ps.ownerEnd()
	}
	for op, h := range o.hists {
		if h.used {
			end.Hists = append(end.Hists, partHistEnd{Op: op, Exit: h.exit.counts[:], Wait: h.wait.counts[:]})
		}
	}
	for _, cells := range a.hb.cells {
		var cc []partCell
		for _, c := range cells {
			cc = append(cc, partCell{c.lo, c.hi, c.first, c.last, c.n})
		}
		end.Cells = append(end.Cells, cc)
	}
	b, err := gobBytes(&end)
	if err != nil {
		return err
	}
	if err := net.send(0, tagEndOwn, partHdr{kind: pkEnd}, nil, b); err != nil {
		return err
	}
	m, err := worstReq.get(-1)
	if err != nil {
		return err
	}
	return o.serveWorst(net, m.body)
}
