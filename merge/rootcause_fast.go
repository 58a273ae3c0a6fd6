package merge

// The common waiter of an N×N instance in one function without calls
// (decision D67, provisional number): waitOf, delays, attribute and jump
// as they run for it, in the same order and with the same arithmetic.
//
// Go's register ABI has no callee-saved registers: each of the four calls
// a waiter made spilled and reloaded the waiter's and the side's state,
// and each re-derived what the one before knew (the ranks' rings, the
// side's validity, the waiter's segment). Here a waiter whose case is the
// common one, known before anything is changed, is handled in one body;
// any other (no shared latest communicator, a cut interval, the side
// not yet made for this call, more than one cause, a record already on
// the call, propagated costs, the waited-for rank's node not yet made) goes
// through waitOf as before, untouched.

// waitFast attributes rank a's wait w in its call at pa for rank b's
// call at pb, entered at need (an N×N waiter, kind as waitOf's), when it
// is the common case, and reports whether it did; false changes nothing.
// Its effects are waitOf's, bit for bit
// (TestRootCause_FastWaiterAgreesWithWaitOf).
func (s *RootCauseStream) waitFast(kind int, a *rcRank, pa uint64, b *rcRank, pb uint64, w, need float64) bool {
	if a == nil || b == nil || a == b {
		return false
	}
	// lastSync's shortcut (waitOf's inline case), or the slow path
	c := a.topComm
	if c == nil || b.topComm != c || !(c.t > a.secondT) || len(a.peers) != 0 && !(a.peerMaxT < c.t) {
		return false
	}
	sa, sb := c.last[a.topPos], c.last[b.topPos]
	if sa > pa || sb > pb {
		return false
	}
	// no interval cut by the rings (waitOf counts those)
	if sa < a.oldest() || sb < b.oldest() {
		return false
	}
	// the side made for b's call since sb within this event
	sd := &s.side
	if !sd.live || sd.b != b || sd.sb != sb || sd.pb != pb || sd.gen != s.gen {
		return false
	}
	// jump's cached node for b's call (made by its first waiter), or a
	// wait older than a's path (jump does nothing)
	jumps := pa >= a.cp.since
	if jumps && (b.cp.nodeAt != pb+1 || b.cp.node == 0) {
		return false
	}
	// delays: a's interval runs through the side's distinct regions in
	// the same order, one delay among them at most
	n := len(sd.tB)
	if !sd.seq || pa-sa != uint64(n) {
		return false
	}
	m := uint64(len(a.segs) - 1)
	D, first, npos := 0.0, 0, 0
	var d1 float64
	for i := 0; i < n; i++ {
		g := &a.segs[(sa+uint64(i))&m]
		if int64(g.region) != sd.tB[i].cause {
			return false
		}
		if d := sd.tB[i].amt - g.dur; d > 0 {
			D += d
			if npos == 0 {
				first, d1 = i, d
			}
			npos++
		}
	}
	g := &a.segs[pa&m]
	var scale float64
	if D+sd.W > 0 {
		// attribute's slot case: one cause and nothing else, the call's
		// first record
		scale = min(w/(D+sd.W), 1)
		if npos != 1 || len(sd.top) != 0 || scale*sd.rest > 0 || g.res != 0 || len(a.one) != len(a.segs) {
			return false
		}
		if amt := scale * d1; amt != amt {
			return false
		}
	}
	// The case is the common one: waitOf's effects.
	s.fastWaits++
	s.total += w
	s.byKind[kind] += w
	s.waitStates++
	if !(D+sd.W > 0) {
		s.noDelay += w
		g.wait = min(g.dur, g.wait+w)
	} else {
		sr := &sd.reg[first]
		cc := sr.cause
		if cc == nil {
			cc = s.cause(rcCauseKey(b.rank, int32(sd.tB[first].cause)))
			sr.cause = cc
		}
		cc.direct += scale * d1
		cc.delay += d1
		cc.waits++
		if !(cc.direct <= s.maxDirect) {
			s.maxDirect = max(s.maxDirect, cc.direct)
		}
		if !sr.ivDone && (cc.draw != nil || !(cc.direct < s.maxDirect/100 || s.ivKept >= rcIvBudget)) &&
			s.noteIv(cc, sr.span[0], sr.span[1]) {
			sr.ivDone = true
		}
		sd.scale += scale
		s.noDelay += w - scale*(D+sd.W)
		g.wait = min(g.dur, g.wait+w)
		a.one[pa&m] = rcEnt{rcCauseKey(b.rank, int32(sd.tB[first].cause)), scale * d1}
		g.res = rcResOne
	}
	if jumps { // jump with b's node made
		p := &a.cp
		if p.frozen != nil {
			p.spare = p.frozen[:0]
		}
		p.base, p.frozen = b.cp.node, nil
		p.stints, p.start = b.cp.stint, need
		p.pending = p.pending[:0]
		p.since = pa
		p.nodeAt, p.node, p.stint = 0, 0, 0
		p.from, p.ovPos, p.ovDur = pa, pa+1, max(0, g.dur-w)
	}
	return true
}
