package merge

// Partitioned parallel analysis (docs/explanation/tracemerge.md "Partitioning the
// analysis"): under mpirun with K processes and no per-event output, the
// collective analysis itself is split, not only the decoding.
//
// Roles (every process may hold several, each in its own goroutine):
//
//   - decoder: a process that owns a block of the rank files (as in
//     dist.go) decodes, corrects and merges them, sums each rank's own
//     figures (events, time in MPI, pauses: each rank's order, so exact),
//     drops repeated sequence numbers (each rank's own order too), and
//     routes every collective event to the owner of its instance and every
//     event a stream sink wants (point-to-point, RMA) to process 0 (in
//     compact form when process 0's root-cause stream is fed by the
//     point-to-point owners: part_compact.go, p2p_pipe.go; D83);
//   - owner: the processes owner0..K-1 own the instances (comm, seq) by
//     partPlan.ownerOf; an owner merges what the decoders send it by the
//     serial merge key, matches its instances with the serial matcher and
//     computes each instance's metrics (instWaits, skews, happened-before
//     facts) when the serial pass would finalise it, i.e. at the merge key
//     of the event (or rank end) that completes it; it sends process 0 one
//     record per instance tagged with that key;
//   - process 0 merges the owners' records by key and replays the
//     order-dependent aggregation (float sums, reservoirs, histograms,
//     per-rank waits, the wait matrix, call sites, exit profiles, the
//     worst instances) exactly in the serial order, so every summary
//     output is byte for byte the serial one. The worst instances
//     themselves cross once, at the end: a record carries only the entry
//     skew, the owner keeps its own top-N candidates, and process 0 asks
//     each owner for the ones its replay kept (part_replay.go
//     fetchWorst). It also feeds the stream sinks (point-to-point, RMA)
//     with the events the decoders forwarded, merged by the same key.
//
// Memory per process follows its share, not the run (decision
// D58): messages of at most partChunk events, received into
// buffers of their own size; a decoder holds at most partHeld events for
// all its consumers together; rounds of partRoundEvents events of the
// whole run, of which a process holds its share of partAhead rounds.
//
// Streams are cut into rounds of global time, the same for everyone
// (partPlan.round): a consumer handles round r once every producer has
// said it is done with r, and a decoder starts round r only when every
// consumer has acknowledged round r-partAhead, which bounds the memory in
// flight without any cycle of waits (the slowest decoder's rounds are
// always consumable). Receivers always receive (unbounded queues), so a
// sender never waits on a consumer's progress.
//
// What the serial pass does on damaged input (a rank skipping sequence
// numbers, events out of order beyond the reorder window, an instance
// window jump) depends on all of a communicator's instances at once; a
// decoder or owner that meets it flags the pass as irregular and process 0
// runs it again the event-shipping way (dist.go): ErrPartitionRerun.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// ErrPartitionRerun is returned by a partitioned pass (process 0's Run, a
// worker's Serve) whose input needs the event-shipping distribution (a
// damaged trace, see the package comment of part.go): the caller prepares
// a fresh pass and runs (serves) it again; process 0 then distributes the
// old way.
var ErrPartitionRerun = errors.New("parallel analysis: the partitioned pass met damaged input; running again with the events shipped to process 0")

