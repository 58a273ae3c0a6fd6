package viz

// The Gantt chart's collective waits while streaming: a collective member
// is held (a heap by global exit) until the stream passes its exit, when
// every member that could have made it wait has been seen; its wait then
// follows merge's wait classes and data rule, and it is drawn.

import (
	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/trace"
)

type instKey struct {
	comm uint64
	seq  uint32
}

// instState is what the members of one instance seen so far tell about
// the waits of the pending ones (view timebase), per merge.WaitClass and
// its data rule: only members that send data are recorded as someone to
// wait for (every member of a Barrier).
type instState struct {
	key        instKey // while refs > 0
	maxEnter   float64 // latest sending member's enter seen (N×N)
	rootEnter  float64 // the root's enter, if it sends (late broadcast)
	maxNonRoot float64 // latest sending non-root enter (early reduce)
	haveMax    bool
	haveRoot   bool
	haveOther  bool
	refs       int             // members still pending
	prefix     []commRankEnter // scans: every sending member seen
}

// sends and receives apply merge's data rule (merge.FlowOf) to one
// member's bytes: MPI_Barrier synchronises without data.
func (b *bar) sends() bool    { return b.op == trace.OpBarrier || b.sent > 0 }
func (b *bar) receives() bool { return b.op == trace.OpBarrier || b.recv > 0 }

type commRankEnter struct {
	pos   int32
	enter float64
}

type pending struct {
	rank int32
	pos  int32 // comm rank, -1 unknown
	root int32 // comm rank of the root, -1 none
	st   int32 // its instance's state (Gantt.states)
	b    bar
}

// pendRef is a heap entry: small, so sifting moves 16 bytes.
type pendRef struct {
	gexit float64 // global exit: resolution time
	slot  int32
}

// stateOf returns the index of instance k's state, made if new. The
// members of an instance arrive close together, so a small direct-mapped
// cache answers most lookups; it is checked against the state's own key,
// so a state freed or reused for another instance is never taken for k.
func (g *Gantt) stateOf(k instKey) int32 {
	h := (k.comm ^ uint64(k.seq)*0x9E3779B97F4A7C15) >> 56
	if c := g.recent[h]; c > 0 {
		if st := &g.states[c-1]; st.refs > 0 && st.key == k {
			return c - 1
		}
	}
	idx, ok := g.inst[k]
	if !ok {
		idx = g.newState()
		g.states[idx].key = k
		g.inst[k] = idx
	}
	g.recent[h] = idx + 1
	return idx
}

// newState returns the index of a cleared instState (a free one, or a new
// one at the end of the slab).
func (g *Gantt) newState() int32 {
	if n := len(g.freeSt); n > 0 {
		idx := g.freeSt[n-1]
		g.freeSt = g.freeSt[:n-1]
		return idx
	}
	g.states = append(g.states, instState{})
	return int32(len(g.states) - 1)
}

// waitOf is the wait of pending member p given the members seen up to its
// global exit (merge.CollectiveWaitsFlow's semantics and data rule; draw
// clamps it to the call). A root not seen by then entered before every
// member still held (its state was dropped once it was drawn), so it made
// nobody wait. A member that receives no data waits for nobody, except in
// a Barrier.
func waitOf(p *pending, st *instState) float64 {
	switch merge.WaitClassOf(p.b.op) {
	case merge.WaitNxN:
		if !p.b.receives() || !st.haveMax {
			return 0
		}
		return st.maxEnter - p.b.enter
	case merge.WaitLateBroadcast:
		if p.root < 0 || p.pos == p.root || !st.haveRoot || !p.b.receives() {
			return 0
		}
		return st.rootEnter - p.b.enter
	case merge.WaitEarlyReduce:
		if p.root < 0 || p.pos != p.root || !st.haveOther {
			return 0
		}
		return st.maxNonRoot - p.b.enter
	case merge.WaitPrefix:
		if !p.b.receives() {
			return 0
		}
		w := 0.0
		for _, m := range st.prefix {
			if m.pos >= 0 && m.pos < p.pos {
				w = max(w, m.enter-p.b.enter)
			}
		}
		return w
	}
	return 0
}

// resolve draws every pending collective whose global exit lies before now:
// no member entering later can have made it wait.
func (g *Gantt) resolve(now float64) {
	for len(g.pend) > 0 && g.pend[0].gexit < now {
		p := g.pop()
		st := &g.states[p.st]
		p.b.wait = waitOf(&p, st)
		if st.refs--; st.refs <= 0 {
			delete(g.inst, instKey{p.b.comm, p.b.seq})
			*st = instState{prefix: st.prefix[:0]}
			g.freeSt = append(g.freeSt, p.st)
		}
		g.draw(p.rank, p.b)
	}
}

func (g *Gantt) push(gexit float64, p pending) {
	var slot int32
	if n := len(g.free); n > 0 {
		slot = g.free[n-1]
		g.free = g.free[:n-1]
		g.slots[slot] = p
	} else {
		slot = int32(len(g.slots))
		g.slots = append(g.slots, p)
	}
	g.pend = append(g.pend, pendRef{gexit: gexit, slot: slot})
	h := g.pend
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].gexit <= h[i].gexit {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (g *Gantt) pop() pending {
	h := g.pend
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].gexit < h[m].gexit {
			m = l
		}
		if r < n && h[r].gexit < h[m].gexit {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	g.pend = h
	p := g.slots[top.slot]
	g.free = append(g.free, top.slot)
	return p
}
