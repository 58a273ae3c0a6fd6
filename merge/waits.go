package merge

import (
	"math"

	"github.com/gclock/gclock/trace"
)

// Wait semantics per collective class (the wait-state patterns of
// Scalasca / Score-P; Geimer et al., "The Scalasca performance toolset
// architecture", 2010, and Böhme et al., "Identifying the root causes of
// wait states", 2010).
//
// A member's wait is the part of its call spent waiting for a member whose
// data it needs and which had not entered yet. Which member that is depends
// on the data flow of the op:
//
//	class          ops                                         wait of member i                      caused by
//	N×N            Barrier, Allreduce, Allgather(v),           last enter − enter_i                  the last entrant
//	               Alltoall(v,w), Reduce_scatter(_block)
//	late broadcast Bcast, Scatter(v) (1 to N)                  non-root: root enter − enter_i        the root
//	                                                           root: 0
//	early reduce   Reduce, Gather(v) (N to 1)                  root: last non-root enter − enter_i   the last non-root
//	                                                           non-root: 0
//	prefix         Scan, Exscan                                max_{j<i} enter_j − enter_i           the latest lower comm rank
//
// Data rule: member i can depend on member j only if j contributes data
// (Sent_j > 0) and i receives data (Recv_i > 0), the byte counts the
// recorder writes per event (docs/explanation/recorder.md, "Byte counts"). With no data
// flowing an MPI library may return at once without waiting for anyone
// (Open MPI does for a count-0 Bcast, Allreduce, Reduce, Gather, Scan...),
// so a member may legitimately leave before the others enter. Concretely:
//
//	N×N            need_i = enter of the last entrant among j ≠ i with Sent_j > 0, only if Recv_i > 0
//	late broadcast non-root i needs the root only if Recv_i > 0 and Sent_root > 0
//	early reduce   the root needs the last non-root j with Sent_j > 0
//	prefix         i needs the latest j < i with Sent_j > 0, only if Recv_i > 0
//
// MPI_Barrier moves no data but synchronises: it is exempt (always N×N).
// The early-reduce root's own Recv is not looked at: the recorder writes
// Recv > 0 at the root whenever a non-root sends (Reduce: count·size,
// in place too; Gather(v): every block but an in-place own one), so the
// senders alone decide and no real dependency can be lost to it. The
// conventions keep MPI_IN_PLACE dependencies: an in-place Allreduce/Scan/
// Reduce input still counts as sent and its result as received, an
// in-place Allgather(v)/Alltoall(v,w) member sends its own block and
// receives the others'. Limitations: Alltoallv/w record only each member's
// totals, not the per-pair flow, so a sparse pattern keeps the N×N rule
// among the members with Sent > 0 / Recv > 0 (i may be taken to need a j
// that sends nothing to i); intercommunicator collectives are recorded as
// 0/0 (and matched within the local group only, whose members exchange no
// data with each other), so they get no waits except Barrier; a datatype
// whose size does not fit an int (MPI_Type_size gives MPI_UNDEFINED) is
// recorded as 0 bytes and so drops the dependency. An instance in which
// no data flows still counts as an instance (calls, time in op) but has
// no waits and no clock-condition violation.
//
// Every wait is clamped to [0, exit_i − enter_i]: nobody waits longer than
// its own call, so wait ≤ time in op always holds.

// WaitClass is how the members of a collective depend on each other.
type WaitClass uint8

// Wait classes.
const (
	WaitNone          WaitClass = iota // not a matched collective
	WaitNxN                            // everyone needs everyone (Synchronizing ops)
	WaitLateBroadcast                  // 1 to N: non-roots need the root
	WaitEarlyReduce                    // N to 1: the root needs every non-root
	WaitPrefix                         // Scan/Exscan: rank i needs ranks 0..i-1
)

// WaitClassOf returns the wait class of op.
func WaitClassOf(op trace.Op) WaitClass {
	switch {
	case op.Synchronizing():
		return WaitNxN
	case op == trace.OpBcast || op == trace.OpScatter || op == trace.OpScatterv:
		return WaitLateBroadcast
	case op == trace.OpReduce || op == trace.OpGather || op == trace.OpGatherv:
		return WaitEarlyReduce
	case op == trace.OpScan || op == trace.OpExscan:
		return WaitPrefix
	}
	return WaitNone
}

// String names the pattern as the report shows it.
func (c WaitClass) String() string {
	switch c {
	case WaitNxN:
		return "wait at N×N"
	case WaitLateBroadcast:
		return "late broadcast"
	case WaitEarlyReduce:
		return "early reduce"
	case WaitPrefix:
		return "wait for lower ranks (scan)"
	}
	return "none"
}

