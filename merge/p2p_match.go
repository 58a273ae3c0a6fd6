package merge

// Matching of the point-to-point stream (P2PStream): each (communicator,
// source, destination, tag) key has a queue of unmatched sends and one of
// unmatched receives in posting order; the heads pair up as soon as both
// exist and no wildcard receive posted earlier on the destination is
// still unresolved (MPI's non-overtaking rule). Cancelled and freed
// requests leave their queues here.

import (
	"math"
	"sort"
)

// msgQueue is a key's messages in posting order, not yet matched.
type msgQueue []*p2pMsg

// popFront drops the head; a queue it empties starts again at the front
// of its array, so a key that alternates between one message and none
// (a halo exchange) appends without allocating.
func (q msgQueue) popFront() msgQueue {
	q[0] = nil
	if len(q) == 1 {
		return q[:0]
	}
	return q[1:]
}

// p2pChan holds one key's unmatched sends and receives: one map lookup
// per message instead of one per queue and step (the maps were ≈ 15 % of
// a halo run's CPU, 2026-11-26). It leaves the map when both are empty.
type p2pChan struct {
	sends, recvs msgQueue
}

// enqueue puts m into its key's queue in posting order, or drops a message
// without a peer (MPI_PROC_NULL, an unresolved source).
func (s *P2PStream) enqueue(rs *p2pRankState, m *p2pMsg) {
	if (m.recv && m.src < 0) || (!m.recv && m.dst < 0) {
		s.drop(m)
		return
	}
	if !m.recv && s.own != nil && !s.ownsDst(m.dst) {
		// sent to another owner's rank, which matches it: only counted
		// here (complete)
		m.keyed, m.dropped, m.settled = true, true, true
		s.inFlight--
		return
	}
	k := p2pKey{m.comm, m.src, m.dst, m.tag}
	m.keyed = true
	ch := s.chanOf(k)
	if !m.recv {
		ch.sends = append(ch.sends, m)
		s.tryMatch(k, ch)
		return
	}
	q := ch.recvs
	i := len(q)
	for i > 0 && q[i-1].order > m.order { // a resolved wildcard may belong earlier
		i--
	}
	q = append(q, nil)
	copy(q[i+1:], q[i:])
	q[i] = m
	ch.recvs = q
	s.tryMatch(k, ch)
}

// chanInline is the number of keys to a rank whose queues live in the
// rank's own state (a halo exchange has two or four); more go to its map.
const chanInline = 4

// chanSlot is one key to a rank (its destination) and the key's queues.
type chanSlot struct {
	comm     uint64
	src, tag int32
	ch       p2pChan
}

// chanOf returns key k's queues, made (or reused) if k has none. A key's
// queues live in its destination's state (p2pRankState.chans), which the
// match touches anyway: at 16,384 ranks a lookup in one map of every key
// was two cache misses (its bucket, its queues) and a hash per message.
// Destinations without a state (not in the run) use the stream's map.
func (s *P2PStream) chanOf(k p2pKey) *p2pChan {
	rs := s.rankOrNil(k.dst)
	if rs == nil {
		if ch := s.chans[k]; ch != nil {
			return ch
		}
		ch := s.newChan()
		s.chans[k] = ch
		return ch
	}
	if ch := rs.chanIf(k); ch != nil {
		return ch
	}
	if rs.nchan < chanInline {
		sl := &rs.chans[rs.nchan] // its queues' arrays are kept from an earlier key
		rs.nchan++
		sl.comm, sl.src, sl.tag = k.comm, k.src, k.tag
		return &sl.ch
	}
	if rs.moreChans == nil {
		rs.moreChans = map[p2pKey]*p2pChan{}
	}
	ch := s.newChan()
	rs.moreChans[k] = ch
	return ch
}

// chanIf returns key k's queues at its destination rs, nil if it has none.
func (rs *p2pRankState) chanIf(k p2pKey) *p2pChan {
	for i := 0; i < rs.nchan; i++ {
		if sl := &rs.chans[i]; sl.comm == k.comm && sl.src == k.src && sl.tag == k.tag {
			return &sl.ch
		}
	}
	if rs.moreChans != nil {
		return rs.moreChans[k]
	}
	return nil
}

// chanIf returns key k's queues, nil if it has none.
func (s *P2PStream) chanIf(k p2pKey) *p2pChan {
	if rs := s.rankOrNil(k.dst); rs != nil {
		return rs.chanIf(k)
	}
	return s.chans[k]
}

func (s *P2PStream) newChan() *p2pChan {
	if n := len(s.freeChans); n > 0 {
		ch := s.freeChans[n-1]
		s.freeChans = s.freeChans[:n-1]
		return ch
	}
	return &p2pChan{}
}

// eachChan calls f with every key that holds queues (in no fixed order).
func (s *P2PStream) eachChan(f func(k p2pKey, ch *p2pChan)) {
	for k, ch := range s.chans {
		f(k, ch)
	}
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil {
			continue
		}
		for i := 0; i < rs.nchan; i++ {
			sl := &rs.chans[i]
			f(p2pKey{comm: sl.comm, src: sl.src, dst: rs.rank, tag: sl.tag}, &sl.ch)
		}
		for k, ch := range rs.moreChans {
			f(k, ch)
		}
	}
}

