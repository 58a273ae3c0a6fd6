// Package synth generates synthetic gclock runs (one trace file per rank)
// with a known truth, for testing and benchmarking the merger: an AMG-like
// sequence of collectives on MPI_COMM_WORLD and split communicators,
// deterministic per-rank compute imbalance, injected clock error per
// emulated node (recorded in Header.Inject exactly as trace.Injection
// documents), and sync epochs whose models are the exact (or configurably
// noisy) inverse of that injection.
//
// Ranks run in lockstep over one simulated true timeline, so every
// collective instance is consistent across its members (no member leaves a
// synchronising collective before the last member entered). Files are
// written streaming, chunk by chunk, so 10^7 events need only
// Ranks*ChunkEvents events of memory.
package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/gclock/gclock/trace"
)

// NodeClock is the clock error injected on one emulated node.
type NodeClock struct {
	OffsetNS float64
	DriftPPM float64
}

// Truncation cuts a rank's file to KeepFraction of its size after writing
// (a rank killed mid-run whose last frame is torn).
type Truncation struct {
	Rank         int
	KeepFraction float64
}

// ChunkRef names one event chunk of one rank.
type ChunkRef struct {
	Rank  int
	Chunk int
}

// Config describes a synthetic run. Zero values take the defaults noted.
type Config struct {
	Ranks    int    // world size (default 8)
	NodeSize int    // ranks per emulated node (default 4)
	Steps    int    // collective calls per rank = events per rank (default 10000)
	Seed     uint64 // all randomness derives from it (default 1)
	JobID    string // default "synth-<seed>"
	// ChunkEvents is the events per EVENTS frame (default 8192).
	ChunkEvents int
	// SplitGroups splits MPI_COMM_WORLD into this many contiguous blocks
	// of ranks (MPI_Comm_split with color = rank*SplitGroups/Ranks);
	// default 2, 1 disables the split comm.
	SplitGroups int
	// Halo adds before every collective a ring halo exchange on
	// MPI_COMM_WORLD: MPI_Irecv from both neighbours, MPI_Isend of HaloBytes
	// to both, and an MPI_Waitall completing the four requests (eight
	// point-to-point records per step, so most events are point-to-point).
	Halo      bool
	HaloBytes uint64 // default 4096
	// HaloMix varies the halo exchange's form step by step (with Halo):
	// the plain one; the receive from the left with MPI_ANY_SOURCE and
	// MPI_ANY_TAG; synchronous sends (MPI_Issend); persistent requests
	// (MPI_Recv_init/MPI_Send_init, MPI_Start each time, MPI_Request_free
	// every other time); an MPI_Ibarrier on MPI_COMM_WORLD completed by the
	// same MPI_Waitall; two MPI_Sendrecv; MPI_Send then MPI_Recv.
	HaloMix bool
	// FirstSeq is every communicator's first collective sequence number
	// (trace.Event.Seq; the recorder starts at 0): near 2^32 the numbers
	// wrap within the run, as after 2^32 collectives on one communicator.
	FirstSeq uint32
	// PatternLen is the length of the repeating op sequence (default 24).
	PatternLen int
	// ComputeNS is the mean compute time between calls (default 20000).
	ComputeNS float64
	// Imbalance is the spread of per-rank static slowdown: rank r computes
	// ComputeNS*(1+Imbalance*u_r), u_r uniform in [0,1) (default 0.2;
	// set NoImbalance for none).
	Imbalance   float64
	NoImbalance bool
	// JitterNS is the uniform jitter amplitude of compute time (default 50).
	JitterNS float64
	// MaxOffsetNS and MaxDriftPPM bound the per-node injected clock error,
	// drawn uniformly in [-max, max] (defaults 5e6 ns and 20 ppm). Nodes,
	// if set, gives the error of each node explicitly instead.
	MaxOffsetNS float64
	MaxDriftPPM float64
	Nodes       []NodeClock
	NoInjection bool // record raw times (Header.Inject nil)
	// ReferenceExact gives node 0 (and so the reference rank 0) no clock
	// error, making global time equal to the raw (true) timer.
	ReferenceExact bool
	// Slowdown overrides the compute slowdown factor of individual ranks
	// (e.g. {5: 1.5} makes rank 5 compute 50% longer than the base, so it
	// arrives last at most collectives).
	Slowdown map[int]float64
	// ModelNoiseNS adds Gaussian noise of this standard deviation to each
	// epoch model's intercept, ModelSlopeNoise to its slope (default 0:
	// exact inverse of the injection).
	ModelNoiseNS    float64
	ModelSlopeNoise float64
	// BaseNS is the raw (true) timer value at the start (default 1e12).
	BaseNS int64
	// KeepTimes makes Truth.Enter/Exit hold the true global time of every
	// event (16 bytes per event).
	KeepTimes bool

	// Bad-input options for the merger's tests.
	MissingRanks  []int        // files not written
	ForeignRanks  []int        // header JobID of these ranks is JobID+"-other"
	CrashedRanks  []int        // no epoch 1 and no footer (killed before finalize)
	Truncate      []Truncation // cut files after writing
	CorruptChunks []ChunkRef   // flip one payload byte in these chunks
	// GarbageFiles are written into dir with non-trace content (e.g.
	// "rank-00099.gct" or "notes.txt") to test "not a trace" handling.
	GarbageFiles   []string
	CompressionLvl int // zstd level (default trace.DefaultCompressionLevel)
}