const (
	partMagic = 0x54524150 // "PART": a partitioned plan
	partRerun = 3          // control word after a partitioned pass: serve again
	partAhead = 3          // rounds a decoder may run ahead of its slowest consumer
	// partBlock: instances are owned in blocks of partBlock consecutive
	// sequence numbers per communicator (round robin over the owners).
	partBlock = 64
	// partChunk: events per message at most (256 KiB). A decoder holds
	// at most partHeld events in its buffers to all consumers together
	// (part_decode.go) and a process pools partFree spent buffers
	// (part_net.go): memory that does not grow with K or the run.
	partChunk = 2048
	partHeld  = 8192
	// partChunkStream: events per message to process 0's stream sinks
	// (2 MiB). With root causes on, every event goes to process 0: in
	// messages of partChunk events, a forced-partition K=2 run of 10^7
	// events on 1024 ranks took 16–18 s against 8.2 s with 16,384 (each
	// message costs the MPI thread's hand-offs and an ack window), and
	// process 0 holds the whole stream anyway.
	partChunkStream = 16384
	partFree        = 8
	partMaxRounds   = 1 << 20

	tagData   = 7132 // decoder -> owner: collective events and rank ends
	tagStream = 7133 // decoder -> 0: events a stream sink wants
	tagRes    = 7134 // owner -> 0: instance records
	tagAckOwn = 7135 // owner -> decoder: rounds done
	tagAck0   = 7136 // 0 -> decoder: rounds done
	tagEndDec = 7137 // decoder -> 0: end record
	tagEndOwn = 7138 // owner -> 0: end record
	tagP2PRes = 7139 // owner -> 0: point-to-point records (p2p_part.go)
	// The worst instances, fetched at the end (part_replay.go partFetchWorst).
	tagWorstReq = 7141 // 0 -> owner: the record keys of the worst instances it kept
	tagWorstRes = 7142 // owner -> 0: those instances
)

// Message kinds (partHdr.kind).
const (
	pkEv  = 1 // GEvents
	pkRec = 2 // instance records
	pkAck = 3
	pkEnd = 4 // gob end record (terminal)
	pkEvC = 5 // events in compact form (part_compact.go)
)

// partRoundEvents is the target number of events (all ranks) per round
// up to 8 processes (a variable for the tests). Every process holds up to
// partAhead rounds of its share in flight: 2^17 (before) was ≈ 8 MB of a
// K=8 worker's 36 MB live heap on a 1024-rank run; 2^15 holds a quarter
// of that, for 4× the rounds (each a few header-only messages per pair of
// processes).
var partRoundEvents int64 = 1 << 15

// partRoundSize is the events per round with procs processes:
// partRoundEvents up to 8, then in proportion to procs, so that what a
// process holds in flight (its 1/procs of partAhead rounds) stays the
// same and the rounds, each costing messages between every pair of
// processes, become fewer as procs grows.
func partRoundSize(procs int) int64 {
	return partRoundEvents * int64(max(1, procs/8))
}

// partPlan is what process 0 tells every process: who decodes and owns
// what, and the rounds.
type partPlan struct {
	procs  int
	share0 float64
	rounds int
	start  float64
	delta  float64
	owner0 int
	want   [16]uint64 // ops a stream sink on process 0 wants (op < 1024; higher: all)
	// p2p: the point-to-point analysis is partitioned (p2p_part.go), with
	// these options.
	p2p bool
	// p2pSync: the owners report the wait states their streams find
	// (P2POptions.OnSync, at the serial root-cause stream's step: the
	// decoders send call-boundary markers; p2p_part.go), and process 0
	// replays them into its stream's OnSync.
	p2pSync         bool
	p2pTop, p2pKeep int
	p2pFrom, p2pTo  float64
	p2pRendezvous   uint64
	// compact: the decoders send process 0's stream in compact form
	// (part_compact.go), the ops in full whole.
	compact bool
	full    [16]uint64
}

const partPlanSize = 4 + 4 + 8 + 4 + 8 + 8 + 4 + 16*8 + 4 + 4 + 4 + 8 + 8 + 8 + 16*8

