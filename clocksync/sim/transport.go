package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"sync"

	"github.com/gclock/gclock/clocksync"
)

const (
	tagP2P uint8 = iota
	tagAck
	tagBcast
	tagBarrier
)

type msg struct {
	src    int32
	tag    uint8
	ssend  bool
	n      int32      // number of doubles
	inl    [2]float64 // payloads of up to 2 doubles travel inline
	arrive float64
	data   []float64 // longer payloads
	b      []byte
}

func (m *msg) setData(v []float64) {
	m.n = int32(len(v))
	if len(v) <= len(m.inl) {
		copy(m.inl[:], v)
		return
	}
	m.data = append([]float64(nil), v...)
}

func (m *msg) payload() []float64 {
	if int(m.n) <= len(m.inl) {
		return m.inl[:m.n]
	}
	return m.data
}

type key struct {
	src int32
	tag uint8
}

// comm is a communicator: its members (world ranks) and one inbox channel
// per member. Messages carry the comm-local source rank.
type comm struct {
	w       *World
	members []int
	inbox   []chan msg

	mu    sync.Mutex
	split *splitRound
}

type splitEntry struct {
	color, key int
	now        float64
}

type splitRound struct {
	entries []splitEntry
	arrived int
	done    chan struct{}
	result  []*comm
	newRank []int
	exit    float64
}

func newComm(w *World, members []int) *comm {
	c := &comm{w: w, members: members, inbox: make([]chan msg, len(members))}
	for i := range c.inbox {
		c.inbox[i] = make(chan msg, w.P.Buffer)
	}
	return c
}

// handle is one rank's view of a comm: the clocksync.Transport. It is used
// by that rank's goroutine only, so its pending queues need no lock.
type handle struct {
	c       *comm
	rank    int
	p       *proc
	pending map[key][]msg
	stashed int // messages in pending
}

func (c *comm) handle(rank int, p *proc) *handle {
	return &handle{c: c, rank: rank, p: p, pending: map[key][]msg{}}
}

var (
	_ clocksync.Transport         = (*handle)(nil)
	_ clocksync.PingPongTransport = (*fastHandle)(nil)
)

func (c *comm) transport(rank int, p *proc) clocksync.Transport {
	return c.w.wrap(c.handle(rank, p))
}

func (w *World) wrap(h *handle) clocksync.Transport {
	if w.P.FastPath {
		return &fastHandle{h}
	}
	return h
}

// fastHandle emulates a transport with a C-side ping-pong loop: it reads the
// rank's local clock directly and applies the flattened model, with the same
// virtual costs as the Go loop.
type fastHandle struct{ *handle }

func (f *fastHandle) Split(color, k int) (clocksync.Transport, error) {
	return f.handle.Split(color, k)
}

// TimerClock returns the rank's local clock.
func (f *fastHandle) TimerClock() clocksync.Clock { return f.p.clock }

// PingPongServe answers n pings with m.Global(local time).
func (f *fastHandle) PingPongServe(client, n int, m clocksync.LinearModel) error {
	f.c.w.FastPathCalls.Add(1)
	buf := make([]float64, 1)
	for i := 0; i < n; i++ {
		if err := f.Recv(client, buf); err != nil {
			return err
		}
		buf[0] = m.Global(f.p.clock.GetTime())
		if err := f.Send(client, buf); err != nil {
			return err
		}
	}
	return nil
}

// PingPongClient runs n timed ping-pongs with ref.
func (f *fastHandle) PingPongClient(ref, n int, m clocksync.LinearModel, sLast, tLast, sNow []float64) error {
	f.c.w.FastPathCalls.Add(1)
	buf := make([]float64, 1)
	for i := 0; i < n; i++ {
		sLast[i] = m.Global(f.p.clock.GetTime())
		buf[0] = sLast[i]
		if err := f.Send(ref, buf); err != nil {
			return err
		}
		if err := f.Recv(ref, buf); err != nil {
			return err
		}
		sNow[i] = m.Global(f.p.clock.GetTime())
		tLast[i] = buf[0]
	}
	return nil
}

// ErrRank is wrapped when a peer rank is outside the communicator.
var ErrRank = errors.New("sim: rank out of range")

func (h *handle) Rank() int { return h.rank }
func (h *handle) Size() int { return len(h.c.members) }

func (h *handle) check(peer int) error {
	if peer < 0 || peer >= len(h.c.members) || peer == h.rank {
		return fmt.Errorf("%w: peer %d in communicator of size %d (self %d)", ErrRank, peer, len(h.c.members), h.rank)
	}
	return nil
}

func (h *handle) post(dst int, m msg, nbytes int) {
	p := h.p
	p.now += p.w.P.SendOverhead
	m.src = int32(h.rank)
	m.arrive = p.now + p.latency(h.c.members[dst], nbytes)
	h.c.inbox[dst] <- m
}

// take returns the next message from src with tag, stashing others.
func (h *handle) take(src int, tag uint8) msg {
	k := key{int32(src), tag}
	if h.stashed > 0 {
		if q := h.pending[k]; len(q) > 0 {
			m := q[0]
			if len(q) == 1 {
				delete(h.pending, k)
			} else {
				h.pending[k] = q[1:]
			}
			h.stashed--
			return m
		}
	}
	in := h.c.inbox[h.rank]
	for {
		m := <-in
		if m.src == k.src && m.tag == tag {
			return m
		}
		k2 := key{m.src, m.tag}
		h.pending[k2] = append(h.pending[k2], m)
		h.stashed++
	}
}