// Truth is what the generator knows exactly about the run it wrote.
type Truth struct {
	Config Config      // with defaults filled in
	Files  []string    // path per rank ("" for missing ranks)
	Nodes  []NodeClock // injected error per node
	// Inject per rank (nil when NoInjection).
	Inject []*trace.Injection
	// Models per rank: the exact model (before noise) mapping local time to
	// global (rank 0) time; Epochs hold the written (possibly noisy) ones.
	Models [][2]trace.Model // [rank][epoch]
	Epochs [][2]trace.Epoch
	Comms  [][]trace.Comm // comm table per rank
	// Events per rank as written (before damage).
	Events []int
	// Instances counts collective instances per comm ID (each matched across
	// all members).
	Instances map[uint64]int
	// Ops counts events per op over all ranks.
	Ops map[trace.Op]int
	// Enter/Exit hold the true global time (ns, rank 0's recorded
	// timebase) of every event when Config.KeepTimes: [rank][event].
	Enter, Exit [][]float64
	// Damaged lists the chunks corrupted by CorruptChunks (rank, chunk).
	Damaged []ChunkRef

	dir string
}

// TotalEvents returns the events written over all ranks.
func (t *Truth) TotalEvents() int {
	n := 0
	for _, e := range t.Events {
		n += e
	}
	return n
}

// RawTime returns the true (raw timer) time of a recorded local timestamp
// of rank r.
func (t *Truth) RawTime(rank int, local int64) float64 {
	return t.Inject[rank].TrueTime(local)
}

// Global returns the exact global time (rank 0's recorded clock) of a
// recorded local timestamp of rank r: what a perfect correction yields.
func (t *Truth) Global(rank int, local int64) float64 {
	raw := t.RawTime(rank, local)
	if in := t.Inject[0]; in != nil {
		return raw + in.OffsetNS + in.DriftPPM*1e-6*raw
	}
	return raw
}

func (c *Config) defaults() error {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Ranks, 8)
	def(&c.NodeSize, 4)
	def(&c.Steps, 10000)
	def(&c.ChunkEvents, 8192)
	def(&c.SplitGroups, 2)
	def(&c.PatternLen, 24)
	def(&c.CompressionLvl, trace.DefaultCompressionLevel)
	if c.HaloBytes == 0 {
		c.HaloBytes = 4096
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.JobID == "" {
		c.JobID = fmt.Sprintf("synth-%d", c.Seed)
	}
	fdef := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	fdef(&c.ComputeNS, 20000)
	if !c.NoImbalance {
		fdef(&c.Imbalance, 0.2)
	} else {
		c.Imbalance = 0
	}
	fdef(&c.JitterNS, 50)
	fdef(&c.MaxOffsetNS, 5e6)
	fdef(&c.MaxDriftPPM, 20)
	if c.BaseNS == 0 {
		c.BaseNS = 1e12
	}
	switch {
	case c.Ranks < 1:
		return fmt.Errorf("synth: Ranks = %d, want >= 1", c.Ranks)
	case c.NodeSize < 1:
		return fmt.Errorf("synth: NodeSize = %d, want >= 1", c.NodeSize)
	case c.Steps < 0:
		return fmt.Errorf("synth: Steps = %d, want >= 0", c.Steps)
	case c.SplitGroups < 1 || c.SplitGroups > c.Ranks:
		return fmt.Errorf("synth: SplitGroups = %d, want 1..Ranks (%d)", c.SplitGroups, c.Ranks)
	case c.ChunkEvents < 1 || c.ChunkEvents > trace.MaxChunkEvents:
		return fmt.Errorf("synth: ChunkEvents = %d, want 1..%d", c.ChunkEvents, trace.MaxChunkEvents)
	case c.PatternLen < 1:
		return fmt.Errorf("synth: PatternLen = %d, want >= 1", c.PatternLen)
	}
	for name, list := range map[string][]int{"MissingRanks": c.MissingRanks, "ForeignRanks": c.ForeignRanks, "CrashedRanks": c.CrashedRanks} {
		for _, r := range list {
			if r < 0 || r >= c.Ranks {
				return fmt.Errorf("synth: %s: rank %d outside 0..%d", name, r, c.Ranks-1)
			}
		}
	}
	for r, f := range c.Slowdown {
		if r < 0 || r >= c.Ranks || !(f > 0) {
			return fmt.Errorf("synth: Slowdown: rank %d factor %g: want a rank in 0..%d and a factor > 0", r, f, c.Ranks-1)
		}
	}
	nodes := (c.Ranks + c.NodeSize - 1) / c.NodeSize
	if c.Nodes != nil && len(c.Nodes) != nodes {
		return fmt.Errorf("synth: %d Nodes given, the run has %d nodes", len(c.Nodes), nodes)
	}
	return nil
}

