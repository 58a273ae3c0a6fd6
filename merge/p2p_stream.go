package merge

// The point-to-point pass as a stream (issue 13): P2PStream is a Sink fed
// the merged events of every rank in global time order (tracemerge adds it
// to the main pass, so the files are read once). It matches the n-th send
// of (communicator, source, destination, tag) with the n-th receive of the
// same key in posting order (MPI's non-overtaking rule) as soon as both are
// known, computes the waits of a pair as soon as both sides completed, and
// forgets the pair. Memory is what is in flight: messages posted and not
// yet matched or completed, calls whose receives are not all matched, open
// requests, and nonblocking-collective instances not completed by every
// member; it does not grow with the run's length.

import (
	"container/heap"
	"fmt"
	"math"
	"sort"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// p2pMsg is one posted message (a send or a receive).
type p2pMsg struct {
	comm      uint64
	src, dst  int32
	tag       int32
	callIdx   int32 // a receive's index in its call's recvs
	bytes     uint64
	op        trace.Op // the starting call (Send, Isend, Irecv, ...)
	sync      bool
	order     int     // posting order on its rank
	post      float64 // send: start; receive: posted
	postLocal int64
	postExit  float64
	// The call that waited for it: blocking call or the completion.
	waitOp              trace.Op
	waitEnter, waitExit float64
	waitLocal           int64
	recv                bool // a receive (else a send)
	done                bool
	keyed               bool // entered in its key's queue
	dropped             bool // no peer (MPI_PROC_NULL, unresolved source): never matched
	call                *p2pCall
	peer                *p2pMsg // the matched other side
	lateSender          float64 // wait for this (receive's) late sender
	settled             bool    // pair metrics computed
}

// p2pCall is one call that waits for receives (a blocking receive or a
// completion call).
type p2pCall struct {
	rank        int32
	op          trace.Op
	enter, exit float64
	recvs       []*p2pMsg
	open        int  // receives not yet settled
	closed      bool // no more records of this call will come
	live        int  // 1 + its index in P2PStream.live while not finished; 0 once finished
	// What finishCall needs of the settled receives, gathered as each
	// settles (settle has them in the cache; at finishCall, a step of
	// every rank later, each was a cache miss at 16,384 ranks): their
	// longest late-sender wait, the latest send start among their
	// senders (lastIdx: that receive's index in recvs, the first of
	// equal starts wins), and the settled pairs, freed with the call.
	ls       float64
	lastPost float64
	lastSrc  int32
	lastIdx  int32
	hasLast  bool
	nanPost  bool // a sender's start is NaN: finishCall walks recvs instead
	settled  []*p2pMsg
}

type p2pPending struct {
	msg  *p2pMsg
	recv bool
	coll bool
	// persistent template
	persistent bool
	tmpl       p2pMsg
	nbcKey     InstanceKey
	nbcOp      trace.Op
	// next: a later request of the same rank with the same id. Request
	// ids are 32 bits and wrap after 4,294,967,295 starts on a rank (72
	// minutes at a million starts a second), so a request that lives that
	// long (a persistent request made at start, a receive posted for a
	// shutdown message) shares its id with a new one; the chain keeps both.
	next *p2pPending
}

type nbcInst struct {
	op     trace.Op
	size   int
	starts map[int32]float64
	enter  map[int32]float64 // completion call enter
	exit   map[int32]float64
}

type siteAcc struct {
	calls int
	polls uint64
	time  float64
	ranks map[int32]bool
}

type p2pSiteKey struct {
	site string
	op   trace.Op
}

type p2pKey struct {
	comm     uint64
	src, dst int32
	tag      int32
}

// p2pRankState is the parsing state of one rank. At many ranks every
// event finds its rank's state cold (the merged stream visits all ranks
// between two events of one), so what an event touches is kept in this
// one object: its open requests (up to pendInline inline, more in a map),
// its summary, its last call sites (docs/explanation/tracemerge.md, "Many ranks").
// The states live in blocks of consecutive ranks (P2PStream.ranks,
// rankBlocks), not one object each.
type p2pRankState struct {
	rank   int32
	order  int
	npend  int                    // requests in pend
	pend   [pendInline]pendSlot   // open requests by id (the head of each id's chain)
	more   map[uint32]*p2pPending // open requests beyond pend (nil until needed)
	cur    *p2pCall
	curKey [3]int64
	memo   [siteMemoLen]siteMemo // the rank's last call sites (addSite)
	// unresolved: posted receives whose source or tag is a wildcard until
	// they complete, by posting order; a receive of this rank can only be
	// matched once no unresolved receive was posted before it.
	unresolved map[int]bool
	minUnres   int // smallest order in unresolved (valid when len > 0)
	// blocked: the keys to this rank whose head receive waits for an
	// unresolved one posted before it (tryMatch), retried when one
	// resolves (releaseRank); visiting every key of the run instead made
	// a 10,000-rank analysis quadratic
	blocked map[p2pKey]struct{}
	sum     datamodel.P2PRank
	// waited: the ranks this rank waited for, summed (finishCall): the
	// first waitedInline in the slice, more in the map
	waited     []datamodel.RankAmount
	waitedMore map[int32]float64
	// the keys to this rank that hold queues (p2p_match.go: chanOf)
	nchan     int
	chans     [chanInline]chanSlot
	moreChans map[p2pKey]*p2pChan
	// the late-sender and late-receiver sums of the messages to this
	// rank, by sender (settle): the first pairInline senders inline,
	// more in the map
	npair     int
	pairPeer  [pairInline]int32
	pairs     [pairInline]pairSums
	pairsMore map[int32]*pairSums
}

// pairInline is the number of senders whose wait sums a rank keeps
// inline (p2pRankState.pairs; a halo exchange has two to six).
const pairInline = 6

// pairSums are the waits of the messages from one sender to one
// receiver: ls the receiver's late-sender waits (the sender their
// culprit), lr the sender's late-receiver waits (the receiver their
// culprit).
type pairSums struct {
	ls, lr pairSum
}

// pairSum counts waits > 0 and sums them, ns.
type pairSum struct {
	n  int
	ns float64
}

func (p *pairSum) add(w float64) {
	p.n++
	p.ns += w
}

// pairOf returns the sums of the messages from sender src to rs's rank,
// made when new. They live in the receiver's state (one map of every
// pair was a hash and two or three cache misses per late message at
// 16,384 ranks); the receiver is the one owner of the pair in a
// partitioned analysis.
func (rs *p2pRankState) pairOf(src int32) *pairSums {
	for i := 0; i < rs.npair; i++ {
		if rs.pairPeer[i] == src {
			return &rs.pairs[i]
		}
	}
	if p := rs.pairsMore[src]; p != nil {
		return p
	}
	if rs.npair < pairInline {
		i := rs.npair
		rs.npair++
		rs.pairPeer[i] = src
		return &rs.pairs[i]
	}
	if rs.pairsMore == nil {
		rs.pairsMore = map[int32]*pairSums{}
	}
	p := &pairSums{}
	rs.pairsMore[src] = p
	return p
}

// eachPair calls f with every sender of a message to rs's rank that has
// sums, and its sums.
func (rs *p2pRankState) eachPair(f func(src int32, p *pairSums)) {
	for i := 0; i < rs.npair; i++ {
		f(rs.pairPeer[i], &rs.pairs[i])
	}
	for src, p := range rs.pairsMore {
		f(src, p)
	}
}

// pendInline is the number of open requests a rank keeps inline (a halo
// exchange has four); more go to the rank's map.
const pendInline = 6

// pendSlot is one open request id and the head of its chain.
type pendSlot struct {
	req uint32
	p   *p2pPending
}

// siteMemoLen is the number of (call site, op) entries a rank remembers.
const siteMemoLen = 4

// siteMemo is a rank's accumulator for one (call site, op): the rank is
// already in its set of ranks.
type siteMemo struct {
	pc  uint64
	op  trace.Op
	acc *siteAcc
}

// getPending returns the head of request id req's chain (nil: none).
func (rs *p2pRankState) getPending(req uint32) *p2pPending {
	for i := 0; i < rs.npend; i++ {
		if rs.pend[i].req == req {
			return rs.pend[i].p
		}
	}
	if rs.more != nil {
		return rs.more[req]
	}
	return nil
}

// setPending makes p the head of req's chain (nil: req has none).
func (rs *p2pRankState) setPending(req uint32, p *p2pPending) {
	for i := 0; i < rs.npend; i++ {
		if rs.pend[i].req == req {
			if p != nil {
				rs.pend[i].p = p
				return
			}
			rs.npend--
			rs.pend[i] = rs.pend[rs.npend]
			rs.pend[rs.npend] = pendSlot{}
			return
		}
	}
	if rs.more != nil {
		if _, ok := rs.more[req]; ok {
			if p != nil {
				rs.more[req] = p
			} else {
				delete(rs.more, req)
			}
			return
		}
	}
	if p == nil {
		return
	}
	if rs.npend < pendInline {
		rs.pend[rs.npend] = pendSlot{req, p}
		rs.npend++
		return
	}
	if rs.more == nil {
		rs.more = map[uint32]*p2pPending{}
	}
	rs.more[req] = p
}

// eachPending calls f with the head of every open request id's chain.
func (rs *p2pRankState) eachPending(f func(p *p2pPending)) {
	for i := 0; i < rs.npend; i++ {
		f(rs.pend[i].p)
	}
	for _, p := range rs.more {
		f(p)
	}
}

// P2PStream is the streaming point-to-point analysis (see the file
// comment). Create it with NewP2PStream, feed it with Add, then call
// Result once.
type P2PStream struct {
	opt       P2POptions
	out       *datamodel.P2PResult
	rep       repairs // P2POptions.CollectRepairs
	siteName  func(rank int32, pc uint64) string
	commSize  map[uint64]int
	ranks     rankBlocks[p2pRankState] // by world rank (at: nil when no such rank seen)
	live      []*p2pCall               // calls not yet finished (p2pCall.live)
	chans     map[p2pKey]*p2pChan
	freeChans []*p2pChan
	nbc       map[InstanceKey]*nbcInst
	nbcAcc    map[trace.Op]*nbcAccum
	sites     map[p2pSiteKey]*siteAcc
	list      msgHeap  // earliest sends kept for drawing (max-heap by start)
	worst     lateHeap // largest late-sender waits (min-heap by wait)
	inFlight  int      // messages held (for the peak)
	peak      int
	curOpen   int // ranks with a completion call open (p2pRankState.cur; endCall)

	// Partitioned analysis (p2p_part.go). An owner analyses the messages
	// to its ranks (own) and records the steps whose order matters for
	// process 0 (part); process 0 replays them (siteCache).
	own       []bool    // by world rank: an owner's ranks (nil: every rank)
	part      *p2pOwner // owner state (nil: aggregate here)
	replayKey p2pRecKey // process 0: the key of the record being replayed (the step of a replayed OnSync)
	// process 0: feed takes the replayed wait states (a fed root-cause
	// stream, p2p_pipe.go; nil: OnSync); endSyncs are those of the run's
	// end, which leftovers reports, as the serial stream does
	feed      func(k p2pRecKey, y P2PSync)
	endSyncs  []fedEnd
	mine      bool // the event being added is of one of own's ranks
	siteCache map[p2pPC]*siteAcc
	// Reuse (finishCall): messages and calls done with.
	freeMsgs  []*p2pMsg
	freeCalls []*p2pCall
	freePend  []*p2pPending
	// fresh counts the messages, requests and calls made new rather
	// than reused (TestP2PStream_ReusesWhatIsInFlightAtManyRanks).
	fresh     struct{ msgs, pend, calls int }
	ownerEnds int // owners' end records merged (process 0)
}

type nbcAccum struct {
	s          datamodel.NBCSummary
	skew, wait accum
}

// NewP2PStream prepares a point-to-point analysis of run. siteName names
// an event's call site per rank (Pass.SiteName); "" or nil names it by
// address.
func NewP2PStream(run *rundir.Run, opt P2POptions, siteName func(rank int32, pc uint64) string) *P2PStream {
	return newP2PStream(run, opt, siteName, nil)
}

// newP2PStream is NewP2PStream whose rank states are made at the start
// only for the ranks of run that keep says (nil: all); the others get
// theirs at their first event (P2PStream.rank). A partitioned owner keeps
// its own ranks: a state is ≈ 1 kB, 16 MB at 16,384 ranks in every
// process (D78).
func newP2PStream(run *rundir.Run, opt P2POptions, siteName func(rank int32, pc uint64) string, keep func(rank int) bool) *P2PStream {
	if opt.TopN <= 0 {
		opt.TopN = 10
	}
	s := &P2PStream{opt: opt, out: &datamodel.P2PResult{}, siteName: siteName, commSize: map[uint64]int{},
		chans: map[p2pKey]*p2pChan{},
		nbc:   map[InstanceKey]*nbcInst{}, nbcAcc: map[trace.Op]*nbcAccum{}, sites: map[p2pSiteKey]*siteAcc{}}
	for _, ri := range run.Ranks {
		for _, c := range ri.Meta.Comms {
			s.commSize[c.ID] = len(c.Members)
		}
		if keep == nil || keep(ri.Rank) {
			s.rank(int32(ri.Rank))
		}
	}
	return s
}

func (s *P2PStream) rank(r int32) *p2pRankState {
	if rs := s.ranks.at(r); rs != nil {
		return rs
	}
	if r < 0 {
		panic(fmt.Sprintf("p2p: negative rank %d", r))
	}
	rs := s.ranks.make(r)
	rs.rank = r
	rs.sum.Rank = r
	return rs
}

// rankOrNil is rank r's state, nil if r has none.
func (s *P2PStream) rankOrNil(r int32) *p2pRankState { return s.ranks.at(r) }

func (s *P2PStream) site(rank int32, pc uint64) string {
	if s.siteName != nil {
		if n := s.siteName(rank, pc); n != "" {
			return n
		}
	}
	return fmt.Sprintf("0x%x", pc)
}

func (s *P2PStream) addSite(rank int32, pc uint64, op trace.Op, calls int, polls uint64, d float64) {
	if s.part != nil {
		s.part.site(rank, pc, op, calls, polls, d)
		return
	}
	rs := s.rank(rank)
	var a *siteAcc
	for i := range rs.memo {
		if m := &rs.memo[i]; m.acc != nil && m.pc == pc && m.op == op {
			a = m.acc
			if i > 0 { // most recent first
				hit := *m
				copy(rs.memo[1:i+1], rs.memo[:i])
				rs.memo[0] = hit
			}
			break
		}
	}
	if a == nil {
		k := p2pSiteKey{s.site(rank, pc), op}
		a = s.sites[k]
		if a == nil {
			a = &siteAcc{ranks: map[int32]bool{}}
			s.sites[k] = a
		}
		a.ranks[rank] = true
		copy(rs.memo[1:], rs.memo[:len(rs.memo)-1])
		rs.memo[0] = siteMemo{pc: pc, op: op, acc: a}
	}
	a.calls += calls
	a.polls += polls
	a.time += d
}

// Prefetch implements Prefetcher: it asks for the state of e's rank
// that Add will touch (its open requests, current call, call sites and
// sums) and, for a message to another rank, the destination's queues. At
// thousands of ranks each of them is a cache miss when Add reaches it
// (the merged stream visits every rank between two events of one).
func (s *P2PStream) Prefetch(e *datamodel.GEvent) {
	if s.ranks.len() < prefetchRanks || !s.Wants(e.Op) {
		return
	}
	if rs := s.rankOrNil(e.Rank); rs != nil {
		prefetchSpan(uintptr(unsafe.Pointer(rs)), p2pHotLines)
	}
	if e.Peer >= 0 && e.Peer != e.Rank {
		if ps := s.rankOrNil(e.Peer); ps != nil {
			prefetchSpan(uintptr(unsafe.Pointer(&ps.nchan)), 2)
		}
	}
}

// PrefetchStage implements DeepPrefetcher: the objects Add will touch
// for e, one link of their chain per stage (each stage reads only what
// the stage before asked for). Stage 0: the slots of e's rank and peer
// in the table of ranks. 1: the rank's state (its hot lines; for a
// receive start its own queues, for a send the destination's). 2: the
// open request a completion ends; the rank's current call (a new call
// closes it); the arrays of the key's queues a start appends to or
// matches from. 3: the request's message; the call's arrays; the
// message a start will be matched with. 4: the request's message's
// matched peer. Pointers it reads may be stale by the time Add runs (a
// prefetch of them costs a little, nothing else).
func (s *P2PStream) PrefetchStage(e *datamodel.GEvent, stage int) {
	if !s.Wants(e.Op) {
		return
	}
	r := e.Rank
	if r < 0 || int(r) >= s.ranks.len() {
		return
	}
	op := e.Op
	pend := op.IsCompletion() || op == trace.OpRequestFree || op == trace.OpStart || op == trace.OpStartall
	recv := !pend && (op.IsRecvStart() || op == trace.OpRecv || op == trace.OpMrecv)
	send := !pend && !recv && op.IsSend()
	if stage == 0 {
		prefetchSpan(s.ranks.slot(r), 1)
		if send && e.Peer >= 0 && int(e.Peer) < s.ranks.len() {
			prefetchSpan(s.ranks.slot(e.Peer), 1)
		}
		return
	}
	rs := s.ranks.at(r)
	if rs == nil {
		return
	}
	if stage == 1 {
		// only the lines of the state the op touches: each line asked
		// for holds one of the few loads the core can have under way
		// (all of them for every event made the prefetches wait)
		base := uintptr(unsafe.Pointer(rs))
		prefetchSpan(base, p2pOpenLines)
		switch {
		case pend:
			prefetchSpan(base+uintptr(p2pOpenLines)*64, p2pHotLines-p2pOpenLines+1)
		case recv:
			prefetchSpan(uintptr(unsafe.Pointer(&rs.nchan)), p2pChanLines)
		case send && e.Peer != r:
			if ps := s.rankOrNil(e.Peer); ps != nil {
				prefetchSpan(uintptr(unsafe.Pointer(&ps.nchan)), p2pChanLines)
			}
		}
		return
	}
	if c := rs.cur; c != nil {
		switch stage {
		case 2:
			prefetchSpan(uintptr(unsafe.Pointer(c)), p2pCallLines)
		case 3:
			if cap(c.recvs) > 0 {
				prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(c.recvs))), 1)
			}
			if cap(c.settled) > 0 {
				prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(c.settled))), 1)
			}
		}
	}
	if pend {
		p := rs.getPending(e.Req)
		if p == nil {
			return
		}
		switch stage {
		case 2:
			prefetchSpan(uintptr(unsafe.Pointer(p)), 1)
		case 3:
			if p.msg != nil {
				prefetchSpan(uintptr(unsafe.Pointer(p.msg)), p2pMsgLines)
			}
		case 4:
			if p.msg != nil && p.msg.peer != nil {
				prefetchSpan(uintptr(unsafe.Pointer(p.msg.peer)), p2pMsgLines)
			}
		}
		return
	}
	if e.Peer < 0 || !(recv || send) {
		return
	}
	// a start: its key's queues live in the destination's state
	var ch *p2pChan
	if recv {
		ch = rs.chanIf(p2pKey{comm: e.CommID, src: e.Peer, dst: r, tag: e.Tag})
	} else if ps := s.rankOrNil(e.Peer); ps != nil {
		ch = ps.chanIf(p2pKey{comm: e.CommID, src: r, dst: e.Peer, tag: e.Tag})
	}
	if ch == nil {
		return
	}
	switch stage {
	case 2:
		if cap(ch.recvs) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(ch.recvs))), 1)
		}
		if cap(ch.sends) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(ch.sends))), 1)
		}
	case 3:
		if !recv && len(ch.recvs) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(ch.recvs[0])), p2pMsgLines)
		} else if recv && len(ch.sends) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(ch.sends[0])), p2pMsgLines)
		}
	}
}

