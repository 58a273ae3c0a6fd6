package merge

// Root causes of waiting: delay analysis and the critical path.
//
// A wait state (a collective member waiting for the last entrant, a Late
// Sender, a Late Receiver, the one-sided Wait at Fence, Late Post and
// Early Wait: rootcause_pscw.go) is a symptom. Its cause is a delay: the excess
// time the waited-for rank spent, since the two ranks last synchronised,
// in regions and calls compared with the waiting rank (Böhme, Geimer,
// Wolf et al., "Identifying the root causes of wait states in large-scale
// parallel applications", ICPP 2010 and ACM TOPC 3(2), 2016). This file
// implements their definitions on the merged stream:
//
//   - Region: the time of a rank between the exit of one MPI call (call
//     site A) and the enter of its next one (site B), "A → B"; an MPI
//     call is a region of its own ("MPI_Waitall at B"), its wait state
//     excluded.
//   - Synchronisation interval of a wait of rank a for rank b: from the
//     last point a and b synchronised (the exit of their last common N×N
//     collective instance, or their last matched message, whichever is
//     later) to a's enter of the waiting call and b's enter of the call
//     a waited for.
//   - Delay: per region c, d(c) = max(0, t_b(c) − w_b(c) − t_a(c)) over
//     the interval, t the time spent, w_b the wait states b itself had
//     there (propagating wait states).
//   - Costs: the wait ω is spread over b's delays and b's own wait states
//     in the interval in proportion to their size, scaled by
//     min(1, ω / (Σd + Σw_b)). The part on a delay is its short-term
//     (direct) cost; the part on a wait state of b is passed on to that
//     wait's own causes as their long-term (propagated) cost.
//
// Scalasca computes the long-term costs in a backward replay. Here they
// are computed forward: each wait state keeps the distribution of its
// attributed time over root causes (rcVec: the top rcVecK causes and the
// rest), and a later wait that a propagating wait state helped cause
// inherits its share of that distribution. Both give the same costs
// (the attribution is linear along every chain of wait states); the
// forward form needs no reversed trace, so it runs in the one streaming
// pass with bounded memory. The distributions are truncated to their
// rcVecK largest causes; what is cut goes to RootCauseResult.SmallNS.
//
// Memory per rank (docs/explanation/rootcause.md, "What the analysis
// keeps per rank"): a ring of the rank's last segments (regions and
// calls, 32 bytes each; RootCauseOptions.HistoryPerRank), beside it a
// slot of 16 bytes per segment for an attribution of one cause (most
// of them), a ring of the other attributions of the wait states in
// those segments (at most rcVecK+2 entries of 16 bytes per segment,
// plus those that died out of order until the tail passes them, in a
// power of two), its last two synchronisations with each partner (a
// flat list), its count and time per region (16 bytes a region, by region;
// the pcs of regions are interned once per layout, shared by the ranks
// that load the program at the same addresses) and its critical-path
// state (its own part since its last wait, and a place in the stream's
// node arena); per communicator the members' positions at its last N×N
// instance; the open collective instances. Nothing grows with the
// length of the run except the region tables, which grow with the
// code's distinct call-site pairs.
//
// Per event the work is: two region lookups in the stream's table (no
// map), two segments appended to the ring, and the collective's instance
// found among its communicator's few open ones; per wait state the
// last synchronisation (the rank's latest communicator without a
// search when it is strictly the latest: rcRank.topComm), a look at the
// two ranks' segments since then (the delaying rank's side once for
// all the ranks that waited for the same call since the same point; the
// waiting rank's position by position when it ran through the side's
// regions in the same order: delays), the attribution stored in the waiting call's slot (one cause) or
// appended to the waiting rank's ring, and one node of the critical
// path per waited-for call.
// The critical path's nodes and stays live in a flat arena named by
// index, and a rank's own part of its path is summed from its ring only
// when another rank's path takes it: the stream allocates almost
// nothing per event and keeps no pointers per wait for the garbage
// collector to scan.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// RootCauseOptions configure a RootCauseStream.
type RootCauseOptions struct {
	// TopN bounds the root causes, regions and critical-path entries
	// reported (default 20).
	TopN int
	// HistoryPerRank is how many segments (regions and calls) each rank
	// keeps for synchronisation intervals; 0 picks 4,096 up to 64 ranks,
	// then fewer so that all ranks together keep about 2^21 segments
	// (at least 64 each). An interval reaching further back is cut
	// there (RootCauseResult.TruncatedWaits counts them).
	HistoryPerRank int
	// ClockBoundNS is the clock's error bound (ClockQuality): causes
	// whose mean delay per wait they caused is below it are marked
	// BelowClockBound.
	ClockBoundNS float64
	// P2P are the point-to-point options of the stream's own matching
	// (rendezvous threshold); KeepMessages, TopN and OnSync are set by
	// the stream. Unused with Stream.
	P2P P2POptions
	// Stream, when set, is the run's point-to-point analysis, which the
	// root-cause stream then feeds itself (instead of matching the
	// messages a second time): register the RootCauseStream instead of
	// it, and read both results after the pass.
	Stream *P2PStream
}

// rcMaxHistory bounds RootCauseOptions.HistoryPerRank, so that a
// rank's attribution ring (at most about 40 entries per segment) stays
// far shorter than the 2^32 positions rcSeg.res tells apart.
const rcMaxHistory = 1 << 24

// rcVecK is how many causes a wait state's attribution keeps.
const rcVecK = 8

// rcEnt is one cause's share of a wait state's attributed time.
type rcEnt struct {
	cause int64 // rcCauseKey(rank, region)
	amt   float64
}

// rcVec is the attribution of one wait state over root causes: the
// largest rcVecK causes and the sum of the others. It is built in a
// scratch rcVec and kept in the waiting rank's ring (rcRank.vecs).
type rcVec struct {
	ent   []rcEnt
	other float64
	total float64 // Σ ent.amt + other
}

func (v *rcVec) add(cause int64, amt float64) {
	if !(amt > 0) {
		return
	}
	v.total += amt
	for i := range v.ent {
		if v.ent[i].cause == cause {
			v.ent[i].amt += amt
			return
		}
	}
	v.ent = append(v.ent, rcEnt{cause, amt})
}

// trim keeps the rcVecK largest entries, the rest going to other.
func (v *rcVec) trim() {
	if len(v.ent) <= rcVecK {
		return
	}
	// slices.SortFunc runs the same pattern-defeating quicksort as
	// sort.Slice did (both are generated from one template), so ties
	// fall as before, without sort.Slice's allocation.
	slices.SortFunc(v.ent, func(x, y rcEnt) int { return cmp.Compare(y.amt, x.amt) })
	for _, e := range v.ent[rcVecK:] {
		v.other += e.amt
	}
	v.ent = v.ent[:rcVecK]
}

// The attributions of a rank's wait states live in rcRank.vecs, a ring
// of entries addressed by absolute positions (entry a at
// vecs[a mod len]; vecTail ≤ a < vecHead are stored): a record at
// position a is a header {segment position, other}, {entries n, total},
// then its n entries, never wrapping around the end of the array (the
// rest of the array is skipped by a pad, a single entry {−size}). A
// segment names its record by a+1 modulo 2^32 (rcSeg.res; the ring is
// far shorter than 2^32 entries, so the position is the one below
// vecHead with those low bits). Records are appended at the head; the
// tail moves past records no segment in the ring names any more (their
// segment left the ring, or a later record replaced them), and the ring
// doubles when the record at the tail is still named. Records come
// mostly in the order of their segments and die in that order, so
// nothing is copied but at a doubling, and the ring holds the records of
// about the segments in the rank's ring (at most rcVecK+2 entries
// each): the live ones and those between them that died out of order.

// A record of one entry and nothing else (other 0, total the entry's
// amount: most wait states have a single cause) is not put in the ring:
// it lives in rcRank.one, parallel to the segment ring, at its
// segment's slot, and the segment names it rcResOne. It dies with its
// segment; storing it is two writes instead of a ring record of three
// entries and the tail's upkeep. rcResOne is never a ring record's
// name: a ring record never starts two entries before the array's end
// (vecReserve), so never at a position 2^32·k − 2.

// rcResOne names a segment's record kept in rcRank.one.
const rcResOne = ^uint32(0)

// vecAbs returns the absolute position of r's record named res.
func (r *rcRank) vecAbs(res uint32) uint64 {
	return r.vecHead - uint64(uint32(r.vecHead)-(res-1))
}

// vecPhys returns the index in r.vecs of r's record named res.
func (r *rcRank) vecPhys(res uint32) uint64 {
	return r.vecAbs(res) & uint64(len(r.vecs)-1)
}

// vecLoad reads r's record named res, of its segment at position seg,
// into v (v's entries reuse its slice).
func (r *rcRank) vecLoad(res uint32, seg uint64, v *rcVec) {
	if res == rcResOne {
		e := r.one[seg&uint64(len(r.segs)-1)]
		v.other, v.total = 0, e.amt
		v.ent = append(v.ent[:0], e)
		return
	}
	q := r.vecPhys(res)
	n := int(r.vecs[q+1].cause)
	v.other, v.total = r.vecs[q].amt, r.vecs[q+1].amt
	v.ent = append(v.ent[:0], r.vecs[q+2:q+2+uint64(n)]...)
}

// vecStore appends v as the record of r's segment at position seg and
// names it there.
func (r *rcRank) vecStore(seg uint64, v *rcVec) {
	g := r.seg(seg)
	if g.res != 0 && g.res != rcResOne {
		r.vecDrop(g.res)
	}
	if len(v.ent) == 1 && v.other == 0 && v.total == v.ent[0].amt && len(r.one) == len(r.segs) {
		r.one[seg&uint64(len(r.segs)-1)] = v.ent[0]
		g.res = rcResOne
		return
	}
	need := uint64(len(v.ent) + 2)
	a := r.vecReserve(need)
	q := a & uint64(len(r.vecs)-1)
	r.vecs[q] = rcEnt{int64(seg), v.other}
	r.vecs[q+1] = rcEnt{int64(len(v.ent)), v.total}
	dst := r.vecs[q+2 : q+need]
	for i := range dst { // one or two entries mostly: no memmove call
		dst[i] = v.ent[i]
	}
	r.vecHead = a + need
	g.res = uint32(a + 1)
}

