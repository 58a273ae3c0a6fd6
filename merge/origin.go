package merge

import (
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
)

// RunOrigin is the origin of a run's global times: rank 0's MPI_Init exit
// (Header.StartNS) in its own timebase, which is the reference timebase;
// when rank 0 is missing, the lowest rank's StartNS mapped to the reference
// timebase by its clock model (rounded to ns); 0 when no rank recorded a
// start. Global times relative to it keep sub-ns precision in float64;
// absolute times are RunOrigin + round(relative), exactly, in int64.
func RunOrigin(run *rundir.Run, mode correct.ClockMode) int64 {
	ri := run.FirstStart()
	if ri == nil {
		return 0
	}
	return correct.ReferenceStart(mode, ri.Rank, ri.Meta.Header.StartNS, ri.Meta.Epochs)
}
