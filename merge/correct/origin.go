package correct

import (
	"math"

	"github.com/gclock/gclock/trace"
)

// ReferenceStart is rank's MPI_Init exit startNS (its Header.StartNS, in
// its own timebase) in the reference timebase, rank 0's: as it is for
// rank 0, in raw mode, and for a rank whose epochs give no model;
// otherwise mapped by the rank's clock model in mode (rounded to ns).
// The run's origin of global times is the ReferenceStart of the lowest
// rank that recorded a start (merge.RunOrigin).
func ReferenceStart(mode ClockMode, rank int, startNS int64, epochs []trace.Epoch) int64 {
	if rank == 0 || mode == ClockRaw {
		return startNS
	}
	c, _ := NewCorrector(mode, epochs, 0)
	if c.Mode() == ClockRaw {
		return startNS
	}
	return startNS - int64(math.Round(c.Offset(startNS)))
}

// RawShift is the coarse alignment of a rank's raw timebase (the shift
// NewCorrector takes): ranks whose timebase is seconds away from the
// reference (MPI_Wtime with per-process start points, different hosts'
// monotonic clocks) are shifted so that their MPI_Init exit startNS
// coincides with the reference start refStartNS (Run.FirstStart's);
// closer timebases, and a rank or run without a recorded start, are left
// untouched (0), so raw shows the true raw clock error.
func RawShift(refStartNS, startNS int64) float64 {
	if startNS == 0 || refStartNS == 0 {
		return 0
	}
	if d := refStartNS - startNS; d > 1e9 || d < -1e9 {
		return float64(d)
	}
	return 0
}