// prefetchEndCall is PrefetchStage for an event that the stream does
// not take but that ends its rank's completion call (endCall: a
// collective after a Waitall), in the same stages: the rank's slot, the
// lines of its state with its current call, the call, and what
// finishing it touches (its settled and received messages' arrays, its
// slot in the live list, the rank's sums of its waits). At 16,384 ranks
// the rank's state was a cache miss at every such event.
func (s *P2PStream) prefetchEndCall(e *datamodel.GEvent, stage int) {
	r := e.Rank
	if r < 0 || int(r) >= s.ranks.len() {
		return
	}
	if stage == 0 {
		prefetchSpan(s.ranks.slot(r), 1)
		return
	}
	rs := s.ranks.at(r)
	if rs == nil {
		return
	}
	if stage == 1 {
		prefetchSpan(uintptr(unsafe.Pointer(rs)), p2pOpenLines)
		return
	}
	c := rs.cur
	if c == nil {
		return
	}
	switch stage {
	case 2:
		prefetchSpan(uintptr(unsafe.Pointer(c)), p2pCallLines)
		prefetchSpan(uintptr(unsafe.Pointer(&rs.sum.LateSenderNS)), 1)
	case 3:
		if cap(c.recvs) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(c.recvs))), 1)
		}
		if cap(c.settled) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(c.settled))), 1)
		}
		if i := c.live - 1; i >= 0 && i < len(s.live) {
			prefetchSpan(uintptr(unsafe.Pointer(&s.live[i])), 1)
		}
		if cap(rs.waited) > 0 {
			prefetchSpan(uintptr(unsafe.Pointer(unsafe.SliceData(rs.waited))), 1)
		}
	}
}

