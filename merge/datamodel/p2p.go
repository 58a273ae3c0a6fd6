package datamodel

import "github.com/gclock/gclock/trace"

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

// Add counts one wait of w ns in the totals.
func (pw *PairWaits) Add(w float64) {
	pw.Count++
	pw.TotalNS += w
	pw.MaxNS = max(pw.MaxNS, w)
}
