// Process 0 in a partitioned pass (part.go): merge the owners' records by
// their serial position and replay the order-dependent aggregation, so the
// summary outputs are byte for byte the serial ones.

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
	"github.com/gclock/gclock/trace"
)

// recReader decodes records with bounds checks (a bad message is an
// error, never a panic).
type recReader struct {
	b   []byte
	i   int
	bad bool
}

func (r *recReader) need(n int) bool {
	if r.bad || n < 0 || r.i+n > len(r.b) {
		r.bad = true
		return false
	}
	return true
}

func (r *recReader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *recReader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	r.i += 2
	return binary.LittleEndian.Uint16(r.b[r.i-2:])
}

func (r *recReader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	r.i += 4
	return binary.LittleEndian.Uint32(r.b[r.i-4:])
}

func (r *recReader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	r.i += 8
	return binary.LittleEndian.Uint64(r.b[r.i-8:])
}

func (r *recReader) f64() float64 { return math.Float64frombits(r.u64()) }

// uvarint reads an unsigned varint (binary.AppendUvarint).
func (r *recReader) uvarint() uint64 {
	if r.bad || r.i > len(r.b) {
		r.bad = true
		return 0
	}
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.i += n
	return v
}

// readKey reads a record's key at r.i.
func (r *recReader) readKey(k *partKey) {
	k.enter = r.f64()
	k.rank = int32(r.u32())
	k.sub = r.u8()
	k.ord = r.u64()
	k.comm = int32(r.u32())
	k.seq = r.u32()
}

// partReplay is process 0's replay of the records (the aggregating half
// of finalize, in the serial order).
type partReplay struct {
	a *analyzer
	// sites: by rank, the (pc, site index) pairs seen, most recent first
	// (a rank has few call sites of collectives: a short scan, no hash).
	sites   [][]pcSlot
	present []bool       // by rank: has a rank file
	wait    []rankWait   // by rank: dense (the rank states are large), into a.ranks at the end
	missing int          // worst candidates without their instance
	ms      []partMember // scratch
	tab     []int32      // the current record's owner's site table
	q       int          // the current record's owner (index from owner0)
	key     partKey      // the current record's key
}

// partWorstRef names a worst instance that process 0's replay kept: its
// owner (index from owner0) and its record's key. The instances are
// fetched at the end (partFetchWorst): an owner keeps its own top-N
// candidates, a superset of those of the global top-N that it finalised,
// and sending every candidate as it entered the owner's top-N was 6.0 of
// the 17.3 MB process 0 received on a K=8 run of 1024 ranks (85 of 137
// instances, 71 kB each).
type partWorstRef struct {
	q   int
	key partKey
}

// partMemberMin is the smallest member part of an instance record (three
// one-byte varints and two float64s: part_owner.go emit).
const partMemberMin = 19

// partMember is one member's part of an instance record.
type partMember struct {
	wr, cr int32 // world rank, causing world rank (-1: none)
	w, d   float64
	site   int32 // the owner's call-site index (partReplay.xlate)
}

func newPartReplay(a *analyzer) *partReplay {
	p := &partReplay{a: a, sites: make([][]pcSlot, len(a.ranks)), present: make([]bool, len(a.ranks)),
		wait: make([]rankWait, len(a.ranks))}
	for r, rs := range a.ranks {
		p.present[r] = rs != nil
	}
	return p
}

// done moves the per-rank waits into the rank states.
func (p *partReplay) done() {
	for r, rs := range p.a.ranks {
		if rs != nil {
			rs.wait = p.wait[r]
		}
	}
}

// xlate maps the current owner's site index to process 0's (-1: none).
func (p *partReplay) xlate(s int32) int32 {
	if s < 0 || int(s) >= len(p.tab) {
		return -1
	}
	return p.tab[s]
}

// defineSites reads the site definitions heading an owner's message
// into the owner's table.
func (p *partReplay) defineSites(tab []int32, r *recReader) ([]int32, bool) {
	n := int(r.u32())
	if n > 1<<24 || !r.need(16*n) {
		return tab, false
	}
	for i := 0; i < n; i++ {
		s, rank, pc := int32(r.u32()), int32(r.u32()), r.u64()
		if s < 0 || s >= 1<<24 {
			return tab, false
		}
		for int(s) >= len(tab) {
			tab = append(tab, -1)
		}
		tab[s] = p.site(rank, pc)
	}
	return tab, !r.bad
}

