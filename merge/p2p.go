package merge

// Point-to-point analysis (issue 7, docs/p2p.md): match every send to its
// receive, then Late Sender, Late Receiver, time in completion calls per
// rank and call site, "who makes me wait" for halo exchanges, the
// point-to-point clock condition, and nonblocking-collective instances.

import (
	"fmt"
	"math"
	"sort"

	"github.com/gclock/gclock/trace"
)

// P2POptions configures AnalyzeP2P.
type P2POptions struct {
	Clock ClockMode
	// TopN bounds the lists of worst messages and call sites; default 10.
	TopN int
	// Open opens a rank file (OpenTrace when nil). The run's own sources
	// are not used: the main pass consumes them.
	Open Opener
	// Sources, when set, replaces Open: the events of world rank r
	// (tests, synthetic input).
	Sources func(rank int) (Source, error)
	// Resolve resolves call sites; nil uses a fresh NewResolver().
	Resolve *Resolver
	// KeepMessages keeps up to this many matched messages (the earliest
	// sends first) in P2PResult.List, for message lines and flow events;
	// with From/To only those whose send starts in [From, To] (global ns
	// relative to RunOrigin, like every global time; To 0 = no end).
	KeepMessages int
	From, To     float64
	// RendezvousBytes makes standard sends (MPI_Send, MPI_Isend, persistent
	// MPI_Send_init) of at least this many bytes count as rendezvous
	// sends for Late Receiver: above the MPI library's eager limit a
	// standard send cannot complete before the receive is posted, so it
	// waits for a late receiver exactly like MPI_Ssend. 0 disables it
	// (only synchronous sends count). The eager limit depends on the
	// library and transport (Open MPI: 4 KiB shared memory, 64 KiB TCP;
	// UCX: a few KiB to tens of KiB); tracemerge defaults to
	// DefaultRendezvousBytes, above all of them.
	RendezvousBytes uint64
}

// DefaultRendezvousBytes is tracemerge's default P2POptions.RendezvousBytes:
// 64 KiB, at or above the eager limits of common MPI transports, so a
// standard send of that size is a rendezvous send in practice.
const DefaultRendezvousBytes = 64 << 10

// isStandardSend reports whether op is a standard-mode send (neither
// synchronous, buffered nor ready), whose protocol the library chooses by
// size.
func isStandardSend(op trace.Op) bool {
	return op == trace.OpSend || op == trace.OpIsend || op == trace.OpSendInit
}

// Message is one matched message in global time.
type Message struct {
	Src       int32    `json:"src"`
	Dst       int32    `json:"dst"`
	CommID    uint64   `json:"comm"`
	Tag       int32    `json:"tag"`
	Bytes     uint64   `json:"bytes"`
	SendOp    trace.Op `json:"-"`
	RecvOp    trace.Op `json:"-"` // the call that completed the receive
	SendStart float64  `json:"send_start_ns"`
	SendExit  float64  `json:"send_exit_ns"`  // exit of the starting call
	RecvEnter float64  `json:"recv_enter_ns"` // entry of the completing call
	RecvExit  float64  `json:"recv_exit_ns"`  // exit of the completing call
}