// WaitingFor says what a waiting member of this class waits for (legends).
func (c WaitClass) WaitingFor() string {
	switch c {
	case WaitNxN:
		return "waiting for the last member to enter"
	case WaitLateBroadcast:
		return "waiting for the root to enter"
	case WaitEarlyReduce:
		return "root waiting for the last contributor to enter"
	case WaitPrefix:
		return "waiting for the last lower rank to enter"
	}
	return "waiting"
}

// HasLatency reports whether latency (first exit − last enter) is a
// meaningful, non-negative quantity for the class: only for N×N ops, where
// no member can leave before the last one entered. For rooted ops and scans
// a member may legitimately leave before another enters (a Bcast root with
// an eager protocol), so their "latency" would be negative and is not
// reported.
func (c WaitClass) HasLatency() bool { return c == WaitNxN }

// Flow is the data flow of one instance: the bytes each member sends and
// receives (GEvent.Sent/Recv), parallel to the members. A Flow whose slices
// do not have one entry per member (the zero Flow) is unknown: every member
// is taken to send and receive, the rule without byte counts and the one of
// MPI_Barrier.
type Flow struct {
	Sent, Recv []uint64
}

// FlowOf returns the data flow of an instance of op with the members' byte
// counts: unknown (every member sends and receives) for MPI_Barrier, which
// synchronises without data.
func FlowOf(op trace.Op, sent, recv []uint64) Flow {
	if op == trace.OpBarrier {
		return Flow{}
	}
	return Flow{Sent: sent, Recv: recv}
}

// Zero reports whether the flow is known and no member of n sends or
// receives a byte (a count-0 call).
func (f Flow) Zero(n int) bool {
	if !f.known(n) {
		return false
	}
	for i := 0; i < n; i++ {
		if f.Sent[i] > 0 || f.Recv[i] > 0 {
			return false
		}
	}
	return true
}

func (f Flow) known(n int) bool { return len(f.Sent) == n && len(f.Recv) == n }

// CollectiveNeeds computes, for every member of one instance, the enter
// time of the member it depends on (need[i]) and that member's index
// (cause[i]); need[i] is -Inf and cause[i] -1 when member i depends on
// nobody who could enter after it (the root of a broadcast, the non-roots
// of a reduce, comm rank 0 of a scan) or the dependency is unknown (root
// missing). The slices are parallel and hold the members present, in
// comm-rank order; root is the index of the root among them or -1.
//
// need[i] is what both wait and the clock condition derive from: member i
// waits from its enter until need[i] (clamped to its call), and it cannot
// leave before need[i] — an exit earlier than need[i] is a clock-condition
// violation.
//
// CollectiveNeeds assumes every member sends and receives data; see
// CollectiveNeedsFlow for the data rule.
func CollectiveNeeds(cls WaitClass, root int, enter, need []float64, cause []int) {
	CollectiveNeedsFlow(cls, root, enter, Flow{}, need, cause)
}

// CollectiveNeedsFlow is CollectiveNeeds under the data rule (see the
// table above): member i depends on member j only if j sends data and i
// receives data according to flow (FlowOf; an unknown flow assumes both).
func CollectiveNeedsFlow(cls WaitClass, root int, enter []float64, flow Flow, need []float64, cause []int) {
	n := len(enter)
	for i := 0; i < n; i++ {
		need[i], cause[i] = math.Inf(-1), -1
	}
	known := flow.known(n)
	sends := func(i int) bool { return !known || flow.Sent[i] > 0 }
	recvs := func(i int) bool { return !known || flow.Recv[i] > 0 }
	switch cls {
	case WaitNxN:
		// The last and the second-last entrant among the senders: the
		// last one's own need is the second.
		last, second := -1, -1
		for i := 0; i < n; i++ {
			if !sends(i) {
				continue
			}
			if last < 0 || enter[i] > enter[last] {
				last, second = i, last
			} else if second < 0 || enter[i] > enter[second] {
				second = i
			}
		}
		for i := 0; i < n; i++ {
			c := last
			if i == last {
				c = second
			}
			if c >= 0 && recvs(i) {
				need[i], cause[i] = enter[c], c
			}
		}
	case WaitLateBroadcast:
		if root < 0 || root >= n || !sends(root) {
			return
		}
		for i := 0; i < n; i++ {
			if i != root && recvs(i) {
				need[i], cause[i] = enter[root], root
			}
		}
	case WaitEarlyReduce:
		if root < 0 || root >= n {
			return
		}
		last := -1
		for i := 0; i < n; i++ {
			if i != root && sends(i) && (last < 0 || enter[i] > enter[last]) {
				last = i
			}
		}
		if last >= 0 {
			need[root], cause[root] = enter[last], last
		}
	case WaitPrefix:
		best := -1
		for i := 0; i < n; i++ {
			if best >= 0 && recvs(i) {
				need[i], cause[i] = enter[best], best
			}
			if sends(i) && (best < 0 || enter[i] > enter[best]) {
				best = i
			}
		}
	}
}