// PrefetchDeep implements DeepPrefetcher: from prefetchRanks ranks.
func (s *P2PStream) PrefetchDeep() bool { return s.ranks.len() >= prefetchRanks }

// p2pHotLines is the number of cache lines at the start of a
// p2pRankState that Add touches for an event of the rank (every field up
// to and including sum).
var p2pHotLines = int((unsafe.Offsetof(p2pRankState{}.sum) + unsafe.Sizeof(datamodel.P2PRank{}) + 63) / 64)

// p2pOpenLines is the number of cache lines at the start of a
// p2pRankState that every event of the rank touches (its posting
// order, open requests and current call); p2pChanLines the lines from
// nchan that hold it and the first keys' queues (a halo exchange's two
// to four); p2pMsgLines, p2pCallLines and p2pPendLines the lines a
// message, a call and a request span at most (an object need not start
// on a line).
const p2pOpenLines = int((unsafe.Offsetof(p2pRankState{}.curKey) + 63) / 64)

var (
	p2pChanLines = int((unsafe.Sizeof(chanSlot{})*3 + 8 + 63 + 63) / 64)
	p2pMsgLines  = int((unsafe.Sizeof(p2pMsg{}) + 63 + 63) / 64)
	p2pCallLines = int((unsafe.Sizeof(p2pCall{}) + 63 + 63) / 64)
	p2pPendLines = int((unsafe.Sizeof(p2pPending{}) + 63 + 63) / 64)
)