// vecDrop frees the ring record named res, which a new record of its
// segment replaces, when it is the last one (else the tail frees it
// once it reaches it).
func (r *rcRank) vecDrop(res uint32) {
	a := r.vecAbs(res)
	if a+2+uint64(r.vecs[a&uint64(len(r.vecs)-1)+1].cause) == r.vecHead {
		r.vecHead = a
	}
}

// vecReserve returns the position of a record of need entries at the
// head: not wrapping around the array's end, and with the ring's room
// for it (moving the tail past dead records, or doubling).
func (r *rcRank) vecReserve(need uint64) uint64 {
	for {
		l := uint64(len(r.vecs))
		h := r.vecHead
		size, pad := need, false
		// A record never starts at the array's last two entries, so
		// never at a position 2^32·k − 1 or 2^32·k − 2, which res would
		// name 0 ("none") or rcResOne.
		if ph := h & (l - 1); l == 0 || ph+need > l || ph+2 == l {
			size, pad = l-ph, l > 0 // a pad to the end (none while empty)
		}
		if l == 0 || h+size-r.vecTail > l {
			// Free in bursts (a quarter of the ring when the records
			// allow): the tail's records are then read in sequence.
			for h+size+l/4-r.vecTail > l && r.vecFreeTail() {
			}
			if l == 0 || h+size-r.vecTail > l {
				r.vecGrow(need)
			}
			continue
		}
		if pad {
			r.vecs[h&(l-1)] = rcEnt{cause: -int64(size)}
			r.vecHead += size
			continue
		}
		return h
	}
}

// vecFreeTail moves the tail past the record there if it is dead,
// reporting whether it did.
func (r *rcRank) vecFreeTail() bool {
	t := r.vecTail
	if t == r.vecHead {
		return false
	}
	q := t & uint64(len(r.vecs)-1)
	e := r.vecs[q]
	if e.cause < 0 { // a pad
		r.vecTail += uint64(-e.cause)
		return true
	}
	seg := uint64(e.cause)
	if seg >= r.oldest() && seg < r.n && r.seg(seg).res == uint32(t+1) {
		return false
	}
	r.vecTail += 2 + uint64(r.vecs[q+1].cause)
	return true
}

// vecGrow doubles the ring (at least 16 entries and room for need more),
// keeping every record at its position.
func (r *rcRank) vecGrow(need uint64) {
	l := uint64(len(r.vecs))
	n := max(16, 2*l)
	for n < r.vecHead-r.vecTail+2*need {
		n *= 2
	}
	nv := make([]rcEnt, n)
	for a := r.vecTail; a < r.vecHead; {
		q := a & (l - 1)
		size := uint64(-r.vecs[q].cause)
		if r.vecs[q].cause >= 0 {
			size = 2 + uint64(r.vecs[q+1].cause)
		}
		copy(nv[a&(n-1):], r.vecs[q:q+size])
		a += size
	}
	r.vecs = nv
}

func rcCauseKey(rank int32, region int32) int64 { return int64(rank)<<32 | int64(uint32(region)) }

// rcSeg is one segment of a rank's timeline: a region between two calls
// or one call.
// It is 32 bytes: whether it is a call is its region's (regCall).
type rcSeg struct {
	start, dur float64
	wait       float64 // wait states in this call (found so far)
	region     int32
	res        uint32 // 1 + position of the attribution of wait in the rank's ring, modulo 2^32 (0: none; vecAbs)
}

// rcSync is where a rank and one partner last synchronised: the
// segment positions (first segment after the synchronising call) on
// both and the time.
type rcSync struct {
	mine, theirs uint64
	t            float64
}

// rcRegSlot is one slot of the stream's region table: the pcs of a
// compute region (a, b; op 0) or of a call (a, 0, op) of the ranks of
// one layout (the same objects at the same addresses: the same pcs name
// the same sites), interned once, and the region.
type rcRegSlot struct {
	a, b   uint64
	layout int32
	id1    int32 // 1 + region; 0: empty
	op     trace.Op
}

// rcRegStat is a rank's count and time in one region.
type rcRegStat struct {
	count int
	total float64
}

// rcRank is the per-rank state.
type rcRank struct {
	rank      int32
	segs      []rcSeg // ring; position p lives at segs[p&(len-1)]
	one       []rcEnt // parallel to segs: a segment's record of one entry (rcResOne)
	n         uint64  // segments appended
	slowAt    uint64  // the ring needs pushSlow before a segment at n ≥ slowAt (setSlowAt)
	started   bool
	lastExit  float64
	lastPC    uint64
	lastCall1 int32 // 1 + the region of the call at lastPC (0: none)
	objs      []trace.Object
	layout    int32       // ranks of one layout share their pcs' regions (rcRegSlot)
	stats     []rcRegStat // by region: the rank's count and time (count 0: never run)
	peers     []rcPeer    // last two syncs per partner (peerIx indexes them when many)
	peerIx    map[int32]int32
	peerMaxT  float64     // the latest time of a synchronisation with a partner (−Inf: none)
	comms     []rcCommRef // communicators with an N×N sync of this rank
	// topComm is the communicator of the rank's latest N×N
	// synchronisation (the largest rcComm.t) when every other one's is
	// strictly earlier (secondT at least any other's time), at topPos;
	// nil when not known (lastSync then searches every communicator).
	topComm  *rcComm
	topPos   int32
	topT     float64
	secondT  float64
	cp       rcPath
	firstT   float64
	vecs     []rcEnt    // ring of the attributions of wait states (vecStore)
	vecHead  uint64     // absolute position of the next record in vecs
	vecTail  uint64     // absolute position of the oldest record kept
	lastColl [2]*rcColl // the communicators of the rank's last collectives, latest first (programs alternate between two)
	causes   []*rcCause // by region: the rank's causes (causeOf; nil until its first)
}

// rcPeer is a rank's last two point-to-point synchronisations with one
// partner, latest first.
type rcPeer struct {
	peer int32
	y    [2]rcSync
}

// rcPeerLinear is how many partners a rank looks up by a linear search
// before it indexes them by a map.
const rcPeerLinear = 16

// peer returns r's entry for partner p, nil when none (add: created).
func (r *rcRank) peer(p int32, add bool) *rcPeer {
	if r.peerIx != nil {
		if i, ok := r.peerIx[p]; ok {
			return &r.peers[i]
		}
	} else {
		for i := range r.peers {
			if r.peers[i].peer == p {
				return &r.peers[i]
			}
		}
	}
	if !add {
		return nil
	}
	r.peers = append(r.peers, rcPeer{peer: p})
	if len(r.peers) > rcPeerLinear {
		if r.peerIx == nil {
			r.peerIx = make(map[int32]int32, 2*len(r.peers))
			for i, x := range r.peers {
				r.peerIx[x.peer] = int32(i)
			}
		}
		r.peerIx[p] = int32(len(r.peers) - 1)
	}
	return &r.peers[len(r.peers)-1]
}

// rcCommRef is a communicator of a rank and the rank's place in it.
type rcCommRef struct {
	c   *rcComm
	pos int32
}

// rcComm is a communicator's last N×N synchronisation.
type rcComm struct {
	members []int32
	index   map[int32]int32 // world rank -> comm rank (nil: identity)
	last    []uint64        // per comm rank: first segment after the call
	ranks   []*rcRank       // per comm rank: the rank's state (syncComm)
	t       float64
	valid   bool
}

func (c *rcComm) pos(rank int32) int {
	if c.index == nil {
		if int(rank) < len(c.members) {
			return int(rank)
		}
		return -1
	}
	if p, ok := c.index[rank]; ok {
		return int(p)
	}
	return -1
}

// rcInst is a collective instance being matched: its members' calls as
// one array of records (a member's call is one store).
type rcInst struct {
	seq  uint32
	op   trace.Op
	root int32
	gen  uint32 // a member whose gen is this one has come (rcMember.gen)
	got  int
	mem  []rcMember // by comm rank
}

// rcMember is a member's call in a collective instance: its enter and
// exit, its position (segment) in its rank's history, the bytes it sends
// and receives, and the generation of the instance it came to (an
// instance reused for a later one counts its members again without
// clearing them: reuse).
type rcMember struct {
	enter, exit float64
	seg         uint64
	sent, recv  uint64
	gen         uint32
}

// reuse empties in for another instance of the same communicator.
func (in *rcInst) reuse() {
	in.got = 0
	if in.gen++; in.gen == 0 { // wrapped: no member may look present
		for i := range in.mem {
			in.mem[i].gen = 0
		}
		in.gen = 1
	}
}

type rcRegionKey struct {
	a, b int32 // sites; b = -1 for a call
	op   trace.Op
}

type rcSiteKey struct {
	obj  string
	addr uint64
}

// rcCause accumulates one (rank, region)'s costs, in order-free sums
// (rcSum: the same bits whatever the order of the credits, D76).
type rcCause struct {
	direct, long rcSum
	delay        rcSum
	// directF is direct as a float64 sum in the credits' order, for the
	// drawing heuristic alone (noteIv: which causes keep delay
	// intervals; D75 point 4 has it decided at the end instead, a later
	// stage): one add instead of converting direct at every credit.
	directF float64
	waits   int
	via     []rcVia // through which ranks (addVia)
	draw    *rcDraw // the delays drawn (nil: none; few causes draw)
}

// rcDraw are the times of a cause's segments that were delays, for
// drawing (rcMaxIv at most, every stride-th once thinned).
type rcDraw struct {
	iv     [][2]float64
	stride int
	skip   int
}

// rcMaxIv bounds the delay intervals kept per cause, rcIvBudget those of
// all causes together.
const (
	rcMaxIv    = 1024
	rcIvBudget = 1 << 20
)

// noteIv keeps the interval [from, to] of a delay of c, reporting
// whether it is now c's last one (added, or already): a call with the
// same interval then does nothing until another one is added to c.
func (s *RootCauseStream) noteIv(cc *rcCause, from, to float64) bool {
	c := cc.draw
	if c == nil {
		// only causes within 1/100 of the largest direct cost draw
		if cc.directF < s.maxDirect/100 || s.ivKept >= rcIvBudget {
			return false
		}
		c = &rcDraw{stride: 1}
		cc.draw = c
	} else if n := len(c.iv); n > 0 && c.iv[n-1] == [2]float64{from, to} {
		return true // the same delay seen by another waiter
	}
	if c.skip++; c.skip < c.stride {
		return false
	}
	c.skip = 0
	if len(c.iv) == rcMaxIv { // keep every other: uniform over the run
		k := 0
		for i := 0; i < len(c.iv); i += 2 {
			c.iv[k] = c.iv[i]
			k++
		}
		s.ivKept -= len(c.iv) - k
		c.iv = c.iv[:k]
		c.stride *= 2
	}
	c.iv = append(c.iv, [2]float64{from, to})
	s.ivKept++
	return true
}

