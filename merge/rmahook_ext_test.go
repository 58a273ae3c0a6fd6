package merge_test

import (
	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/rma"
	"github.com/gclock/gclock/merge/rundir"
)

// rmaForTest adapts an rma.Stream to merge.RMAForTest.
type rmaForTest struct{ *rma.Stream }

func (s rmaForTest) Result() merge.RMAResultForTest {
	r := s.Stream.Result()
	return merge.RMAResultForTest{LatePost: merge.RMAWaitForTest{TotalNS: r.LatePost.TotalNS},
		EarlyWait: merge.RMAWaitForTest{TotalNS: r.EarlyWait.TotalNS}, All: r}
}

func init() {
	merge.NewRMAForTest = func(run *rundir.Run) merge.RMAForTest {
		return rmaForTest{rma.NewStream(run, rma.Options{})}
	}
}
