package merge

// The one-sided wait states of general active target synchronisation
// (MPI_Win_post/start/complete/wait) as wait states of the root-cause
// stream, with Scalasca's patterns and rma.Stream's definitions (merge/rma):
//
//   - Late Post: an origin's MPI_Win_start or MPI_Win_complete entered
//     before the MPI_Win_post of its latest target waits from its entry
//     to that post (capped at the call); the waited-for rank is that
//     target, the call it needed its MPI_Win_post.
//   - Early Wait: a target's MPI_Win_wait entered before the last
//     MPI_Win_complete of its origins waits from its entry to that
//     complete (capped at the call); the waited-for rank is that origin,
//     the call it needed its MPI_Win_complete.
//
// Epochs are matched per (window, origin, target) in order, as in
// rma.Stream: the n-th MPI_Win_start of origin o whose group holds t goes
// with the n-th MPI_Win_post of t whose group holds o. An access epoch's
// Late Post is known once its MPI_Win_complete was seen (then its group is
// complete) and every target's post matched; an exposure epoch's Early
// Wait once its MPI_Win_wait (or successful MPI_Win_test) was seen, every
// origin's start matched and each of those epochs completed. The waits
// are then handed to waitState like a Late Sender found at its
// completion. Memory: the epochs not yet resolved (their number, not the
// run's length).

