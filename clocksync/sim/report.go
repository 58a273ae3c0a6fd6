package sim

import (
	"fmt"
	"math"

	"github.com/gclock/gclock/clocksync"
)

// Report summarises one simulated clocksync.Sync run.
type Report struct {
	Algorithm string
	Ranks     int
	Nodes     int
	FitPoints int
	PingPongs int
	// Duration is the virtual time from the common start (0) to the last
	// rank leaving Sync, in seconds.
	Duration float64
	// MaxErr0 and MaxErr10 are max over ranks of |global clock - reference
	// time| at the end of the sync and 10 s of virtual time later.
	MaxErr0, MaxErr10 float64
	// WorstRank0 and WorstRank10 are the ranks with those errors.
	WorstRank0, WorstRank10 int
	// Results holds every rank's result.
	Results []*clocksync.Result `json:"-"`
}

// RunSync builds a world from p, runs clocksync.Sync(cfg) on every rank
// (cfg.NodeID and cfg.SocketID are set from the simulated placement) and measures the error
// of every rank's global clock exactly from the simulator's truth.
func RunSync(p Params, cfg clocksync.Config) (*Report, error) {
	w := New(p)
	res := make([]*clocksync.Result, p.Ranks)
	err := w.Run(func(r int, t clocksync.Transport, clk *Clock) error {
		c := cfg
		c.NodeID, c.SocketID = w.NodeOf(r), w.NodeOf(r) // one socket per node
		var err error
		res[r], err = clocksync.Sync(c, t, clk)
		return err
	})
	if err != nil {
		return nil, err
	}
	rep := &Report{Ranks: p.Ranks, Nodes: p.Nodes, Results: res, Algorithm: res[0].Algorithm,
		FitPoints: res[0].FitPoints, PingPongs: res[0].PingPongs}
	rep.Duration = w.MaxNow()
	T0 := rep.Duration
	for r, x := range res {
		e0 := math.Abs(w.Error(r, x.Global, T0))
		e10 := math.Abs(w.Error(r, x.Global, T0+10))
		if math.IsNaN(e0) || math.IsNaN(e10) {
			return nil, fmt.Errorf("sim: rank %d: NaN clock error", r)
		}
		if e0 > rep.MaxErr0 {
			rep.MaxErr0, rep.WorstRank0 = e0, r
		}
		if e10 > rep.MaxErr10 {
			rep.MaxErr10, rep.WorstRank10 = e10, r
		}
	}
	return rep, nil
}

// Params returns rank 0's Result.Params.
func (r *Report) Params() map[string]string {
	if len(r.Results) == 0 {
		return nil
	}
	return r.Results[0].Params
}
