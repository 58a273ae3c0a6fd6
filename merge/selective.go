package merge

import (
	"github.com/gclock/gclock/trace"
)

// SelectiveTracing says what the recorder deliberately left out of the
// trace (docs/reference/settings-details.md, "Selective tracing"): operations excluded
// by GCLOCK_OPS and the intervals in which a rank paused recording with
// MPI_Pcontrol(0). Nil in an Analysis when neither happened. Waits,
// imbalance and message matching only see what was recorded.
type SelectiveTracing struct {
	OpsSpec  string   `json:"ops_spec,omitempty"`  // rank 0's GCLOCK_OPS as set
	OpsError string   `json:"ops_error,omitempty"` // why the recorder ignored it
	Excluded []string `json:"excluded,omitempty"`  // operations not recorded
	// Paused intervals (MPI_Pcontrol(0) ... MPI_Pcontrol(level != 0)).
	PausedRanks int     `json:"paused_ranks"`
	Pauses      int     `json:"pauses"`           // MPI_Pcontrol(0) pauses, summed over ranks
	PausedNS    float64 `json:"paused_ns"`        // summed over ranks
	LongestNS   float64 `json:"longest_pause_ns"` // the longest pause of any rank, ns
	// OpenAtEnd counts pauses never resumed: they last until the rank's
	// last event (nothing after it is in the trace).
	OpenAtEnd int `json:"open_at_end"`
}

// pauseState follows one rank's MPI_Pcontrol events in global time.
type pauseState struct {
	paused    bool
	since     float64
	last      float64 // the rank's latest exit seen
	pauses    int
	total     float64
	longest   float64
	openAtEnd bool
}

// observe takes the rank's next event (in its time order).
func (p *pauseState) observe(ev *GEvent) {
	p.last = max(p.last, ev.Exit)
	if ev.Op != trace.OpPcontrol {
		return
	}
	switch {
	case ev.Root == 0 && !p.paused:
		p.paused, p.since = true, ev.Exit
	case ev.Root != 0 && p.paused:
		p.close(ev.Enter)
	}
}

func (p *pauseState) close(at float64) {
	d := max(0, at-p.since)
	p.paused = false
	p.pauses++
	p.total += d
	p.longest = max(p.longest, d)
}

// finish closes a pause left open at the rank's last event.
func (p *pauseState) finish() {
	if p.paused {
		p.openAtEnd = true
		p.close(p.last)
	}
}

// selectiveTracing builds the summary from rank 0's header configuration
// and every rank's pauses; nil when nothing was left out.
func selectiveTracing(config map[string]string, ranks []*pauseState) *SelectiveTracing {
	s := &SelectiveTracing{OpsSpec: config["GCLOCK_OPS"]}
	if off, err := trace.ParseOpsFilter(s.OpsSpec); err != nil {
		s.OpsError = err.Error()
	} else {
		for _, o := range off {
			s.Excluded = append(s.Excluded, o.String())
		}
	}
	for _, p := range ranks {
		if p == nil {
			continue
		}
		p.finish()
		if p.pauses == 0 {
			continue
		}
		s.PausedRanks++
		s.Pauses += p.pauses
		s.PausedNS += p.total
		s.LongestNS = max(s.LongestNS, p.longest)
		if p.openAtEnd {
			s.OpenAtEnd++
		}
	}
	if len(s.Excluded) == 0 && s.OpsError == "" && s.Pauses == 0 {
		return nil
	}
	return s
}
