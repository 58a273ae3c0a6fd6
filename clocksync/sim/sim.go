// Package sim is a deterministic, seeded simulated network for clocksync:
// p ranks on n nodes, every node with its own clock (offset, skew and an
// optional slowly varying drift), intra- and inter-node latencies with
// jitter, per-direction asymmetry and rare outliers, all in virtual time.
//
// Every rank is a goroutine with its own virtual (true) time. Local work
// (clock reads, send and receive overheads) advances it; receiving a message
// sets it to max(now, send time + sampled latency), which is exact for
// blocking point-to-point between known pairs, so no global event queue is
// needed. Latencies are sampled by the sender from its own seeded generator,
// so a run is reproducible whatever the goroutine schedule.
package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/gclock/gclock/clocksync"
)

// Params describes a simulated machine. Zero fields take the defaults of
// DefaultParams.
type Params struct {
	Ranks, Nodes int
	Seed         uint64
	// NodeOf optionally assigns ranks to nodes explicitly (len Ranks,
	// values in [0, Nodes)). Otherwise ranks are placed in blocks, the
	// first Ranks%Nodes nodes getting one rank more.
	NodeOf []int

	// OffsetMax: node clock offsets are uniform in [-OffsetMax, OffsetMax] s.
	OffsetMax float64
	// SkewMax: node clock skews (rate - 1) are uniform in [-SkewMax, SkewMax].
	SkewMax float64
	// ClockBase is added to every node clock, e.g. 1e6 for timers counting
	// seconds since boot (default 0: clocks near rank 0's base).
	ClockBase float64
	// DriftMax: the skew itself changes linearly by up to ±DriftMax per
	// second (clock(T) = T + off + skew*T + DriftRate*T²/2).
	DriftMax float64

	// IntraLatency and InterLatency are the minimum one-way latencies (s).
	IntraLatency, InterLatency float64
	// IntraJitter and InterJitter are the means of the exponential jitter
	// added to every message (s).
	IntraJitter, InterJitter float64
	// Asymmetry: the minimum latency of each direction is scaled by
	// 1 + Asymmetry*h with h in [-1, 1] fixed per directed pair (nodes for
	// inter-node, ranks for intra-node messages).
	Asymmetry float64
	// OutlierProb is the probability of an extra delay uniform in
	// [0, OutlierMax] s.
	OutlierProb, OutlierMax float64
	// SendOverhead and RecvOverhead are the CPU time of a send / receive.
	SendOverhead, RecvOverhead float64
	// ByteCost is the extra latency per payload byte (1/bandwidth).
	ByteCost float64
	// ClockRead is the cost of one clock read (s).
	ClockRead float64
	// Buffer is the capacity of each rank's inbox channel (default 64).
	Buffer int
	// FastPath makes the transports implement
	// clocksync.PingPongTransport, emulating a C-side ping-pong loop.
	FastPath bool
}

// DefaultParams returns an InfiniBand-like cluster: 1.5 µs inter-node and
// 0.3 µs intra-node latency, 100 ns / 30 ns mean jitter, 5 % asymmetry,
// 1e-4 outliers up to 50 µs, clocks within ±1 ms and ±10 ppm, a skew
// change of up to ±1e-9 /s, 25 ns clock reads.
func DefaultParams(ranks, nodes int, seed uint64) Params {
	return Params{
		Ranks: ranks, Nodes: nodes, Seed: seed,
		OffsetMax: 1e-3, SkewMax: 1e-5, DriftMax: 1e-9,
		IntraLatency: 0.3e-6, InterLatency: 1.5e-6,
		IntraJitter: 30e-9, InterJitter: 100e-9,
		Asymmetry:   0.05,
		OutlierProb: 1e-4, OutlierMax: 50e-6,
		SendOverhead: 100e-9, RecvOverhead: 100e-9,
		ByteCost:  0.1e-9,
		ClockRead: 25e-9,
		Buffer:    64,
	}
}

// NodeClock is the true clock of one node: at true time T it reads
// Base + T + Offset + Skew*T + DriftRate*T*T/2 + Extra(T).
type NodeClock struct {
	Base, Offset, Skew, DriftRate float64
	// Extra is an optional non-linear part (s) at true time T, e.g. a
	// random-walk frequency or a frequency step (set it on World.Clocks
	// after New, before Run; nil: none). It must be safe for concurrent
	// use and keep the clock strictly increasing.
	Extra func(T float64) float64
}

// At returns the node clock's reading at true time T.
func (c *NodeClock) At(T float64) float64 {
	v := T + c.Offset + c.Skew*T + 0.5*c.DriftRate*T*T
	if c.Extra != nil {
		v += c.Extra(T)
	}
	return c.Base + v
}

// World is one simulated machine.
type World struct {
	P      Params
	Clocks []NodeClock // per node
	nodeOf []int
	procs  []*proc
	world  *comm
	// FastPathCalls counts PingPongServe/PingPongClient calls (FastPath).
	FastPathCalls atomic.Int64
}

type proc struct {
	w     *World
	rank  int
	node  int
	now   float64
	rng   *rand.Rand
	clock *Clock
}