// waitedInline is the number of ranks a rank's waits are summed for in a
// slice (a halo exchange has two to six neighbours); more go to a map.
const waitedInline = 16

// addWaited adds w to the wait of rs for rank src. The sums live in the
// waiting rank's state, which finishCall touches anyway (one map of every
// pair was a cache miss and a hash per call at 16,384 ranks).
func (rs *p2pRankState) addWaited(src int32, w float64) {
	for i := range rs.waited {
		if rs.waited[i].Rank == src {
			rs.waited[i].NS += w
			return
		}
	}
	if rs.waitedMore != nil {
		if _, ok := rs.waitedMore[src]; ok {
			rs.waitedMore[src] += w
			return
		}
	}
	if len(rs.waited) < waitedInline {
		rs.waited = append(rs.waited, datamodel.RankAmount{Rank: src, NS: w})
		return
	}
	if rs.waitedMore == nil {
		rs.waitedMore = map[int32]float64{}
	}
	rs.waitedMore[src] = w
}

// pairWaits returns every culprit -> victim pair's late-sender and
// late-receiver waits (in no order), from the receivers' sums.
func (s *P2PStream) pairWaits() (ls, lr []datamodel.PairWait) {
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil {
			continue
		}
		dst := rs.rank
		rs.eachPair(func(src int32, p *pairSums) {
			if p.ls.n > 0 {
				ls = append(ls, datamodel.PairWait{Culprit: src, Victim: dst, Count: p.ls.n, NS: p.ls.ns})
			}
			if p.lr.n > 0 {
				lr = append(lr, datamodel.PairWait{Culprit: dst, Victim: src, Count: p.lr.n, NS: p.lr.ns})
			}
		})
	}
	return ls, lr
}

// collectWaited appends each rank's sums of waits to its summary's
// WaitedFor (in no order: the caller sorts).
func (s *P2PStream) collectWaited() {
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil {
			continue
		}
		rs.sum.WaitedFor = append(rs.sum.WaitedFor, rs.waited...)
		for r, w := range rs.waitedMore {
			rs.sum.WaitedFor = append(rs.sum.WaitedFor, datamodel.RankAmount{Rank: r, NS: w})
		}
	}
}

// Add consumes one event (a Sink; events of other kinds are ignored).
// Wants reports whether Add looks at events of op (OpFilter): point-to-
// point operations and nonblocking collectives; Add ignores the others.
func (s *P2PStream) Wants(op trace.Op) bool {
	return op.IsPointToPoint() || op.IsNonblockingCollective()
}