// P2PResult is the point-to-point part of a tracemerge analysis. Times are
// relative to RunOrigin (like Analyze's), and
// global ns (the chosen correction).
type P2PResult struct {
	Messages       int    `json:"messages"`        // matched send/receive pairs
	Bytes          uint64 `json:"bytes"`           // received bytes of matched messages
	UnmatchedSends int    `json:"unmatched_sends"` // sends without a recorded receive
	UnmatchedRecvs int    `json:"unmatched_recvs"` // receives without a recorded send
	Unresolved     int    `json:"unresolved"`      // receives whose source stayed unknown
	Requests       int    `json:"requests"`        // nonblocking and persistent activations
	Uncompleted    int    `json:"uncompleted"`     // of which no completion was recorded
	Polls          uint64 `json:"polls"`           // unsuccessful Test*/Iprobe calls

	// LateSender: a receive (or the Wait that completes it) waits for a
	// send that started later; attributed to the sender, per receive (the
	// waits of several receives completed by one call overlap).
	LateSender PairWaits `json:"late_sender"`
	// LateReceiver: a synchronous send (Ssend, Issend) waits for a receive
	// posted later; attributed to the receiver.
	LateReceiver PairWaits `json:"late_receiver"`
	// Worst lists the messages with the largest Late Sender waits.
	Worst []LateMessage `json:"worst"`

	// Ranks: time in completion calls and who made each rank wait.
	Ranks []P2PRank `json:"ranks"`
	// Sites: time in completion calls per call site and op, largest first.
	Sites []P2PSite `json:"sites"`

	// Clock condition: a receive cannot complete before its send started.
	Violations     int     `json:"clock_violations"`
	MaxViolationNS float64 `json:"max_violation_ns"`

	// Nonblocking collectives matched by (communicator, sequence).
	NBC []NBCSummary `json:"nbc"`

	// List: matched messages kept for drawing (P2POptions.KeepMessages),
	// ordered by send start; Dropped counts those beyond the limit.
	List        []Message `json:"-"`
	ListDropped int       `json:"-"`
}

// PairWaits totals one wait kind and lists the top culprit -> victim pairs.
type PairWaits struct {
	Count   int        `json:"count"`
	TotalNS float64    `json:"total_ns"`
	MaxNS   float64    `json:"max_ns"`
	Pairs   []PairWait `json:"pairs"`
}

// PairWait is the wait Culprit caused to Victim, summed.
type PairWait struct {
	Culprit int32   `json:"culprit"`
	Victim  int32   `json:"victim"`
	Count   int     `json:"count"`
	NS      float64 `json:"ns"`
}

// LateMessage is one message whose receiver waited for a late sender.
type LateMessage struct {
	Src       int32   `json:"src"`
	Dst       int32   `json:"dst"`
	CommID    uint64  `json:"comm"`
	Tag       int32   `json:"tag"`
	Bytes     uint64  `json:"bytes"`
	SendOp    string  `json:"send_op"`
	RecvOp    string  `json:"recv_op"` // the call the receiver waited in
	SendStart float64 `json:"send_start_ns"`
	WaitEnter float64 `json:"wait_enter_ns"`
	WaitNS    float64 `json:"wait_ns"`
	// Local times of the two events, for checks against a known truth.
	SendLocal, WaitLocal int64 `json:"-"`
}

// P2PRank is one rank's point-to-point summary.
type P2PRank struct {
	Rank      int32  `json:"rank"`
	Sends     int    `json:"sends"`
	Recvs     int    `json:"recvs"`
	SentBytes uint64 `json:"sent_bytes"`
	RecvBytes uint64 `json:"recv_bytes"`
	WaitCalls int    `json:"wait_calls"` // completion calls (Wait*, successful Test*)
	// WaitTimeNS: time inside completion calls, blocking receives
	// (Recv, Sendrecv) and unsuccessful polls.
	WaitTimeNS float64 `json:"wait_time_ns"`
	// LateSenderNS: this rank's receive waits for late senders, each
	// completion call counted once (its longest late-sender wait).
	LateSenderNS float64 `json:"late_sender_ns"`
	// WaitedFor: per completion call, the wait until the last of its
	// messages' senders started, attributed to that slowest neighbour;
	// top 3 neighbours.
	WaitedFor []RankAmount `json:"waited_for,omitempty"`
}

// P2PSite is the time spent in one completion op at one call site.
type P2PSite struct {
	Site   string  `json:"site"`
	Op     string  `json:"op"`
	Calls  int     `json:"calls"`
	Polls  uint64  `json:"polls"` // unsuccessful Test*/Iprobe calls folded in
	TimeNS float64 `json:"time_ns"`
	Ranks  int     `json:"ranks"`
}