// New builds a world. It panics on impossible parameters (no ranks, more
// nodes than ranks, bad NodeOf).
func New(p Params) *World {
	d := DefaultParams(p.Ranks, p.Nodes, p.Seed)
	if p.Buffer <= 0 {
		p.Buffer = d.Buffer
	}
	if p.Ranks < 1 || p.Nodes < 1 {
		panic(fmt.Sprintf("sim: need ranks >= 1 and nodes >= 1, got %d and %d", p.Ranks, p.Nodes))
	}
	w := &World{P: p, nodeOf: make([]int, p.Ranks)}
	if p.NodeOf != nil {
		if len(p.NodeOf) != p.Ranks {
			panic(fmt.Sprintf("sim: NodeOf has %d entries for %d ranks", len(p.NodeOf), p.Ranks))
		}
		for r, n := range p.NodeOf {
			if n < 0 || n >= p.Nodes {
				panic(fmt.Sprintf("sim: NodeOf[%d] = %d outside [0,%d)", r, n, p.Nodes))
			}
			w.nodeOf[r] = n
		}
	} else {
		if p.Nodes > p.Ranks {
			panic(fmt.Sprintf("sim: %d nodes for %d ranks", p.Nodes, p.Ranks))
		}
		base, extra := p.Ranks/p.Nodes, p.Ranks%p.Nodes
		r := 0
		for n := 0; n < p.Nodes; n++ {
			k := base
			if n < extra {
				k++
			}
			for i := 0; i < k; i++ {
				w.nodeOf[r] = n
				r++
			}
		}
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	w.Clocks = make([]NodeClock, p.Nodes)
	for n := range w.Clocks {
		w.Clocks[n] = NodeClock{
			Base:      p.ClockBase,
			Offset:    (2*rng.Float64() - 1) * p.OffsetMax,
			Skew:      (2*rng.Float64() - 1) * p.SkewMax,
			DriftRate: (2*rng.Float64() - 1) * p.DriftMax,
		}
	}
	w.procs = make([]*proc, p.Ranks)
	members := make([]int, p.Ranks)
	for r := range w.procs {
		w.procs[r] = &proc{w: w, rank: r, node: w.nodeOf[r], rng: rand.New(rand.NewPCG(p.Seed, uint64(r)+1))}
		members[r] = r
	}
	w.world = newComm(w, members)
	return w
}

// NodeOf returns the node of world rank r.
func (w *World) NodeOf(r int) int { return w.nodeOf[r] }

// Now returns the virtual (true) time of world rank r.
func (w *World) Now(r int) float64 { return w.procs[r].now }

// LocalTime returns the true reading of rank r's local clock at true time T.
func (w *World) LocalTime(r int, T float64) float64 { return w.Clocks[w.nodeOf[r]].At(T) }

// RefTime returns the reference clock (rank 0's local clock) at true time T.
func (w *World) RefTime(T float64) float64 { return w.LocalTime(0, T) }

// Error returns the error of rank r's global clock g at true time T:
// g's reading minus the reference time, both at T. g must be built on top
// of the Clock this world handed to rank r.
func (w *World) Error(r int, g clocksync.Clock, T float64) float64 {
	m, _ := clocksync.Flatten(g)
	return m.Global(w.LocalTime(r, T)) - w.RefTime(T)
}

// hash01 maps (seed, a, b) to [-1, 1] deterministically (splitmix64).
func hash01(seed uint64, a, b int) float64 {
	z := seed ^ (uint64(a)*0x9e3779b97f4a7c15 + uint64(b)*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/float64(1<<53)*2 - 1
}

// MinLatency is the minimum one-way latency from world rank src to dst
// (before jitter, outliers and payload).
func (w *World) MinLatency(src, dst int) float64 {
	ns, nd := w.nodeOf[src], w.nodeOf[dst]
	if ns == nd {
		return w.P.IntraLatency * (1 + w.P.Asymmetry*hash01(w.P.Seed, src, dst))
	}
	return w.P.InterLatency * (1 + w.P.Asymmetry*hash01(w.P.Seed^0x5555, ns, nd))
}

func (p *proc) latency(dst, nbytes int) float64 {
	w := p.w
	l := w.MinLatency(p.rank, dst)
	jit := w.P.InterJitter
	if w.nodeOf[dst] == p.node {
		jit = w.P.IntraJitter
	}
	if jit > 0 {
		l += p.rng.ExpFloat64() * jit
	}
	if w.P.OutlierProb > 0 && p.rng.Float64() < w.P.OutlierProb {
		l += p.rng.Float64() * w.P.OutlierMax
	}
	return l + float64(nbytes)*w.P.ByteCost
}

// Clock is a rank's local clock: its node's clock at the rank's virtual
// time. Every read costs Params.ClockRead of virtual time.
type Clock struct{ p *proc }

// GetTime implements clocksync.Clock.
func (c *Clock) GetTime() float64 {
	c.p.now += c.p.w.P.ClockRead
	return c.p.w.Clocks[c.p.node].At(c.p.now)
}

// Rank returns the world rank that owns the clock.
func (c *Clock) Rank() int { return c.p.rank }

// RankFunc is the body run by every rank.
type RankFunc func(rank int, t clocksync.Transport, clk *Clock) error

// Run runs f on every rank, each in its own goroutine, and waits for all.
// It returns the first error (by rank).
func (w *World) Run(f RankFunc) error {
	errs := make([]error, len(w.procs))
	var wg sync.WaitGroup
	for r, p := range w.procs {
		wg.Add(1)
		go func(r int, p *proc) {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[r] = fmt.Errorf("rank %d panicked: %v", r, v)
				}
			}()
			clk := &Clock{p: p}
			p.clock = clk
			errs[r] = f(r, w.world.transport(r, p), clk)
		}(r, p)
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			return fmt.Errorf("sim: rank %d: %w", r, err)
		}
	}
	return nil
}

// Advance adds d seconds of virtual time to rank r (call only from rank r's
// goroutine or between runs).
func (w *World) Advance(r int, d float64) { w.procs[r].now += d }

// MaxNow returns the largest virtual time over all ranks.
func (w *World) MaxNow() float64 {
	m := math.Inf(-1)
	for _, p := range w.procs {
		m = math.Max(m, p.now)
	}
	return m
}