// RootCauseStream is the delay and critical-path analysis: a Sink over
// every event in global Enter order (a stream sink of the main pass).
type RootCauseStream struct {
	opt        RootCauseOptions
	hist       int
	ranks      rankBlocks[rcRank] // by world rank (D101)
	world      int
	comms      map[uint64]*rcComm
	coll       map[uint64]*rcColl // by communicator id
	p2p        *P2PStream
	pipe       *rcPipe // the point-to-point stream on a goroutine of its own (p2p_pipe.go)
	fed        *rcFeed // the wait states come from a partitioned pass's owners (p2p_pipe.go)
	siteIdx    map[rcSiteKey]int32
	sitePC     []rcSitePC  // a pc and rank naming each site
	siteKeys   []rcSiteKey // by site: its content, (object, offset) (siteCmp)
	regionIdx  map[rcRegionKey]int32
	regions    []rcRegionKey
	regCall    []bool      // by region: a call (not a compute region)
	regTab     []rcRegSlot // (layout, pcs) -> region: open addressing, power of two, at most 3/4 full
	regMemo    []rcRegMemo // by call region: what followed it last (addCall)
	nRegs      int
	layouts    map[string]int32   // objects and addresses -> layout
	layoutObjs [][]trace.Object   // by layout, sorted by Hi
	causesOdd  map[int64]*rcCause // causes whose rank has no state (cause; the others are in their rank's array)
	tA, tB     []float64          // scratch by region
	touched    []int32
	touchedB   []int32
	dk         []float64 // scratch by side region: the waiter's delays (delays)
	fromB      []float64 // scratch by region: first start, last end on b
	toB        []float64
	maxDirect  float64
	ivKept     int
	side       rcSide
	gen        uint64   // events added: a side is valid within one
	done       []rcDone // instances completed by the event being added
	cpScratch  entSums
	cpDepth    int     // a critical path's chain of nodes before it is flattened (cpDepthFor)
	cpFrozen   int     // a rank's frozen part before it is made a node of its own (cpMaxFrozen)
	cpa        cpArena // the critical path's nodes and stays
	cpBuf      []rcEnt // scratch of jump
	vecA       rcVec   // scratch attributions
	vecB       rcVec
	waitBuf    []float64
	causeBuf   []int
	// an instance's members as CollectiveWaitsFlow takes them (finishInstance)
	enterBuf, exitBuf []float64
	sentBuf, recvBuf  []uint64
	siteName          func(rank int32, pc uint64) string

	// the stream's totals, order-free sums (rcSum, D76); the total wait
	// is byKind's sum (totalWait)
	small                 rcSum
	noDelay, unresolved   rcSum
	waitStates, truncated int
	byKind                [6]rcSum  // collective, Late Sender, Late Receiver, Wait at Fence, Late Post, Early Wait
	pscwSt                pscwState // PSCW epochs not yet resolved (rootcause_pscw.go)
	cpEnd                 float64
	cpRank                int32
	err                   error
}

type rcSitePC struct {
	rank int32
	pc   uint64
}

// NewRootCauseStream prepares the analysis of run. siteName names a call
// site of a rank (Pass.SiteName); nil names sites by address.
func NewRootCauseStream(run *rundir.Run, opt RootCauseOptions, siteName func(rank int32, pc uint64) string) *RootCauseStream {
	if opt.TopN <= 0 {
		opt.TopN = 20
	}
	s := &RootCauseStream{opt: opt, world: run.WorldSize, comms: map[uint64]*rcComm{},
		coll: map[uint64]*rcColl{}, siteIdx: map[rcSiteKey]int32{}, regionIdx: map[rcRegionKey]int32{},
		causesOdd: map[int64]*rcCause{}, siteName: siteName,
		regTab: make([]rcRegSlot, 64), layouts: map[string]int32{}, layoutObjs: [][]trace.Object{nil},
		cpDepth: cpDepthFor(run.WorldSize), cpFrozen: cpMaxFrozen, cpScratch: entSums{w: uint64(max(0, run.WorldSize))}}
	s.hist = opt.HistoryPerRank
	if s.hist <= 0 {
		s.hist = 4096
		if run.WorldSize > 64 {
			s.hist = max(64, (1<<21)/run.WorldSize)
		}
	}
	s.hist = 1 << bitsFor(min(s.hist, rcMaxHistory))
	s.ranks.reserve(run.WorldSize)
	for _, ri := range run.Ranks {
		if ri.Rank < 0 || ri.Rank >= run.WorldSize {
			continue
		}
		r := s.rank(int32(ri.Rank))
		if ri.Meta != nil {
			objs := append([]trace.Object(nil), ri.Meta.Header.Objects...)
			sort.Slice(objs, func(i, j int) bool { return objs[i].Hi < objs[j].Hi })
			r.layout = s.layoutOf(objs)
			r.objs = s.layoutObjs[r.layout]
			for _, c := range ri.Meta.Comms {
				if _, ok := s.coll[c.ID]; !ok {
					s.coll[c.ID] = &rcColl{size: len(c.Members), comm: c.ID}
				}
				if _, ok := s.comms[c.ID]; !ok && len(c.Members) > 1 {
					s.comms[c.ID] = newRCComm(c.Members)
				}
			}
		}
	}
	for id, cc := range s.coll {
		cc.sync = s.comms[id]
	}
	if opt.Stream != nil {
		s.p2p = opt.Stream
		s.p2p.opt.OnSync = s.onSync
		return s
	}
	popt := opt.P2P
	popt.KeepMessages, popt.TopN = 0, 1
	popt.CollectRepairs = false
	popt.OnSync = s.onSync
	s.p2p = NewP2PStream(run, popt, func(int32, uint64) string { return "" })
	return s
}