func (p *partReplay) site(rank int32, pc uint64) int32 {
	a := p.a
	if rank < 0 || int(rank) >= len(a.ranks) || a.ranks[rank] == nil {
		return -1
	}
	l := p.sites[rank]
	for i := range l {
		if l[i].pc == pc {
			if i > 0 {
				l[0], l[i] = l[i], l[0]
			}
			return l[0].site
		}
	}
	s := a.siteIndexOf(a.ranks[rank], pc)
	p.sites[rank] = append([]pcSlot{{pc: pc, site: s, ok: true}}, l...)
	return s
}

// apply replays one record (r at its flags); false on a bad record.
func (p *partReplay) apply(r *recReader, comm int32, flags uint16) bool {
	a := p.a
	if flags&rfMismatch != 0 {
		a.opMism++
	}
	if flags&rfWindow == 0 {
		return !r.bad
	}
	if comm < 0 || int(comm) >= len(a.m.comms) {
		return false
	}
	cs := a.m.comms[comm]
	a.instances++
	complete := flags&rfComplete != 0
	if !complete {
		a.incomp++
	}
	op := trace.Op(r.u16())
	if flags&rfOpRange != 0 {
		return !r.bad
	}
	if int(op) >= len(a.ops) {
		return false
	}
	got := int(r.u32())
	lastRank := int32(r.u32())
	entrySkew, exitSkew, latency, span, v := r.f64(), r.f64(), r.f64(), r.f64(), r.f64()
	m := int(r.u32())
	if r.bad || m > len(cs.members) || partMemberMin*m > len(r.b)-r.i {
		return false
	}
	ms := p.ms[:0]
	for i := 0; i < m; i++ {
		wr, cr := int32(uint32(r.uvarint())), int32(uint32(r.uvarint()))-1
		w, d := r.f64(), r.f64()
		ms = append(ms, partMember{wr, cr, w, d, int32(uint32(r.uvarint())) - 1})
	}
	p.ms = ms
	if flags&rfExit != 0 {
		acc := a.exitAccOf(op, cs)
		n := len(cs.members)
		acc.n++
		for q := 0; q < n; q++ {
			d := r.f64()
			acc.sum[q] += d
			acc.sumsq[q] += d * d
		}
	}
	instSkew := 0.0
	if flags&rfWorst != 0 {
		instSkew = r.f64()
	}
	if r.bad {
		return false
	}
	for _, x := range ms {
		if x.wr < 0 || int(x.wr) >= len(p.present) || !p.present[x.wr] || x.cr >= int32(len(p.present)) ||
			(x.cr >= 0 && !p.present[x.cr]) {
			return false
		}
	}
	if lastRank < 0 || int(lastRank) >= len(p.present) || !p.present[lastRank] {
		return false
	}
	oa := a.countInstance(op, got, entrySkew, exitSkew, v)
	if flags&rfLatency != 0 {
		oa.latency.add(latency)
	}
	if flags&rfZero != 0 {
		oa.zeroByte++
	}
	oa.span.add(span)
	// histExit and histWait: the owners' counts, added at the end
	if got >= 2 {
		p.wait[lastRank].last++
	}
	var causedBy []int32
	for _, x := range ms {
		w, d, wr := x.w, x.d, x.wr
		oa.total += d
		oa.wait.add(w)
		p.wait[wr].wait += w
		if cr := x.cr; cr >= 0 && w > 0 {
			p.wait[cr].lateness += w
			seen := false
			for _, r := range causedBy {
				seen = seen || r == cr
			}
			if !seen {
				causedBy = append(causedBy, cr)
				p.wait[cr].caused++
			}
			if a.pair != nil {
				a.pair.add(cr, wr, w)
			}
		}
		if site := p.xlate(x.site); site >= 0 {
			ca := a.csAccFor(site, op)
			ca.calls++
			ca.total += d
			ca.wait.add(w)
		}
	}
	if len(a.worst) < a.opt.TopN || entrySkew > a.worst[0].inst.EntrySkew {
		if flags&rfWorst == 0 {
			p.missing++
			return true
		}
		w := worstEntry{inst: datamodel.Instance{EntrySkew: instSkew}, ref: &partWorstRef{q: p.q, key: p.key}}
		if len(a.worst) < a.opt.TopN {
			heap.Push(&a.worst, w)
		} else {
			a.worst[0] = w
			heap.Fix(&a.worst, 0)
		}
	}
	return true
}