func (h *handle) arrive(m msg) {
	p := h.p
	p.now = math.Max(p.now, m.arrive) + p.w.P.RecvOverhead
}

// Send is an eager MPI_Send of len(v) doubles.
func (h *handle) Send(dst int, v []float64) error {
	if err := h.check(dst); err != nil {
		return err
	}
	m := msg{tag: tagP2P}
	m.setData(v)
	h.post(dst, m, 8*len(v))
	return nil
}

// Ssend completes only after dst has matched the message: the receiver
// acknowledges and the sender waits for the acknowledgement.
func (h *handle) Ssend(dst int, v []float64) error {
	if err := h.check(dst); err != nil {
		return err
	}
	m := msg{tag: tagP2P, ssend: true}
	m.setData(v)
	h.post(dst, m, 8*len(v))
	h.arrive(h.take(dst, tagAck))
	return nil
}

// Recv receives exactly len(v) doubles from src.
func (h *handle) Recv(src int, v []float64) error {
	if err := h.check(src); err != nil {
		return err
	}
	m := h.take(src, tagP2P)
	h.arrive(m)
	if int(m.n) != len(v) {
		return fmt.Errorf("sim: rank %d recv from %d: got %d doubles, want %d", h.rank, src, m.n, len(v))
	}
	copy(v, m.payload())
	if m.ssend {
		h.post(src, msg{tag: tagAck}, 0)
	}
	return nil
}

// Bcast is a binomial-tree broadcast of b from root.
func (h *handle) Bcast(root int, b []byte) ([]byte, error) {
	n := len(h.c.members)
	if root < 0 || root >= n {
		return nil, fmt.Errorf("%w: bcast root %d in communicator of size %d", ErrRank, root, n)
	}
	vr := (h.rank - root + n) % n
	mask := 1
	for mask < n {
		if vr&mask != 0 {
			src := (vr - mask + root) % n
			m := h.take(src, tagBcast)
			h.arrive(m)
			b = m.b
			break
		}
		mask <<= 1
	}
	mask >>= 1
	for mask > 0 {
		if vr+mask < n {
			dst := (vr + mask + root) % n
			h.post(dst, msg{tag: tagBcast, b: b}, len(b))
		}
		mask >>= 1
	}
	if h.rank == root {
		return b, nil
	}
	return append([]byte(nil), b...), nil
}

// Barrier is a dissemination barrier.
func (h *handle) Barrier() error {
	n := len(h.c.members)
	for k := 1; k < n; k <<= 1 {
		h.post((h.rank+k)%n, msg{tag: tagBarrier}, 0)
		h.arrive(h.take((h.rank-k+n)%n, tagBarrier))
	}
	return nil
}

// Split is MPI_Comm_split: a rendezvous of all members; everyone leaves at
// the latest arrival plus the cost of an allgather (2*ceil(log2 n)
// inter-node latencies).
func (h *handle) Split(color, k int) (clocksync.Transport, error) {
	c := h.c
	n := len(c.members)
	c.mu.Lock()
	if c.split == nil {
		c.split = &splitRound{entries: make([]splitEntry, n), done: make(chan struct{})}
	}
	s := c.split
	s.entries[h.rank] = splitEntry{color: color, key: k, now: h.p.now}
	s.arrived++
	if s.arrived == n {
		c.split = nil
		c.finishSplit(s)
	}
	c.mu.Unlock()
	<-s.done
	h.p.now = math.Max(h.p.now, s.exit)
	nc := s.result[h.rank]
	if nc == nil {
		return nil, nil
	}
	return h.c.w.wrap(nc.handle(s.newRank[h.rank], h.p)), nil
}

func (c *comm) finishSplit(s *splitRound) {
	n := len(c.members)
	groups := map[int][]int{}
	var colors []int
	exit := 0.0
	for r, e := range s.entries {
		exit = math.Max(exit, e.now)
		if e.color < 0 {
			continue
		}
		if _, ok := groups[e.color]; !ok {
			colors = append(colors, e.color)
		}
		groups[e.color] = append(groups[e.color], r)
	}
	exit += 2 * float64(bits.Len(uint(n-1))) * c.w.P.InterLatency
	s.exit = exit
	s.result = make([]*comm, n)
	s.newRank = make([]int, n)
	sort.Ints(colors)
	for _, col := range colors {
		g := groups[col]
		sort.SliceStable(g, func(i, j int) bool {
			ei, ej := s.entries[g[i]], s.entries[g[j]]
			if ei.key != ej.key {
				return ei.key < ej.key
			}
			return g[i] < g[j]
		})
		members := make([]int, len(g))
		for i, r := range g {
			members[i] = c.members[r]
		}
		nc := newComm(c.w, members)
		for i, r := range g {
			s.result[r] = nc
			s.newRank[r] = i
		}
	}
	close(s.done)
}

// Sleep lets d seconds of virtual time pass for this rank
// (clocksync.Sleeper).
func (h *handle) Sleep(d float64) {
	if d > 0 {
		h.p.now += d
	}
}