// step is one position of the repeating op pattern.
type step struct {
	op         trace.Op
	split      bool // on the split comm instead of world
	compute    float64
	site       uint64
	sent, recv uint64
}

func makePattern(c *Config, rng *rand.Rand) []step {
	pat := make([]step, c.PatternLen)
	for i := range pat {
		s := &pat[i]
		u := rng.Float64()
		switch {
		case u < 0.75:
			s.op, s.sent, s.recv = trace.OpAllreduce, 8, 8
		case u < 0.83:
			s.op, s.sent, s.recv = trace.OpBcast, 64, 64
		case u < 0.90:
			s.op, s.sent, s.recv = trace.OpAllgather, 16, 0 // recv set per comm size
		case u < 0.95:
			s.op = trace.OpBarrier
		default:
			s.op, s.sent, s.recv = trace.OpAlltoall, 0, 0 // per comm size
		}
		s.split = c.SplitGroups > 1 && rng.Float64() < 0.3
		// Compute before this call: mostly short, a few long phases.
		s.compute = c.ComputeNS * (0.25 + 1.5*rng.Float64())
		if rng.Float64() < 0.1 {
			s.compute *= 10
		}
		s.site = 0x401000 + uint64(i)*0x40 + uint64(rng.IntN(16))*4
	}
	return pat
}

// latency is the true duration model of a collective on n ranks after the
// last member entered.
func latency(op trace.Op, n int) float64 {
	lg := math.Log2(float64(max(n, 2)))
	switch op {
	case trace.OpBarrier:
		return 800 + 400*lg
	case trace.OpAllreduce:
		return 1500 + 600*lg
	case trace.OpBcast:
		return 700 + 300*lg
	case trace.OpAllgather:
		return 2000 + 900*lg
	default:
		return 3000 + 150*float64(n)
	}
}

func has(list []int, r int) bool {
	for _, x := range list {
		if x == r {
			return true
		}
	}
	return false
}

// exactModel returns the model mapping rank-local recorded time to rank 0's
// recorded time, anchored at t0 (see trace.Model and docs/explanation/decisions.md D1).
func exactModel(in, ref *trace.Injection, t0 int64) trace.Model {
	var offR, dR, off0, d0 float64
	if in != nil {
		offR, dR = in.OffsetNS, in.DriftPPM*1e-6
	}
	if ref != nil {
		off0, d0 = ref.OffsetNS, ref.DriftPPM*1e-6
	}
	// global(x) = (x - offR)*k + off0, k = (1+d0)/(1+dR)
	// offset(x) = x - global(x) = (1-k)*(x-T0) + [T0*(1-k) + offR*k - off0]
	k := (1 + d0) / (1 + dR)
	oneMinusK := (dR - d0) / (1 + dR)
	return trace.Model{T0: t0, Slope: oneMinusK, Intercept: float64(t0)*oneMinusK + offR*k - off0}
}

// rankState is one rank's writer and buffers during generation.
type rankState struct {
	w      *trace.Writer
	buf    []trace.Event
	ready  float64 // raw time the rank is ready to enter the next call
	exit   float64
	enter  float64
	rng    *rand.Rand
	slow   float64
	seq    [3]uint32 // per local comm
	inject *trace.Injection
	req    uint32     // last request id
	halo   [4]haloReq // this step's requests: recv left, recv right, send left, send right
	// persistent: the persistent halo requests were created (HaloMix)
	persistent bool
}