// partZero is process 0's consumer: stream sinks and the replay.
func (a *analyzer) partZero(pl *partPlan, net *partNet, decs []int) error {
	var ssrc, rsrc []*partSource
	for _, p := range decs {
		ssrc = append(ssrc, &partSource{p: p, box: net.listen(p, tagStream), done: -1})
	}
	var psrc []*partSource // point-to-point records (p2p_part.go)
	for q := pl.owner0; q < pl.procs; q++ {
		rsrc = append(rsrc, &partSource{p: q, box: net.listen(q, tagRes), done: -1})
		if pl.p2p {
			psrc = append(psrc, &partSource{p: q, box: net.listen(q, tagP2PRes), done: -1})
		}
	}
	rp := newPartReplay(a)
	defer rp.done()
	last := int32(pl.rounds - 1)
	cs := make([]*evCursor, len(ssrc))
	type recCur struct {
		q    int // owner index (rsrc)
		segs []partMsg
		si   int
		r    recReader
		key  partKey
	}
	tabs := make([][]int32, len(rsrc)) // per owner: its site index -> process 0's
	// next loads the cursor's next record key; false at the end.
	next := func(c *recCur) (bool, error) {
		for {
			if c.r.b != nil && c.r.i < len(c.r.b) {
				c.r.readKey(&c.key)
				if c.r.bad {
					return false, errors.New("parallel analysis: bad instance record")
				}
				return true, nil
			}
			if c.si >= len(c.segs) {
				return false, nil
			}
			c.r = recReader{b: c.segs[c.si].body}
			c.si++
			var ok bool
			if tabs[c.q], ok = rp.defineSites(tabs[c.q], &c.r); !ok {
				return false, errors.New("parallel analysis: bad call-site definitions")
			}
		}
	}
	var sinks []datamodel.Sink
	for _, s := range a.opt.StreamSinks {
		if !pl.p2p || asP2PStream(s) != a.p2pTarget {
			sinks = append(sinks, s)
		}
	}
	var n int64
	for r := int32(0); r <= last; r++ {
		// The owners' point-to-point records first: a fed root-cause
		// stream takes the round's wait states with the round's events
		// (p2p_pipe.go).
		if pl.p2p {
			if err := a.replayP2P(psrc, r, last); err != nil {
				return err
			}
		}
		for i, s := range ssrc {
			if err := s.fill(r, last); err != nil {
				return err
			}
			segs := s.take(r)
			for j := range segs {
				if m := &segs[j]; m.kind == pkEvC {
					var err error
					buf := net.getBuf()
					if cap(buf) == 0 {
						buf = make([]datamodel.GEvent, 0, partChunkStream)
					}
					if m.ev, err = decodeCompact(m.body, buf); err != nil {
						return err
					}
					m.body = nil
				}
			}
			cs[i] = &evCursor{segs: segs}
		}
		if err := mergeRound(cs, func(ev *datamodel.GEvent, _ int) error {
			n++
			for _, s := range sinks {
				if err := s.Add(ev); err != nil {
					return fmt.Errorf("point-to-point pass: %w", err)
				}
			}
			return nil
		}); err != nil {
			return err
		}
		for _, c := range cs {
			net.putSegs(c.segs)
		}
		var rcs []*recCur
		for q, s := range rsrc {
			if err := s.fill(r, last); err != nil {
				return err
			}
			c := &recCur{q: q, segs: s.take(r)}
			ok, err := next(c)
			if err != nil {
				return err
			}
			if ok {
				rcs = append(rcs, c)
			}
		}
		for len(rcs) > 0 {
			bi := 0
			for i := 1; i < len(rcs); i++ {
				if keyLess(&rcs[i].key, &rcs[bi].key) {
					bi = i
				}
			}
			c := rcs[bi]
			flags := c.r.u16()
			rp.tab, rp.q, rp.key = tabs[c.q], c.q, c.key
			if !rp.apply(&c.r, c.key.comm, flags) {
				return errors.New("parallel analysis: bad instance record")
			}
			ok, err := next(c)
			if err != nil {
				return err
			}
			if !ok {
				rcs = append(rcs[:bi], rcs[bi+1:]...)
			}
		}
		if a.opt.Progress != nil {
			a.opt.Progress(n, 0)
		}
		for _, p := range decs {
			if err := net.send(p, tagAck0, partHdr{kind: pkAck, eos: r == last, round: r, done: r}, nil, nil); err != nil {
				return err
			}
		}
	}
	if err := rp.fetchWorst(pl, net); err != nil {
		return err
	}
	if rp.missing > 0 {
		a.partIrregular++
	}
	return nil
}

