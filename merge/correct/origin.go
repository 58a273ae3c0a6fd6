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