func bitsFor(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

func newRCComm(members []int32) *rcComm {
	c := &rcComm{members: members, last: make([]uint64, len(members))}
	ident := true
	for i, m := range members {
		if m != int32(i) {
			ident = false
			break
		}
	}
	if !ident {
		c.index = make(map[int32]int32, len(members))
		for i, m := range members {
			c.index[m] = int32(i)
		}
	}
	return c
}

func (s *RootCauseStream) rank(r int32) *rcRank {
	if r < 0 {
		return nil
	}
	rs := s.ranks.at(r)
	if rs == nil {
		rs = s.ranks.make(r)
		*rs = rcRank{rank: r, segs: make([]rcSeg, 16), one: make([]rcEnt, 16), peerMaxT: math.Inf(-1)}
		rs.cp.rank = r
	}
	return rs
}

// Prefetch implements Prefetcher: the point-to-point stream the root-cause
// stream drives asks for e's rank state (see P2PStream.Prefetch), and
// the stream for the slots of the rank's segment ring that e's region
// and call will take and for the call's slot of its records of one
// entry. Each ring is a few hundred KB at a few ranks, so a slot
// written a ring ago has left the cache: its line was about a tenth of
// the stream's time.
func (s *RootCauseStream) Prefetch(e *datamodel.GEvent) {
	if s.fed == nil {
		s.p2p.Prefetch(e)
	}
	r := s.ranks.at(e.Rank)
	if r == nil {
		return
	}
	m := uint64(len(r.segs) - 1)
	prefetchEvent(uintptr(unsafe.Pointer(&r.segs[r.n&m])))
	if len(r.one) == len(r.segs) { // the call's slot after a compute region
		prefetchEvent(uintptr(unsafe.Pointer(&r.one[(r.n+1)&m])))
	}
}

// PrefetchDeep implements DeepPrefetcher: when the point-to-point
// stream it drives asks for stages (thousands of ranks), so that a
// default run prefetches that stream's chain of objects as one run
// without the root-cause analysis does.
func (s *RootCauseStream) PrefetchDeep() bool {
	if s.fed != nil {
		return s.ranks.len() >= prefetchRanks
	}
	return s.p2p.PrefetchDeep()
}

// PrefetchStage implements DeepPrefetcher: the point-to-point stream's
// stages (P2PStream.PrefetchStage) and the stream's own state for e,
// one link a stage: 0 the rank's slot in the table of ranks, 1 the
// rank's state (rcRankLines), 2 the slots of its segment ring and of
// its records of one entry that e's region and call will take (what
// Prefetch asks for in one go) and the rank's sums of those regions.
func (s *RootCauseStream) PrefetchStage(e *datamodel.GEvent, stage int) {
	if s.fed == nil {
		s.p2p.PrefetchStage(e, stage)
	}
	s.prefetchOwn(e, stage)
}

// prefetchOwn is PrefetchStage without the point-to-point stream's
// stages.
func (s *RootCauseStream) prefetchOwn(e *datamodel.GEvent, stage int) {
	if uint32(e.Rank) >= uint32(s.ranks.len()) {
		return
	}
	switch stage {
	case 0:
		prefetchSpan(s.ranks.slot(e.Rank), 1)
	case 1:
		if r := s.ranks.at(e.Rank); r != nil {
			n := rcRankLines // a call that can wait: its attribution and path too
			if e.Op.IsRecvStart() || e.Op >= trace.OpIsend && e.Op <= trace.OpIbsend {
				n = rcRankCallLines
			}
			prefetchSpan(uintptr(unsafe.Pointer(r)), n)
		}
	case 2:
		if r := s.ranks.at(e.Rank); r != nil {
			m := uint64(len(r.segs) - 1)
			prefetchEvent(uintptr(unsafe.Pointer(&r.segs[r.n&m])))
			if len(r.one) == len(r.segs) {
				prefetchEvent(uintptr(unsafe.Pointer(&r.one[(r.n+1)&m])))
			}
			// the rank's sums of the regions addCall will find in
			// the memo (an array of the rank's own, a miss an event)
			if i := int(r.lastCall1) - 1; i >= 0 && i < len(s.regMemo) {
				memo := &s.regMemo[i]
				if c := int(memo.call1) - 1; c >= 0 && c < len(r.stats) {
					prefetchSpan(uintptr(unsafe.Pointer(&r.stats[c])), 1)
				}
				if c := int(memo.compute1) - 1; c >= 0 && c < len(r.stats) {
					prefetchSpan(uintptr(unsafe.Pointer(&r.stats[c])), 1)
				}
			}
		}
	}
}

// rcRankLines is the number of cache lines an rcRank spans at most (it
// need not start on a line); rcRankCallLines those of its fields before
// cp, all that addCall touches (a call that cannot wait needs no more:
// each line asked for takes one of the few loads the core can have
// under way).
var (
	rcRankLines     = int((unsafe.Sizeof(rcRank{}) + 63 + 63) / 64)
	rcRankCallLines = int((unsafe.Offsetof(rcRank{}.cp) + 63 + 63) / 64)
)

// Add implements Sink.
func (s *RootCauseStream) Add(e *datamodel.GEvent) error {
	k := rcOpKinds[e.Op]
	r := s.ranks.at(e.Rank) // a known rank: no call
	if r == nil {
		if r = s.rank(e.Rank); r == nil {
			return nil
		}
	}
	if k&rcOpContinues == 0 || e.Seq == 0 { // !e.Continuation()
		s.addCall(r, e)
	}
	// The point-to-point stream first: e may close r's previous call,
	// whose Late Sender wait a collective that e completes must see.
	s.gen++
	var err error
	if s.fed != nil {
		s.fedSyncs(e)
	} else if k&rcOpP2P != 0 { // s.p2p.Wants(e.Op)
		err = s.p2p.Add(e)
	} else {
		s.p2p.endCall(e.Rank)
	}
	if len(s.done) > 0 || k&rcOpPSCW != 0 || s.side.live { // afterP2P has work: most events none
		s.afterP2P(r, e)
	}
	return err
}

// afterP2P is what Add does for e after the point-to-point stream has
// taken it (rcPipe replays that stream's wait states before it).
func (s *RootCauseStream) afterP2P(r *rcRank, e *datamodel.GEvent) {
	if len(s.done) > 0 { // most events complete no instance
		for _, d := range s.done {
			s.finishInstance(d.cc, d.in)
		}
		s.done = s.done[:0]
	}
	if isPSCW(e.Op) {
		s.pscw(r, e)
	}
	if s.side.live { // flushSide's test, without the call
		s.flushSide()
	}
}

// addCall appends the region before e and e's call to its rank's
// timeline and matches collectives.
func (s *RootCauseStream) addCall(r *rcRank, e *datamodel.GEvent) {
	// The regions of the last time this rank's previous call site was
	// followed by this call (a loop repeats its sites): no lookups.
	var memo *rcRegMemo
	if r.lastCall1 != 0 && int(r.lastCall1) <= len(s.regMemo) {
		memo = &s.regMemo[r.lastCall1-1]
		if memo.a != r.lastPC || memo.b != e.Callsite || memo.op != e.Op || memo.layout != r.layout || memo.call1 == 0 {
			memo = nil
		}
	}
	compute1 := int32(0) // 1 + the compute region (0: not looked up)
	if !r.started {
		r.started, r.firstT, r.cp.start = true, e.Enter, e.Enter
	} else if gap := e.Enter - r.lastExit; gap > 0 {
		var acc *rcRegStat
		var id int32
		if memo != nil && memo.compute1 != 0 {
			id = memo.compute1 - 1
			acc = r.stat(id, len(s.regions))
		} else {
			acc, id = s.region(r, r.lastPC, e.Callsite, 0)
		}
		compute1 = id + 1
		acc.count++
		acc.total += gap
		if r.n >= r.slowAt { // push, inlined
			s.pushSlow(r)
		}
		r.put(rcSeg{start: r.lastExit, dur: gap, region: id})
	}
	from := e.Enter
	if r.n > 0 && r.lastExit > from { // (r.started: set above)
		from = r.lastExit // another thread's call overlaps: count the rest
	}
	dur := e.Exit - from
	if !(dur > 0) && dur == dur { // max(0, dur): NaN kept, −0 made +0, without the builtin's steps
		dur = 0
	}
	var acc *rcRegStat
	var id int32
	if memo != nil {
		id = memo.call1 - 1
		acc = r.stat(id, len(s.regions))
		if compute1 != 0 {
			memo.compute1 = compute1
		}
	} else {
		acc, id = s.region(r, e.Callsite, 0, e.Op)
		if r.lastCall1 != 0 {
			for int(r.lastCall1) > len(s.regMemo) {
				s.regMemo = append(s.regMemo, rcRegMemo{})
			}
			s.regMemo[r.lastCall1-1] = rcRegMemo{a: r.lastPC, b: e.Callsite, op: e.Op, layout: r.layout,
				compute1: compute1, call1: id + 1}
		}
	}
	acc.count++
	acc.total += dur
	if r.n >= r.slowAt { // push, inlined
		s.pushSlow(r)
	}
	idx := r.put(rcSeg{start: e.Enter, dur: dur, region: id})
	if r.n == 1 || e.Exit > r.lastExit {
		r.lastExit, r.lastPC, r.lastCall1 = e.Exit, e.Callsite, id+1
	}
	if e.Exit > s.cpEnd || s.cpEnd == 0 {
		s.cpEnd, s.cpRank = e.Exit, r.rank
	}
	if rcOpKinds[e.Op]&rcOpMatched != 0 && e.CommRank >= 0 {
		s.collective(r, e, idx)
	}
}

// What the stream does with an event of an operation (rcOpKinds).
const (
	rcOpContinues = 1 << iota // a record of it with Seq > 0 continues a call (trace.Op.Continues)
	rcOpP2P                   // the point-to-point stream takes it (P2PStream.Wants)
	rcOpMatched               // a blocking collective or a fence: matched as an instance (addCall)
	rcOpPSCW                  // a call of general active target synchronisation (isPSCW: afterP2P's pscw)
)

// rcOpKinds is, for every operation value, what the stream does with an
// event of it: one load where Add and addCall asked trace's predicates
// (ranges of operations) at every event, made from those predicates.
var rcOpKinds = func() (k [1 << 16]uint8) {
	for i := range k {
		op := trace.Op(i)
		if op.Continues(1) {
			k[i] |= rcOpContinues
		}
		if (*P2PStream)(nil).Wants(op) {
			k[i] |= rcOpP2P
		}
		if op.IsCollective() && !op.IsNonblockingCollective() || op == trace.OpWinFence {
			k[i] |= rcOpMatched
		}
		if isPSCW(op) {
			k[i] |= rcOpPSCW
		}
	}
	return k
}()

// push appends a segment to r's ring, growing it up to the history
// size, and returns its position. addCall writes it out (pushSlow when
// the ring is full, then put) so that the common case is inlined.
func (s *RootCauseStream) push(r *rcRank, g rcSeg) uint64 {
	if r.n >= r.slowAt {
		s.pushSlow(r)
	}
	return r.put(g)
}

// full reports whether r's ring needs pushSlow before its next segment:
// it is full and shorter than hist, or the segment the next one
// overwrites is not yet summed into r's path. The stream tests r.n
// against r.slowAt instead, at most the first position where full holds
// (setSlowAt).
func (r *rcRank) full(hist int) bool {
	l := uint64(len(r.segs))
	return r.n >= l && (int(l) < hist || r.n-l >= r.cp.from)
}

// setSlowAt sets r.slowAt to the first position n at which full holds
// with r's ring and path as they are: its length while shorter than
// hist, else its length past the path's first unsummed segment. A lower
// value is safe (pushSlow then finds nothing to do and sets it again),
// so only what lowers the true position (a path's from going back:
// jump) must call it; pushSlow calls it after its changes.
func (r *rcRank) setSlowAt(hist int) {
	l := uint64(len(r.segs))
	if int(l) < hist {
		r.slowAt = l
	} else {
		r.slowAt = l + r.cp.from
	}
}

// put stores g as r's next segment, in a ring with room for it
// (pushSlow), and returns its position.
func (r *rcRank) put(g rcSeg) uint64 {
	p := r.n
	r.segs[p&uint64(len(r.segs)-1)] = g
	r.n = p + 1
	return p
}

// pushSlow makes room in r's full ring for the next segment: it doubles
// the ring while shorter than the history, else folds the segment about
// to be overwritten into r's path when the path has not summed it yet
// (mostly it has: the rank's last wait was more recent).
func (s *RootCauseStream) pushSlow(r *rcRank) {
	if r.n >= uint64(len(r.segs)) && len(r.segs) < s.hist {
		ns := make([]rcSeg, len(r.segs)*2)
		for p := r.n - uint64(len(r.segs)); p < r.n; p++ {
			ns[p&uint64(len(ns)-1)] = r.segs[p&uint64(len(r.segs)-1)]
		}
		r.segs = ns
		if len(r.one) > 0 { // its records of one entry, in step
			no := make([]rcEnt, len(ns))
			for p := r.n - uint64(len(r.one)); p < r.n; p++ {
				no[p&uint64(len(no)-1)] = r.one[p&uint64(len(r.one)-1)]
			}
			r.one = no
		}
	}
	if p := r.n; p >= uint64(len(r.segs)) {
		if o := p - uint64(len(r.segs)); o >= r.cp.from { // about to be overwritten
			r.fold(o + 1)
		}
	}
	r.setSlowAt(s.hist)
}

// oldest is the first position still in r's ring.
func (r *rcRank) oldest() uint64 {
	if r.n > uint64(len(r.segs)) {
		return r.n - uint64(len(r.segs))
	}
	return 0
}

func (r *rcRank) seg(p uint64) *rcSeg { return &r.segs[p&uint64(len(r.segs)-1)] }

// findCall returns the position of r's call that entered at t (the
// latest call starting at or before t), false when it left the ring.
func (r *rcRank) findCall(t float64, regCall []bool) (uint64, bool) {
	lo, hi := r.oldest(), r.n // search [lo, hi) for the last start <= t
	for lo < hi {
		mid := lo + (hi-lo)/2
		if r.seg(mid).start <= t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for p := lo; p > r.oldest(); p-- {
		if g := r.seg(p - 1); regCall[g.region] {
			return p - 1, true
		}
	}
	return 0, false
}

// site maps a pc of rank r to a site shared by every rank: (object,
// offset), so that ranks loading objects at different bases agree.
// It runs once per region new to a rank (region), so nothing per rank
// caches it.
func (s *RootCauseStream) site(r *rcRank, pc uint64) int32 {
	k := rcSiteKey{addr: pc}
	objs := r.objs
	i := sort.Search(len(objs), func(i int) bool { return objs[i].Hi > pc })
	if i < len(objs) && objs[i].Lo <= pc && pc < objs[i].Hi {
		k = rcSiteKey{obj: objs[i].Path, addr: pc - objs[i].Base}
	}
	id, ok := s.siteIdx[k]
	if !ok {
		id = int32(len(s.sitePC))
		s.siteIdx[k] = id
		s.sitePC = append(s.sitePC, rcSitePC{r.rank, pc})
		s.siteKeys = append(s.siteKeys, k)
	}
	return id
}

// siteCmp compares sites x and y by content, (object, offset), not by
// the index the stream gave them in the order it met them, which a
// partitioned analysis' processes would each give differently (D75,
// point 4). A negative index (no site: a call region's second) comes
// first.
func (s *RootCauseStream) siteCmp(x, y int32) int {
	if x == y {
		return 0
	}
	if x < 0 || y < 0 || int(x) >= len(s.siteKeys) || int(y) >= len(s.siteKeys) {
		return cmp.Compare(x, y)
	}
	kx, ky := &s.siteKeys[x], &s.siteKeys[y]
	if c := strings.Compare(kx.obj, ky.obj); c != 0 {
		return c
	}
	return cmp.Compare(kx.addr, ky.addr)
}

// regionCmp compares regions x and y by content: their sites (siteCmp),
// then the call's op; distinct regions differ in one of them (the
// stream interns each content once).
func (s *RootCauseStream) regionCmp(x, y int32) int {
	if x == y {
		return 0
	}
	if x < 0 || y < 0 || int(x) >= len(s.regions) || int(y) >= len(s.regions) {
		return cmp.Compare(x, y)
	}
	kx, ky := s.regions[x], s.regions[y]
	if c := s.siteCmp(kx.a, ky.a); c != 0 {
		return c
	}
	if c := s.siteCmp(kx.b, ky.b); c != 0 {
		return c
	}
	return cmp.Compare(kx.op, ky.op)
}

// causeCmp compares cause keys (rcCauseKey) by rank, then region by
// content (regionCmp).
func (s *RootCauseStream) causeCmp(x, y int64) int {
	if c := cmp.Compare(x>>32, y>>32); c != 0 {
		return c
	}
	return s.regionCmp(int32(uint32(x)), int32(uint32(y)))
}

// region returns r's count and time in the region of a compute interval
// between call sites a and b (op 0) or of a call of op at site a (valid
// until the next call), and the region. Each (a, b, op) is interned once
// per layout in the stream's table (ranks running the same binary at
// the same addresses share it, so it stays small and in cache); the
// rank's count and time are in its array by region.
func (s *RootCauseStream) region(r *rcRank, a, b uint64, op trace.Op) (*rcRegStat, int32) {
	m := uint64(len(s.regTab) - 1)
	id := int32(-1)
	for i := rcRegHash(a, b, op, r.layout) & m; ; i = (i + 1) & m {
		sl := &s.regTab[i]
		if sl.id1 == 0 {
			break
		}
		if sl.a == a && sl.b == b && sl.op == op && sl.layout == r.layout {
			id = sl.id1 - 1
			break
		}
	}
	if id < 0 {
		id = s.newRegion(r, a, b, op)
	}
	return r.stat(id, len(s.regions)), id
}

// stat returns r's count and time in region id, growing r's array to
// the nregs regions known when it is shorter.
func (r *rcRank) stat(id int32, nregs int) *rcRegStat {
	if int(id) >= len(r.stats) {
		r.stats = append(r.stats, make([]rcRegStat, max(nregs, int(id)+1)-len(r.stats))...)
	}
	return &r.stats[id]
}

// rcRegMemo is what followed a call region the last time (any rank of
// the layout): the next call's site and op, and the compute region
// between (1 + region; 0: none seen) and the next call's region. Ranks
// in a loop meet the same sites in the same order, so addCall finds
// both regions here without the table's two lookups.
type rcRegMemo struct {
	a, b     uint64 // the call's site and the next call's site
	layout   int32
	compute1 int32
	call1    int32
	op       trace.Op // the next call's op
}

// newRegion interns (a, b, op) of r's layout: its region (new, or the
// same sites' region of another layout).
func (s *RootCauseStream) newRegion(r *rcRank, a, b uint64, op trace.Op) int32 {
	k := rcRegionKey{a: s.site(r, a), b: -1, op: op}
	if op == 0 {
		k.b = s.site(r, b)
	}
	id, ok := s.regionIdx[k]
	if !ok {
		id = int32(len(s.regions))
		s.regionIdx[k] = id
		s.regions = append(s.regions, k)
		s.regCall = append(s.regCall, op != 0)
	}
	s.nRegs++
	if 4*s.nRegs > 3*len(s.regTab) {
		old := s.regTab
		s.regTab = make([]rcRegSlot, max(64, 2*len(old)))
		for _, sl := range old {
			if sl.id1 != 0 {
				s.regInsert(sl)
			}
		}
	}
	s.regInsert(rcRegSlot{a: a, b: b, op: op, layout: r.layout, id1: id + 1})
	return id
}

func rcRegHash(a, b uint64, op trace.Op, layout int32) uint64 {
	h := a*0x9e3779b97f4a7c15 ^ b*0xc2b2ae3d27d4eb4f ^ (uint64(op)|uint64(layout)<<8)*0x165667b19e3779f9
	return h ^ h>>29
}

// regInsert puts sl into the first free slot of its probe sequence.
func (s *RootCauseStream) regInsert(sl rcRegSlot) {
	m := uint64(len(s.regTab) - 1)
	for i := rcRegHash(sl.a, sl.b, sl.op, sl.layout) & m; ; i = (i + 1) & m {
		if s.regTab[i].id1 == 0 {
			s.regTab[i] = sl
			return
		}
	}
}

// layoutOf returns the layout of objs (sorted by Hi): ranks with the
// same objects at the same addresses share one.
func (s *RootCauseStream) layoutOf(objs []trace.Object) int32 {
	var key strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&key, "%x %x %x %x %s\x00", o.Lo, o.Hi, o.Base, len(o.Path), o.Path)
	}
	if id, ok := s.layouts[key.String()]; ok {
		return id
	}
	id := int32(len(s.layoutObjs))
	s.layouts[key.String()] = id
	s.layoutObjs = append(s.layoutObjs, objs)
	return id
}

