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
func CollectiveNeeds(cls WaitClass, root int, enter, need []float64, cause []int) {
	n := len(enter)
	for i := 0; i < n; i++ {
		need[i], cause[i] = math.Inf(-1), -1
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
			if i != last {
				need[i], cause[i] = enter[last], last
			}
		}
	case WaitLateBroadcast:
		if root < 0 || root >= n {
			return
		}
		for i := 0; i < n; i++ {
			if i != root {
				need[i], cause[i] = enter[root], root
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
			need[root], cause[root] = enter[last], last
		}
	case WaitPrefix:
		best := -1
		for i := 0; i < n; i++ {
			if best >= 0 {
				need[i], cause[i] = enter[best], best
			}
			if best < 0 || enter[i] > enter[best] {
				best = i
			}
		}
	}
}

// CollectiveWaits computes the wait of every member of one instance and the
// member that caused it (CollectiveNeeds' arguments). wait[i] is
// need[i] − enter[i] clamped to [0, exit[i]−enter[i]]; cause[i] is the
// index of the member that made i wait, -1 when wait[i] is 0.
func CollectiveWaits(cls WaitClass, root int, enter, exit, wait []float64, cause []int) {
	CollectiveNeeds(cls, root, enter, wait, cause) // wait holds need for now
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
// rank entered. need is scratch of len(enter).
func ClockViolation(cls WaitClass, root int, enter, exit, need []float64, cause []int) float64 {
	CollectiveNeeds(cls, root, enter, need, cause)
	v := 0.0
	for i := range enter {
		if d := need[i] - exit[i]; d > v {
			v = d
		}
	}
	return v
}
