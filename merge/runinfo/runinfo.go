// Package runinfo summarises a run without matching (tracemerge info):
// the job, hosts, timer, event counts per op, the sync epochs and each
// rank file's state, from one parallel read of every rank file. It
// imports the loaded run (merge/rundir) and the clock correction
// (merge/correct), not the engine; merge never calls it: cmd/tracemerge
// does.
package runinfo

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"sync"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// Summary summarises a run without matching (tracemerge info).
type Summary struct {
	Dir       string     `json:"dir"`
	JobID     string     `json:"job"`
	WorldSize int        `json:"world_size"`
	Found     int        `json:"rank_files"`
	Missing   []int      `json:"missing_ranks,omitempty"`
	Hosts     []Host     `json:"hosts"`
	Exe       string     `json:"exe"`
	Args      []string   `json:"args,omitempty"`
	MPILib    string     `json:"mpi"`
	Timer     string     `json:"timer"`
	Inject    []string   `json:"inject,omitempty"`
	Events    int64      `json:"events"`
	Calls     int64      `json:"calls"` // MPI calls among Events (trace.Op.Continues)
	OpCounts  []OpCount  `json:"ops"`
	StartNS   float64    `json:"start_ns"` // first global enter
	EndNS     float64    `json:"end_ns"`   // last global exit
	ClockMode string     `json:"clock_mode"`
	Epochs    []Epoch    `json:"epochs"`
	Ranks     []RankFile `json:"ranks"`
	Problems  []string   `json:"problems"`
	// PostMortem: how the run ended when it did not end cleanly
	// (docs/guide/crash-hang.md; package merge/postmortem computes it,
	// merge.Analyze and Summarize leave it nil); omitted when it did.
	PostMortem *datamodel.PostMortem `json:"postmortem,omitempty"`
}

// Host lists the ranks of one host.
type Host struct {
	Host  string  `json:"host"`
	Ranks []int32 `json:"ranks"`
}

// OpCount is the number of events of one op.
type OpCount struct {
	Op     string `json:"op"`
	Events int64  `json:"events"`
}

// Epoch describes one sync epoch across the ranks.
type Epoch struct {
	Index     int     `json:"index"`
	Algorithm string  `json:"algorithm"`
	Ranks     int     `json:"ranks"`           // ranks that recorded it
	MaxDurNS  float64 `json:"max_duration_ns"` // longest EndNS-StartNS
	FitPoints int     `json:"fitpoints"`
	PingPongs int     `json:"pingpongs"`
	// Residuals of the self-check (rank 0's file): max and median |offset|.
	Checked     int               `json:"checked_ranks"`
	CheckMaxNS  float64           `json:"check_max_ns"`
	CheckMedNS  float64           `json:"check_median_ns"`
	Params      map[string]string `json:"params,omitempty"`
	MaxSlopePPM float64           `json:"max_abs_slope_ppm"` // largest |model slope| across ranks
	MaxOffsetNS float64           `json:"max_abs_offset_ns"` // largest |offset| at the epoch's end
}

// RankFile is one rank file's summary.
type RankFile struct {
	Rank   int    `json:"rank"`
	File   string `json:"file"`
	Host   string `json:"host"`
	Events int64  `json:"events"`
	Clean  bool   `json:"clean"` // footer present, no damage, recorded to the end
	// Stopped: the footer says recording stopped early (Footer.Reason
	// "error": a write failed, the file size limit).
	Stopped bool `json:"stopped,omitempty"`
}

