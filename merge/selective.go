package merge

import (
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

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
func (p *pauseState) observe(ev *datamodel.GEvent) {
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
func selectiveTracing(config map[string]string, ranks []*pauseState) *datamodel.SelectiveTracing {
	s := &datamodel.SelectiveTracing{OpsSpec: config["GCLOCK_OPS"]}
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
