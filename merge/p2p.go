package merge

// Point-to-point analysis (issue 7, docs/explanation/p2p.md): match every send to its
// receive, then Late Sender, Late Receiver, time in completion calls per
// rank and call site, "who makes me wait" for halo exchanges, the
// point-to-point clock condition, and nonblocking-collective instances.

import (
	"fmt"
	"sort"

	"github.com/gclock/gclock/merge/callsite"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
)

// P2POptions configures AnalyzeP2P.
type P2POptions struct {
	Clock correct.ClockMode
	// TopN bounds the lists of worst messages and call sites; default 10.
	TopN int
	// Open opens a rank file (OpenTrace when nil). The run's own sources
	// are not used: the main pass consumes them.
	Open Opener
	// Sources, when set, replaces Open: the events of world rank r
	// (tests, synthetic input).
	Sources func(rank int) (Source, error)
	// Resolve resolves call sites; nil uses a fresh callsite.NewResolver().
	Resolve *callsite.Resolver
	// KeepMessages keeps up to this many matched messages (the earliest
	// sends first) in P2PResult.List, for message lines and flow events;
	// with From/To only those whose send starts in [From, To] (global ns
	// relative to RunOrigin, like every global time; To 0 = no end).
	KeepMessages int
	From, To     float64
	// CollectRepairs lists the clock-condition violations in
	// P2PResult.Repairs (clc.go).
	CollectRepairs bool
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
	// OnSync, when set, is told every wait state the stream finds between
	// two ranks (Late Sender, Late Receiver), in the stream's order: the
	// delay and critical-path analysis (RootCauseStream) builds on it.
	OnSync func(P2PSync)
	// onMessage, when set, is told every matched message's times
	// (global ns): the send call's entry and exit, the completing receive
	// call's entry and exit. PlanRefined's first pass turns the messages
	// with rank 0 into happened-before facts (Pass.p2pFacts).
	onMessage func(src, dst int32, sendEnter, sendExit, recvEnter, recvExit float64)
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
	Cancelled      int    `json:"cancelled"`       // of which cancelled (MPI_Cancel): no message
	Polls          uint64 `json:"polls"`           // unsuccessful Test*/Iprobe calls
	// ReusedRequestIDs counts starts whose request id was still open on
	// their rank: the 32-bit ids wrapped (more than 4,294,967,295 starts on
	// a rank) while a request lived; the analysis keeps both and tells
	// their completions apart by communicator, peer and tag.
	ReusedRequestIDs int `json:"reused_request_ids,omitempty"`

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
	MaxViolationNS float64 `json:"max_violation_ns"` // largest: send start − exit of the receive's completing call, ns
	// Repairs: the violations as repairs (P2POptions.CollectRepairs):
	// the receive's completion must move past its send's start.
	Repairs        []Repair `json:"-"`
	RepairsDropped int      `json:"-"`

	// Nonblocking collectives matched by (communicator, sequence).
	NBC []NBCSummary `json:"nbc"`

	// List: matched messages kept for drawing (P2POptions.KeepMessages),
	// ordered by send start; Dropped counts those beyond the limit.
	List        []Message `json:"-"`
	ListDropped int       `json:"-"`
}

// PairWaits totals one wait kind and lists the top culprit -> victim pairs.
type PairWaits struct {
	Count   int        `json:"count"`    // waits > 0 of this kind
	TotalNS float64    `json:"total_ns"` // their sum, ns
	MaxNS   float64    `json:"max_ns"`   // the largest, ns
	Pairs   []PairWait `json:"pairs"`    // top pairs (at most TopN), largest NS first
}

// PairWait is the wait Culprit caused to Victim, summed.
type PairWait struct {
	Culprit int32   `json:"culprit"` // world rank that made the other wait
	Victim  int32   `json:"victim"`  // world rank that waited
	Count   int     `json:"count"`   // waits > 0
	NS      float64 `json:"ns"`      // their sum, ns
}

// LateMessage is one message whose receiver waited for a late sender.
type LateMessage struct {
	Src       int32   `json:"src"`           // sender, world rank
	Dst       int32   `json:"dst"`           // receiver, world rank
	CommID    uint64  `json:"comm"`          // communicator id (trace.CommID)
	Tag       int32   `json:"tag"`           // message tag
	Bytes     uint64  `json:"bytes"`         // received bytes
	SendOp    string  `json:"send_op"`       // the send's starting call, e.g. MPI_Isend
	RecvOp    string  `json:"recv_op"`       // the call the receiver waited in
	SendStart float64 `json:"send_start_ns"` // enter of the send's starting call, global ns
	WaitEnter float64 `json:"wait_enter_ns"` // enter of the call the receiver waited in, global ns
	WaitNS    float64 `json:"wait_ns"`       // min(SendStart, that call's exit) − WaitEnter, ns
	// Local times of the two events, for checks against a known truth.
	SendLocal, WaitLocal int64 `json:"-"`
}