// rcColl is a communicator's collective matching: its size, its open
// instances (few: a slice, and a map once there are many) and completed
// ones for reuse.
type rcColl struct {
	size int
	open []*rcInst
	many map[uint32]*rcInst // the open instances when more than rcOpenSmall
	free []*rcInst
	comm uint64
	sync *rcComm // its N×N synchronisations (nil: one member)
}

const rcOpenSmall = 32

func (c *rcColl) find(seq uint32) (*rcInst, int) {
	if c.many != nil {
		return c.many[seq], -1
	}
	for i := len(c.open) - 1; i >= 0; i-- {
		if c.open[i].seq == seq {
			return c.open[i], i
		}
	}
	return nil, -1
}

// collective adds a member's call to its instance; a complete instance
// yields its waits and, for N×N ops, a synchronisation of all members.
func (s *RootCauseStream) collective(r *rcRank, e *datamodel.GEvent, idx uint64) {
	cc := r.lastColl[0]
	if cc == nil || cc.comm != e.CommID {
		if cc = r.lastColl[1]; cc == nil || cc.comm != e.CommID {
			if cc = s.coll[e.CommID]; cc == nil {
				return
			}
		}
		r.lastColl[0], r.lastColl[1] = cc, r.lastColl[0]
	}
	n := cc.size
	if n <= 1 || int(e.CommRank) >= n {
		return
	}
	in, at := cc.find(e.Seq)
	if in == nil {
		if l := len(cc.free); l > 0 {
			in = cc.free[l-1]
			cc.free = cc.free[:l-1]
			in.reuse()
		} else {
			in = &rcInst{gen: 1, mem: make([]rcMember, n)}
		}
		in.seq, in.op, in.root = e.Seq, e.Op, e.Root
		if cc.many != nil {
			cc.many[e.Seq] = in
		} else {
			at = len(cc.open)
			cc.open = append(cc.open, in)
			if len(cc.open) > rcOpenSmall {
				cc.many = make(map[uint32]*rcInst, 2*rcOpenSmall)
				for _, x := range cc.open {
					cc.many[x.seq] = x
				}
				cc.open = cc.open[:0]
				at = -1
			}
		}
	}
	m := &in.mem[e.CommRank]
	if m.gen == in.gen {
		return
	}
	// field by field: a composite literal of six fields is built on
	// the stack and copied (22 instructions where these are 12)
	m.enter, m.exit, m.seg = e.Enter, e.Exit, idx
	m.sent, m.recv, m.gen = e.Sent, e.Recv, in.gen
	in.got++
	if in.got < n {
		return
	}
	if cc.many != nil {
		delete(cc.many, e.Seq)
		if len(cc.many) == 0 {
			cc.many = nil
		}
	} else {
		last := len(cc.open) - 1
		copy(cc.open[at:], cc.open[at+1:])
		cc.open[last] = nil
		cc.open = cc.open[:last]
	}
	s.done = append(s.done, rcDone{cc, in})
}

type rcDone struct {
	cc *rcColl
	in *rcInst
}

func (s *RootCauseStream) finishInstance(cc *rcColl, in *rcInst) {
	c := cc.sync
	if c == nil {
		cc.recycle(in) // one member: nobody waits
		return
	}
	mem := in.mem
	n := len(mem)
	// bytes: the members' bytes tell who sends and receives (FlowOf: a
	// barrier's are not known)
	cls, bytes, kind := WaitClassOf(in.op), in.op != trace.OpBarrier, 0
	if in.op == trace.OpWinFence { // Wait at Fence: everyone for the last
		cls, bytes, kind = WaitNxN, false, 3
	}
	if cls == WaitNxN {
		s.nxnWaiters(c, mem, bytes, kind)
		s.syncComm(c, mem)
		cc.recycle(in)
		return
	}
	// the other classes through CollectiveWaitsFlow, on slices
	if len(s.waitBuf) < n {
		s.waitBuf, s.causeBuf = make([]float64, n), make([]int, n)
		s.enterBuf, s.exitBuf = make([]float64, n), make([]float64, n)
		s.sentBuf, s.recvBuf = make([]uint64, n), make([]uint64, n)
	}
	wait, cause := s.waitBuf[:n], s.causeBuf[:n]
	enter, exit, sent, recv := s.enterBuf[:n], s.exitBuf[:n], s.sentBuf[:n], s.recvBuf[:n]
	for i := range mem {
		enter[i], exit[i], sent[i], recv[i] = mem[i].enter, mem[i].exit, mem[i].sent, mem[i].recv
	}
	var flow Flow
	if bytes {
		flow = Flow{Sent: sent, Recv: recv}
	}
	root := -1
	if in.root >= 0 && int(in.root) < n {
		root = int(in.root)
	}
	CollectiveWaitsFlow(cls, root, enter, exit, flow, wait, cause)
	// the waiters of an instance mostly wait for one member: its state,
	// position and enter looked up once; not N×N, so each wait
	// synchronises its pair
	j := -1
	var b *rcRank
	var pb uint64
	var need float64
	for i, w := range wait {
		if !(w > 0) || cause[i] < 0 {
			continue
		}
		if cause[i] != j {
			j = cause[i]
			b, pb, need = s.rankIf(c.members[j]), mem[j].seg, mem[j].enter
		}
		s.waitOf(kind, true, s.rankIf(c.members[i]), mem[i].seg, b, pb, w, mem[i].exit, need)
	}
	cc.recycle(in)
}