// fetchWorst asks every owner for the worst instances the replay kept
// (an empty request when none is its) and puts them into a.worst, in
// place: the heap's entries keep their order and entry skews, so the
// outputs are those of the serial pass. An instance an owner no longer
// has counts as missing (the pass runs again the event-shipping way).
func (p *partReplay) fetchWorst(pl *partPlan, net *partNet) error {
	a := p.a
	owners := pl.procs - pl.owner0
	reqs := make([][]byte, owners)
	idx := make([][]int, owners) // by owner: the a.worst entries asked for, in request order
	for i, w := range a.worst {
		if w.ref == nil {
			continue
		}
		reqs[w.ref.q] = appendKey(reqs[w.ref.q], &w.ref.key)
		idx[w.ref.q] = append(idx[w.ref.q], i)
	}
	for q := 0; q < owners; q++ {
		if err := net.send(pl.owner0+q, tagWorstReq, partHdr{kind: pkEnd}, nil, reqs[q]); err != nil {
			return err
		}
	}
	for q := 0; q < owners; q++ {
		m, err := net.listen(pl.owner0+q, tagWorstRes).get(-1)
		if err != nil {
			return err
		}
		var reps []partWorstReply
		if err := gob.NewDecoder(bytes.NewReader(m.body)).Decode(&reps); err != nil {
			return fmt.Errorf("parallel analysis: the worst instances from process %d: %w", pl.owner0+q, err)
		}
		if len(reps) != len(idx[q]) {
			return fmt.Errorf("parallel analysis: process %d sent %d worst instances for %d asked", pl.owner0+q, len(reps), len(idx[q]))
		}
		for j, rep := range reps {
			i := idx[q][j]
			if !rep.Ok || rep.W.Inst.EntrySkew != a.worst[i].inst.EntrySkew {
				p.missing++
				continue
			}
			worst := rep.W
			for s, inst := range []*datamodel.Instance{&worst.Inst, &worst.Raw} {
				st := worst.Sites[s]
				inst.LastSiteIdx, inst.WaitSiteIdx, inst.CauseSiteIdx = -1, -1, -1
				if st[0].Ok {
					inst.LastSiteIdx = p.site(st[0].Rank, st[0].PC)
				}
				if st[1].Ok {
					inst.WaitSiteIdx = p.site(st[1].Rank, st[1].PC)
				}
				if st[2].Ok {
					inst.CauseSiteIdx = p.site(st[2].Rank, st[2].PC)
				}
			}
			a.worst[i] = worstEntry{inst: worst.Inst, raw: worst.Raw}
		}
	}
	return nil
}