import (
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// pscwEpoch is an access (MPI_Win_start ... MPI_Win_complete) or exposure
// (MPI_Win_post ... MPI_Win_wait) epoch of one rank on one window.
type pscwEpoch struct {
	rank                  int32
	access                bool
	peers, matched        int // group members seen; matched with a partner epoch
	closedPartners        int // exposure: matched access epochs that completed
	open, close           uint64
	openEnter, openExit   float64
	closeEnter, closeExit float64
	closed, done          bool
	partners              []*pscwEpoch // access: its matched exposure epochs (told when it completes)
	// The latest partner call: access: the latest matched post; exposure:
	// the latest complete of its matched access epochs.
	latest     float64
	latestRank int32
	latestPos  uint64
	haveLatest bool
}

func (ep *pscwEpoch) note(t float64, rank int32, pos uint64) {
	if !ep.haveLatest || t > ep.latest {
		ep.latest, ep.latestRank, ep.latestPos, ep.haveLatest = t, rank, pos, true
	}
}

type pscwKey struct {
	win            uint64
	origin, target int32
}

// pscwQueue holds a (window, origin, target)'s epochs not yet matched:
// posts of the target waiting for a start of the origin, or starts
// waiting for a post (one of the two is empty).
type pscwQueue struct {
	posts, starts []*pscwEpoch
}

// pscwState is the stream's PSCW matching.
type pscwState struct {
	open  map[rmaWinKey]*pscwEpoch // per (window, rank): the open exposure epochs, and under rank -2-r the open access epochs of r
	queue map[pscwKey]*pscwQueue
}

// Kinds of waitState for PSCW wait states (byKind indexes).
const (
	rcKindLatePost  = 4
	rcKindEarlyWait = 5
)

// isPSCW reports whether op takes part in general active target
// synchronisation.
func isPSCW(op trace.Op) bool {
	return op >= trace.OpWinPost && op <= trace.OpWinTest // post, start, complete, wait, test
}

// pscw takes one PSCW event of rank r; its call (e's first record) is
// r's latest call segment.
func (s *RootCauseStream) pscw(r *rcRank, e *datamodel.GEvent) {
	if r.n == 0 {
		return
	}
	ps := &s.pscwSt
	if ps.open == nil {
		ps.open, ps.queue = map[rmaWinKey]*pscwEpoch{}, map[pscwKey]*pscwQueue{}
	}
	access := e.Op == trace.OpWinStart || e.Op == trace.OpWinComplete
	k := rmaWinKey{win: e.CommID, rank: r.rank}
	if access {
		k.rank = -2 - r.rank // access epochs apart from exposure ones
	}
	switch e.Op {
	case trace.OpWinPost, trace.OpWinStart:
		ep := ps.open[k]
		if !e.Continuation() || ep == nil {
			ep = &pscwEpoch{rank: r.rank, access: access, open: r.n - 1, openEnter: e.Enter, openExit: e.Exit}
			ps.open[k] = ep
		}
		if e.Peer < 0 || e.Peer == r.rank {
			return
		}
		ep.peers++
		s.pscwMatch(e.CommID, ep, e.Peer)
	case trace.OpWinComplete, trace.OpWinWait, trace.OpWinTest:
		if e.Continuation() || e.Op == trace.OpWinTest && e.Tag != 1 {
			return
		}
		ep := ps.open[k]
		if ep == nil {
			return
		}
		delete(ps.open, k)
		pos := r.n - 1
		ep.close, ep.closeEnter, ep.closeExit, ep.closed = pos, e.Enter, e.Exit, true
		if e.Op == trace.OpWinTest {
			ep.closeEnter = e.Exit // a successful test waited for nobody
		}
		if access {
			// Its own Late Post first: a target's Early Wait for this
			// complete passes on the origin's wait states before it.
			parts := ep.partners // its targets' exposure epochs
			s.pscwLatePost(ep)
			for _, x := range parts {
				x.closedPartners++
				x.note(e.Enter, r.rank, pos)
				s.pscwEarlyWait(x)
			}
		} else {
			s.pscwEarlyWait(ep)
		}
	}
}

// pscwMatch pairs epoch ep of its rank with peer on window win, in
// order, with the partner's oldest unmatched epoch.
func (s *RootCauseStream) pscwMatch(win uint64, ep *pscwEpoch, peer int32) {
	ps := &s.pscwSt
	k := pscwKey{win, ep.rank, peer}
	if !ep.access {
		k.origin, k.target = peer, ep.rank
	}
	q := ps.queue[k]
	if q == nil {
		q = &pscwQueue{}
		ps.queue[k] = q
	}
	mine, theirs := &q.posts, &q.starts
	if ep.access {
		mine, theirs = theirs, mine
	}
	if len(*theirs) == 0 {
		*mine = append(*mine, ep)
		return
	}
	o := (*theirs)[0]
	(*theirs)[0] = nil
	*theirs = (*theirs)[1:]
	if len(q.posts) == 0 && len(q.starts) == 0 {
		delete(ps.queue, k)
	}
	acc, exp := ep, o
	if !ep.access {
		acc, exp = o, ep
	}
	acc.matched++
	exp.matched++
	acc.note(exp.openEnter, exp.rank, exp.open)
	if acc.closed {
		exp.closedPartners++
		exp.note(acc.closeEnter, acc.rank, acc.close)
	} else {
		acc.partners = append(acc.partners, exp)
	}
	s.pscwLatePost(acc)
	s.pscwEarlyWait(exp)
}

// pscwLatePost hands an access epoch's Late Post wait states to
// waitState once its group is known and every target's post matched.
func (s *RootCauseStream) pscwLatePost(a *pscwEpoch) {
	if a.done || !a.closed || a.matched < a.peers || !a.haveLatest {
		return
	}
	a.done = true
	a.partners = nil
	p := a.latest
	if w := clampWait(p, a.openEnter, a.openExit); w > 0 {
		s.waitState(rcKindLatePost, true, a.rank, a.open, a.latestRank, a.latestPos, w, a.openExit, p)
	}
	if w := clampWait(p, a.closeEnter, a.closeExit); w > 0 {
		s.waitState(rcKindLatePost, true, a.rank, a.close, a.latestRank, a.latestPos, w, a.closeExit, p)
	}
}

// pscwEarlyWait hands an exposure epoch's Early Wait to waitState once
// its wait was seen and every origin's access epoch matched and
// completed.
func (s *RootCauseStream) pscwEarlyWait(x *pscwEpoch) {
	if x.done || !x.closed || x.matched < x.peers || x.closedPartners < x.matched || !x.haveLatest {
		return
	}
	x.done = true
	c := x.latest
	if w := clampWait(c, x.closeEnter, x.closeExit); w > 0 {
		s.waitState(rcKindEarlyWait, true, x.rank, x.close, x.latestRank, x.latestPos, w, x.closeExit, c)
	}
}