// haloReq is one request of a halo step.
type haloReq struct {
	id         uint32
	peer       int32
	tag        int32
	post, done float64 // raw start and raw completion
}

func record(in *trace.Injection, raw float64) int64 {
	if in == nil {
		return int64(math.Round(raw))
	}
	return int64(math.Round(raw + in.OffsetNS + in.DriftPPM*1e-6*raw))
}

// Generate writes the run described by cfg into dir (created if needed) as
// dir/rank-NNNNN.gct files and returns its truth.
func Generate(dir string, cfg Config) (*Truth, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	c := cfg
	P := c.Ranks
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	nNodes := (P + c.NodeSize - 1) / c.NodeSize
	tr := &Truth{Config: c, Files: make([]string, P), Inject: make([]*trace.Injection, P),
		Models: make([][2]trace.Model, P), Epochs: make([][2]trace.Epoch, P), Comms: make([][]trace.Comm, P),
		Events: make([]int, P), Instances: map[uint64]int{}, Ops: map[trace.Op]int{}}
	tr.dir = dir
	tr.Nodes = slices.Clone(c.Nodes)
	if tr.Nodes == nil {
		tr.Nodes = make([]NodeClock, nNodes)
		for i := range tr.Nodes {
			tr.Nodes[i] = NodeClock{
				OffsetNS: (2*rng.Float64() - 1) * c.MaxOffsetNS,
				DriftPPM: (2*rng.Float64() - 1) * c.MaxDriftPPM,
			}
		}
	}
	if c.ReferenceExact && len(tr.Nodes) > 0 {
		tr.Nodes[0] = NodeClock{}
	}
	pattern := makePattern(&c, rng)

	// Communicators: world (local 0), self (local 1), split (local 2).
	color := func(r int) int { return r * c.SplitGroups / P }
	world := make([]int32, P)
	for i := range world {
		world[i] = int32(i)
	}
	groups := make([][]int32, c.SplitGroups)
	for r := 0; r < P; r++ {
		groups[color(r)] = append(groups[color(r)], int32(r))
	}
	splitID := make([]uint64, c.SplitGroups)
	for g, m := range groups {
		splitID[g] = trace.CommID(trace.CommWorldID, 0, m[0])
	}

	ranks := make([]*rankState, P)
	defer func() {
		for _, rs := range ranks {
			if rs != nil && rs.w != nil {
				rs.w.Abort()
			}
		}
	}()
	start := float64(c.BaseNS)
	for r := 0; r < P; r++ {
		node := r / c.NodeSize
		var in *trace.Injection
		if !c.NoInjection {
			in = &trace.Injection{
				Spec:     fmt.Sprintf("synth:seed=%d,maxoff=%g,maxppm=%g", c.Seed, c.MaxOffsetNS, c.MaxDriftPPM),
				NodeSize: c.NodeSize, OffsetNS: tr.Nodes[node].OffsetNS, DriftPPM: tr.Nodes[node].DriftPPM,
			}
		}
		tr.Inject[r] = in
		rrng := rand.New(rand.NewPCG(c.Seed, uint64(r)+1))
		rs := &rankState{rng: rrng, inject: in, ready: start, buf: make([]trace.Event, 0, c.ChunkEvents),
			seq: [3]uint32{c.FirstSeq, c.FirstSeq, c.FirstSeq}}
		rs.slow = 1 + c.Imbalance*rrng.Float64()
		if f, ok := c.Slowdown[r]; ok {
			rs.slow = f
		}
		ranks[r] = rs
		tr.Comms[r] = []trace.Comm{
			{ID: trace.CommWorldID, Local: 0, Kind: "world", Members: world, CreatedNS: record(in, start-2e5)},
			{ID: trace.CommSelfID, Local: 1, Kind: "self", Members: []int32{int32(r)}, CreatedNS: record(in, start-2e5)},
		}
		if c.SplitGroups > 1 {
			tr.Comms[r] = append(tr.Comms[r], trace.Comm{ID: splitID[color(r)], Local: 2, Parent: trace.CommWorldID,
				Kind: "split", Members: groups[color(r)], CreatedNS: record(in, start-1e5)})
		}
		if c.KeepTimes {
			tr.Enter = append(tr.Enter, make([]float64, 0, c.Steps))
			tr.Exit = append(tr.Exit, make([]float64, 0, c.Steps))
		}
	}
	// Epoch 0 ends at start-3e5 (raw), epoch 1 is written after the run.
	noise := rand.New(rand.NewPCG(c.Seed, 0xe90c))
	makeEpoch := func(r, idx int, t0, t1 float64) trace.Epoch {
		in := tr.Inject[r]
		end := record(in, t1)
		exact := exactModel(in, tr.Inject[0], end)
		tr.Models[r][idx] = exact
		m := exact
		if c.ModelNoiseNS > 0 {
			m.Intercept += noise.NormFloat64() * c.ModelNoiseNS
		}
		if c.ModelSlopeNoise > 0 {
			m.Slope += noise.NormFloat64() * c.ModelSlopeNoise
		}
		alg := "synth-exact"
		if c.ModelNoiseNS > 0 || c.ModelSlopeNoise > 0 {
			alg = "synth-noisy"
		}
		e := trace.Epoch{Index: idx, Algorithm: alg, StartNS: record(in, t0), EndNS: end, Model: m,
			Params: map[string]string{"noise_ns": fmt.Sprint(c.ModelNoiseNS), "slope_noise": fmt.Sprint(c.ModelSlopeNoise)}}
		tr.Epochs[r][idx] = e
		return e
	}
	for r := 0; r < P; r++ {
		rs := ranks[r]
		e0 := makeEpoch(r, 0, start-8e5, start-3e5)
		if has(c.MissingRanks, r) {
			continue
		}
		job := c.JobID
		if has(c.ForeignRanks, r) {
			job += "-other"
		}
		h := trace.Header{
			JobID: job, Rank: r, WorldSize: P, Host: fmt.Sprintf("synth-node%03d", r/c.NodeSize), PID: 10000 + r,
			Exe: "/synth/amg", Args: []string{"amg", "-synthetic"}, MPILib: "gclock synth",
			Timer: trace.Timer{Name: "monotonic", CostNS: 24}, NodeID: r / c.NodeSize, NodeSize: min(c.NodeSize, P-r/c.NodeSize*c.NodeSize),
			Inject:  rs.inject,
			Objects: []trace.Object{{Path: "/synth/amg", Base: 0x400000, Lo: 0x401000, Hi: 0x402000}},
			StartNS: record(rs.inject, start),
			Config:  map[string]string{"synth_seed": fmt.Sprint(c.Seed), "GCLOCK_NODE_SIZE": fmt.Sprint(c.NodeSize)},
		}
		path := filepath.Join(dir, trace.RankFileName(r))
		w, err := trace.Create(path, h, trace.WithCompressionLevel(c.CompressionLvl))
		if err != nil {
			return nil, fmt.Errorf("synth: rank %d: %w", r, err)
		}
		rs.w = w
		tr.Files[r] = path
		if err := w.WriteEpoch(e0); err != nil {
			return nil, fmt.Errorf("synth: rank %d: %w", r, err)
		}
		for _, cm := range tr.Comms[r] {
			if err := w.WriteComm(cm); err != nil {
				return nil, fmt.Errorf("synth: rank %d: %w", r, err)
			}
		}
	}

	emit := func(r int, rs *rankState, ev trace.Event) error {
		tr.Events[r]++
		tr.Ops[ev.Op]++
		if c.KeepTimes {
			tr.Enter[r] = append(tr.Enter[r], tr.Global(r, ev.EnterNS))
			tr.Exit[r] = append(tr.Exit[r], tr.Global(r, ev.ExitNS))
		}
		if rs.w == nil {
			return nil
		}
		rs.buf = append(rs.buf, ev)
		if len(rs.buf) == c.ChunkEvents {
			if err := rs.w.WriteEvents(rs.buf); err != nil {
				return fmt.Errorf("synth: rank %d: %w", r, err)
			}
			rs.buf = rs.buf[:0]
		}
		return nil
	}
	// halo runs one ring exchange: every rank posts its two receives and
	// two sends 200 ns apart after half its compute time, then waits in
	// MPI_Waitall until both neighbours' sends arrived (latency 1500 ns).
	halo := func(step int) error {
		const site = 0x401800
		form := 0
		if c.HaloMix {
			form = step % 7
		}
		for r, rs := range ranks {
			h0 := rs.ready + c.ComputeNS*rs.slow/2
			left, right := int32((r+P-1)%P), int32((r+1)%P)
			peers := [4]int32{left, right, left, right}
			tags := [4]int32{1, 2, 2, 1} // receive from left with tag 1 = left's send to its right
			for i := range rs.halo {
				rs.req++
				rs.halo[i] = haloReq{id: rs.req, peer: peers[i], tag: tags[i], post: h0 + float64(i)*200}
				if form == 3 {
					rs.halo[i].id = 1<<20 + uint32(i) // persistent: the same request every time
				}
			}
		}
		for r, rs := range ranks {
			wEnter := rs.halo[3].post + 200
			done := wEnter
			for i := 0; i < 2; i++ { // receives: the neighbour's matching send + latency
				nb := ranks[rs.halo[i].peer]
				done = math.Max(done, nb.halo[3-i].post+1500) // its send towards me
			}
			wExit := done + 100 + rs.rng.Float64()*100
			var nbc trace.Event // form 4: an MPI_Ibarrier completed with the halo
			if form == 4 {
				rs.req++
				nbc = trace.Event{Op: trace.OpIbarrier, Comm: 0, Seq: rs.seq[0], Root: -1, Req: rs.req, Callsite: site + 0x80,
					EnterNS: record(rs.inject, rs.halo[0].post-300), ExitNS: record(rs.inject, rs.halo[0].post-200)}
				rs.seq[0]++
				if err := emit(r, rs, nbc); err != nil {
					return err
				}
			}
			if form == 3 && !rs.persistent {
				rs.persistent = true
				for i, hr := range rs.halo {
					ev := trace.Event{Op: trace.OpRecvInit, Comm: 0, Root: -1, Peer: hr.peer, Tag: hr.tag, Req: hr.id, Callsite: site + 0x100 + uint64(i)*8,
						EnterNS: record(rs.inject, hr.post-1000+float64(i)*10), ExitNS: record(rs.inject, hr.post-995+float64(i)*10)}
					if i < 2 {
						ev.Recv = c.HaloBytes
					} else {
						ev.Op, ev.Sent = trace.OpSendInit, c.HaloBytes
					}
					if err := emit(r, rs, ev); err != nil {
						return err
					}
				}
			}
			for i, hr := range rs.halo {
				ev := trace.Event{Comm: 0, Root: -1, Peer: hr.peer, Tag: hr.tag, Req: hr.id, Callsite: site + uint64(i)*8,
					EnterNS: record(rs.inject, hr.post), ExitNS: record(rs.inject, hr.post+150)}
				switch {
				case form == 3:
					ev.Op = trace.OpStart
				case i < 2:
					ev.Op, ev.Recv = trace.OpIrecv, c.HaloBytes
					if form == 1 && i == 0 {
						ev.Peer, ev.Tag = trace.PeerAny, trace.TagAny
					}
				case form == 2:
					ev.Op, ev.Sent = trace.OpIssend, c.HaloBytes
				default:
					ev.Op, ev.Sent = trace.OpIsend, c.HaloBytes
				}
				if err := emit(r, rs, ev); err != nil {
					return err
				}
			}
			if form == 4 {
				ev := trace.Event{Op: trace.OpWaitall, Comm: 0, Seq: 0, Root: -1, Peer: trace.PeerNull, Req: nbc.Req,
					Callsite: site + 0x40, EnterNS: record(rs.inject, wEnter), ExitNS: record(rs.inject, wExit)}
				if err := emit(r, rs, ev); err != nil {
					return err
				}
			}
			for i, hr := range rs.halo {
				seq := uint32(i)
				if form == 4 {
					seq++
				}
				ev := trace.Event{Op: trace.OpWaitall, Comm: 0, Seq: seq, Root: -1, Peer: hr.peer, Tag: hr.tag, Req: hr.id,
					Callsite: site + 0x40, EnterNS: record(rs.inject, wEnter), ExitNS: record(rs.inject, wExit)}
				if i < 2 {
					ev.Recv = c.HaloBytes
				} else {
					ev.Sent = c.HaloBytes
				}
				if err := emit(r, rs, ev); err != nil {
					return err
				}
			}
			if form == 3 && step/7%2 == 1 {
				// free the persistent requests (inactive): created again
				// the next time
				rs.persistent = false
				for i, hr := range rs.halo {
					t := wExit + 100 + float64(i)*20
					ev := trace.Event{Op: trace.OpRequestFree, Comm: 0, Root: -1, Peer: trace.PeerNull, Req: hr.id, Callsite: site + 0x140,
						EnterNS: record(rs.inject, t), ExitNS: record(rs.inject, t+10)}
					if err := emit(r, rs, ev); err != nil {
						return err
					}
				}
				wExit += 200
			}
			rs.ready = wExit
		}
		return nil
	}
	// blocking runs the halo exchange with blocking calls (HaloMix):
	// form 5 as two MPI_Sendrecv (right then left), form 6 as MPI_Send to
	// the right then MPI_Recv from the left (an eager send).
	blocking := func(form int) error {
		const site = 0x401a00
		enter := make([]float64, P)
		for r, rs := range ranks {
			enter[r] = rs.ready + c.ComputeNS*rs.slow/2
		}
		for r, rs := range ranks {
			left, right := int32((r+P-1)%P), int32((r+1)%P)
			t := enter[r]
			if form == 5 {
				// A: send right, receive from left; B: the other way
				aExit := math.Max(t, enter[left]) + 1500 + rs.rng.Float64()*100
				bEnter := aExit + 200
				bExit := math.Max(bEnter, math.Max(enter[right], t)+1900) + 1500 + rs.rng.Float64()*100
				for _, call := range []struct {
					to, from, tag int32
					in, out       float64
				}{{right, left, 1, t, aExit}, {left, right, 2, bEnter, bExit}} {
					for half := uint32(0); half < 2; half++ {
						ev := trace.Event{Op: trace.OpSendrecv, Comm: 0, Seq: half, Root: -1, Tag: call.tag, Callsite: site,
							EnterNS: record(rs.inject, call.in), ExitNS: record(rs.inject, call.out)}
						if half == 0 {
							ev.Peer, ev.Sent = call.to, c.HaloBytes
						} else {
							ev.Peer, ev.Recv = call.from, c.HaloBytes
						}
						if err := emit(r, rs, ev); err != nil {
							return err
						}
					}
				}
				rs.ready = bExit
				continue
			}
			send := trace.Event{Op: trace.OpSend, Comm: 0, Root: -1, Peer: right, Tag: 1, Sent: c.HaloBytes, Callsite: site + 0x10,
				EnterNS: record(rs.inject, t), ExitNS: record(rs.inject, t+300)}
			rEnter := t + 400
			rExit := math.Max(rEnter, enter[left]+1500) + 100 + rs.rng.Float64()*100
			recv := trace.Event{Op: trace.OpRecv, Comm: 0, Root: -1, Peer: left, Tag: 1, Recv: c.HaloBytes, Callsite: site + 0x20,
				EnterNS: record(rs.inject, rEnter), ExitNS: record(rs.inject, rExit)}
			for _, ev := range []trace.Event{send, recv} {
				if err := emit(r, rs, ev); err != nil {
					return err
				}
			}
			rs.ready = rExit
		}
		return nil
	}
	members := func(split bool, r int) []int32 {
		if split {
			return groups[color(r)]
		}
		return world
	}
	for s := 0; s < c.Steps; s++ {
		st := pattern[s%len(pattern)]
		if c.Halo {
			var err error
			if f := s % 7; c.HaloMix && f >= 5 {
				err = blocking(f)
			} else {
				err = halo(s)
			}
			if err != nil {
				return nil, err
			}
		}
		// Every rank computes, then enters.
		for _, rs := range ranks {
			j := (2*rs.rng.Float64() - 1) * c.JitterNS
			rs.enter = rs.ready + st.compute*rs.slow + j
		}
		// Each group (world, or each split block) completes one instance.
		nGroups := 1
		if st.split {
			nGroups = c.SplitGroups
		}
		for g := 0; g < nGroups; g++ {
			var mem []int32
			if st.split {
				mem = groups[g]
			} else {
				mem = world
			}
			last := math.Inf(-1)
			for _, m := range mem {
				last = math.Max(last, ranks[m].enter)
			}
			lat := latency(st.op, len(mem))
			rootEnter := ranks[mem[0]].enter
			for _, m := range mem {
				rs := ranks[m]
				tail := rs.rng.Float64() * 300
				switch {
				case st.op == trace.OpBcast && m == mem[0]:
					rs.exit = rs.enter + 300 + tail
				case st.op == trace.OpBcast:
					rs.exit = math.Max(rs.enter, rootEnter+lat) + tail
				default:
					rs.exit = last + lat + tail
				}
			}
			id := trace.CommWorldID
			if st.split {
				id = splitID[g]
			}
			tr.Instances[id]++
		}
		for r, rs := range ranks {
			mem := members(st.split, r)
			local := uint32(0)
			if st.split {
				local = 2
			}
			n := uint64(len(mem))
			ev := trace.Event{Op: st.op, Comm: local, Seq: rs.seq[local], Root: -1, Sent: st.sent, Recv: st.recv,
				EnterNS: record(rs.inject, rs.enter), ExitNS: record(rs.inject, rs.exit), Callsite: st.site}
			switch st.op {
			case trace.OpBcast:
				ev.Root = 0
			case trace.OpAllgather:
				ev.Recv = st.sent * n
			case trace.OpAlltoall:
				ev.Sent, ev.Recv = 8*n, 8*n
			}
			rs.seq[local]++
			rs.ready = rs.exit
			if err := emit(r, rs, ev); err != nil {
				return nil, err
			}
		}
	}
	endRaw := start
	for _, rs := range ranks {
		endRaw = math.Max(endRaw, rs.exit)
	}
	for r, rs := range ranks {
		e1 := makeEpoch(r, 1, endRaw+1e5, endRaw+6e5)
		if rs.w == nil {
			continue
		}
		w := rs.w
		rs.w = nil
		if err := w.WriteEvents(rs.buf); err != nil {
			return nil, fmt.Errorf("synth: rank %d: %w", r, err)
		}
		if has(c.CrashedRanks, r) {
			// Killed before finalize: no epoch 1, no footer.
			if err := w.Abort(); err != nil {
				return nil, fmt.Errorf("synth: rank %d: %w", r, err)
			}
			continue
		}
		if err := w.WriteEpoch(e1); err != nil {
			return nil, fmt.Errorf("synth: rank %d: %w", r, err)
		}
		if err := w.Close(trace.Footer{EndNS: record(rs.inject, endRaw+7e5), Reason: "finalize",
			BufferBytes: 24 * c.ChunkEvents}); err != nil {
			return nil, fmt.Errorf("synth: rank %d: %w", r, err)
		}
	}
	if err := damage(tr); err != nil {
		return nil, err
	}
	return tr, nil
}

