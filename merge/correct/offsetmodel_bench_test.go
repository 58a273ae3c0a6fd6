package correct

import (
	"testing"

	"github.com/gclock/gclock/trace"
)

// BenchmarkCorrector_HourOfKnotsWithErrorBars: one rank's corrector over
// an hour of knots 2 s apart (1,800), with its error bars built (what
// every rank costs tracemerge's clock summary on such a run).
func BenchmarkCorrector_HourOfKnotsWithErrorBars(b *testing.B) {
	eps := noisyEpochs(10, 1)
	var long []trace.Epoch
	for i := range 1800 {
		e := eps[i%len(eps)]
		e.Index, e.EndNS = i, int64(i)*2e9
		long = append(long, e)
	}
	for b.Loop() {
		c, _ := NewCorrector(ClockInterp, long, 0)
		c.ErrorBar(1e9)
	}
}
