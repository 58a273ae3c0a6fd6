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
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// P2POptions configures AnalyzeP2P.
type P2POptions struct {
	Clock correct.ClockMode
	// TopN bounds the lists of worst messages and call sites; default 10.
	TopN int
	// Open opens a rank file (OpenTrace when nil). The run's own sources
	// are not used: the main pass consumes them.
	Open rundir.Opener
	// Sources, when set, replaces Open: the events of world rank r
	// (tests, synthetic input).
	Sources func(rank int) (rundir.Source, error)
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

// AnalyzeP2P reads every rank of run once more (through opt.Sources or
// opt.Open: the run's own sources may have been consumed) and analyses its
// point-to-point messages, requests and nonblocking collectives with a
// P2PStream fed by a merge pass. Memory is what is in flight (P2PStream),
// not the run's length. tracemerge instead adds a P2PStream to its main
// pass (Pass.AddStreamSink) and reads the files once.
func AnalyzeP2P(run *rundir.Run, opt P2POptions) (*datamodel.P2PResult, error) {
	if run == nil || len(run.Ranks) == 0 {
		return nil, fmt.Errorf("point-to-point pass: no rank files")
	}
	if opt.Open == nil {
		opt.Open = rundir.OpenTrace
	}
	cp := *run
	cp.Ranks = make([]*rundir.RankInput, len(run.Ranks))
	var opened []rundir.Source
	defer func() {
		for _, src := range opened {
			rundir.CloseSource(src)
		}
	}()
	for i, ri := range run.Ranks {
		var src rundir.Source
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
func topPairs(out []datamodel.PairWait, n int) []datamodel.PairWait {
	if out == nil {
		out = []datamodel.PairWait{} // "pairs": [] in JSON, not null
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