// damage applies CorruptChunks and Truncate to the written files.
func damage(tr *Truth) error {
	c := &tr.Config
	refs := append([]ChunkRef(nil), c.CorruptChunks...)
	sort.Slice(refs, func(i, j int) bool { return refs[i].Rank < refs[j].Rank })
	for _, ref := range refs {
		if ref.Rank < 0 || ref.Rank >= c.Ranks || tr.Files[ref.Rank] == "" {
			return fmt.Errorf("synth: CorruptChunks: rank %d has no file", ref.Rank)
		}
		path := tr.Files[ref.Rank]
		r, err := trace.Open(path)
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		var ci *trace.ChunkInfo
		for i := range r.Meta().Chunks {
			if r.Meta().Chunks[i].Index == ref.Chunk {
				ci = &r.Meta().Chunks[i]
			}
		}
		r.Close()
		if ci == nil {
			return fmt.Errorf("synth: CorruptChunks: rank %d has no chunk %d", ref.Rank, ref.Chunk)
		}
		if err := flipByte(path, ci.Offset+12+int64(ci.Bytes/2)); err != nil {
			return err
		}
		tr.Damaged = append(tr.Damaged, ref)
	}
	for _, name := range c.GarbageFiles {
		if name == "" || filepath.Base(name) != name {
			return fmt.Errorf("synth: GarbageFiles: %q is not a plain file name", name)
		}
		content := []byte("this is not a gclock trace\n")
		if err := os.WriteFile(filepath.Join(tr.dir, name), content, 0o644); err != nil {
			return fmt.Errorf("synth: %w", err)
		}
	}
	for _, t := range c.Truncate {
		if t.Rank < 0 || t.Rank >= c.Ranks || tr.Files[t.Rank] == "" {
			return fmt.Errorf("synth: Truncate: rank %d has no file", t.Rank)
		}
		if t.KeepFraction < 0 || t.KeepFraction > 1 {
			return fmt.Errorf("synth: Truncate: rank %d: KeepFraction %g outside [0,1]", t.Rank, t.KeepFraction)
		}
		st, err := os.Stat(tr.Files[t.Rank])
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		if err := os.Truncate(tr.Files[t.Rank], int64(float64(st.Size())*t.KeepFraction)); err != nil {
			return fmt.Errorf("synth: %w", err)
		}
	}
	return nil
}

func flipByte(path string, off int64) (err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return fmt.Errorf("synth: corrupting %s at byte %d: %w", path, off, err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b[:], off); err != nil {
		return fmt.Errorf("synth: corrupting %s at byte %d: %w", path, off, err)
	}
	return nil
}