// Summarize reads every event once (in parallel, without merging) and
// summarises the run.
func Summarize(run *rundir.Run, mode correct.ClockMode) (*Summary, error) {
	if run == nil || len(run.Ranks) == 0 {
		return nil, &rundir.LoadError{Kind: rundir.ErrNoData, Msg: "no rank files to summarise"}
	}
	info := &Summary{Dir: run.Dir, JobID: run.JobID, WorldSize: run.WorldSize, Found: len(run.Ranks),
		Missing: run.Missing, ClockMode: mode.String(), Problems: append([]string(nil), run.Problems...)}
	h0 := &run.Ranks[0].Meta.Header
	info.Exe, info.Args, info.MPILib, info.Timer = h0.Exe, h0.Args, h0.MPILib, h0.Timer.Name
	hosts := map[string][]int32{}
	seenSpec := map[string]bool{}
	for _, ri := range run.Ranks {
		h := &ri.Meta.Header
		hosts[h.Host] = append(hosts[h.Host], int32(ri.Rank))
		if h.Inject != nil && !seenSpec[h.Inject.Spec] {
			seenSpec[h.Inject.Spec] = true
			info.Inject = append(info.Inject, h.Inject.Spec)
		}
	}
	for h, rs := range hosts {
		info.Hosts = append(info.Hosts, Host{Host: h, Ranks: rs})
	}
	sort.Slice(info.Hosts, func(i, j int) bool { return info.Hosts[i].Ranks[0] < info.Hosts[j].Ranks[0] })

	type res struct {
		ops      [256]int64
		n, calls int64
		lo, hi   float64
		err      error
		fallback string
	}
	out := make([]res, len(run.Ranks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, ri := range run.Ranks {
		wg.Add(1)
		go func(i int, ri *rundir.RankInput) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &out[i]
			defer func() {
				if e := recover(); e != nil {
					r.err = fmt.Errorf("reader failed: %v", e)
				}
			}()
			corr, note := correct.NewCorrector(mode, ri.Meta.Epochs, 0)
			r.fallback = note
			r.lo, r.hi = math.Inf(1), math.Inf(-1)
			var buf []trace.Event
			for {
				var err error
				buf, err = ri.Src.NextChunk(buf[:0])
				if err != nil {
					if !errors.Is(err, io.EOF) {
						r.err = err
					}
					return
				}
				for k := range buf {
					e := &buf[k]
					if int(e.Op) < len(r.ops) {
						r.ops[e.Op]++
					}
					if !e.Op.Continues(e.Seq) {
						r.calls++
					}
					if g := corr.Global(e.EnterNS); g < r.lo {
						r.lo = g
					}
					if g := corr.Global(e.ExitNS); g > r.hi {
						r.hi = g
					}
				}
				r.n += int64(len(buf))
			}
		}(i, ri)
	}
	wg.Wait()
	var ops [256]int64
	info.StartNS, info.EndNS = math.Inf(1), math.Inf(-1)
	for i, ri := range run.Ranks {
		r := &out[i]
		name := filepath.Base(ri.Path)
		for k, v := range r.ops {
			ops[k] += v
		}
		info.Events += r.n
		info.Calls += r.calls
		info.StartNS = min(info.StartNS, r.lo)
		info.EndNS = max(info.EndNS, r.hi)
		if r.err != nil {
			info.Problems = append(info.Problems, fmt.Sprintf("%s: reading stopped early: %v", name, r.err))
		}
		m := ri.Src.Meta()
		info.Problems = append(info.Problems, ri.LateDamage()...)
		stopped := m != nil && m.Footer != nil && m.Footer.Reason == "error"
		clean := m != nil && m.Footer != nil && len(m.Damage) == 0 && !stopped
		info.Ranks = append(info.Ranks, RankFile{Rank: ri.Rank, File: name, Host: ri.Meta.Header.Host, Events: r.n,
			Clean: clean, Stopped: stopped})
	}
	if info.Events == 0 {
		info.StartNS, info.EndNS = 0, 0
	}
	for k, v := range ops {
		if v > 0 {
			info.OpCounts = append(info.OpCounts, OpCount{Op: trace.Op(k).String(), Events: v})
		}
	}
	sort.SliceStable(info.OpCounts, func(i, j int) bool { return info.OpCounts[i].Events > info.OpCounts[j].Events })
	info.Epochs = epochs(run)
	if info.Problems == nil {
		info.Problems = []string{}
	}
	return info, nil
}

// epochs gathers each epoch across ranks; residuals come from rank 0.
func epochs(run *rundir.Run) []Epoch {
	byIdx := map[int]*Epoch{}
	var idxs []int
	for _, ri := range run.Ranks {
		for _, e := range ri.Meta.Epochs {
			ei := byIdx[e.Index]
			if ei == nil {
				ei = &Epoch{Index: e.Index, Algorithm: e.Algorithm, Params: e.Params}
				byIdx[e.Index] = ei
				idxs = append(idxs, e.Index)
			}
			ei.Ranks++
			if d := float64(e.EndNS - e.StartNS); d > ei.MaxDurNS {
				ei.MaxDurNS = d
			}
			if e.FitPoints > ei.FitPoints {
				ei.FitPoints = e.FitPoints
			}
			if e.PingPongs > ei.PingPongs {
				ei.PingPongs = e.PingPongs
			}
			ei.MaxSlopePPM = max(ei.MaxSlopePPM, math.Abs(e.Model.Slope)*1e6)
			ei.MaxOffsetNS = max(ei.MaxOffsetNS, math.Abs(e.Model.Offset(e.EndNS)))
			if len(e.Check) > 0 {
				var v []float64
				for _, c := range e.Check {
					v = append(v, math.Abs(c.OffsetNS))
				}
				sort.Float64s(v)
				ei.Checked = len(v)
				ei.CheckMaxNS = v[len(v)-1]
				ei.CheckMedNS = v[len(v)/2]
				if len(v)%2 == 0 {
					ei.CheckMedNS = (v[len(v)/2-1] + v[len(v)/2]) / 2
				}
			}
		}
	}
	sort.Ints(idxs)
	out := make([]Epoch, 0, len(idxs))
	for _, i := range idxs {
		out = append(out, *byIdx[i])
	}
	return out
}