// recycle keeps a completed instance for reuse (a few at most).
func (c *rcColl) recycle(in *rcInst) {
	if len(c.free) < 64 {
		c.free = append(c.free, in)
	}
}

// nxnWaiters attributes the waits of a complete N×N instance in one loop
// over its members, in member order, without the tables of
// CollectiveWaitsFlow: every member that receives waits for the last
// entrant among the senders, that one for the second-last (the same
// waits, bit for bit: TestRootCause_NxNWaitsAgreeWithCollectiveWaits).
func (s *RootCauseStream) nxnWaiters(c *rcComm, mem []rcMember, bytes bool, kind int) {
	c.rankStates(s)
	ranks := c.ranks[:len(mem)] // (no bounds checks in the loop)
	last, second := nxnLastTwo(mem, bytes)
	if last < 0 {
		return
	}
	b, pb, need := ranks[last], mem[last].seg, mem[last].enter
	for i := range mem {
		m := &mem[i]
		if i == last { // it waits for the second-last, if for anyone
			if j := second; j >= 0 {
				if w, ok := nxnWaitFor(m, bytes, mem[j].enter); ok {
					s.waitOf(kind, false, ranks[i], m.seg, ranks[j], mem[j].seg, w, m.exit, mem[j].enter)
				}
			}
			continue
		}
		if w, ok := nxnWaitFor(m, bytes, need); ok {
			s.waitOf(kind, false, ranks[i], m.seg, b, pb, w, m.exit, need)
		}
	}
}

// nxnLastTwo returns the last and the second-last entrant among the
// members that send (every member when bytes is false: the bytes are not
// known), −1 for none, as CollectiveNeedsFlow picks them for an N×N
// instance.
func nxnLastTwo(mem []rcMember, bytes bool) (last, second int) {
	last, second = -1, -1
	var lastE, secondE float64 // mem[last].enter, mem[second].enter
	for i := range mem {
		if bytes && !(mem[i].sent > 0) {
			continue
		}
		if e := mem[i].enter; last < 0 || e > lastE {
			last, second, lastE, secondE = i, last, e, lastE
		} else if second < 0 || e > secondE {
			second, secondE = i, e
		}
	}
	return last, second
}

// nxnWaitFor returns member m's wait in an N×N instance for the member
// it waits for, which entered at need (the last sending entrant, or for
// that one the second-last: nxnLastTwo), and whether it waits, as
// CollectiveWaitsFlow computes it (bytes false: every member receives).
func nxnWaitFor(m *rcMember, bytes bool, need float64) (float64, bool) {
	if bytes && !(m.recv > 0) {
		return 0, false
	}
	w := need - m.enter
	if d := m.exit - m.enter; w > d {
		w = d
	}
	return w, w > 0
}

// syncComm records the N×N instance whose members' calls are mem as c's
// last synchronisation.
func (s *RootCauseStream) syncComm(c *rcComm, mem []rcMember) {
	t := math.Inf(-1)
	last := c.last[:len(mem)]
	for i := range mem {
		last[i] = mem[i].seg + 1
		if x := mem[i].exit; !(x < t) { // else max(t, x) is t
			t = max(t, x)
		}
	}
	c.t = t
	if !c.valid {
		c.valid = true
		for i, m := range c.members {
			if rs := s.rankIf(m); rs != nil && !rs.inComm(c) {
				rs.comms = append(rs.comms, rcCommRef{c, int32(i)})
			}
		}
	}
	c.rankStates(s)
	// Each member's latest communicator (rcRank.topComm) after c.
	for i, r := range c.ranks {
		switch {
		case r == nil:
		case r.topComm == c && t >= r.topT:
			r.topT = t
		case r.topComm != nil && r.topComm != c && t > r.topT:
			r.secondT = r.topT // ≥ every other one's
			r.topComm, r.topPos, r.topT = c, int32(i), t
		case r.topComm != nil && r.topComm != c && t <= r.topT:
			r.secondT = max(r.secondT, t)
		default: // the latest one went back in time, NaN, or none yet
			r.findTop()
		}
	}
}

// rankStates makes c.ranks, the members' states, when not yet made (at
// c's first complete instance, when every member has its state: each
// one's call made it).
func (c *rcComm) rankStates(s *RootCauseStream) {
	if c.ranks == nil {
		c.ranks = make([]*rcRank, len(c.members))
		for i, m := range c.members {
			c.ranks[i] = s.rankIf(m)
		}
	}
}

// findTop finds r's latest communicator among all of them (rare:
// noteSync keeps it).
func (r *rcRank) findTop() {
	r.topComm, r.topT, r.secondT = nil, math.Inf(-1), math.Inf(-1)
	top := -1
	for k, ref := range r.comms {
		t := ref.c.t
		if t != t || !ref.c.valid {
			r.topComm = nil
			return
		}
		if top < 0 || t > r.topT {
			if top >= 0 {
				r.secondT = max(r.secondT, r.topT)
			}
			top, r.topT = k, t
		} else {
			r.secondT = max(r.secondT, t)
		}
	}
	if top >= 0 {
		r.topComm, r.topPos = r.comms[top].c, r.comms[top].pos
	}
}

// commPos returns r's place in c (−1: not a member): from r's list of
// communicators with an N×N synchronisation when it is short (no
// hashing), else from c's index.
func (r *rcRank) commPos(c *rcComm) int {
	if len(r.comms) <= rcCommLinear {
		for _, x := range r.comms {
			if x.c == c {
				return int(x.pos)
			}
		}
	}
	return c.pos(r.rank)
}

// rcCommLinear is how many communicators commPos searches linearly.
const rcCommLinear = 8

func (r *rcRank) inComm(c *rcComm) bool {
	for _, x := range r.comms {
		if x.c == c {
			return true
		}
	}
	return false
}

func (s *RootCauseStream) rankIf(r int32) *rcRank {
	return s.ranks.at(r)
}

// onSync takes the point-to-point stream's synchronisations.
func (s *RootCauseStream) onSync(y P2PSync) {
	a, b := s.rankIf(y.Waiter), s.rankIf(y.Cause)
	if a == nil || b == nil || a == b {
		return
	}
	pa, okA := a.findCall(y.WaiterEnter, s.regCall)
	pb, okB := b.findCall(y.CauseEnter, s.regCall)
	kind := 1
	if y.Kind == SyncLateReceiver {
		kind = 2
	}
	if !okA || !okB {
		s.byKind[kind].add(y.Wait)
		s.waitStates++
		s.truncated++
		s.unresolved.add(y.Wait)
		return
	}
	s.waitState(kind, true, a.rank, pa, b.rank, pb, y.Wait, y.WaiterExit, y.CauseEnter)
}

// addPeer records a point-to-point synchronisation of r and peer (a wait
// state between them: the waiting rank left its call when the other
// entered its own, so their timelines meet there). The one before is
// kept too, for wait states found out of order.
func (r *rcRank) addPeer(peer int32, y rcSync) {
	h := r.peer(peer, true)
	if h.y[0].mine == y.mine && h.y[0].theirs == y.theirs {
		return
	}
	h.y = [2]rcSync{y, h.y[0]}
	if y.t > r.peerMaxT {
		r.peerMaxT = y.t
	}
}

// lastSync returns where ranks a and b last synchronised before a's
// call at ea and b's at eb: the first positions after it on each, 0, 0
// when never. Of a partner's synchronisation and a communicator's at the
// same time, the partner's counts; a's partners are looked up only when
// one of them synchronised with a as late as the best communicator
// (rcRank.peerMaxT).
func (s *RootCauseStream) lastSync(a, b *rcRank, ea, eb uint64) (uint64, uint64) {
	cbest := math.Inf(-1)
	var ca, cb uint64
	if c := a.topComm; c != nil && c.t > a.secondT && c.last[a.topPos] <= ea {
		// the latest communicator, strictly: the search would take it
		j := int(b.topPos) // b's place in c: its own latest one too, mostly
		if b.topComm != c {
			j = b.commPos(c)
		}
		if j >= 0 && c.last[j] <= eb {
			cbest, ca, cb = c.t, c.last[a.topPos], c.last[j]
			goto peers
		}
	}
	for _, ref := range a.comms {
		c, i := ref.c, int(ref.pos)
		if !c.valid || c.t <= cbest || c.last[i] > ea {
			continue
		}
		j := b.commPos(c)
		if j < 0 || c.last[j] > eb {
			continue
		}
		cbest, ca, cb = c.t, c.last[i], c.last[j]
	}
peers:
	if len(a.peers) > 0 && !(a.peerMaxT < cbest) {
		if h := a.peer(b.rank, false); h != nil {
			best, found := math.Inf(-1), false
			var pa, pb uint64
			for _, y := range h.y {
				if y.mine != 0 && y.mine <= ea && y.theirs <= eb && y.t > best {
					best, pa, pb, found = y.t, y.mine, y.theirs, true
				}
			}
			if found && best >= cbest {
				return pa, pb
			}
		}
	}
	return ca, cb
}

// waitState attributes one wait: rank a waited w in its call at
// position pa for rank b, whose call at pb it needed. kind: 0 collective,
// 1 Late Sender, 2 Late Receiver, 3 Wait at Fence, 4 Late Post, 5 Early
// Wait; pair: the wait synchronises a and b
// alone (not an N×N collective, whose communicator records it). end is
// the exit of a's call, need the enter of b's.
func (s *RootCauseStream) waitState(kind int, pair bool, ra int32, pa uint64, rb int32, pb uint64, w, end, need float64) {
	s.waitOf(kind, pair, s.rankIf(ra), pa, s.rankIf(rb), pb, w, end, need)
}

