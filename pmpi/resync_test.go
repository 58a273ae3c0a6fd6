package main

import (
	"math"
	"testing"
)

// TestNextMeeting_AcrossTheWrap: the next meeting is step instances on,
// but never past the 32-bit counter's wrap (every call until the wrap
// would meet) and never math.MaxUint32 (not armed).
func TestNextMeeting_AcrossTheWrap(t *testing.T) {
	const max32 = math.MaxUint32
	for _, c := range []struct {
		seq  uint32
		step int64
		want uint32
	}{
		{0, 1000, 1000},
		{100, 0, 101}, // at least the next instance
		{max32 - 1000, 500, max32 - 500},
		{max32 - 1000, 999, max32 - 1},
		{max32 - 1000, 1000, max32 - 1}, // would be the sentinel
		{max32 - 1000, 5000, max32 - 1}, // would wrap: just before it
		{max32 - 1, 5000, 4998},         // at the last armable instance: past the wrap
		{max32 - 1, 1, 0},               // the sentinel again: the instance after
		{max32, 1, 0},
		{max32, 7, 6},
	} {
		if got := nextMeeting(c.seq, c.step); got != c.want {
			t.Errorf("nextMeeting(%d, %d) = %d, want %d", c.seq, c.step, got, c.want)
		}
	}
	// walking the instances of one communicator across the wrap: a meeting
	// is due when seq >= next (the shim's compare); few meetings happen
	// around the wrap, and they go on after it
	next, meetings := nextMeeting(max32-10_000, 3000), 0
	seq := uint32(max32 - 10_000)
	for i := 0; i < 20_000; i++ {
		seq++
		if seq >= next {
			meetings++
			next = nextMeeting(seq, 3000)
		}
	}
	if meetings < 5 || meetings > 9 {
		t.Errorf("%d meetings in 20,000 instances across the wrap at a step of 3,000, want 5 to 9", meetings)
	}
}