func (s *P2PStream) Add(e *datamodel.GEvent) error {
	op := e.Op
	if !s.Wants(op) {
		return nil
	}
	rs := s.rank(e.Rank)
	rank := e.Rank
	enter, exit := e.Enter, e.Exit
	cid := e.CommID
	// An owner also gets other ranks' sends to its ranks (their posting,
	// completion, freeing): those only take part in matching.
	s.mine = s.own == nil || s.owns(rank)
	if s.part != nil {
		s.part.event(e, s.mine)
	}
	newMsg := func(recv bool) *p2pMsg {
		rs.order++
		m := s.allocMsg()
		*m = p2pMsg{comm: cid, tag: e.Tag, op: op, order: rs.order, post: enter, postLocal: e.LocalEnter, postExit: exit, recv: recv}
		if recv {
			m.src, m.dst, m.bytes = e.Peer, rank, e.Recv
		} else {
			m.src, m.dst, m.bytes = rank, e.Peer, e.Sent
		}
		m.sync = op.IsSyncSend()
		s.inFlight++
		s.peak = max(s.peak, s.inFlight)
		return m
	}
	// A new call of this rank closes the previous completion call.
	if !s.mine {
		// not this owner's rank: no calls
	} else if op.IsCompletion() {
		key := [3]int64{int64(op), e.LocalEnter, e.LocalExit}
		if e.Seq == 0 || rs.cur == nil || key != rs.curKey {
			s.closeCall(rs)
			rs.cur = s.newCall(rank, op, enter, exit)
			s.curOpen++
			rs.curKey = key
			rs.sum.WaitCalls++
			rs.sum.WaitTimeNS += exit - enter
			s.addSite(rank, e.Callsite, op, 1, 0, exit-enter)
		}
	} else {
		s.closeCall(rs)
	}
	switch {
	case op == trace.OpPolls:
		s.out.Polls += uint64(e.Req)
		rs.sum.WaitTimeNS += exit - enter
		s.addSite(rank, e.Callsite, trace.Op(e.Tag), 0, uint64(e.Req), exit-enter)
	case op.IsSend() && op < trace.OpIsend: // blocking send
		if e.Peer >= 0 {
			m := newMsg(false)
			s.complete(rs, m, e, nil)
			s.post(rs, m)
		}
	case op == trace.OpRecv || op == trace.OpMrecv, (op == trace.OpSendrecv || op == trace.OpSendrecvReplace) && e.Seq != 0:
		if e.Peer == trace.PeerNull {
			return nil
		}
		rs.sum.WaitTimeNS += exit - enter
		m := newMsg(true)
		c := s.newCall(rank, op, enter, exit)
		c.closed = true
		s.complete(rs, m, e, c)
		s.post(rs, m)
		s.finishCall(c)
	case op == trace.OpSendrecv || op == trace.OpSendrecvReplace:
		if e.Peer == trace.PeerNull {
			return nil
		}
		m := newMsg(false)
		s.complete(rs, m, e, nil)
		s.post(rs, m)
	case op >= trace.OpIsend && op <= trace.OpIrecv || op == trace.OpImrecv:
		if s.mine {
			s.out.Requests++
		}
		recv := op.IsRecvStart()
		m := newMsg(recv)
		p := s.allocPending()
		p.msg, p.recv = m, recv
		s.addPending(rs, e.Req, p)
		s.post(rs, m)
	case op.IsPersistentInit():
		recv := op == trace.OpRecvInit
		p := s.allocPending()
		p.recv, p.persistent = recv, true
		p.tmpl = *newMsg(recv)
		rs.order-- // an init posts nothing
		s.inFlight--
		s.addPending(rs, e.Req, p)
	case op == trace.OpStart || op == trace.OpStartall:
		p := rs.getPending(e.Req)
		for p != nil && !p.persistent {
			p = p.next
		}
		if p == nil {
			return nil
		}
		if s.mine {
			s.out.Requests++
		}
		m := s.allocMsg()
		*m = p.tmpl
		rs.order++
		m.order, m.post, m.postLocal, m.postExit = rs.order, enter, e.LocalEnter, exit
		s.inFlight++
		s.peak = max(s.peak, s.inFlight)
		p.msg = m
		s.post(rs, m)
	case op == trace.OpRequestFree:
		if p := s.findPending(rs, e); p != nil {
			if p.msg != nil && s.mine {
				s.out.Uncompleted++ // freed while active: no completion seen
			}
			if p.msg != nil {
				s.abandon(rs, p.msg)
			}
			s.freePending(rs, e.Req, p)
		}
	case op.IsNonblockingCollective():
		s.out.Requests++
		k := InstanceKey{Comm: cid, Seq: e.Seq}
		if s.part != nil {
			s.part.nbcStart(k, op, rank, enter)
		} else {
			s.nbcStart(k, op, rank, enter)
		}
		p := s.allocPending()
		p.coll, p.nbcKey, p.nbcOp = true, k, op
		s.addPending(rs, e.Req, p)
	case op.IsCompletion():
		if e.Req == 0 {
			return nil
		}
		p := s.findPending(rs, e)
		if p == nil {
			return nil
		}
		switch {
		case p.coll:
			if s.part != nil {
				s.part.nbcDone(p.nbcKey, rank, enter, exit)
			} else {
				s.nbcDone(p.nbcKey, rank, enter, exit)
			}
			s.freePending(rs, e.Req, p)
		case p.msg != nil && e.Tag == trace.TagCancelled:
			s.cancel(p.msg)
			p.msg = nil
			if !p.persistent {
				s.freePending(rs, e.Req, p)
			}
		case p.msg != nil:
			m := p.msg
			p.msg = nil
			if p.recv {
				m.src, m.tag, m.bytes = e.Peer, e.Tag, e.Recv
			}
			s.complete(rs, m, e, rs.cur)
			if !m.keyed && !m.dropped { // a wildcard receive: its key is known now
				delete(rs.unresolved, m.order)
				s.updateMinUnres(rs)
				s.enqueue(rs, m)
				s.releaseRank(rs)
			}
			s.settle(m)
			if !p.persistent {
				s.freePending(rs, e.Req, p)
			}
		}
	}
	return nil
}

// nbcStart is member rank's start of nonblocking-collective instance k.
func (s *P2PStream) nbcStart(k InstanceKey, op trace.Op, rank int32, enter float64) {
	in := s.nbc[k]
	if in == nil {
		in = &nbcInst{op: op, size: s.commSize[k.Comm], starts: map[int32]float64{}, enter: map[int32]float64{}, exit: map[int32]float64{}}
		s.nbc[k] = in
	}
	in.starts[rank] = enter
}

// nbcDone is member rank's completion of instance k; the instance is
// folded once every member started and completed it.
func (s *P2PStream) nbcDone(k InstanceKey, rank int32, enter, exit float64) {
	if in := s.nbc[k]; in != nil {
		in.enter[rank], in.exit[rank] = enter, exit
		if in.size > 0 && len(in.exit) == in.size && len(in.starts) == in.size {
			s.foldNBC(in)
			delete(s.nbc, k)
		}
	}
}

func (s *P2PStream) newCall(rank int32, op trace.Op, enter, exit float64) *p2pCall {
	var c *p2pCall
	if n := len(s.freeCalls); n > 0 {
		c = s.freeCalls[n-1]
		s.freeCalls = s.freeCalls[:n-1]
		if n > 1 && s.ranks.len() >= prefetchRanks {
			prefetchSpan(uintptr(unsafe.Pointer(s.freeCalls[n-2])), p2pCallLines)
		}
		*c = p2pCall{rank: rank, op: op, enter: enter, exit: exit, recvs: c.recvs[:0], settled: c.settled[:0]}
	} else {
		c = &p2pCall{rank: rank, op: op, enter: enter, exit: exit}
		s.fresh.calls++
	}
	s.live = append(s.live, c)
	c.live = len(s.live)
	return c
}

