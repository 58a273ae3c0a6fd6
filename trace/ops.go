package trace

// Op identifies a recorded MPI function. The numbering is part of the file
// format: append only. cshim's generated wrappers use the same numbers (the
// generator reads this table), so C and Go cannot drift.
type Op uint16

// Operation codes.
const (
	OpUnknown Op = iota
	OpBarrier
	OpBcast
	OpReduce
	OpAllreduce
	OpGather
	OpGatherv
	OpScatter
	OpScatterv
	OpAllgather
	OpAllgatherv
	OpAlltoall
	OpAlltoallv
	OpAlltoallw
	OpReduceScatter
	OpReduceScatterBlock
	OpScan
	OpExscan
	// Point-to-point, nonblocking and persistent requests, nonblocking
	// collectives (issue 7; docs/explanation/p2p.md). OpPolls is not an MPI function: it
	// summarises a run of unsuccessful MPI_Test*/MPI_Iprobe calls.
	OpSend
	OpSsend
	OpRsend
	OpBsend
	OpRecv
	OpSendrecv
	OpSendrecvReplace
	OpProbe
	OpIsend
	OpIssend
	OpIrsend
	OpIbsend
	OpIrecv
	OpWait
	OpWaitall
	OpWaitany
	OpWaitsome
	OpTest
	OpTestall
	OpTestany
	OpTestsome
	OpIprobe
	OpSendInit
	OpSsendInit
	OpRsendInit
	OpBsendInit
	OpRecvInit
	OpStart
	OpStartall
	OpRequestFree
	OpIbarrier
	OpIbcast
	OpIreduce
	OpIallreduce
	OpIgather
	OpIgatherv
	OpIscatter
	OpIscatterv
	OpIallgather
	OpIallgatherv
	OpIalltoall
	OpIalltoallv
	OpIalltoallw
	OpIreduceScatter
	OpIreduceScatterBlock
	OpIscan
	OpIexscan
	OpPolls
	// OpFlush is not an MPI function either: the recorder's own pause when
	// a full thread buffer is handed to Go (cshim/flush.c). Its Comm is
	// FlushComm (no communicator), Root -1, Sent the bytes handed over, Seq
	// the thread's flush count; the application waited from EnterNS to
	// ExitNS inside the MPI call that filled the buffer.
	OpFlush
	// OpResync is the recorder's sync epoch between MPI_Init and
	// MPI_Finalize (docs/explanation/clocksync.md, "Resync epochs"), taken inside a
	// resync-eligible collective right after it returned: Comm FlushComm,
	// Root -1, Seq the rank's resync count; the application waited from
	// EnterNS to ExitNS.
	OpResync
	// OpPcontrol is MPI_Pcontrol(level) (docs/reference/settings-details.md, "Selective
	// tracing"): Root holds the level, Comm FlushComm, Seq the rank's call
	// count. Level 0 pauses recording after this event, any other level
	// resumes it before; the paused intervals lie between them.
	OpPcontrol
	// One-sided communication (issue 11 §4, docs/explanation/rma.md). Comm is the
	// window's local index (windows are entries of the communicator table
	// with agreed ids, kind "win_create", "win_allocate", ...). Window
	// creation, MPI_Win_free and MPI_Win_fence take the window's instance
	// number in Seq (matched across its members like a collective);
	// communication calls carry the target as world rank in Peer and the
	// origin's bytes in Sent (put, accumulate) and Recv (get, result).
	OpWinCreate
	OpWinAllocate
	OpWinAllocateShared
	OpWinCreateDynamic
	OpWinFree
	OpPut
	OpGet
	OpAccumulate
	OpGetAccumulate
	OpFetchAndOp
	OpCompareAndSwap
	OpRput
	OpRget
	OpRaccumulate
	OpRgetAccumulate
	OpWinFence
	OpWinLock
	OpWinUnlock
	OpWinLockAll
	OpWinUnlockAll
	OpWinFlush
	OpWinFlushAll
	OpWinFlushLocal
	OpWinFlushLocalAll
	OpWinPost
	OpWinStart
	OpWinComplete
	OpWinWait
	OpWinTest
	OpWinSync
	// Matched probes (MPI-3): MPI_Mprobe and MPI_Improbe record like
	// MPI_Probe and MPI_Iprobe, MPI_Mrecv like MPI_Recv (the message's
	// communicator, source and tag from its probe), MPI_Imrecv like
	// MPI_Irecv (a request).
	OpMprobe
	OpImprobe
	OpMrecv
	OpImrecv
	// Neighbourhood collectives (MPI-3) on a communicator with a topology,
	// blocking and nonblocking (same order, so BlockingEquivalent is an
	// offset). Each member exchanges with its neighbours only, so they are
	// instances matched by Seq but impose no N×N wait (WaitNone).
	OpNeighborAllgather
	OpNeighborAllgatherv
	OpNeighborAlltoall
	OpNeighborAlltoallv
	OpIneighborAllgather
	OpIneighborAllgatherv
	OpIneighborAlltoall
	OpIneighborAlltoallv
	// MPI_Neighbor_alltoallw and MPI_Ineighbor_alltoallw (per-neighbour
	// datatypes), neighbourhood collectives like the four above.
	OpNeighborAlltoallw
	OpIneighborAlltoallw
	opCount
)

