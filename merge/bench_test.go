package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchRun generates (once per test binary) a synthetic run of 8 ranks x
// 250k events for the benchmarks. The run is kept between test binaries
// in the temporary directory; it is generated beside it and renamed into
// place, so two benchmark binaries started together never read or remove
// each other's half-written files: the second rename fails and its copy
// is dropped.
func benchRun(b *testing.B) string {
	benchOnce.Do(func() {
		d := filepath.Join(os.TempDir(), "gclock-merge-bench-v1")
		if m, _ := filepath.Glob(filepath.Join(d, "*.gct")); len(m) == 8 {
			benchDir = d
			return
		}
		tmp, err := os.MkdirTemp(os.TempDir(), "gclock-merge-bench-gen-")
		if err != nil {
			benchErr = err
			return
		}
		defer os.RemoveAll(tmp)
		if _, benchErr = synth.Generate(tmp, synth.Config{Ranks: 8, Steps: 250_000, Seed: 3}); benchErr != nil {
			return
		}
		if m, _ := filepath.Glob(filepath.Join(d, "*.gct")); len(m) != 8 {
			os.RemoveAll(d) // a run of an older layout or an interrupted one
		}
		if err := os.Rename(tmp, d); err != nil {
			if m, _ := filepath.Glob(filepath.Join(d, "*.gct")); len(m) != 8 {
				benchErr = fmt.Errorf("benchmark run: %w", err)
				return
			}
		}
		benchDir = d
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// BenchmarkAnalyze measures load + correct + merge + match + metrics on
// files (no sinks), reported as events/s.
func BenchmarkAnalyze(b *testing.B) {
	dir := benchRun(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	var events int
	for i := 0; i < b.N; i++ {
		run, err := rundir.Load(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Analyze(run, Options{})
		if err != nil {
			b.Fatal(err)
		}
		run.Close()
		events += res.Analysis.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric((cpuTime()-cpu0)*1e9/float64(events), "cpu-ns/event")
}

// BenchmarkAnalyzeMem is BenchmarkAnalyze without decoding: events come
// from memory, so it measures merge's own cost.
func BenchmarkAnalyzeMem(b *testing.B) {
	dir := benchRun(b)
	run, err := rundir.Load(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	var srcs []*rundir.MemSource
	for _, ri := range run.Ranks {
		var evs []trace.Event
		for {
			chunk, err := ri.Src.NextChunk(nil)
			if err != nil {
				break
			}
			evs = append(evs, chunk...)
		}
		ms := &rundir.MemSource{M: *ri.Meta, Events: evs, ChunkSize: 8192}
		srcs = append(srcs, ms)
		ri.Src = ms
	}
	b.ResetTimer()
	var events int
	for i := 0; i < b.N; i++ {
		for _, s := range srcs {
			s.Rewind()
		}
		res, err := Analyze(run, Options{})
		if err != nil {
			b.Fatal(err)
		}
		events += res.Analysis.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// cpuTime is this process's user+system CPU time in seconds: with other
// load on the machine, CPU per event is the stable measure.
func cpuTime() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkKWayMerge measures the streaming merge alone: k in-memory ranks
// of point-to-point-like events (not matched), no sinks.
func BenchmarkKWayMerge(b *testing.B) {
	for _, k := range []int{8, 64, 512, 16384} {
		b.Run(fmt.Sprintf("ranks=%d", k), func(b *testing.B) {
			const total = 1 << 21
			per := total / k
			run := &rundir.Run{Dir: "mem", JobID: "mem", WorldSize: k}
			var srcs []*rundir.MemSource
			for r := 0; r < k; r++ {
				evs := make([]trace.Event, per)
				for i := range evs {
					t := int64(i)*1000 + int64((r*7919)%1000)
					evs[i] = trace.Event{Op: trace.OpUnknown, EnterNS: t, ExitNS: t + 10}
				}
				s := &rundir.MemSource{M: rundir.RankMeta{Header: trace.Header{Rank: r, WorldSize: k}}, Events: evs, ChunkSize: 8192}
				srcs = append(srcs, s)
				run.Ranks = append(run.Ranks, &rundir.RankInput{Path: "mem", Rank: r, Meta: s.Meta(), Src: s})
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			n := 0
			for i := 0; i < b.N; i++ {
				for _, s := range srcs {
					s.Rewind()
				}
				res, err := Analyze(run, Options{Clock: correct.ClockRaw})
				if err != nil {
					b.Fatal(err)
				}
				n += res.Analysis.Events
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric((cpuTime()-cpu0)*1e9/float64(n), "cpu-ns/event")
		})
	}
}

// BenchmarkCorrect measures one timestamp correction.
func BenchmarkCorrect(b *testing.B) {
	e0 := trace.Epoch{Index: 0, EndNS: 1e9, Model: trace.Model{T0: 1e9, Slope: 1e-6, Intercept: 1000}}
	e1 := trace.Epoch{Index: 1, EndNS: 1e12, Model: trace.Model{T0: 1e12, Slope: 3e-6, Intercept: 5000}}
	for _, mode := range []correct.ClockMode{correct.ClockInterp, correct.ClockInit, correct.ClockRaw} {
		b.Run(mode.String(), func(b *testing.B) {
			c, _ := correct.NewCorrector(mode, []trace.Epoch{e0, e1}, 0)
			var sink float64
			for i := 0; i < b.N; i++ {
				sink += c.Global(int64(i) * 997)
			}
			if sink == 1 {
				b.Log(sink)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "timestamps/s")
		})
	}
}