// NBCSummary aggregates the instances of one nonblocking collective op.
type NBCSummary struct {
	Op        string `json:"op"`
	Instances int    `json:"instances"`
	Complete  int    `json:"complete"` // every member started and completed it
	// StartSkew: last start - first start per instance.
	StartSkew Stats `json:"start_skew"`
	// Wait: per (member, instance), time in the completing call before
	// the last member started (the nonblocking form of Wait at NxN).
	Wait Stats `json:"wait"`
}

// ---- per-rank parsing ------------------------------------------------------

type p2pMsg struct {
	comm      uint64
	src, dst  int32
	tag       int32
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
	done                bool
	call                *p2pCall
	lateSender          float64 // wait for this (receive's) late sender
}

type p2pCall struct {
	rank        int32
	op          trace.Op
	enter, exit float64
	recvs       []*p2pMsg
}

type p2pRankData struct {
	sends, recvs []*p2pMsg
	calls        []*p2pCall
	pollTime     float64 // inside unsuccessful Test*/Iprobe calls
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

// AnalyzeP2P reads every rank of run once more and analyses its
// point-to-point messages, requests and nonblocking collectives. Memory is
// proportional to the number of messages (not streaming).
func AnalyzeP2P(run *Run, opt P2POptions) (*P2PResult, error) {
	if opt.TopN <= 0 {
		opt.TopN = 10
	}
	if opt.Open == nil {
		opt.Open = OpenTrace
	}
	res := opt.Resolve
	if res == nil {
		res = NewResolver()
	}
	out := &P2PResult{}
	var refStart int64
	for _, ri := range run.Ranks {
		if ri.Meta.Header.StartNS != 0 {
			refStart = ri.Meta.Header.StartNS
			break
		}
	}
	origin := RunOrigin(run, opt.Clock)
	ranks := map[int32]*p2pRankData{}
	nbc := map[InstanceKey]*nbcInst{}
	sites := map[p2pSiteKey]*siteAcc{}
	rankSum := map[int32]*P2PRank{}
	for _, ri := range run.Ranks {
		var src Source
		var err error
		if opt.Sources != nil {
			src, err = opt.Sources(ri.Rank)
		} else {
			src, err = opt.Open(ri.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("point-to-point pass: rank %d: %w", ri.Rank, err)
		}
		var shift float64
		if h := ri.Meta.Header; h.StartNS != 0 && refStart != 0 {
			if d := refStart - h.StartNS; d > 1e9 || d < -1e9 {
				shift = float64(d)
			}
		}
		corr, _ := NewCorrector(opt.Clock, ri.Meta.Epochs, shift)
		corr.SetOrigin(origin) // same timebase as Analyze's GEvents
		rd, err := parseP2PRank(ri, src, corr, nbc, sites, res, out)
		closeSrc(src)
		if err != nil {
			return nil, fmt.Errorf("point-to-point pass: rank %d: %w", ri.Rank, err)
		}
		ranks[int32(ri.Rank)] = rd
		rs := &P2PRank{Rank: int32(ri.Rank), WaitTimeNS: rd.pollTime}
		for _, c := range rd.calls {
			if c.op.IsCompletion() {
				rs.WaitCalls++
			}
		}
		rankSum[int32(ri.Rank)] = rs
	}
	matchP2P(ranks, out, rankSum, opt)
	// completion-call time per rank (calls and polls were summed per site)
	for key, acc := range sites {
		out.Sites = append(out.Sites, P2PSite{Site: key.site, Op: key.op.String(), Calls: acc.calls,
			Polls: acc.polls, TimeNS: acc.time, Ranks: len(acc.ranks)})
	}
	sort.Slice(out.Sites, func(i, j int) bool {
		if out.Sites[i].TimeNS != out.Sites[j].TimeNS {
			return out.Sites[i].TimeNS > out.Sites[j].TimeNS
		}
		return out.Sites[i].Site+out.Sites[i].Op < out.Sites[j].Site+out.Sites[j].Op
	})
	if len(out.Sites) > opt.TopN {
		out.Sites = out.Sites[:opt.TopN]
	}
	for _, rs := range rankSum {
		out.Ranks = append(out.Ranks, *rs)
	}
	sort.Slice(out.Ranks, func(i, j int) bool { return out.Ranks[i].Rank < out.Ranks[j].Rank })
	out.NBC = summarizeNBC(nbc)
	return out, nil
}

// parseP2PRank reads one rank's events into messages and completion calls.
func parseP2PRank(ri *RankInput, src Source, corr *Corrector, nbc map[InstanceKey]*nbcInst,
	sites map[p2pSiteKey]*siteAcc, res *Resolver, out *P2PResult) (*p2pRankData, error) {
	rank := int32(ri.Rank)
	meta := src.Meta()
	comms := map[uint32]trace.Comm{}
	for _, c := range meta.Comms {
		comms[c.Local] = c // the last frame of a local index wins
	}
	objs := append([]trace.Object(nil), meta.Header.Objects...)
	sort.Slice(objs, func(i, j int) bool { return objs[i].Lo < objs[j].Lo })
	siteName := map[uint64]string{}
	nameOf := func(pc uint64) string {
		if s, ok := siteName[pc]; ok {
			return s
		}
		s := fmt.Sprintf("0x%x", pc)
		i := sort.Search(len(objs), func(i int) bool { return objs[i].Hi > pc })
		if pc != 0 && i < len(objs) && objs[i].Lo <= pc && pc < objs[i].Hi {
			s = res.Resolve(objs[i].Path, pc-objs[i].Base).String()
		}
		siteName[pc] = s
		return s
	}
	addSite := func(pc uint64, op trace.Op, calls int, polls uint64, d float64) {
		k := p2pSiteKey{nameOf(pc), op}
		a := sites[k]
		if a == nil {
			a = &siteAcc{ranks: map[int32]bool{}}
			sites[k] = a
		}
		a.calls += calls
		a.polls += polls
		a.time += d
		a.ranks[rank] = true
	}
	commID := func(local uint32) (uint64, int) {
		c, ok := comms[local]
		if !ok {
			return 0, 0
		}
		return c.ID, len(c.Members)
	}
	rd := &p2pRankData{}
	pending := map[uint32]*p2pPending{}
	var evs []trace.Event
	var all []trace.Event
	for {
		var err error
		evs, err = src.NextChunk(evs[:0])
		if err != nil {
			if err == errEOF {
				break
			}
			return nil, err
		}
		for i := range evs { // keep only what this pass looks at
			if op := evs[i].Op; op.IsPointToPoint() || op.IsNonblockingCollective() {
				all = append(all, evs[i])
			}
		}
	}
	// Threads' chunks may interleave: order by entry, keeping the order of
	// a call's records (same entry time).
	sort.SliceStable(all, func(i, j int) bool { return all[i].EnterNS < all[j].EnterNS })
	order := 0
	var cur *p2pCall
	var curKey [3]int64
	for i := range all {
		e := &all[i]
		op := e.Op
		if !op.IsPointToPoint() && !op.IsNonblockingCollective() {
			continue
		}
		enter, exit := corr.Global(e.EnterNS), corr.Global(e.ExitNS)
		cid, csize := commID(e.Comm)
		newMsg := func(recv bool) *p2pMsg {
			order++
			m := &p2pMsg{comm: cid, tag: e.Tag, op: op, order: order, post: enter, postLocal: e.EnterNS, postExit: exit}
			if recv {
				m.src, m.dst, m.bytes = e.Peer, rank, e.Recv
			} else {
				m.src, m.dst, m.bytes = rank, e.Peer, e.Sent
			}
			m.sync = op.IsSyncSend()
			return m
		}
		finish := func(m *p2pMsg, recv bool) {
			m.waitOp, m.waitEnter, m.waitExit, m.waitLocal, m.done = op, enter, exit, e.EnterNS, true
			if recv {
				rd.recvs = append(rd.recvs, m)
			} else {
				rd.sends = append(rd.sends, m)
			}
		}
		switch {
		case op == trace.OpPolls:
			out.Polls += uint64(e.Req)
			rd.pollTime += exit - enter
			addSite(e.Callsite, trace.Op(e.Tag), 0, uint64(e.Req), exit-enter)
		case op.IsSend() && op < trace.OpIsend: // blocking send
			if e.Peer >= 0 {
				finish(newMsg(false), false)
			}
		case op == trace.OpRecv:
			if e.Peer == trace.PeerNull {
				continue
			}
			m := newMsg(true)
			finish(m, true)
			c := &p2pCall{rank: rank, op: op, enter: enter, exit: exit, recvs: []*p2pMsg{m}}
			m.call = c
			rd.calls = append(rd.calls, c)
		case op == trace.OpSendrecv || op == trace.OpSendrecvReplace:
			if e.Peer == trace.PeerNull {
				continue
			}
			if e.Seq == 0 {
				finish(newMsg(false), false)
				continue
			}
			m := newMsg(true)
			finish(m, true)
			c := &p2pCall{rank: rank, op: op, enter: enter, exit: exit, recvs: []*p2pMsg{m}}
			m.call = c
			rd.calls = append(rd.calls, c)
		case op >= trace.OpIsend && op <= trace.OpIrecv:
			out.Requests++
			recv := op == trace.OpIrecv
			pending[e.Req] = &p2pPending{msg: newMsg(recv), recv: recv}
		case op.IsPersistentInit():
			recv := op == trace.OpRecvInit
			p := &p2pPending{recv: recv, persistent: true}
			p.tmpl = *newMsg(recv)
			order-- // an init posts nothing
			pending[e.Req] = p
		case op == trace.OpStart || op == trace.OpStartall:
			p := pending[e.Req]
			if p == nil || !p.persistent {
				continue
			}
			out.Requests++
			m := p.tmpl
			order++
			m.order, m.post, m.postLocal, m.postExit = order, enter, e.EnterNS, exit
			p.msg = &m
		case op == trace.OpRequestFree:
			if p := pending[e.Req]; p != nil {
				if p.msg != nil {
					out.Uncompleted++ // freed while active: no completion seen
				}
				delete(pending, e.Req)
			}
		case op.IsNonblockingCollective():
			out.Requests++
			k := InstanceKey{Comm: cid, Seq: e.Seq}
			in := nbc[k]
			if in == nil {
				in = &nbcInst{op: op, size: csize, starts: map[int32]float64{}, enter: map[int32]float64{}, exit: map[int32]float64{}}
				nbc[k] = in
			}
			in.starts[rank] = enter
			pending[e.Req] = &p2pPending{coll: true, nbcKey: k, nbcOp: op}
		case op.IsCompletion():
			key := [3]int64{int64(op), e.EnterNS, e.ExitNS}
			if e.Seq == 0 || cur == nil || key != curKey {
				cur = &p2pCall{rank: rank, op: op, enter: enter, exit: exit}
				curKey = key
				rd.calls = append(rd.calls, cur)
				addSite(e.Callsite, op, 1, 0, exit-enter)
			}
			p := pending[e.Req]
			if e.Req == 0 || p == nil {
				continue
			}
			switch {
			case p.coll:
				if in := nbc[p.nbcKey]; in != nil {
					in.enter[rank], in.exit[rank] = enter, exit
				}
				delete(pending, e.Req)
			case p.msg != nil:
				m := p.msg
				p.msg = nil
				if p.recv {
					m.src, m.tag, m.bytes = e.Peer, e.Tag, e.Recv
					finish(m, true)
					m.call = cur
					cur.recvs = append(cur.recvs, m)
				} else {
					finish(m, false)
				}
				if !p.persistent {
					delete(pending, e.Req)
				}
			}
		}
	}
	for _, p := range pending {
		if p.msg != nil || p.coll {
			out.Uncompleted++
		}
	}
	return rd, nil
}

type p2pKey struct {
	comm     uint64
	src, dst int32
	tag      int32
}

// matchP2P pairs the n-th send of (comm, src, dst, tag) with the n-th
// receive of the same key in posting order (MPI's non-overtaking rule) and
// computes the waits.
func matchP2P(ranks map[int32]*p2pRankData, out *P2PResult, rankSum map[int32]*P2PRank, opt P2POptions) {
	topN := opt.TopN
	sends := map[p2pKey][]*p2pMsg{}
	recvs := map[p2pKey][]*p2pMsg{}
	for r, rd := range ranks {
		rs := rankSum[r]
		for _, m := range rd.sends {
			if m.dst < 0 { // MPI_PROC_NULL: no message
				continue
			}
			k := p2pKey{m.comm, m.src, m.dst, m.tag}
			sends[k] = append(sends[k], m)
			rs.Sends++
			rs.SentBytes += m.bytes
		}
		for _, m := range rd.recvs {
			if m.src < 0 {
				if m.src != trace.PeerNull { // MPI_PROC_NULL: no message
					out.Unresolved++
				}
				continue
			}
			k := p2pKey{m.comm, m.src, m.dst, m.tag}
			recvs[k] = append(recvs[k], m)
			rs.Recvs++
			rs.RecvBytes += m.bytes
		}
	}
	lsPairs := map[[2]int32]*PairWait{}
	lrPairs := map[[2]int32]*PairWait{}
	waitedFor := map[[2]int32]float64{}
	addPair := func(pw *PairWaits, pairs map[[2]int32]*PairWait, culprit, victim int32, w float64) {
		pw.Count++
		pw.TotalNS += w
		pw.MaxNS = math.Max(pw.MaxNS, w)
		p := pairs[[2]int32{culprit, victim}]
		if p == nil {
			p = &PairWait{Culprit: culprit, Victim: victim}
			pairs[[2]int32{culprit, victim}] = p
		}
		p.Count++
		p.NS += w
	}
	matched := map[*p2pMsg]*p2pMsg{} // receive -> send
	for k, rl := range recvs {
		sl := sends[k]
		sort.SliceStable(rl, func(i, j int) bool { return rl[i].order < rl[j].order })
		sort.SliceStable(sl, func(i, j int) bool { return sl[i].order < sl[j].order })
		n := min(len(rl), len(sl))
		out.UnmatchedRecvs += len(rl) - n
		out.UnmatchedSends += len(sl) - n
		for i := 0; i < n; i++ {
			r, s := rl[i], sl[i]
			matched[r] = s
			out.Messages++
			if opt.KeepMessages > 0 && s.post >= opt.From && (opt.To == 0 || s.post <= opt.To) {
				out.List = append(out.List, Message{Src: s.src, Dst: r.dst, CommID: k.comm, Tag: k.tag, Bytes: r.bytes,
					SendOp: s.op, RecvOp: r.waitOp, SendStart: s.post, SendExit: s.postExit, RecvEnter: r.waitEnter, RecvExit: r.waitExit})
			}
			out.Bytes += r.bytes
			if r.waitExit < s.post {
				out.Violations++
				out.MaxViolationNS = math.Max(out.MaxViolationNS, s.post-r.waitExit)
			}
			if w := math.Min(s.post, r.waitExit) - r.waitEnter; s.post > r.waitEnter && w > 0 {
				addPair(&out.LateSender, lsPairs, s.src, r.dst, w)
				r.lateSender = w
				out.Worst = append(out.Worst, LateMessage{Src: s.src, Dst: r.dst, CommID: k.comm, Tag: k.tag,
					Bytes: r.bytes, SendOp: s.op.String(), RecvOp: r.waitOp.String(), SendStart: s.post,
					WaitEnter: r.waitEnter, WaitNS: w, SendLocal: s.postLocal, WaitLocal: r.waitLocal})
			}
			if (s.sync || (opt.RendezvousBytes > 0 && isStandardSend(s.op) && s.bytes >= opt.RendezvousBytes)) && s.done {
				if w := math.Min(r.post, s.waitExit) - s.waitEnter; r.post > s.waitEnter && w > 0 {
					addPair(&out.LateReceiver, lrPairs, r.dst, s.src, w)
				}
			}
		}
		delete(sends, k)
	}
	for _, sl := range sends {
		out.UnmatchedSends += len(sl)
	}
	// who makes me wait: per completion call, the slowest neighbour; a
	// rank's late-sender time counts each call once (the waits for the
	// receives one Waitall completes overlap)
	for r, rd := range ranks {
		for _, c := range rd.calls {
			var last *p2pMsg
			ls := 0.0
			for _, m := range c.recvs {
				ls = math.Max(ls, m.lateSender)
				if s := matched[m]; s != nil && (last == nil || s.post > last.post) {
					last = s
				}
			}
			rankSum[r].LateSenderNS += ls
			if last == nil {
				continue
			}
			if w := math.Min(last.post, c.exit) - c.enter; w > 0 {
				waitedFor[[2]int32{r, last.src}] += w
			}
		}
	}
	for k, w := range waitedFor {
		rs := rankSum[k[0]]
		rs.WaitedFor = append(rs.WaitedFor, RankAmount{Rank: k[1], NS: w})
	}
	for _, rs := range rankSum {
		sort.Slice(rs.WaitedFor, func(i, j int) bool {
			if rs.WaitedFor[i].NS != rs.WaitedFor[j].NS {
				return rs.WaitedFor[i].NS > rs.WaitedFor[j].NS
			}
			return rs.WaitedFor[i].Rank < rs.WaitedFor[j].Rank
		})
		if len(rs.WaitedFor) > 3 {
			rs.WaitedFor = rs.WaitedFor[:3]
		}
	}
	for r, rd := range ranks {
		for _, c := range rd.calls {
			if c.op.IsCompletion() || c.op == trace.OpRecv || c.op == trace.OpSendrecv || c.op == trace.OpSendrecvReplace {
				rankSum[r].WaitTimeNS += c.exit - c.enter
			}
		}
	}
	out.LateSender.Pairs = topPairs(lsPairs, topN)
	out.LateReceiver.Pairs = topPairs(lrPairs, topN)
	sort.Slice(out.List, func(i, j int) bool { return out.List[i].SendStart < out.List[j].SendStart })
	if len(out.List) > opt.KeepMessages {
		out.ListDropped = len(out.List) - opt.KeepMessages
		out.List = out.List[:opt.KeepMessages]
	}
	sort.Slice(out.Worst, func(i, j int) bool { return out.Worst[i].WaitNS > out.Worst[j].WaitNS })
	if len(out.Worst) > topN {
		out.Worst = out.Worst[:topN]
	}
}

func topPairs(m map[[2]int32]*PairWait, n int) []PairWait {
	out := make([]PairWait, 0, len(m))
	for _, p := range m {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NS != out[j].NS {
			return out[i].NS > out[j].NS
		}
		if out[i].Culprit != out[j].Culprit {
			return out[i].Culprit < out[j].Culprit
		}
		return out[i].Victim < out[j].Victim
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func summarizeNBC(nbc map[InstanceKey]*nbcInst) []NBCSummary {
	type acc struct {
		s          NBCSummary
		skew, wait accum
	}
	by := map[trace.Op]*acc{}
	for _, in := range nbc {
		a := by[in.op]
		if a == nil {
			a = &acc{s: NBCSummary{Op: in.op.String()}}
			by[in.op] = a
		}
		a.s.Instances++
		first, last := math.Inf(1), math.Inf(-1)
		for _, t := range in.starts {
			first, last = math.Min(first, t), math.Max(last, t)
		}
		if len(in.starts) == in.size && len(in.exit) == in.size {
			a.s.Complete++
		}
		a.skew.add(last - first)
		for r, en := range in.enter {
			a.wait.add(math.Max(0, math.Min(last, in.exit[r])-en))
		}
	}
	var out []NBCSummary
	for _, a := range by {
		a.s.StartSkew = a.skew.stats()
		a.s.Wait = a.wait.stats()
		out = append(out, a.s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Op < out[j].Op })
	return out
}