// FlushComm is the Comm of OpFlush events: no communicator.
const FlushComm = ^uint32(0)

var opNames = [...]string{
	OpUnknown:             "Unknown",
	OpBarrier:             "MPI_Barrier",
	OpBcast:               "MPI_Bcast",
	OpReduce:              "MPI_Reduce",
	OpAllreduce:           "MPI_Allreduce",
	OpGather:              "MPI_Gather",
	OpGatherv:             "MPI_Gatherv",
	OpScatter:             "MPI_Scatter",
	OpScatterv:            "MPI_Scatterv",
	OpAllgather:           "MPI_Allgather",
	OpAllgatherv:          "MPI_Allgatherv",
	OpAlltoall:            "MPI_Alltoall",
	OpAlltoallv:           "MPI_Alltoallv",
	OpAlltoallw:           "MPI_Alltoallw",
	OpReduceScatter:       "MPI_Reduce_scatter",
	OpReduceScatterBlock:  "MPI_Reduce_scatter_block",
	OpScan:                "MPI_Scan",
	OpExscan:              "MPI_Exscan",
	OpSend:                "MPI_Send",
	OpSsend:               "MPI_Ssend",
	OpRsend:               "MPI_Rsend",
	OpBsend:               "MPI_Bsend",
	OpRecv:                "MPI_Recv",
	OpSendrecv:            "MPI_Sendrecv",
	OpSendrecvReplace:     "MPI_Sendrecv_replace",
	OpProbe:               "MPI_Probe",
	OpIsend:               "MPI_Isend",
	OpIssend:              "MPI_Issend",
	OpIrsend:              "MPI_Irsend",
	OpIbsend:              "MPI_Ibsend",
	OpIrecv:               "MPI_Irecv",
	OpWait:                "MPI_Wait",
	OpWaitall:             "MPI_Waitall",
	OpWaitany:             "MPI_Waitany",
	OpWaitsome:            "MPI_Waitsome",
	OpTest:                "MPI_Test",
	OpTestall:             "MPI_Testall",
	OpTestany:             "MPI_Testany",
	OpTestsome:            "MPI_Testsome",
	OpIprobe:              "MPI_Iprobe",
	OpSendInit:            "MPI_Send_init",
	OpSsendInit:           "MPI_Ssend_init",
	OpRsendInit:           "MPI_Rsend_init",
	OpBsendInit:           "MPI_Bsend_init",
	OpRecvInit:            "MPI_Recv_init",
	OpStart:               "MPI_Start",
	OpStartall:            "MPI_Startall",
	OpRequestFree:         "MPI_Request_free",
	OpIbarrier:            "MPI_Ibarrier",
	OpIbcast:              "MPI_Ibcast",
	OpIreduce:             "MPI_Ireduce",
	OpIallreduce:          "MPI_Iallreduce",
	OpIgather:             "MPI_Igather",
	OpIgatherv:            "MPI_Igatherv",
	OpIscatter:            "MPI_Iscatter",
	OpIscatterv:           "MPI_Iscatterv",
	OpIallgather:          "MPI_Iallgather",
	OpIallgatherv:         "MPI_Iallgatherv",
	OpIalltoall:           "MPI_Ialltoall",
	OpIalltoallv:          "MPI_Ialltoallv",
	OpIalltoallw:          "MPI_Ialltoallw",
	OpIreduceScatter:      "MPI_Ireduce_scatter",
	OpIreduceScatterBlock: "MPI_Ireduce_scatter_block",
	OpIscan:               "MPI_Iscan",
	OpIexscan:             "MPI_Iexscan",
	OpPolls:               "gclock_polls",
	OpFlush:               "gclock_flush",
	OpResync:              "gclock_resync",
	OpPcontrol:            "MPI_Pcontrol",
	OpWinCreate:           "MPI_Win_create",
	OpWinAllocate:         "MPI_Win_allocate",
	OpWinAllocateShared:   "MPI_Win_allocate_shared",
	OpWinCreateDynamic:    "MPI_Win_create_dynamic",
	OpWinFree:             "MPI_Win_free",
	OpPut:                 "MPI_Put",
	OpGet:                 "MPI_Get",
	OpAccumulate:          "MPI_Accumulate",
	OpGetAccumulate:       "MPI_Get_accumulate",
	OpFetchAndOp:          "MPI_Fetch_and_op",
	OpCompareAndSwap:      "MPI_Compare_and_swap",
	OpRput:                "MPI_Rput",
	OpRget:                "MPI_Rget",
	OpRaccumulate:         "MPI_Raccumulate",
	OpRgetAccumulate:      "MPI_Rget_accumulate",
	OpWinFence:            "MPI_Win_fence",
	OpWinLock:             "MPI_Win_lock",
	OpWinUnlock:           "MPI_Win_unlock",
	OpWinLockAll:          "MPI_Win_lock_all",
	OpWinUnlockAll:        "MPI_Win_unlock_all",
	OpWinFlush:            "MPI_Win_flush",
	OpWinFlushAll:         "MPI_Win_flush_all",
	OpWinFlushLocal:       "MPI_Win_flush_local",
	OpWinFlushLocalAll:    "MPI_Win_flush_local_all",
	OpWinPost:             "MPI_Win_post",
	OpWinStart:            "MPI_Win_start",
	OpWinComplete:         "MPI_Win_complete",
	OpWinWait:             "MPI_Win_wait",
	OpWinTest:             "MPI_Win_test",
	OpWinSync:             "MPI_Win_sync",
	OpMprobe:              "MPI_Mprobe",
	OpImprobe:             "MPI_Improbe",
	OpMrecv:               "MPI_Mrecv",
	OpImrecv:              "MPI_Imrecv",
	OpNeighborAllgather:   "MPI_Neighbor_allgather",
	OpNeighborAllgatherv:  "MPI_Neighbor_allgatherv",
	OpNeighborAlltoall:    "MPI_Neighbor_alltoall",
	OpNeighborAlltoallv:   "MPI_Neighbor_alltoallv",
	OpIneighborAllgather:  "MPI_Ineighbor_allgather",
	OpIneighborAllgatherv: "MPI_Ineighbor_allgatherv",
	OpIneighborAlltoall:   "MPI_Ineighbor_alltoall",
	OpIneighborAlltoallv:  "MPI_Ineighbor_alltoallv",
	OpNeighborAlltoallw:   "MPI_Neighbor_alltoallw",
	OpIneighborAlltoallw:  "MPI_Ineighbor_alltoallw",
}