// dropChanIfEmpty forgets key k's queues once both are empty (keys that
// never recur, such as a tag per iteration, keep no memory). ch is k's
// queues; a pointer into the destination's slots is not valid afterwards.
func (s *P2PStream) dropChanIfEmpty(k p2pKey, ch *p2pChan) {
	if len(ch.sends) != 0 || len(ch.recvs) != 0 {
		return
	}
	rs := s.rankOrNil(k.dst)
	if rs != nil {
		for i := 0; i < rs.nchan; i++ {
			if &rs.chans[i].ch == ch {
				// the last slot takes its place; the freed slot keeps
				// the empty queues' arrays for the next key
				last := rs.nchan - 1
				rs.chans[i], rs.chans[last] = rs.chans[last], rs.chans[i]
				rs.chans[last].ch.sends, rs.chans[last].ch.recvs = rs.chans[last].ch.sends[:0], rs.chans[last].ch.recvs[:0]
				rs.nchan--
				return
			}
		}
		if rs.moreChans != nil {
			delete(rs.moreChans, k)
		}
	} else {
		delete(s.chans, k)
	}
	ch.sends, ch.recvs = ch.sends[:0], ch.recvs[:0]
	s.freeChans = append(s.freeChans, ch)
}

// drop forgets a message that will never be matched; a receive stops
// holding its call open.
func (s *P2PStream) drop(m *p2pMsg) {
	if m.dropped {
		return
	}
	m.dropped, m.settled = true, true
	s.inFlight--
	if c := m.call; c != nil {
		c.open--
		s.finishCall(c)
	}
}

// cancel forgets a posted message whose request was cancelled: it leaves
// its key's queue if still unmatched.
func (s *P2PStream) cancel(m *p2pMsg) {
	if s.mine {
		s.out.Cancelled++
	}
	if p := m.peer; p != nil {
		// matched (in stream order) to a message a later request takes:
		// the other side goes back to the head of its queue
		m.peer, p.peer = nil, nil
		k := p2pKey{p.comm, p.src, p.dst, p.tag}
		ch := s.chanOf(k)
		qp := &ch.sends
		if p.recv {
			qp = &ch.recvs
		}
		q := *qp
		i := 0
		for i < len(q) && q[i].order < p.order {
			i++
		}
		q = append(q, nil)
		copy(q[i+1:], q[i:])
		q[i] = p
		*qp = q
		s.drop(m)
		s.tryMatch(k, ch)
		return
	}
	if m.keyed {
		k := p2pKey{m.comm, m.src, m.dst, m.tag}
		if ch := s.chanIf(k); ch != nil {
			qp := &ch.recvs
			if !m.recv {
				qp = &ch.sends
			}
			q := *qp
			for i, x := range q {
				if x == m {
					q = append(q[:i:i], q[i+1:]...)
					break
				}
			}
			*qp = q
			s.dropChanIfEmpty(k, ch)
		}
	} else if !m.keyed {
		rs := s.ranks.at(m.dst)
		delete(rs.unresolved, m.order)
		s.updateMinUnres(rs)
	}
	s.drop(m)
}

// abandon removes a posted message that will never complete (freed).
func (s *P2PStream) abandon(rs *p2pRankState, m *p2pMsg) {
	if !m.keyed {
		delete(rs.unresolved, m.order)
		s.updateMinUnres(rs)
	}
}

func (s *P2PStream) updateMinUnres(rs *p2pRankState) {
	rs.minUnres = math.MaxInt
	for o := range rs.unresolved {
		rs.minUnres = min(rs.minUnres, o)
	}
}

// releaseRank retries the keys whose head receive on rs was held back by
// an unresolved wildcard receive posted before it.
func (s *P2PStream) releaseRank(rs *p2pRankState) {
	if len(rs.blocked) == 0 {
		return
	}
	keys := make([]p2pKey, 0, len(rs.blocked))
	for k := range rs.blocked {
		keys = append(keys, k)
	}
	clear(rs.blocked) // tryMatch puts back what is still blocked
	// in key order, not the map's: the pairs settled here are summed in
	// this order (reproducible, and the same on a partitioned owner)
	sort.Slice(keys, func(i, j int) bool { return keyBefore(keys[i], keys[j]) })
	for _, k := range keys {
		if ch := s.chanIf(k); ch != nil {
			s.tryMatch(k, ch)
		}
	}
}

func keyBefore(a, b p2pKey) bool {
	if a.comm != b.comm {
		return a.comm < b.comm
	}
	if a.src != b.src {
		return a.src < b.src
	}
	return a.tag < b.tag
}

// tryMatch pairs the heads of key k's send and receive queues while both
// exist and no unresolved wildcard receive of the destination was posted
// before the head receive (it might still turn out to be the n-th).
func (s *P2PStream) tryMatch(k p2pKey, ch *p2pChan) {
	rs := s.rankOrNil(k.dst)
	for len(ch.sends) > 0 && len(ch.recvs) > 0 {
		r, snd := ch.recvs[0], ch.sends[0]
		if rs != nil && len(rs.unresolved) > 0 && rs.minUnres < r.order {
			if rs.blocked == nil {
				rs.blocked = map[p2pKey]struct{}{}
			}
			rs.blocked[k] = struct{}{}
			break
		}
		ch.sends, ch.recvs = ch.sends.popFront(), ch.recvs.popFront()
		r.peer, snd.peer = snd, r
		s.settle(r) // never matches again itself, so ch stays k's
	}
	s.dropChanIfEmpty(k, ch)
}