// waitOf is waitState with the ranks' states (nil: unknown).
func (s *RootCauseStream) waitOf(kind int, pair bool, a *rcRank, pa uint64, b *rcRank, pb uint64, w, end, need float64) {
	if k := &s.byKind[kind]; !k.addFast(w) { // the total is their sum (totalWait)
		k.addWide(w)
	}
	s.waitStates++
	if a == nil || b == nil || a == b {
		s.unresolved.add(w)
		return
	}
	var sa, sb uint64
	if c := a.topComm; c != nil && c.t > a.secondT && b.topComm == c && c.last[a.topPos] <= pa && c.last[b.topPos] <= pb &&
		(len(a.peers) == 0 || a.peerMaxT < c.t) {
		// lastSync's shortcut where both ranks' latest communicator is
		// the same and no partner can be later, inline
		sa, sb = c.last[a.topPos], c.last[b.topPos]
	} else {
		sa, sb = s.lastSync(a, b, pa, pb)
	}
	ao, bo := a.oldest(), b.oldest()
	if pa < ao || pb < bo {
		s.truncated++
		s.unresolved.add(w)
		return
	}
	if sa < ao || sb < bo {
		sa, sb = max(sa, ao), max(sb, bo)
		s.truncated++
	}
	// Time per region on the delaying rank, less its own wait states, and
	// what those pass on: the same for every rank waiting for b's call pb
	// since the same point (all members of an N×N instance).
	sd := &s.side
	if !sd.live || sd.b != b || sd.sb != sb || sd.pb != pb || sd.gen != s.gen {
		sd = s.newSide(b, sb, pb)
	}
	dk, D := s.delays(a, sa, pa, sd)
	s.attribute(a, pa, b, sd, w, dk, D)
	if pair {
		a.addPeer(b.rank, rcSync{pa + 1, pb + 1, end})
		b.addPeer(a.rank, rcSync{pb + 1, pa + 1, end})
	}
	s.jump(a, pa, b, pb, w, need)
}

// attribute spreads rank a's wait w in its call at pa over b's side sd,
// given a's delays against it (dk, their positive sum D: delays): in
// proportion to b's delays (their direct costs) and b's own wait states
// (passed on to their causes), scaled by min(1, w / their sum), the
// rest to noDelay.
// The attribution is kept with a's call (its slot or its ring).
func (s *RootCauseStream) attribute(a *rcRank, pa uint64, b *rcRank, sd *rcSide, w float64, dk []float64, D float64) {
	g := a.seg(pa)
	if !(D+sd.W > 0) {
		if !s.noDelay.addFast(w) {
			s.noDelay.addWide(w)
		}
		g.wait = min(g.dur, g.wait+w)
		return
	}
	scale := w / (D + sd.W)
	if scale > 1 { // min(scale, 1): NaN kept
		scale = 1
	}
	n, first := 0, 0       // the regions with a delay, the first of them
	for i, d := range dk { // regions are distinct: no search
		if d > 0 {
			sr := &sd.reg[i]
			c := sr.cause
			if c == nil {
				c = s.causeOf(b, int32(sd.tB[i].cause))
				sr.cause = c
			}
			x := scale * d
			if !c.direct.addFast(x) {
				c.direct.addWide(x)
			}
			c.directF += x
			if !c.delay.addFast(d) {
				c.delay.addWide(d)
			}
			c.waits++
			cd := c.directF
			if !(cd <= s.maxDirect) { // max, NaN included (maxDirect is never −0)
				s.maxDirect = max(s.maxDirect, cd)
			}
			// noteIv, but not called where it returns at once: no
			// drawing yet and below its bar, the same interval as the
			// cause's last, or a delay that the thinning skips (its
			// count, as noteIv keeps it)
			if !sr.ivDone {
				if dr := c.draw; dr != nil {
					if k := len(dr.iv); k > 0 && dr.iv[k-1] == sr.span {
						sr.ivDone = true // the side's other waiters add nothing
					} else if dr.skip+1 < dr.stride {
						dr.skip++
					} else if s.noteIv(c, sr.span[0], sr.span[1]) {
						sr.ivDone = true
					}
				} else if !(cd < s.maxDirect/100 || s.ivKept >= rcIvBudget) && s.noteIv(c, sr.span[0], sr.span[1]) {
					sr.ivDone = true
				}
			}
			if n == 0 {
				first = i
			}
			n++
		}
	}
	// b's wait states pass their share on to their own causes (credited
	// once per side, flushSide).
	sd.scale += scale
	o := scale * sd.rest
	if x := w - scale*(D+sd.W); !s.noDelay.addFast(x) {
		s.noDelay.addWide(x)
	}
	// The wait belongs to a's call: later delays of a see it as a
	// propagating wait state.
	if v := g.wait + w; v < g.dur { // else min(g.dur, v) (NaN, equal zeros)
		g.wait = v
	} else {
		g.wait = min(g.dur, v)
	}
	if n == 1 && len(sd.top) == 0 && !(o > 0) && g.res == 0 && len(a.one) == len(a.segs) {
		// one cause and nothing else, the call's first record: its slot
		// (what the record below would be and vecStore would keep so:
		// its total 0 + amt is amt, NaN aside)
		if amt := scale * dk[first]; amt == amt {
			a.one[pa&uint64(len(a.segs)-1)] = rcEnt{rcCauseKey(b.rank, int32(sd.tB[first].cause)), amt}
			g.res = rcResOne
			return
		}
	}
	vec := &s.vecA
	vec.ent, vec.other, vec.total = vec.ent[:0], 0, 0
	for i, d := range dk {
		if d > 0 {
			vec.ent = append(vec.ent, rcEnt{rcCauseKey(b.rank, int32(sd.tB[i].cause)), scale * d})
			vec.total += scale * d
		}
	}
	// b's wait states' causes are distinct from each other, so only b's
	// own delays need a look.
	nd := len(vec.ent)
top:
	for _, e := range sd.top {
		amt := scale * e.amt
		vec.total += amt
		for i := 0; i < nd; i++ {
			if vec.ent[i].cause == e.cause {
				vec.ent[i].amt += amt
				continue top
			}
		}
		vec.ent = append(vec.ent, rcEnt{e.cause, amt})
	}
	if o > 0 {
		vec.other += o
		vec.total += o
	}
	if len(vec.ent) > rcVecK {
		vec.trim()
	}
	if g.res == 0 && len(vec.ent) == 1 && vec.other == 0 && vec.total == vec.ent[0].amt && len(a.one) == len(a.segs) {
		// one cause, the call's first record (vecStore's slot, inlined)
		a.one[pa&uint64(len(a.segs)-1)] = vec.ent[0]
		g.res = rcResOne
		return
	}
	if g.res != 0 {
		old := &s.vecB
		a.vecLoad(g.res, pa, old)
		for _, e := range vec.ent {
			old.add(e.cause, e.amt)
		}
		old.other += vec.other
		old.total += vec.other
		old.trim()
		vec = old
	}
	a.vecStore(pa, vec)
}

// delays returns, for each of the side's regions (sd.tB), b's time
// there less a's over a's interval [sa, pa) (in s.dk), and the sum of
// the positive ones (Σd). When b's interval is a sequence of distinct regions
// (sd.seq) and a's runs through the same regions in the same order (an
// SPMD loop between two synchronisations), a's time in region i is its
// segment sa+i alone, read in one pass; else it is summed per region in
// a scratch table. Both give the same values bit for bit: a region's
// time is a sum of its segments in their order from 0, and 0 + x is x
// but for x = −0, which sd.tB[i] (never ±0) − x does not tell apart.
func (s *RootCauseStream) delays(a *rcRank, sa, pa uint64, sd *rcSide) ([]float64, float64) {
	n := len(sd.tB)
	if cap(s.dk) < n {
		s.dk = make([]float64, n, 2*n)
	}
	dk := s.dk[:n]
	D := 0.0
	if sd.seq && pa-sa == uint64(n) {
		m := uint64(len(a.segs) - 1)
		i := 0
		for ; i < n; i++ {
			g := &a.segs[(sa+uint64(i))&m]
			if int64(g.region) != sd.tB[i].cause {
				break
			}
			d := sd.tB[i].amt - g.dur
			dk[i] = d
			if d > 0 {
				D += d
			}
		}
		if i == n {
			return dk, D
		}
		D = 0
	}
	for len(s.tA) < len(s.regions) {
		s.tA = append(s.tA, 0)
	}
	s.touched = s.touched[:0]
	for p := sa; p < pa; p++ {
		g := a.seg(p)
		if s.tA[g.region] == 0 {
			s.touched = append(s.touched, g.region)
		}
		s.tA[g.region] += g.dur
	}
	for i, x := range sd.tB {
		d := x.amt - s.tA[int32(x.cause)]
		dk[i] = d
		if d > 0 {
			D += d
		}
	}
	for _, reg := range s.touched {
		s.tA[reg] = 0
	}
	return dk, D
}

// rcSide is the delaying rank's side of the wait states for one of its
// calls since one point: the same for every rank that waited for that
// call and last synchronised with it there.
type rcSide struct {
	b      *rcRank
	sb, pb uint64
	gen    uint64
	tB     []rcEnt         // region (in cause) -> time, wait states excluded
	reg    []rcSideReg     // parallel to tB
	W      float64         // b's wait states in the interval
	prop   []rcEnt         // what b's wait states pass on, per cause (first seen first)
	propIx map[int64]int32 // prop's index once it is long (propAdd)
	top    []rcEnt         // prop's rcVecK largest, for the waiters' attributions
	rest   float64         // the rest of prop, and what b's wait states pass to small causes
	small  float64         // passed to small causes per unit of scale
	unres  float64         // b's wait states without causes per unit of scale
	scale  float64         // Σ scale over the waiters so far
	seq    bool            // tB[i] is b's segment sb+i alone: distinct regions, none of time 0 (delays)
	live   bool
}

// rcSideReg is what a side keeps of one of its regions besides its time.
type rcSideReg struct {
	span   [2]float64 // the region's first start, last end
	cause  *rcCause   // the cause (rank b, region) once looked up
	ivDone bool       // its delay's interval is its cause's last kept (noteIv)
}