// complete records the call that completed m (its waiting call) and
// counts it; a receive joins call c, whose late-sender time and slowest
// neighbour it then takes part in.
func (s *P2PStream) complete(rs *p2pRankState, m *p2pMsg, e *datamodel.GEvent, c *p2pCall) {
	m.waitOp, m.waitEnter, m.waitExit, m.waitLocal, m.done = e.Op, e.Enter, e.Exit, e.LocalEnter, true
	if !m.recv {
		if m.dst >= 0 {
			rs.sum.Sends++
			rs.sum.SentBytes += m.bytes
		}
		return
	}
	if m.src < 0 {
		if m.src != trace.PeerNull { // MPI_PROC_NULL: no message
			s.out.Unresolved++
		}
		return
	}
	rs.sum.Recvs++
	rs.sum.RecvBytes += m.bytes
	if c != nil && !m.dropped {
		m.call = c
		m.callIdx = int32(len(c.recvs))
		c.recvs = append(c.recvs, m)
		c.open++
	}
}

// post enters a newly posted message: sends and receives with a known
// source and tag go into their key's queue at once; a receive with a
// wildcard waits for its completion.
func (s *P2PStream) post(rs *p2pRankState, m *p2pMsg) {
	if m.recv && !m.done && (m.src == trace.PeerAny || m.tag == trace.TagAny) {
		if rs.unresolved == nil {
			rs.unresolved = map[int]bool{}
		}
		rs.unresolved[m.order] = true
		if len(rs.unresolved) == 1 || m.order < rs.minUnres {
			rs.minUnres = m.order
		}
		return
	}
	s.enqueue(rs, m)
}

// settle computes a matched pair's metrics once both sides completed, and
// closes out the receive's call when it was its last open receive.
func (s *P2PStream) settle(m *p2pMsg) {
	p := m.peer
	if p == nil || !m.done || !p.done || m.settled {
		return
	}
	r, snd := m, p
	if !m.recv {
		r, snd = p, m
	}
	r.settled, snd.settled = true, true
	s.inFlight -= 2
	out := s.out
	out.Messages++
	out.Bytes += r.bytes
	if s.opt.KeepMessages > 0 && snd.post >= s.opt.From && (s.opt.To == 0 || snd.post <= s.opt.To) {
		// an owner keeps its earliest; process 0 merges the owners' lists
		s.keep(datamodel.Message{Src: snd.src, Dst: r.dst, CommID: r.comm, Tag: r.tag, Bytes: r.bytes,
			SendOp: snd.op, RecvOp: r.waitOp, SendStart: snd.post, SendExit: snd.postExit, RecvEnter: r.waitEnter, RecvExit: r.waitExit})
	}
	if s.opt.onMessage != nil {
		s.opt.onMessage(snd.src, r.dst, snd.post, snd.postExit, r.waitEnter, r.waitExit)
	}
	if r.waitExit < snd.post {
		out.Violations++
		out.MaxViolationNS = max(out.MaxViolationNS, snd.post-r.waitExit)
		if s.opt.CollectRepairs {
			s.rep.add(r.dst, r.waitExit, snd.post-r.waitExit)
		}
	}
	if w := min(snd.post, r.waitExit) - r.waitEnter; snd.post > r.waitEnter && w > 0 {
		// The pair's sum is the receiver's (one owner's, in the serial
		// order); the total and the worst list are global: an owner
		// records them for process 0.
		s.rank(r.dst).pairOf(snd.src).ls.add(w)
		r.lateSender = w
		if s.part != nil {
			s.part.lateSender(w, snd, r)
		} else {
			out.LateSender.Add(w)
			s.addWorst(lateMessage(w, snd, r))
		}
	}
	if snd.sync || (s.opt.RendezvousBytes > 0 && isStandardSend(snd.op) && snd.bytes >= s.opt.RendezvousBytes) {
		if w := min(r.post, snd.waitExit) - snd.waitEnter; r.post > snd.waitEnter && w > 0 {
			s.rank(r.dst).pairOf(snd.src).lr.add(w)
			if s.opt.OnSync != nil {
				s.opt.OnSync(P2PSync{Kind: SyncLateReceiver, Waiter: snd.src, Cause: r.dst,
					WaiterEnter: snd.waitEnter, WaiterExit: snd.waitExit, CauseEnter: r.post, Wait: w})
			}
			if s.part != nil {
				s.part.lateReceiver(w)
			} else {
				out.LateReceiver.Add(w)
			}
		}
	}
	if c := r.call; c != nil {
		c.ls = max(c.ls, r.lateSender)
		switch p := snd.post; {
		case p != p:
			c.nanPost = true
		case !c.hasLast || p > c.lastPost || p == c.lastPost && r.callIdx < c.lastIdx:
			c.hasLast, c.lastPost, c.lastSrc, c.lastIdx = true, p, snd.src, r.callIdx
		}
		c.settled = append(c.settled, r, snd)
		c.open--
		s.finishCall(c)
	}
}

// lateMessage describes the late-sender wait w of receive r for send snd.
func lateMessage(w float64, snd, r *p2pMsg) datamodel.LateMessage {
	return datamodel.LateMessage{Src: snd.src, Dst: r.dst, CommID: r.comm, Tag: r.tag,
		Bytes: r.bytes, SendOp: snd.op.String(), RecvOp: r.waitOp.String(), SendStart: snd.post,
		WaitEnter: r.waitEnter, WaitNS: w, SendLocal: snd.postLocal, WaitLocal: r.waitLocal}
}

// endCall closes rank's current completion call: a call of the rank that
// this stream does not look at (a collective) has started, so no record
// of it can follow (RootCauseStream needs its wait before the collective
// completes).
// Inlined at its call sites: with no call open anywhere (a run of
// collectives only) it is one compare.
func (s *P2PStream) endCall(rank int32) {
	if s.curOpen > 0 {
		s.endOpenCall(rank)
	}
}

// endOpenCall is endCall when some rank has a completion call open.
func (s *P2PStream) endOpenCall(rank int32) {
	if rs := s.ranks.at(rank); rs != nil && rs.cur != nil {
		s.closeCall(rs)
	}
}

// closeCall marks the rank's current completion call as complete (a later
// record of the rank starts another call).
func (s *P2PStream) closeCall(rs *p2pRankState) {
	if rs.cur != nil {
		rs.cur.closed = true
		s.finishCall(rs.cur)
		rs.cur = nil
		s.curOpen--
	}
}

