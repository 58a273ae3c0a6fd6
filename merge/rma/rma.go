// Package rma is the one-sided analysis (issue 11 §4, docs/explanation/rma.md): Stream is a merge.Sink
// fed by the merge pass with every event; it counts transfers and bytes
// per window, op and rank, and measures the time ranks wait in window
// synchronisation with Scalasca's patterns:
//
//   - Wait at Fence: in an MPI_Win_fence instance (matched across the
//     window's members by Seq, like a collective), last enter - my enter,
//     capped at my time in the call.
//   - Late Post: an origin's MPI_Win_start or MPI_Win_complete entered
//     before the matching MPI_Win_post of its latest target; the time from
//     its entry to that post (capped at the call).
//   - Early Wait: a target's MPI_Win_wait entered before the last matching
//     MPI_Win_complete of its origins; the time from its entry to that
//     complete (capped at the call).
//
// Access and exposure epochs are matched per (window, origin, target) in
// order: the n-th MPI_Win_start of origin o whose group holds t goes with
// the n-th MPI_Win_post of t whose group holds o. Fence instances are
// folded as soon as every member was seen; post/start/complete/wait
// epochs are kept (their number, not the run's length) and matched at
// Result. Lock, unlock and flush calls are timed per rank ("lock time").
package rma

import (
	"sort"
	"strings"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// Options configures a Stream.
type Options struct {
	// KeepTransfers bounds the transfers kept for drawing (Gantt lines,
	// Perfetto arrows); 0 keeps none. From/To (global ns relative to the
	// run origin, To 0 = none) select those whose call starts in a window.
	KeepTransfers int
	From, To      float64
}

// Wait sums one wait pattern.
type Wait struct {
	Pattern string  `json:"pattern"`  // Scalasca's name
	Count   int     `json:"count"`    // calls with a wait > 0
	TotalNS float64 `json:"total_ns"` // sum of the waits, ns
	MaxNS   float64 `json:"max_ns"`   // largest single wait, ns
}

func (w *Wait) add(d float64) {
	if d <= 0 {
		return
	}
	w.Count++
	w.TotalNS += d
	w.MaxNS = max(w.MaxNS, d)
}

// OpSummary is one op's calls, bytes and time over all ranks.
type OpSummary struct {
	Op     string  `json:"op"`      // MPI function name, e.g. MPI_Put
	Calls  int     `json:"calls"`   // calls, all ranks
	Sent   uint64  `json:"sent"`    // summed Sent bytes: transfers' origin bytes, a new window's size
	Recv   uint64  `json:"recv"`    // summed Recv bytes: origin bytes of gets and results
	TimeNS float64 `json:"time_ns"` // time in its calls, ns
}

// Window is one window (agreed id, as in the communicator table).
type Window struct {
	ID          uint64  `json:"id"`               // window id (trace.CommID)
	Kind        string  `json:"kind"`             // win_create, win_allocate, win_allocate_shared, win_create_dynamic
	Members     int     `json:"members"`          // ranks in the window (0 unknown)
	Fences      int     `json:"fences"`           // complete fence instances
	Transfers   int     `json:"transfers"`        // put, get, accumulate and atomic calls on it
	Put         uint64  `json:"bytes_put"`        // origin bytes sent (put, accumulate)
	Got         uint64  `json:"bytes_got"`        // origin bytes received (get, results)
	FenceWaitNS float64 `json:"wait_at_fence_ns"` // Wait at Fence, summed over members, ns
	LatePostNS  float64 `json:"late_post_ns"`     // Late Post of its origins, ns
	EarlyWaitNS float64 `json:"early_wait_ns"`    // Early Wait of its targets, ns
}

// Rank is one rank's one-sided activity.
type Rank struct {
	Rank        int32   `json:"rank"`             // world rank
	Transfers   int     `json:"transfers"`        // put, get, accumulate and atomic calls it made
	Put         uint64  `json:"bytes_put"`        // origin bytes sent (put, accumulate)
	Got         uint64  `json:"bytes_got"`        // origin bytes received (get, results)
	TimeNS      float64 `json:"time_ns"`          // in every RMA call
	SyncNS      float64 `json:"sync_ns"`          // in fences, PSCW, lock/unlock/flush
	LockNS      float64 `json:"lock_ns"`          // in lock, unlock and flush calls
	FenceWaitNS float64 `json:"wait_at_fence_ns"` // its Wait at Fence, ns
	LatePostNS  float64 `json:"late_post_ns"`     // its Late Post (as origin), ns
	EarlyWaitNS float64 `json:"early_wait_ns"`    // its Early Wait (as target), ns
}

// Result is the one-sided part of a tracemerge analysis (rma.json).
type Result struct {
	Calls           int         `json:"calls"`            // one-sided calls, all ranks
	Transfers       int         `json:"transfers"`        // put, get, accumulate and atomic calls (MPI_PROC_NULL excluded)
	Put             uint64      `json:"bytes_put"`        // origin bytes sent (put, accumulate)
	Got             uint64      `json:"bytes_got"`        // origin bytes received (get, results)
	FenceInstances  int         `json:"fence_instances"`  // MPI_Win_fence instances every member reached
	FenceIncomplete int         `json:"fence_incomplete"` // instances some member never reached
	AccessEpochs    int         `json:"access_epochs"`    // MPI_Win_start ... MPI_Win_complete
	ExposureEpochs  int         `json:"exposure_epochs"`  // MPI_Win_post ... MPI_Win_wait
	Unmatched       int         `json:"unmatched_epochs"` // origin/target pairs without a partner epoch
	WaitAtFence     Wait        `json:"wait_at_fence"`    // Wait at Fence, per member of each fence instance
	LatePost        Wait        `json:"late_post"`        // Late Post, per access epoch
	EarlyWait       Wait        `json:"early_wait"`       // Early Wait, per exposure epoch
	Ops             []OpSummary `json:"ops"`              // per op
	Windows         []Window    `json:"windows"`          // per window
	Ranks           []Rank      `json:"ranks"`            // per rank
	// List holds transfers for drawing (not in rma.json): Src sends the
	// data (the origin of a put, the target of a get), Dst receives it.
	List []datamodel.Message `json:"-"`
}

type fenceInst struct {
	enter, exit map[int32]float64
}

type rmaEpoch struct {
	rank          int32
	win           uint64
	peers         []int32
	open, openX   float64 // MPI_Win_post / MPI_Win_start: enter, exit
	close, close2 float64 // MPI_Win_wait / MPI_Win_complete: enter, exit
	closed        bool
}

type rmaWinKey struct {
	win  uint64
	rank int32
}

// Stream is the streaming one-sided analysis (see the package comment).
// Create it with NewStream, feed it with Add, then call Result.
type Stream struct {
	opt     Options
	out     Result
	size    map[uint64]int
	kind    map[uint64]string
	wins    map[uint64]*Window
	ranks   map[int32]*Rank
	ops     map[trace.Op]*OpSummary
	fences  map[merge.InstanceKey]*fenceInst
	openExp map[rmaWinKey]*rmaEpoch
	openAcc map[rmaWinKey]*rmaEpoch
	exp     []*rmaEpoch
	acc     []*rmaEpoch
	done    bool
}

// NewStream prepares a one-sided analysis of run.
func NewStream(run *rundir.Run, opt Options) *Stream {
	s := &Stream{opt: opt, size: map[uint64]int{}, kind: map[uint64]string{}, wins: map[uint64]*Window{},
		ranks: map[int32]*Rank{}, ops: map[trace.Op]*OpSummary{}, fences: map[merge.InstanceKey]*fenceInst{},
		openExp: map[rmaWinKey]*rmaEpoch{}, openAcc: map[rmaWinKey]*rmaEpoch{}}
	s.out.WaitAtFence.Pattern = "Wait at Fence"
	s.out.LatePost.Pattern = "Late Post"
	s.out.EarlyWait.Pattern = "Early Wait"
	if run != nil {
		for _, ri := range run.Ranks {
			for _, c := range ri.Meta.Comms {
				s.size[c.ID] = len(c.Members)
				if strings.HasPrefix(c.Kind, "win_") {
					s.kind[c.ID] = c.Kind
				}
			}
		}
	}
	return s
}

func (s *Stream) rank(r int32) *Rank {
	a := s.ranks[r]
	if a == nil {
		a = &Rank{Rank: r}
		s.ranks[r] = a
	}
	return a
}

func (s *Stream) win(id uint64) *Window {
	w := s.wins[id]
	if w == nil {
		w = &Window{ID: id, Kind: s.kind[id], Members: s.size[id]}
		s.wins[id] = w
	}
	return w
}

// Wants reports whether Add looks at events of op (merge.OpFilter):
// one-sided operations only.
func (s *Stream) Wants(op trace.Op) bool { return op.IsRMA() }

// Add consumes one event (a merge.Sink; events of other kinds are ignored).
// MPI_Wait*/MPI_Test* completions of MPI_Rput/MPI_Rget requests are left
// to the point-to-point analysis, which times completion calls.
func (s *Stream) Add(e *datamodel.GEvent) error {
	op := e.Op
	if !op.IsRMA() {
		return nil
	}
	rank := e.Rank
	ra := s.rank(rank)
	d := max(0, e.Exit-e.Enter)
	cont := e.Continuation()
	if !cont {
		s.out.Calls++
		o := s.ops[op]
		if o == nil {
			o = &OpSummary{Op: op.String()}
			s.ops[op] = o
		}
		o.Calls++
		o.TimeNS += d
		o.Sent += e.Sent
		o.Recv += e.Recv
		ra.TimeNS += d
		if op.IsRMASync() {
			ra.SyncNS += d
		}
	}
	w := s.win(e.CommID)
	switch {
	case op.IsRMATransfer():
		if e.Peer < 0 {
			return nil // MPI_PROC_NULL
		}
		s.out.Transfers++
		s.out.Put += e.Sent
		s.out.Got += e.Recv
		w.Transfers++
		w.Put += e.Sent
		w.Got += e.Recv
		ra.Transfers++
		ra.Put += e.Sent
		ra.Got += e.Recv
		s.keep(e)
	case op == trace.OpWinFence:
		s.fence(e, w)
	case op == trace.OpWinLock, op == trace.OpWinUnlock, op == trace.OpWinLockAll, op == trace.OpWinUnlockAll,
		op >= trace.OpWinFlush && op <= trace.OpWinFlushLocalAll:
		ra.LockNS += d
	case op == trace.OpWinPost, op == trace.OpWinStart:
		m := s.openExp
		if op == trace.OpWinStart {
			m = s.openAcc
		}
		k := rmaWinKey{e.CommID, rank}
		ep := m[k]
		if !cont || ep == nil {
			ep = &rmaEpoch{rank: rank, win: e.CommID, open: e.Enter, openX: e.Exit}
			m[k] = ep
			if op == trace.OpWinPost {
				s.exp = append(s.exp, ep)
				s.out.ExposureEpochs++
			} else {
				s.acc = append(s.acc, ep)
				s.out.AccessEpochs++
			}
		}
		if e.Peer >= 0 {
			ep.peers = append(ep.peers, e.Peer)
		}
	case op == trace.OpWinWait, op == trace.OpWinTest && e.Tag == 1, op == trace.OpWinComplete:
		m := s.openExp
		if op == trace.OpWinComplete {
			m = s.openAcc
		}
		k := rmaWinKey{e.CommID, rank}
		if ep := m[k]; ep != nil {
			ep.close, ep.close2, ep.closed = e.Enter, e.Exit, true
			if op == trace.OpWinTest {
				ep.close = e.Exit // a successful test waited for nobody
			}
			delete(m, k)
		}
	}
	return nil
}

func (s *Stream) keep(e *datamodel.GEvent) {
	if len(s.out.List) >= s.opt.KeepTransfers || e.Enter < s.opt.From || (s.opt.To != 0 && e.Enter > s.opt.To) {
		return
	}
	m := datamodel.Message{CommID: e.CommID, SendOp: e.Op, RecvOp: e.Op, SendStart: e.Enter, SendExit: e.Exit,
		RecvEnter: e.Exit, RecvExit: e.Exit}
	if e.Recv > 0 && e.Sent == 0 { // a get: the data flows from the target
		m.Src, m.Dst, m.Bytes = e.Peer, e.Rank, e.Recv
	} else {
		m.Src, m.Dst, m.Bytes = e.Rank, e.Peer, e.Sent
	}
	s.out.List = append(s.out.List, m)
}

func (s *Stream) fence(e *datamodel.GEvent, w *Window) {
	k := merge.InstanceKey{Comm: e.CommID, Seq: e.Seq}
	in := s.fences[k]
	if in == nil {
		in = &fenceInst{enter: map[int32]float64{}, exit: map[int32]float64{}}
		s.fences[k] = in
	}
	in.enter[e.Rank], in.exit[e.Rank] = e.Enter, e.Exit
	if n := s.size[e.CommID]; n > 0 && len(in.enter) >= n {
		s.foldFence(in, w)
		delete(s.fences, k)
	}
}

func (s *Stream) foldFence(in *fenceInst, w *Window) {
	s.out.FenceInstances++
	w.Fences++
	last := 0.0
	first := true
	for _, t := range in.enter {
		if first || t > last {
			last, first = t, false
		}
	}
	for r, t := range in.enter {
		wt := merge.ClampWait(last, t, in.exit[r])
		s.out.WaitAtFence.add(wt)
		s.rank(r).FenceWaitNS += wt
		w.FenceWaitNS += wt
	}
}

// Result finishes the analysis (matches the epochs, folds incomplete
// fences) and returns it. Call it once, after the last Add.
func (s *Stream) Result() *Result {
	if s.done {
		return &s.out
	}
	s.done = true
	s.out.FenceIncomplete = len(s.fences)
	s.matchEpochs()
	for _, o := range s.ops {
		s.out.Ops = append(s.out.Ops, *o)
	}
	sort.Slice(s.out.Ops, func(i, j int) bool { return s.out.Ops[i].TimeNS > s.out.Ops[j].TimeNS })
	for _, w := range s.wins {
		s.out.Windows = append(s.out.Windows, *w)
	}
	sort.Slice(s.out.Windows, func(i, j int) bool { return s.out.Windows[i].ID < s.out.Windows[j].ID })
	for _, r := range s.ranks {
		if r.TimeNS > 0 || r.Transfers > 0 {
			s.out.Ranks = append(s.out.Ranks, *r)
		}
	}
	sort.Slice(s.out.Ranks, func(i, j int) bool { return s.out.Ranks[i].Rank < s.out.Ranks[j].Rank })
	return &s.out
}

// matchEpochs pairs access and exposure epochs per (window, origin,
// target) in order and computes Late Post and Early Wait.
func (s *Stream) matchEpochs() {
	type pair struct {
		win            uint64
		origin, target int32
	}
	expOf := map[pair][]*rmaEpoch{} // exposures of target listing origin
	accOf := map[pair][]*rmaEpoch{} // accesses of origin listing target
	for _, ep := range s.exp {
		for _, o := range ep.peers {
			k := pair{ep.win, o, ep.rank}
			expOf[k] = append(expOf[k], ep)
		}
	}
	for _, ep := range s.acc {
		for _, t := range ep.peers {
			k := pair{ep.win, ep.rank, t}
			accOf[k] = append(accOf[k], ep)
		}
	}
	latestPost := map[*rmaEpoch]float64{}   // access epoch -> latest matched post enter
	lastComplete := map[*rmaEpoch]float64{} // exposure epoch -> latest matched complete enter
	for k, as := range accOf {
		es := expOf[k]
		if len(es) != len(as) {
			s.out.Unmatched += abs(len(es) - len(as))
		}
		for i := 0; i < len(as) && i < len(es); i++ {
			if p, ok := latestPost[as[i]]; !ok || es[i].open > p {
				latestPost[as[i]] = es[i].open
			}
			if as[i].closed {
				if c, ok := lastComplete[es[i]]; !ok || as[i].close > c {
					lastComplete[es[i]] = as[i].close
				}
			}
		}
	}
	for k, es := range expOf {
		if _, ok := accOf[k]; !ok {
			s.out.Unmatched += len(es)
		}
	}
	for _, a := range s.acc {
		p, ok := latestPost[a]
		if !ok {
			continue
		}
		wt := merge.ClampWait(p, a.open, a.openX)
		if a.closed {
			wt += merge.ClampWait(p, a.close, a.close2)
		}
		s.out.LatePost.add(wt)
		s.rank(a.rank).LatePostNS += wt
		s.win(a.win).LatePostNS += wt
	}
	for _, e := range s.exp {
		c, ok := lastComplete[e]
		if !ok || !e.closed {
			continue
		}
		wt := merge.ClampWait(c, e.close, e.close2)
		s.out.EarlyWait.add(wt)
		s.rank(e.rank).EarlyWaitNS += wt
		s.win(e.win).EarlyWaitNS += wt
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