// String returns the MPI function name, e.g. "MPI_Allreduce".
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "Op(" + itoa(int(o)) + ")"
}

// OpByName returns the op for an MPI function name ("MPI_Allreduce").
func OpByName(name string) (Op, bool) {
	for i, n := range opNames {
		if n == name && i != 0 {
			return Op(i), true
		}
	}
	return OpUnknown, false
}

// Ops lists every defined op except OpUnknown, in code order.
func Ops() []Op {
	out := make([]Op, 0, int(opCount)-1)
	for o := Op(1); o < opCount; o++ {
		out = append(out, o)
	}
	return out
}

// IsRecorder reports whether o is the recorder's own pause (a buffer
// flush or a resync epoch), not an MPI call.
func (o Op) IsRecorder() bool { return o == OpFlush || o == OpResync }

// IsCollective reports whether o is a collective (matched across members).
func (o Op) IsCollective() bool {
	return o >= OpBarrier && o <= OpExscan || o >= OpNeighborAllgather && o <= OpNeighborAlltoallv ||
		o == OpNeighborAlltoallw
}

// IsNeighborhood reports whether o is a neighbourhood collective
// (MPI_Neighbor_* or MPI_Ineighbor_*).
func (o Op) IsNeighborhood() bool {
	return o >= OpNeighborAllgather && o <= OpIneighborAlltoallv || o == OpNeighborAlltoallw ||
		o == OpIneighborAlltoallw
}