// newSide computes b's side for its call pb since sb, crediting the
// current one's propagated costs first (waitOf takes the current one
// when it is b's for pb since sb within the same event).
func (s *RootCauseStream) newSide(b *rcRank, sb, pb uint64) *rcSide {
	sd := &s.side
	s.flushSide()
	sd.b, sd.sb, sd.pb, sd.gen, sd.live = b, sb, pb, s.gen, true
	sd.tB, sd.top, sd.reg = sd.tB[:0], sd.top[:0], sd.reg[:0]
	sd.W, sd.rest, sd.small, sd.unres, sd.scale = 0, 0, 0, 0, 0
	sd.prop = sd.prop[:0]
	if sd.propIx != nil {
		clear(sd.propIx)
	}
	if distinctRegions(b, sb, pb) {
		// each region one segment: its time is the segment's, in order
		// (what the table below gives: 0 + x is x for the x ≠ 0 kept)
		for p := sb; p < pb; p++ {
			g := b.seg(p)
			if x := g.dur - g.wait; x != 0 {
				sd.tB = append(sd.tB, rcEnt{int64(g.region), x})
				sd.reg = append(sd.reg, rcSideReg{span: [2]float64{g.start, g.start + g.dur}})
			}
			if !(g.wait <= 0) { // NaN included, as the table's loop
				sd.addWait(b, p, g)
			}
		}
	} else {
		for len(s.tB) < len(s.regions) {
			s.tB = append(s.tB, 0)
			s.fromB = append(s.fromB, 0)
			s.toB = append(s.toB, 0)
		}
		s.touchedB = s.touchedB[:0]
		for p := sb; p < pb; p++ {
			g := b.seg(p)
			if s.tB[g.region] == 0 {
				s.touchedB = append(s.touchedB, g.region)
				s.fromB[g.region] = g.start
			}
			s.tB[g.region] += g.dur - g.wait
			s.toB[g.region] = g.start + g.dur
			if !(g.wait <= 0) {
				sd.addWait(b, p, g)
			}
		}
		for _, reg := range s.touchedB {
			if s.tB[reg] != 0 {
				sd.tB = append(sd.tB, rcEnt{int64(reg), s.tB[reg]})
				sd.reg = append(sd.reg, rcSideReg{span: [2]float64{s.fromB[reg], s.toB[reg]}})
			}
			s.tB[reg] = 0
		}
	}
	if len(sd.prop) > 0 { // b's wait states pass something on
		sd.top = entsAppendSorted(sd.top, sd.prop)
		slices.SortFunc(sd.top, func(x, y rcEnt) int {
			if x.amt != y.amt {
				return cmp.Compare(y.amt, x.amt)
			}
			return s.causeCmp(x.cause, y.cause) // by content: the same on every process (D75)
		})
	}
	sd.seq = uint64(len(sd.tB)) == pb-sb
	sd.rest = sd.small
	if len(sd.top) > rcVecK {
		for _, e := range sd.top[rcVecK:] {
			sd.rest += e.amt
		}
		sd.top = sd.top[:rcVecK]
	}
	return sd
}

// rcSeqMax bounds the segments distinctRegions compares pairwise.
const rcSeqMax = 8

// distinctRegions reports whether b's segments [sb, pb) are at most
// rcSeqMax, each of another region.
func distinctRegions(b *rcRank, sb, pb uint64) bool {
	if pb-sb > rcSeqMax {
		return false
	}
	for p := sb + 1; p < pb; p++ {
		r := b.seg(p).region
		for q := sb; q < p; q++ {
			if b.seg(q).region == r {
				return false
			}
		}
	}
	return true
}

// addWait adds b's wait state in its segment g at p to the side: its
// time to W, and what it passes on to its causes (its record's shares
// per unit of wait) or to unres when it has none.
func (sd *rcSide) addWait(b *rcRank, p uint64, g *rcSeg) {
	sd.W += g.wait
	if g.res == 0 {
		sd.unres += g.wait
		return
	}
	if g.res == rcResOne { // as a ring record of one entry reads
		e := b.one[p&uint64(len(b.segs)-1)]
		if !(e.amt > 0) {
			sd.unres += g.wait
			return
		}
		f := g.wait / e.amt
		sd.propAdd(e.cause, f*e.amt)
		sd.small += f * 0 // its other (f*0 is not 0 when f is infinite)
		return
	}
	q := b.vecPhys(g.res)
	if !(b.vecs[q+1].amt > 0) { // the record's total
		sd.unres += g.wait
		return
	}
	f := g.wait / b.vecs[q+1].amt
	for _, e := range b.vecs[q+2 : q+2+uint64(b.vecs[q+1].cause)] {
		sd.propAdd(e.cause, f*e.amt)
	}
	sd.small += f * b.vecs[q].amt
}

// rcPropLinear is how many causes a side's prop holds before it is
// indexed by a map.
const rcPropLinear = 16

// propAdd adds amt to cause k's amount in prop (in a flat slice: few
// causes, no hashing; a map index beyond rcPropLinear).
func (sd *rcSide) propAdd(k int64, amt float64) {
	if len(sd.prop) <= rcPropLinear {
		for i := range sd.prop {
			if sd.prop[i].cause == k {
				sd.prop[i].amt += amt
				return
			}
		}
		sd.prop = append(sd.prop, rcEnt{k, amt})
		if len(sd.prop) > rcPropLinear {
			if sd.propIx == nil {
				sd.propIx = map[int64]int32{}
			}
			for i, e := range sd.prop {
				sd.propIx[e.cause] = int32(i)
			}
		}
		return
	}
	if i, ok := sd.propIx[k]; ok {
		sd.prop[i].amt += amt
		return
	}
	sd.propIx[k] = int32(len(sd.prop))
	sd.prop = append(sd.prop, rcEnt{k, amt})
}

// entsAppendSorted appends es's non-zero entries (distinct keys), sorted
// by key, to dst.
func entsAppendSorted(dst, es []rcEnt) []rcEnt {
	n := len(dst)
	for _, e := range es {
		if e.amt != 0 {
			dst = append(dst, e)
		}
	}
	slices.SortFunc(dst[n:], func(a, b rcEnt) int { return cmp.Compare(a.cause, b.cause) })
	return dst
}

// flushSide credits the current side's propagated costs: each cause of
// b's wait states gets its share times the waiters' summed scale.
func (s *RootCauseStream) flushSide() {
	sd := &s.side
	if !sd.live {
		return
	}
	sd.live = false
	if sd.scale == 0 {
		return
	}
	s.small.add(sd.scale * sd.small)
	s.unresolved.add(sd.scale * sd.unres)
	// Each cause gets one amount per side: the order of the causes
	// does not change any sum.
	for _, e := range sd.prop {
		if e.amt == 0 {
			continue
		}
		amt := sd.scale * e.amt
		c := s.cause(e.cause)
		if !c.long.addFast(amt) {
			c.long.addWide(amt)
		}
		c.addVia(sd.b.rank, amt)
	}
}

// totalWait returns the stream's total waiting: the sum of its totals
// by kind (exact: integers).
func (s *RootCauseStream) totalWait() rcSum {
	var t rcSum
	for _, k := range s.byKind {
		t.merge(k)
	}
	return t
}

// rcMaxVia bounds the ranks a cause keeps as propagating it.
const rcMaxVia = 64

// addVia adds amt to what cause c propagated through rank r: a rank
// already listed, or a new one while fewer than rcMaxVia are.
func (c *rcCause) addVia(r int32, amt float64) {
	for i := range c.via {
		if c.via[i].rank == r {
			if a := &c.via[i].amt; !a.addFast(amt) {
				a.addWide(amt)
			}
			return
		}
	}
	if len(c.via) < rcMaxVia {
		c.via = append(c.via, rcVia{rank: r})
		c.via[len(c.via)-1].amt.add(amt)
	}
}

// rcVia is what a cause propagated through one rank.
type rcVia struct {
	rank int32
	amt  rcSum
}

// cause returns the cause of key k (rcCauseKey), made when new: in its
// rank's array by region (causeOf), in the map of odd keys when the
// rank has no state or the region is negative (never in a run).
func (s *RootCauseStream) cause(k int64) *rcCause {
	rank, reg := int32(k>>32), int32(uint32(k))
	if r := s.ranks.at(rank); reg >= 0 && r != nil {
		return s.causeOf(r, reg)
	}
	c := s.causesOdd[k]
	if c == nil {
		c = &rcCause{}
		s.causesOdd[k] = c
	}
	return c
}

// causeIf returns the cause of key k, nil when it was never made.
func (s *RootCauseStream) causeIf(k int64) *rcCause {
	rank, reg := int32(k>>32), int32(uint32(k))
	if r := s.ranks.at(rank); reg >= 0 && r != nil {
		if cs := r.causes; int(reg) < len(cs) {
			return cs[reg]
		}
		return nil
	}
	return s.causesOdd[k]
}

// causeOf returns the cause of b's region reg ≥ 0 (cause), made when
// new, from b's array of its causes by region: the attribution has the
// rank's state at hand, and at 16,384 ranks one map of every cause
// (275,429 of them in the synthetic halo run) was a hash and two cache
// misses a delayed region (its cache of 256 slots for all ranks rarely
// hit). The array is made at the first cause of the rank, as long as
// the regions known then (81 in that run: 0.6 kB, 5.6 MB for its 8,593
// ranks that caused a wait, about what the map held).
func (s *RootCauseStream) causeOf(b *rcRank, reg int32) *rcCause {
	if n := max(len(s.regions), int(reg)+1); b.causes == nil {
		b.causes = make([]*rcCause, n)
	} else if int(reg) >= len(b.causes) {
		b.causes = append(b.causes, make([]*rcCause, n-len(b.causes))...)
	}
	c := b.causes[reg]
	if c == nil {
		c = &rcCause{}
		b.causes[reg] = c
	}
	return c
}

// eachCause calls f with every cause made, in the order of their keys
// (rcCauseKey).
func (s *RootCauseStream) eachCause(f func(k int64, c *rcCause)) {
	odd := make([]int64, 0, len(s.causesOdd))
	for k := range s.causesOdd {
		odd = append(odd, k)
	}
	sort.Slice(odd, func(i, j int) bool { return odd[i] < odd[j] })
	for i := range s.ranks.len() {
		r := s.ranks.at(int32(i))
		if r == nil {
			continue
		}
		for len(odd) > 0 && odd[0] < rcCauseKey(r.rank, 0) {
			f(odd[0], s.causesOdd[odd[0]])
			odd = odd[1:]
		}
		for reg, c := range r.causes {
			if c != nil {
				f(rcCauseKey(r.rank, int32(reg)), c)
			}
		}
	}
	for _, k := range odd {
		f(k, s.causesOdd[k])
	}
}