func (pl *partPlan) encode() []byte {
	b := make([]byte, 0, partPlanSize)
	b = binary.LittleEndian.AppendUint32(b, partMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.procs))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.share0))
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.rounds))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.start))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.delta))
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.owner0))
	for _, w := range pl.want {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	p2p := uint32(0)
	if pl.p2p {
		p2p = 1
	}
	if pl.p2pSync {
		p2p |= 2
	}
	if pl.compact {
		p2p |= 4
	}
	b = binary.LittleEndian.AppendUint32(b, p2p)
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.p2pTop))
	b = binary.LittleEndian.AppendUint32(b, uint32(pl.p2pKeep))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.p2pFrom))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pl.p2pTo))
	b = binary.LittleEndian.AppendUint64(b, pl.p2pRendezvous)
	for _, w := range pl.full {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// p2pOptions are the owners' point-to-point options.
func (pl *partPlan) p2pOptions() P2POptions {
	return P2POptions{TopN: pl.p2pTop, KeepMessages: pl.p2pKeep, From: pl.p2pFrom, To: pl.p2pTo, RendezvousBytes: pl.p2pRendezvous}
}

// decodePlan reads a plan; ok false when b is no plan.
func decodePlan(b []byte) (*partPlan, bool, error) {
	if len(b) != partPlanSize || binary.LittleEndian.Uint32(b) != partMagic {
		return nil, false, nil
	}
	le := binary.LittleEndian
	pl := &partPlan{procs: int(le.Uint32(b[4:])), share0: math.Float64frombits(le.Uint64(b[8:])),
		rounds: int(le.Uint32(b[16:])), start: math.Float64frombits(le.Uint64(b[20:])),
		delta: math.Float64frombits(le.Uint64(b[28:])), owner0: int(le.Uint32(b[36:]))}
	for i := range pl.want {
		pl.want[i] = le.Uint64(b[40+8*i:])
	}
	o := 40 + 8*len(pl.want)
	pl.p2p, pl.p2pSync, pl.compact = le.Uint32(b[o:])&1 != 0, le.Uint32(b[o:])&2 != 0, le.Uint32(b[o:])&4 != 0
	pl.p2pTop, pl.p2pKeep = int(int32(le.Uint32(b[o+4:]))), int(int32(le.Uint32(b[o+8:])))
	pl.p2pFrom, pl.p2pTo = math.Float64frombits(le.Uint64(b[o+12:])), math.Float64frombits(le.Uint64(b[o+20:]))
	pl.p2pRendezvous = le.Uint64(b[o+28:])
	for i := range pl.full {
		pl.full[i] = le.Uint64(b[o+36+8*i:])
	}
	if pl.procs < 2 || pl.rounds < 1 || pl.rounds > partMaxRounds || pl.owner0 < 0 || pl.owner0 >= pl.procs ||
		!(pl.delta > 0) || math.IsInf(pl.start, 0) || math.IsNaN(pl.start) {
		return nil, true, errors.New("parallel analysis: bad partition plan")
	}
	return pl, true, nil
}

// round is the round of merge key k.
func (pl *partPlan) round(k float64) int32 {
	if !(k >= pl.start) { // below the start, -Inf (ranks without events), NaN
		if math.IsNaN(k) {
			return int32(pl.rounds - 1)
		}
		return 0
	}
	r := (k - pl.start) / pl.delta
	if r >= float64(pl.rounds-1) {
		return int32(pl.rounds - 1)
	}
	return int32(r)
}

// ownerOf is the process that owns collective instance (comm, seq):
// blocks of partBlock sequence numbers round robin over the owners,
// starting at a place that depends on the communicator.
func (pl *partPlan) ownerOf(comm int32, seq uint32) int {
	n := uint64(pl.procs - pl.owner0)
	h := (uint64(uint32(comm)) * 0x9E3779B97F4A7C15) >> 40
	return pl.owner0 + int((h+uint64(seq/partBlock))%n)
}

func (pl *partPlan) wants(op trace.Op) bool {
	if int(op) >= 64*len(pl.want) {
		return true
	}
	return pl.want[op>>6]>>(op&63)&1 != 0
}

// decoders are the processes with rank files to decode.
func (pl *partPlan) decoders(nFiles int) []int {
	var out []int
	for p := 0; p < pl.procs; p++ {
		if lo, hi := ownedBlock(p, nFiles, pl.procs, pl.share0); hi > lo {
			out = append(out, p)
		}
	}
	return out
}

// partPlanFor decides whether process 0's pass can be partitioned and
// returns the plan (nil: ship events as dist.go does).
func (a *analyzer) partPlanFor(d *Dist) *partPlan {
	if !d.Partition || d.Procs < 2 || len(a.opt.Sinks) > 0 || len(a.zooms) > 0 || a.opt.CollectRepairs ||
		a.opt.CLC != nil || a.opt.Refine != nil || a.opt.Clock == correct.ClockRefined || a.p2pHB != nil {
		return nil
	}
	start, end := a.runStart, a.footerEnd()
	if math.IsInf(start, 0) || math.IsNaN(start) || math.IsInf(end, 0) || math.IsNaN(end) {
		return nil
	}
	total, ok := a.footerEvents()
	if !ok {
		return nil
	}
	pl := &partPlan{procs: d.Procs, share0: d.Share0, start: start}
	var target *P2PStream
	var fed *RootCauseStream
	for _, s := range a.opt.StreamSinks {
		if rc := asRootCause(s); rc != nil && target == nil && rc.opt.Stream == rc.p2p && rc.p2p != nil &&
			!rc.p2p.opt.CollectRepairs && rc.p2p.opt.onMessage == nil {
			// the root-cause stream drives the run's point-to-point
			// analysis: the owners match the messages and report the wait
			// states, process 0 replays both (the stream, fed, still
			// takes every event: it wants every op below)
			target, fed = rc.p2p, rc
			pl.p2p, pl.p2pSync, pl.p2pTop, pl.p2pKeep = true, true, rc.p2p.opt.TopN, rc.p2p.opt.KeepMessages
			pl.p2pFrom, pl.p2pTo, pl.p2pRendezvous = rc.p2p.opt.From, rc.p2p.opt.To, rc.p2p.opt.RendezvousBytes
		}
		if ps := asP2PStream(s); ps != nil && target == nil && !ps.opt.CollectRepairs {
			// partitioned: the owners analyse it, process 0 replays
			target = ps
			pl.p2p, pl.p2pTop, pl.p2pKeep = true, ps.opt.TopN, ps.opt.KeepMessages
			pl.p2pFrom, pl.p2pTo, pl.p2pRendezvous = ps.opt.From, ps.opt.To, ps.opt.RendezvousBytes
			pl.p2pSync = ps.opt.OnSync != nil
			continue
		}
		f, ok := s.(OpFilter)
		if !ok {
			return nil
		}
		isFed := fed != nil && asRootCause(s) == fed
		for op := 0; op < 64*len(pl.want); op++ {
			if f.Wants(trace.Op(op)) {
				pl.want[op>>6] |= 1 << (op & 63)
				if !isFed || isPSCW(trace.Op(op)) {
					// another sink, or what the fed stream reads whole
					pl.full[op>>6] |= 1 << (op & 63)
				}
			}
		}
	}
	pl.rounds = int(min(max(total/partRoundSize(d.Procs), 1), partMaxRounds))
	pl.delta = (end - start) / float64(pl.rounds)
	if !(pl.delta > 0) || math.IsInf(pl.delta, 0) {
		pl.rounds, pl.delta = 1, 1
	}
	if d.Procs >= 3 {
		pl.owner0 = 1 // process 0 replays and feeds the stream sinks
	} else if !d.Share0Fixed && pl.streamsEveryEvent() {
		// 2 processes, and a stream sink (the root-cause analysis) takes
		// every event on process 0: that is already process 0's longest
		// chain (≈ 45 % of a serial pass's CPU), so it decodes and owns
		// nothing, as with more processes; process 1 decodes every rank
		// and owns every instance (decision D64).
		pl.owner0, pl.share0 = 1, 0
	}
	a.p2pTarget, a.rcFed = target, fed
	pl.compact = fed != nil
	return pl
}

// streamsEveryEvent reports whether the stream sinks on process 0 want
// every collective and point-to-point operation (so process 0 receives
// every event whatever the partition).
func (pl *partPlan) streamsEveryEvent() bool {
	for _, op := range trace.Ops() {
		if (op.IsCollective() || op.IsPointToPoint()) && !pl.wants(op) {
			return false
		}
	}
	return true
}

// runPart is process 0's partitioned pass (the plan sent already).
func (a *analyzer) runPart(pl *partPlan) error {
	d := a.dist
	net := newPartNet(d.T, 0)
	defer net.stopWatch()
	decs := pl.decoders(len(a.rn.Ranks))
	a.startWindow(math.Inf(1)) // runStart is known (partPlanFor)
	if a.rcFed != nil {
		a.rcFed.feedFrom(a.p2pTarget)
	}
	for _, p := range decs {
		net.listen(p, tagEndDec)
		net.listen(p, tagStream)
	}
	for q := pl.owner0; q < pl.procs; q++ {
		net.listen(q, tagEndOwn)
		net.listen(q, tagWorstRes)
		net.listen(q, tagRes)
		if pl.p2p {
			net.listen(q, tagP2PRes)
		}
	}
	roles := &partRoles{}
	lo0, hi0 := ownedBlock(0, len(a.rn.Ranks), pl.procs, pl.share0)
	a.releaseOthers(lo0, hi0)
	if lo, hi := lo0, hi0; hi > lo {
		mine := a.block(lo, hi)
		roles.start(func() error { return a.partDecode(pl, net, mine) })
	}
	// The owner's matcher on process 0 is a.m; the replay touches none of
	// it but the communicator table, which matching does not change.
	if pl.owner0 == 0 {
		roles.start(func() error { return a.partOwn(pl, net, decs) })
	}
	roles.start(func() error {
		if err := a.partZero(pl, net, decs); err != nil {
			return err
		}
		return a.partEnds(pl, net, decs)
	})
	if err := roles.wait(); err != nil {
		return err
	}
	if a.partIrregular > 0 {
		for w := 1; w < d.Procs; w++ {
			if err := request(d.T, w, partRerun); err != nil {
				return err
			}
		}
		return ErrPartitionRerun
	}
	return nil
}

// servePart is a worker's partitioned pass.
func (a *analyzer) servePart(pl *partPlan, d *Dist) error {
	if a.failed != nil {
		return fmt.Errorf("%w: cannot take part: %v", ErrDistInput, a.failed)
	}
	if d.FailPart != nil {
		return d.FailPart
	}
	if pl.procs != d.Procs {
		return fmt.Errorf("parallel analysis: plan for %d processes in a job of %d", pl.procs, d.Procs)
	}
	if math.IsInf(a.runStart, 0) || a.runStart != pl.start {
		return errors.New("parallel analysis: this process sees another run start than process 0 (different files?)")
	}
	a.startWindow(math.Inf(1))
	net := newPartNet(d.T, d.Me)
	defer net.stopWatch()
	decs := pl.decoders(len(a.rn.Ranks))
	roles := &partRoles{}
	lo, hi := ownedBlock(d.Me, len(a.rn.Ranks), pl.procs, pl.share0)
	a.releaseOthers(lo, hi)
	a.releaseModels(lo, hi)
	if hi > lo {
		mine := a.block(lo, hi)
		roles.start(func() error { return a.partDecode(pl, net, mine) })
	}
	if d.Me >= pl.owner0 {
		roles.start(func() error { return a.partOwn(pl, net, decs) })
	}
	if err := roles.wait(); err != nil {
		return err
	}
	// Process 0 says stop, or run again the event-shipping way.
	msg, err := recvMsg(d.T, 0, nil)
	if err != nil {
		return err
	}
	if len(msg) == 4 && binary.LittleEndian.Uint32(msg) == partRerun {
		return ErrPartitionRerun
	}
	if len(msg) == 4 && binary.LittleEndian.Uint32(msg) == 0 {
		return nil
	}
	return errors.New("parallel analysis: bad request after the partitioned pass")
}

// releaseOthers drops what this process keeps of the rank files outside
// [lo, hi), which it does not decode: a rank file's reader (its chunk
// index, decoder state and read buffers: ≈ 4 kB a rank, in every process
// for every rank of the run) goes, closed, and only the rank's metadata
// stays (metaSource); so does the rank's call-site cache, which only its
// decoder uses (≈ 1 kB a rank at 1024 ranks). A pass that runs again
// (ErrPartitionRerun) loads the run again.
func (a *analyzer) releaseOthers(lo, hi int) {
	for i, ri := range a.rn.Ranks {
		if i >= lo && i < hi {
			continue
		}
		if rs := a.ranks[ri.Rank]; rs != nil {
			rs.pcCache = nil
		}
		if m, ok := rundir.DropReader(ri.Src); ok {
			ri.Src = metaSource{m: m}
			continue
		}
		if r, ok := ri.Src.(rundir.Releaser); ok {
			r.Release()
		}
	}
}

// releaseModels drops the clock correction of every rank outside [lo,
// hi) on a worker of a partitioned pass: Prepare needed every rank's for
// the run's start and end, but only a rank's decoder corrects its events,
// and the error bars that read them are process 0's (≈ 0.6 kB a rank,
// 10 MB of every K=8 worker at 16,384 ranks; D78). So do the sync epochs
// the models were made from (the rank's metadata's Epochs: ≈ 0.4 kB a
// rank with their nested models, 7 MB at 16,384 ranks; D93): nothing on
// a worker reads them after Prepare, and a pass run again loads the run
// again. Process 0 keeps both.
func (a *analyzer) releaseModels(lo, hi int) {
	for i, ri := range a.rn.Ranks {
		if i >= lo && i < hi {
			continue
		}
		if rs := a.ranks[ri.Rank]; rs != nil {
			rs.corr = nil
		}
		ri.Meta.Epochs = nil
	}
}

// metaSource is the Source left of a rank file that a process of a
// partitioned pass does not decode: its metadata, no events.
type metaSource struct{ m *rundir.RankMeta }

// Meta implements Source.
func (s metaSource) Meta() *rundir.RankMeta { return s.m }

// NextChunk implements Source: a process never reads a rank it does not
// decode; if it did, the rank would have no events, so say why.
func (s metaSource) NextChunk(dst []trace.Event) ([]trace.Event, error) {
	return dst[:0], errors.New("parallel analysis: internal error: a rank file read by a process that does not decode it")
}

// block returns the rank states of the rank files [lo, hi).
func (a *analyzer) block(lo, hi int) []*rankState {
	var mine []*rankState
	for _, ri := range a.rn.Ranks[lo:hi] {
		mine = append(mine, a.ranks[ri.Rank])
	}
	return mine
}

// partRoles runs a process's roles, each in its own goroutine.
type partRoles struct {
	n    int
	errc chan error
}

func (r *partRoles) start(fn func() error) {
	if r.errc == nil {
		r.errc = make(chan error, 4)
	}
	r.n++
	go func() {
		defer func() {
			if x := recover(); x != nil {
				r.errc <- fmt.Errorf("parallel analysis: internal error: %v", x)
			}
		}()
		r.errc <- fn()
	}()
}

// wait returns when every role has returned, or at the first error: the
// others may then wait for messages that never come, and the caller
// aborts the job (tracemerge calls MPI_Abort).
func (r *partRoles) wait() error {
	for ; r.n > 0; r.n-- {
		if err := <-r.errc; err != nil {
			return err
		}
	}
	return nil
}

// DefaultPartShare0 is process 0's default share of the rank files in a
// partitioned pass (Dist.Share0): with 2 processes both decode and match
// and process 0 also aggregates and feeds the point-to-point analysis, so
// it takes a little less; with more, none (it aggregates only).
func DefaultPartShare0(procs int) float64 {
	if procs == 2 {
		return 0.5
	}
	return 0
}