// P2PRank is one rank's point-to-point summary.
type P2PRank struct {
	Rank      int32  `json:"rank"`       // world rank
	Sends     int    `json:"sends"`      // completed sends (to MPI_PROC_NULL excluded)
	Recvs     int    `json:"recvs"`      // completed receives with a known source
	SentBytes uint64 `json:"sent_bytes"` // bytes of those sends
	RecvBytes uint64 `json:"recv_bytes"` // bytes of those receives
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
	Site   string  `json:"site"`    // "function (file:line)", or the pc when unresolved
	Op     string  `json:"op"`      // the completion call, e.g. MPI_Waitall
	Calls  int     `json:"calls"`   // completion calls (polls not counted)
	Polls  uint64  `json:"polls"`   // unsuccessful Test*/Iprobe calls folded in
	TimeNS float64 `json:"time_ns"` // time in those calls and the polls, ns
	Ranks  int     `json:"ranks"`   // ranks that called it there
}

// NBCSummary aggregates the instances of one nonblocking collective op.
type NBCSummary struct {
	Op        string `json:"op"`        // the starting call, e.g. MPI_Iallreduce
	Instances int    `json:"instances"` // instances seen, matched by (communicator, sequence)
	Complete  int    `json:"complete"`  // every member started and completed it
	// StartSkew: last start - first start per instance.
	StartSkew Stats `json:"start_skew"`
	// Wait: per (member, instance), time in the completing call before
	// the last member started (the nonblocking form of Wait at NxN).
	Wait Stats `json:"wait"`
}

// AnalyzeP2P reads every rank of run once more (through opt.Sources or
// opt.Open: the run's own sources may have been consumed) and analyses its
// point-to-point messages, requests and nonblocking collectives with a
// P2PStream fed by a merge pass. Memory is what is in flight (P2PStream),
// not the run's length. tracemerge instead adds a P2PStream to its main
// pass (Pass.AddStreamSink) and reads the files once.
func AnalyzeP2P(run *Run, opt P2POptions) (*P2PResult, error) {
	if run == nil || len(run.Ranks) == 0 {
		return nil, fmt.Errorf("point-to-point pass: no rank files")
	}
	if opt.Open == nil {
		opt.Open = OpenTrace
	}
	cp := *run
	cp.Ranks = make([]*RankInput, len(run.Ranks))
	var opened []Source
	defer func() {
		for _, src := range opened {
			closeSrc(src)
		}
	}()
	for i, ri := range run.Ranks {
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
		opened = append(opened, src)
		c := *ri
		c.Src = src
		cp.Ranks[i] = &c
	}
	pass, err := Prepare(&cp, Options{Clock: opt.Clock, Resolve: opt.Resolve})
	if err != nil {
		return nil, fmt.Errorf("point-to-point pass: %w", err)
	}
	st := NewP2PStream(&cp, opt, pass.SiteName())
	pass.AddStreamSink(st)
	if _, err := pass.Run(); err != nil {
		return nil, fmt.Errorf("point-to-point pass: %w", err)
	}
	return st.Result(), nil
}

// topPairs sorts pairs, largest NS first (then by culprit and victim),
// and returns the first n.
func topPairs(out []PairWait, n int) []PairWait {
	if out == nil {
		out = []PairWait{} // "pairs": [] in JSON, not null
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

// P2PSyncKind says what a P2PSync is.
type P2PSyncKind uint8

// The kinds of P2PSync.
const (
	// SyncLateSender: the call of Waiter that completed receives waited
	// Wait ns for the last of its senders, Cause, to start its send (one
	// per call, like P2PRank.LateSenderNS and "who makes me wait").
	SyncLateSender P2PSyncKind = iota
	// SyncLateReceiver: a synchronous (or rendezvous) send of Waiter
	// waited Wait ns for Cause to post the receive.
	SyncLateReceiver
)

// P2PSync is one point-to-point wait state found by a P2PStream
// (P2POptions.OnSync). WaiterEnter and CauseEnter are the global enter
// times of the two calls involved (the waiting or completing call; the
// causing rank's send or receive-posting call); WaiterExit is the exit
// of the waiter's call.
type P2PSync struct {
	Kind                    P2PSyncKind
	Waiter, Cause           int32
	WaiterEnter, WaiterExit float64
	CauseEnter              float64
	Wait                    float64
}
