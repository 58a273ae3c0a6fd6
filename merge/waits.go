package merge

import "github.com/gclock/gclock/trace"

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

// CollectiveWaits computes the wait of every member of one instance and the
// member that caused it. The slices are parallel and hold the members
// present, in comm-rank order; root is the index of the root among them, or
// -1 when the op has none or the root's event is missing (then rooted
// classes report no wait: it cannot be attributed). wait[i] is clamped to
// [0, exit[i]−enter[i]]; cause[i] is the index of the member that made i
// wait, -1 when wait[i] is 0.
func CollectiveWaits(cls WaitClass, root int, enter, exit, wait []float64, cause []int) {
	n := len(enter)
	for i := 0; i < n; i++ {
		wait[i], cause[i] = 0, -1
	}
	set := func(i, c int, until float64) {
		w := until - enter[i]
		if d := exit[i] - enter[i]; w > d {
			w = d
		}
		if w > 0 && c >= 0 && c != i {
			wait[i], cause[i] = w, c
		}
	}
	switch cls {
	case WaitNxN:
		last := -1
		for i := 0; i < n; i++ {
			if last < 0 || enter[i] > enter[last] {
				last = i
			}
		}
		for i := 0; i < n; i++ {
			set(i, last, enter[last])
		}
	case WaitLateBroadcast:
		if root < 0 || root >= n {
			return
		}
		for i := 0; i < n; i++ {
			if i != root {
				set(i, root, enter[root])
			}
		}
	case WaitEarlyReduce:
		if root < 0 || root >= n {
			return
		}
		last := -1
		for i := 0; i < n; i++ {
			if i != root && (last < 0 || enter[i] > enter[last]) {
				last = i
			}
		}
		if last >= 0 {
			set(root, last, enter[last])
		}
	case WaitPrefix:
		best := -1
		for i := 0; i < n; i++ {
			if best >= 0 {
				set(i, best, enter[best])
			}
			if best < 0 || enter[i] > enter[best] {
				best = i
			}
		}
	}
}