// CollectiveWaits computes the wait of every member of one instance and the
// member that caused it (CollectiveNeeds' arguments). wait[i] is
// need[i] − enter[i] clamped to [0, exit[i]−enter[i]]; cause[i] is the
// index of the member that made i wait, -1 when wait[i] is 0. Every
// member is assumed to send and receive data (CollectiveWaitsFlow).
func CollectiveWaits(cls WaitClass, root int, enter, exit, wait []float64, cause []int) {
	CollectiveWaitsFlow(cls, root, enter, exit, Flow{}, wait, cause)
}

// CollectiveWaitsFlow is CollectiveWaits under the data rule.
func CollectiveWaitsFlow(cls WaitClass, root int, enter, exit []float64, flow Flow, wait []float64, cause []int) {
	CollectiveNeedsFlow(cls, root, enter, flow, wait, cause) // wait holds need for now
	waitsFromNeeds(enter, exit, wait, cause)
}

// waitsFromNeeds turns needs (in wait) into clamped waits, in place.
func waitsFromNeeds(enter, exit, wait []float64, cause []int) {
	for i := range enter {
		w := wait[i] - enter[i]
		if d := exit[i] - enter[i]; w > d {
			w = d
		}
		if w > 0 && cause[i] >= 0 {
			wait[i] = w
		} else {
			wait[i], cause[i] = 0, -1
		}
	}
}

// ClockViolation returns by how much the worst member of one instance left
// before the member it depends on entered (max over i of need[i] −
// exit[i]), or 0 when every exit respects the data flow. For N×N ops this
// is DESIGN.md's "last enter − first exit"; for a broadcast a non-root
// cannot leave before the root entered, for a reduce the root not before
// the last contributor entered, for a scan rank i not before every lower
// rank entered. need is scratch of len(enter). Every member is assumed to
// send and receive data (ClockViolationFlow).
func ClockViolation(cls WaitClass, root int, enter, exit, need []float64, cause []int) float64 {
	return ClockViolationFlow(cls, root, enter, exit, Flow{}, need, cause)
}

// ClockViolationFlow is ClockViolation under the data rule: a member that
// receives no data, or whose only possible sources send none, cannot
// violate it.
func ClockViolationFlow(cls WaitClass, root int, enter, exit []float64, flow Flow, need []float64, cause []int) float64 {
	CollectiveNeedsFlow(cls, root, enter, flow, need, cause)
	return violationFromNeeds(exit, need)
}

func violationFromNeeds(exit, need []float64) float64 {
	v := 0.0
	for i := range exit {
		if d := need[i] - exit[i]; d > v {
			v = d
		}
	}
	return v
}

// SynchronizedBy reports whether every member other than last (the last
// entrant) depends on a member that entered at enter[last] or later, given
// their needs: then first exit − last enter is a latency that the clock
// condition keeps non-negative. False when some member receives no data or
// no data reaches it from the last entrant (a count-0 Allreduce).
func SynchronizedBy(last int, enter, need []float64) bool {
	if last < 0 || last >= len(enter) {
		return false
	}
	for i := range need {
		if i != last && need[i] < enter[last] {
			return false
		}
	}
	return true
}

// ClampWait is min(until, exit) - enter, at least 0: the part of a call,
// entered at enter and left at exit, spent waiting for an event at until
// (a wait state capped at the call; merge/rma's Late Post, Early Wait and
// Wait at Fence, the root-cause stream's PSCW waits).
func ClampWait(until, enter, exit float64) float64 {
	return max(0, min(until, exit)-enter)
}

// clampWait is ClampWait under the name rootcause_pscw.go calls.
func clampWait(until, enter, exit float64) float64 { return ClampWait(until, enter, exit) }

// rmaWinKey names one rank's epochs on one window (rootcause_pscw.go).
type rmaWinKey struct {
	win  uint64
	rank int32
}
