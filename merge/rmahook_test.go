package merge

import (
	"encoding/json"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// The one-sided analysis lives in merge/rma, which imports merge, so
// merge's own tests cannot import it. They reach it through the names
// below, which keep the calls of the tests written before the move
// (NewRMAStream(run, RMAOptions{}), Result().LatePost.TotalNS,
// json.Marshal(Result())); NewRMAForTest is set by rmahook_ext_test.go
// (package merge_test, compiled into the same test binary) to
// rma.NewStream.

// RMAWaitForTest is one wait pattern's total, as merge's tests compare it.
type RMAWaitForTest struct{ TotalNS float64 }

// RMAResultForTest is what merge's tests read of an rma.Result: the Late
// Post and Early Wait totals; it marshals as the whole rma.Result (All).
type RMAResultForTest struct {
	LatePost, EarlyWait RMAWaitForTest
	All                 any // the *rma.Result
}

// MarshalJSON writes the whole rma.Result.
func (r RMAResultForTest) MarshalJSON() ([]byte, error) { return json.Marshal(r.All) }

// RMAForTest is an rma.Stream as merge's tests use it: a sink of the pass.
type RMAForTest interface {
	Add(e *datamodel.GEvent) error
	Wants(op trace.Op) bool
	Result() RMAResultForTest
}

// NewRMAForTest makes the one-sided analysis of run (rma.NewStream with
// default options); set by rmahook_ext_test.go.
var NewRMAForTest func(run *rundir.Run) RMAForTest

// RMAOptions stands for rma.Options{} in merge's tests.
type RMAOptions struct{}

// RMAStream is the one-sided analysis in merge's tests.
type RMAStream struct{ RMAForTest }

// NewRMAStream is rma.NewStream(run, rma.Options{}) for merge's tests.
func NewRMAStream(run *rundir.Run, _ RMAOptions) *RMAStream {
	if NewRMAForTest == nil {
		panic("merge tests: NewRMAForTest is unset: rmahook_ext_test.go (package merge_test) sets it to rma.NewStream")
	}
	return &RMAStream{NewRMAForTest(run)}
}