// Synchronizing reports whether no member can leave the op before the last
// member entered it (the clock condition of DESIGN.md): Barrier, Allreduce,
// Allgather(v), Alltoall(v,w), Reduce_scatter(_block).
func (o Op) Synchronizing() bool {
	switch o {
	case OpBarrier, OpAllreduce, OpAllgather, OpAllgatherv, OpAlltoall,
		OpAlltoallv, OpAlltoallw, OpReduceScatter, OpReduceScatterBlock:
		return true
	}
	return false
}

// HasRoot reports whether the op takes a root argument.
func (o Op) HasRoot() bool {
	switch o {
	case OpBcast, OpReduce, OpGather, OpGatherv, OpScatter, OpScatterv:
		return true
	}
	return false
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}

// Point-to-point record conventions (docs/explanation/p2p.md). A call that concerns
// several messages or requests (MPI_Waitall completing three requests,
// MPI_Startall, the two halves of MPI_Sendrecv) is written as several
// events sharing Op, EnterNS, ExitNS and Callsite; Seq numbers them 0, 1, ...
// within the call (for point-to-point ops Seq is not a collective sequence
// number). A completion call that completes nothing is one event with Req 0.
const (
	PeerAny  int32 = -1 // MPI_ANY_SOURCE not (yet) resolved from a status
	PeerNull int32 = -2 // MPI_PROC_NULL
	TagAny   int32 = -1 // MPI_ANY_TAG not (yet) resolved
	// TagCancelled marks the completion of a request that MPI_Cancel
	// cancelled (its status says so): no message was sent or received.
	TagCancelled int32 = -3
)

// IsSend reports whether o sends one message per event (blocking sends
// and the send starts MPI_Isend/Issend/Irsend/Ibsend). MPI_Sendrecv's
// record 0 is its send half, record 1 its receive half.
func (o Op) IsSend() bool { return o >= OpSend && o <= OpBsend || o >= OpIsend && o <= OpIbsend }

// IsSyncSend reports whether o's send cannot complete before the receive
// is posted (synchronous mode): MPI_Ssend, MPI_Issend, MPI_Ssend_init.
func (o Op) IsSyncSend() bool { return o == OpSsend || o == OpIssend || o == OpSsendInit }

// IsRequestStart reports whether o creates a request whose id is in Req
// (nonblocking sends and receives, persistent inits, nonblocking
// collectives).
func (o Op) IsRequestStart() bool {
	return o >= OpIsend && o <= OpIrecv || o >= OpSendInit && o <= OpRecvInit ||
		o == OpImrecv || o.IsNonblockingCollective()
}

