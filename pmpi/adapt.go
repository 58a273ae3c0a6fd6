package main

// Adaptive resync intervals (issue 38 §3, docs/explanation/clocksync.md "Adaptive
// resync"; the policy itself is clocksync/adapt.go). After each resync epoch every rank compares its new knot with
// the straight line through its two previous knots: a miss above
// resyncTolNS means the clock bends faster than the knots follow (a
// frequency step, a fast wander), a miss below a quarter of it that the
// knots could be further apart. The ranks say so in the agreement that
// closes the epoch (one allgather of an int, as before), together with how
// long their epoch took; rank 0 then halves the interval when any rank
// disagreed, lengthens it by half when all were calm, and keeps it between
// GCLOCK_RESYNC/8 and 2·GCLOCK_RESYNC, and never below what keeps the
// resyncs' cost under resyncBudget of the run (the slowest rank's epoch
// time, a running mean, over the interval) unless GCLOCK_RESYNC itself is shorter. Knots stay at agreed collectives as before;
// only the time rank 0 waits between them changes.

import (
	"fmt"
	"strings"

	"github.com/gclock/gclock/clocksync"
)

// resyncAdaptOn reads GCLOCK_RESYNC_ADAPT (default on; 0/off/false: the
// interval stays GCLOCK_RESYNC).
func resyncAdaptOn(getenv func(string) string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv("GCLOCK_RESYNC_ADAPT"))); v {
	case "", "1", "on", "true", "yes":
		return true, nil
	case "0", "off", "false", "no":
		return false, nil
	default:
		return true, fmt.Errorf("GCLOCK_RESYNC_ADAPT=%q: want 1 or 0 (default 1)", v)
	}
}

// encodeAgree packs a rank's part of the closing agreement into one int:
// bit 0 ok, bits 1-2 the verdict, bits 3.. the epoch's duration in µs.
func encodeAgree(ok bool, v clocksync.KnotVerdict, costUS int64) int32 {
	if !ok {
		return 0
	}
	return int32(1 | int64(v)<<1 | min(max(costUS, 0), 1<<27)<<3)
}

// decodeAgree unpacks encodeAgree.
func decodeAgree(x int32) (ok bool, v clocksync.KnotVerdict, costUS int64) {
	return x&1 != 0, clocksync.KnotVerdict(x >> 1 & 3), int64(x >> 3)
}