// partEnds collects the end records on process 0 (after partZero).
func (a *analyzer) partEnds(pl *partPlan, net *partNet, decs []int) error {
	reported := make([]bool, len(a.ranks))
	var dec partDecEnd
	first := true
	for _, p := range decs {
		m, err := net.listen(p, tagEndDec).get(-1)
		if err != nil {
			return err
		}
		var e partDecEnd
		if err := gob.NewDecoder(bytes.NewReader(m.body)).Decode(&e); err != nil {
			return fmt.Errorf("parallel analysis: end record of process %d: %w", p, err)
		}
		if e.Ends != nil {
			if x, ok := e.Ends[-1]; ok {
				return fmt.Errorf("%w: process %d: %s", ErrDistInput, p, x.Err)
			}
		}
		a.events += e.Events
		dec.Dupes += e.Dupes
		a.partIrregular += e.Irregular
		if e.HasFirst {
			if first {
				a.an.StartNS, a.an.EndNS, first = e.StartNS, e.EndNS, false
			} else {
				a.an.StartNS = min(a.an.StartNS, e.StartNS)
				if e.EndNS > a.an.EndNS {
					a.an.EndNS = e.EndNS
				}
			}
		}
		for _, s := range e.Ranks {
			if s.Rank < 0 || int(s.Rank) >= len(a.ranks) || a.ranks[s.Rank] == nil {
				continue
			}
			reported[s.Rank] = true
			if p == 0 {
				continue // process 0's own decoders wrote its ranks' state
			}
			rs := a.ranks[s.Rank]
			rs.sum.Events, rs.sum.TimeInMPI = s.Events, s.TimeInMPI
			rs.pause = pauseState{paused: s.Paused, since: s.Since, last: s.Last, pauses: s.Pauses, total: s.Total, longest: s.Longest}
		}
		if p == 0 {
			continue
		}
		a.applyEnds(e.Ends)
	}
	if !first {
		a.first = false
	}
	a.m.dupes += dec.Dupes
	for q := pl.owner0; q < pl.procs; q++ {
		m, err := net.listen(q, tagEndOwn).get(-1)
		if err != nil {
			return err
		}
		var e partOwnEnd
		if err := gob.NewDecoder(bytes.NewReader(m.body)).Decode(&e); err != nil {
			return fmt.Errorf("parallel analysis: end record of process %d: %w", q, err)
		}
		a.partIrregular += e.Irregular
		if pl.p2p {
			if e.P2P == nil {
				return fmt.Errorf("parallel analysis: process %d sent no point-to-point end record", q)
			}
			if err := a.p2pTarget.mergeOwner(e.P2P); err != nil {
				return err
			}
		}
		for _, h := range e.Hists {
			if h.Op < 0 || h.Op >= len(a.ops) || len(h.Exit) != len(a.ops[h.Op].histExit.counts) || len(h.Wait) != len(a.ops[h.Op].histWait.counts) {
				return fmt.Errorf("parallel analysis: bad histogram from process %d", q)
			}
			oa := &a.ops[h.Op]
			for i := range h.Exit {
				oa.histExit.counts[i] += h.Exit[i]
				oa.histWait.counts[i] += h.Wait[i]
			}
		}
		if q == 0 {
			continue // process 0's owner wrote a.hb itself
		}
		for r, cells := range e.Cells {
			if r >= len(a.hb.cells) {
				break
			}
			cur := a.hb.cells[r]
			for len(cur) < len(cells) {
				cur = append(cur, hbCell{lo: math.Inf(-1), hi: math.Inf(1)})
			}
			for i, c := range cells {
				x := &cur[i]
				if c.N == 0 {
					continue
				}
				if x.n == 0 {
					x.first, x.last = c.First, c.Last
				}
				x.first, x.last = min(x.first, c.First), max(x.last, c.Last)
				x.lo = max(x.lo, c.Lo)
				x.hi = min(x.hi, c.Hi)
				x.n += c.N
			}
			a.hb.cells[r] = cur
		}
	}
	for r, rs := range a.ranks {
		if rs != nil && !reported[r] {
			return fmt.Errorf("%w: rank %d's events never came from its process (can every process read %s?)", ErrDistInput, r, a.rn.Dir)
		}
	}
	return nil
}

// replayP2P replays the owners' point-to-point records of round r into
// process 0's stream in the serial order (p2p_part.go).
func (a *analyzer) replayP2P(srcs []*partSource, r, last int32) error {
	type cur struct {
		segs []partMsg
		si   int
		r    recReader
		key  p2pRecKey
	}
	next := func(c *cur) (bool, error) {
		for {
			if c.r.b != nil && c.r.i < len(c.r.b) {
				c.r.readP2PKey(&c.key)
				if c.r.bad {
					return false, errors.New("parallel analysis: bad point-to-point record")
				}
				return true, nil
			}
			if c.si >= len(c.segs) {
				return false, nil
			}
			c.r = recReader{b: c.segs[c.si].body}
			c.si++
		}
	}
	var cs []*cur
	for _, s := range srcs {
		if err := s.fill(r, last); err != nil {
			return err
		}
		c := &cur{segs: s.take(r)}
		ok, err := next(c)
		if err != nil {
			return err
		}
		if ok {
			cs = append(cs, c)
		}
	}
	for len(cs) > 0 {
		bi := 0
		for i := 1; i < len(cs); i++ {
			if p2pKeyLess(&cs[i].key, &cs[bi].key) {
				bi = i
			}
		}
		c := cs[bi]
		a.p2pTarget.replayKey = c.key
		if err := a.p2pTarget.replay(&c.r, c.r.u8()); err != nil {
			if errors.Is(err, errP2PMissing) {
				a.partIrregular++
				return nil
			}
			return err
		}
		ok, err := next(c)
		if err != nil {
			return err
		}
		if !ok {
			cs = append(cs[:bi], cs[bi+1:]...)
		}
	}
	return nil
}