// finishCall adds a closed call whose receives are all settled (or can
// never be) to its rank's late-sender time and "who makes me wait": the
// receives one call completes wait at the same time, so the call counts
// its longest late-sender wait once, and its wait until the last sender
// started goes to that slowest neighbour.
func (s *P2PStream) finishCall(c *p2pCall) {
	if !c.closed || c.open > 0 {
		return
	}
	if c.live == 0 {
		return // finished already
	}
	// out of the live list: the last live call (a recent one, in cache)
	// takes its place
	tail := s.live[len(s.live)-1]
	s.live[c.live-1], tail.live = tail, c.live
	s.live[len(s.live)-1] = nil
	s.live = s.live[:len(s.live)-1]
	c.live = 0
	// the latest sender among the settled receives, the first of equal
	// starts in call order (settle kept it; with a NaN start only the
	// walk in call order says which)
	hasLast, lastPost, lastSrc := c.hasLast, c.lastPost, c.lastSrc
	if c.nanPost {
		var last *p2pMsg
		for _, m := range c.recvs {
			if snd := m.peer; snd != nil && m.settled && (last == nil || snd.post > last.post) {
				last = snd
			}
		}
		hasLast = last != nil
		if hasLast {
			lastPost, lastSrc = last.post, last.src
		}
	}
	rs := s.ranks.at(c.rank)
	rs.sum.LateSenderNS += c.ls
	if hasLast {
		if w := min(lastPost, c.exit) - c.enter; w > 0 {
			rs.addWaited(lastSrc, w)
			if s.opt.OnSync != nil {
				s.opt.OnSync(P2PSync{Kind: SyncLateSender, Waiter: c.rank, Cause: lastSrc,
					WaiterEnter: c.enter, WaiterExit: c.exit, CauseEnter: lastPost, Wait: w})
			}
		}
	}
	// Done: nothing references the call, its settled receives and their
	// sends any more (matched, completed, out of every queue and request
	// table); they are reused. Unsettled ones (the end of the run) are
	// left to the collector.
	s.freeMsgs = append(s.freeMsgs, c.settled...)
	clear(c.settled)
	clear(c.recvs)
	if n := s.freeMax(); len(s.freeMsgs) > n {
		s.freeMsgs = s.freeMsgs[:n]
	}
	if len(s.freeCalls) < s.freeMax() {
		s.freeCalls = append(s.freeCalls, c)
	}
}

// allocPending returns a zeroed request state: a reused one when there is
// one.
func (s *P2PStream) allocPending() *p2pPending {
	if n := len(s.freePend); n > 0 {
		p := s.freePend[n-1]
		s.freePend = s.freePend[:n-1]
		if n > 1 && s.ranks.len() >= prefetchRanks {
			prefetchSpan(uintptr(unsafe.Pointer(s.freePend[n-2])), p2pPendLines)
		}
		*p = p2pPending{}
		return p
	}
	s.fresh.pend++
	return new(p2pPending)
}

// freePending forgets request req of rs (state p), for reuse.
func (s *P2PStream) freePending(rs *p2pRankState, req uint32, p *p2pPending) {
	switch head := rs.getPending(req); {
	case head == p && p.next == nil:
		rs.setPending(req, nil)
	case head == p:
		rs.setPending(req, p.next)
	default:
		for q := head; q != nil; q = q.next {
			if q.next == p {
				q.next = p.next
				break
			}
		}
	}
	p.next = nil
	if len(s.freePend) < s.freeMax() {
		s.freePend = append(s.freePend, p)
	}
}

// addPending enters p, the request a start gave id req, behind any still
// open request with the same id (ids wrap: p2pPending.next).
func (s *P2PStream) addPending(rs *p2pRankState, req uint32, p *p2pPending) {
	head := rs.getPending(req)
	if head == nil {
		rs.setPending(req, p)
		return
	}
	if s.mine {
		s.out.ReusedRequestIDs++
	}
	for head.next != nil {
		head = head.next
	}
	head.next = p
}

// findPending returns the open request that completion (or
// MPI_Request_free) e ends. With one request per id, that one; with
// several (the id wrapped) the oldest that fits e: for MPI_Request_free a
// persistent request; else one on e's communicator, a nonblocking
// collective for a completion without peer, tag or bytes, a send to e's
// peer with e's tag, a receive posted for e's source (or any) and tag (or
// any); failing that the oldest active one.
func (s *P2PStream) findPending(rs *p2pRankState, e *datamodel.GEvent) *p2pPending {
	head := rs.getPending(e.Req)
	if head == nil || head.next == nil {
		return head
	}
	fits := func(p *p2pPending) bool {
		switch {
		case e.Op == trace.OpRequestFree:
			return p.persistent
		case p.coll:
			return p.nbcKey.Comm == e.CommID && e.Peer == 0 && e.Tag == 0 && e.Sent == 0 && e.Recv == 0
		case p.msg == nil:
			return false
		case p.msg.comm != e.CommID:
			return false
		case !p.msg.recv:
			return p.msg.dst == e.Peer && p.msg.tag == e.Tag
		}
		m := p.msg
		return (m.src == e.Peer || m.src == trace.PeerAny) && (m.tag == e.Tag || m.tag == trace.TagAny)
	}
	for p := head; p != nil; p = p.next {
		if fits(p) {
			return p
		}
	}
	for p := head; p != nil; p = p.next {
		if p.coll || p.msg != nil {
			return p
		}
	}
	return head
}

// maxFree and freePerRank bound the free lists (messages, requests and
// calls kept for reuse): freeMax. The bound grows with the ranks because
// what is in flight at once does: a halo step of 16,384 ranks settles
// 65,536 messages at a time, and with a fixed bound of 4096 most of them
// went to the collector and were made anew, 0.9 of the 3 GB a default
// run allocated (and as many collections).
const (
	maxFree     = 4096
	freePerRank = 8
)

// freeMax is the bound of each free list: maxFree, or freePerRank a rank.
func (s *P2PStream) freeMax() int { return max(maxFree, freePerRank*s.ranks.len()) }

// allocMsg returns a message to fill: a reused one when there is one.
func (s *P2PStream) allocMsg() *p2pMsg {
	if n := len(s.freeMsgs); n > 0 {
		m := s.freeMsgs[n-1]
		s.freeMsgs = s.freeMsgs[:n-1]
		if n > 1 && s.ranks.len() >= prefetchRanks {
			// the next one: freed a round of all ranks ago, cold,
			// and about to be overwritten by the next start
			prefetchSpan(uintptr(unsafe.Pointer(s.freeMsgs[n-2])), p2pMsgLines)
		}
		return m
	}
	s.fresh.msgs++
	return new(p2pMsg)
}