// IsPersistentInit reports whether o is MPI_{Send,Ssend,Rsend,Bsend,Recv}_init.
func (o Op) IsPersistentInit() bool { return o >= OpSendInit && o <= OpRecvInit }

// IsCompletion reports whether o completes requests (MPI_Wait*, MPI_Test*):
// each of its events names one completed request in Req.
func (o Op) IsCompletion() bool { return o >= OpWait && o <= OpTestsome }

// IsNonblockingCollective reports whether o is an MPI-3 nonblocking
// collective start; its Seq is the communicator's collective sequence
// number shared with the blocking collectives.
func (o Op) IsNonblockingCollective() bool {
	return o >= OpIbarrier && o <= OpIexscan || o >= OpIneighborAllgather && o <= OpIneighborAlltoallv ||
		o == OpIneighborAlltoallw
}

// Continues reports whether a record of op o with sequence number seq is
// the second or a later record of one call written as several records
// that share its Enter and Exit (MPI_Waitall completing several requests,
// the halves of MPI_Sendrecv, MPI_Win_post/start per group member): its
// call is already counted with record 0. The recorder's C encoder counts
// calls with the same rule (cshim/encode.c).
func (o Op) Continues(seq uint32) bool {
	return seq > 0 && (o >= OpSend && o <= OpRequestFree || o == OpWinPost || o == OpWinStart)
}

// IsPointToPoint reports whether o is one of issue 7's point-to-point or
// request ops (MPI_Send ... MPI_Request_free, and gclock_polls).
func (o Op) IsPointToPoint() bool {
	return o >= OpSend && o <= OpRequestFree || o == OpPolls || o >= OpMprobe && o <= OpImrecv
}

// IsRecvStart reports whether o starts a nonblocking receive (MPI_Irecv,
// MPI_Imrecv).
func (o Op) IsRecvStart() bool { return o == OpIrecv || o == OpImrecv }

// BlockingEquivalent returns the blocking collective a nonblocking one
// starts (MPI_Iallreduce -> MPI_Allreduce), OpUnknown for other ops.
func (o Op) BlockingEquivalent() Op {
	switch {
	case o == OpIneighborAlltoallw:
		return OpNeighborAlltoallw
	case o >= OpIneighborAllgather && o <= OpIneighborAlltoallv:
		return OpNeighborAllgather + (o - OpIneighborAllgather)
	case o.IsNonblockingCollective():
		return OpBarrier + (o - OpIbarrier)
	}
	return OpUnknown
}

// IsRMA reports whether o is a one-sided (RMA) operation: window
// creation and free, communication and synchronisation (docs/explanation/rma.md).
func (o Op) IsRMA() bool { return o >= OpWinCreate && o <= OpWinSync }

// IsWinCreate reports whether o creates a window.
func (o Op) IsWinCreate() bool { return o >= OpWinCreate && o <= OpWinCreateDynamic }

// IsRMATransfer reports whether o moves data to or from a target (MPI_Put
// ... MPI_Rget_accumulate); Peer is the target's world rank.
func (o Op) IsRMATransfer() bool { return o >= OpPut && o <= OpRgetAccumulate }

// IsRMARequest reports whether o is a request-based RMA call (MPI_Rput,
// MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate): Req names its request,
// completed by MPI_Wait* / MPI_Test* like any other.
func (o Op) IsRMARequest() bool { return o >= OpRput && o <= OpRgetAccumulate }

// IsRMASync reports whether o synchronises a window (fence, lock, flush,
// post/start/complete/wait, test, sync).
func (o Op) IsRMASync() bool { return o >= OpWinFence && o <= OpWinSync }

// IsWinInstance reports whether o is matched across the window's members
// by Seq (window creation, MPI_Win_free, MPI_Win_fence).
func (o Op) IsWinInstance() bool { return o.IsWinCreate() || o == OpWinFree || o == OpWinFence }