func (s *P2PStream) foldNBC(in *nbcInst) {
	a := s.nbcAcc[in.op]
	if a == nil {
		a = &nbcAccum{s: datamodel.NBCSummary{Op: in.op.String()}}
		s.nbcAcc[in.op] = a
	}
	a.s.Instances++
	first, last := math.Inf(1), math.Inf(-1)
	for _, t := range in.starts {
		first, last = min(first, t), max(last, t)
	}
	if len(in.starts) == in.size && len(in.exit) == in.size {
		a.s.Complete++
	}
	a.skew.add(last - first)
	ranks := make([]int32, 0, len(in.enter))
	for r := range in.enter {
		ranks = append(ranks, r)
	}
	sort.Slice(ranks, func(i, j int) bool { return ranks[i] < ranks[j] }) // reproducible reservoir
	for _, r := range ranks {
		a.wait.add(max(0, min(last, in.exit[r])-in.enter[r]))
	}
}

// keep holds the KeepMessages earliest sends.
func (s *P2PStream) keep(m datamodel.Message) {
	if len(s.list) < s.opt.KeepMessages {
		heap.Push(&s.list, m)
		return
	}
	s.out.ListDropped++
	if m.SendStart < s.list[0].SendStart {
		s.list[0] = m
		heap.Fix(&s.list, 0)
	}
}

// addWorst keeps the TopN largest late-sender waits.
func (s *P2PStream) addWorst(m datamodel.LateMessage) {
	if len(s.worst) < s.opt.TopN {
		heap.Push(&s.worst, m)
		return
	}
	if m.WaitNS > s.worst[0].WaitNS {
		s.worst[0] = m
		heap.Fix(&s.worst, 0)
	}
}

// PeakMessages reports the most messages held at once (the stream's
// memory high-water mark).
func (s *P2PStream) PeakMessages() int { return s.peak }

// Result finishes the analysis: what is still queued is unmatched, what is
// still pending uncompleted. Call it once, after the last Add.
func (s *P2PStream) Result() *datamodel.P2PResult {
	out := s.out
	s.leftovers()
	for _, in := range s.nbc {
		s.foldNBC(in)
	}
	s.collectWaited()
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil {
			continue
		}
		wf := rs.sum.WaitedFor
		sort.Slice(wf, func(i, j int) bool {
			if wf[i].NS != wf[j].NS {
				return wf[i].NS > wf[j].NS
			}
			return wf[i].Rank < wf[j].Rank
		})
		if len(wf) > 3 {
			rs.sum.WaitedFor = wf[:3]
		}
		out.Ranks = append(out.Ranks, rs.sum)
	}
	sort.Slice(out.Ranks, func(i, j int) bool { return out.Ranks[i].Rank < out.Ranks[j].Rank })
	for key, acc := range s.sites {
		out.Sites = append(out.Sites, datamodel.P2PSite{Site: key.site, Op: key.op.String(), Calls: acc.calls,
			Polls: acc.polls, TimeNS: acc.time, Ranks: len(acc.ranks)})
	}
	sort.Slice(out.Sites, func(i, j int) bool {
		if out.Sites[i].TimeNS != out.Sites[j].TimeNS {
			return out.Sites[i].TimeNS > out.Sites[j].TimeNS
		}
		return out.Sites[i].Site+out.Sites[i].Op < out.Sites[j].Site+out.Sites[j].Op
	})
	if len(out.Sites) > s.opt.TopN {
		out.Sites = out.Sites[:s.opt.TopN]
	}
	ls, lr := s.pairWaits()
	out.LateSender.Pairs = topPairs(ls, s.opt.TopN)
	out.LateReceiver.Pairs = topPairs(lr, s.opt.TopN)
	out.List = append([]datamodel.Message(nil), s.list...)
	sort.Slice(out.List, func(i, j int) bool { return out.List[i].SendStart < out.List[j].SendStart })
	out.Worst = append([]datamodel.LateMessage(nil), s.worst...)
	sort.Slice(out.Worst, func(i, j int) bool { return out.Worst[i].WaitNS > out.Worst[j].WaitNS })
	for _, a := range s.nbcAcc {
		a.s.StartSkew = a.skew.stats()
		a.s.Wait = a.wait.stats()
		out.NBC = append(out.NBC, a.s)
	}
	sort.Slice(out.NBC, func(i, j int) bool { return out.NBC[i].Op < out.NBC[j].Op })
	out.Repairs, out.RepairsDropped = s.rep.list, s.rep.dropped
	return out
}

// leftovers counts what the end leaves (unmatched and uncompleted
// messages) and finishes the calls still open.
func (s *P2PStream) leftovers() {
	out := s.out
	for r := range s.ranks.len() {
		if rs := s.ranks.at(int32(r)); rs != nil {
			s.closeCall(rs)
		}
	}
	for _, x := range s.endSyncs { // a partitioned pass's (p2p_part.go endCalls)
		if s.opt.OnSync != nil {
			s.replayKey = x.k
			s.opt.OnSync(x.y)
		}
	}
	s.endSyncs = nil
	s.eachChan(func(_ p2pKey, ch *p2pChan) {
		for _, m := range ch.recvs {
			if m.done {
				out.UnmatchedRecvs++
			}
		}
		for _, m := range ch.sends {
			if m.done {
				out.UnmatchedSends++
			}
		}
	})
	for r := range s.ranks.len() {
		rs := s.ranks.at(int32(r))
		if rs == nil || s.own != nil && !s.owns(rs.rank) {
			continue // another owner's rank: its requests are counted there
		}
		rs.eachPending(func(p *p2pPending) {
			if p.msg != nil || p.coll {
				out.Uncompleted++
			}
		})
	}
	// Calls still waiting for a receive that was never matched, or whose
	// send never completed: what is known counts, in call order.
	calls := append([]*p2pCall(nil), s.live...)
	sort.Slice(calls, func(i, j int) bool {
		if calls[i].rank != calls[j].rank {
			return calls[i].rank < calls[j].rank
		}
		if calls[i].enter != calls[j].enter {
			return calls[i].enter < calls[j].enter
		}
		return calls[i].exit < calls[j].exit
	})
	for _, c := range calls {
		c.closed, c.open = true, 0
		s.finishCall(c)
	}
}

// msgHeap is a max-heap of messages by send start.
type msgHeap []datamodel.Message

func (h msgHeap) Len() int           { return len(h) }
func (h msgHeap) Less(i, j int) bool { return h[i].SendStart > h[j].SendStart }
func (h msgHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *msgHeap) Push(x any)        { *h = append(*h, x.(datamodel.Message)) }
func (h *msgHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// lateHeap is a min-heap of late messages by wait.
type lateHeap []datamodel.LateMessage

func (h lateHeap) Len() int           { return len(h) }
func (h lateHeap) Less(i, j int) bool { return h[i].WaitNS < h[j].WaitNS }
func (h lateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lateHeap) Push(x any)        { *h = append(*h, x.(datamodel.LateMessage)) }
func (h *lateHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
