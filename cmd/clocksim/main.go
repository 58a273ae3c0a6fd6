// Command clocksim runs clocksync's algorithms on the simulated network of
// clocksync/sim and prints sync duration and clock error per algorithm.
//
//	clocksim -ranks 512 -nodes 32 -alg h2hca,hca3 -seed 1
//
// With -long SECONDS it simulates a long recorded run instead
// (clocksync/sim/longrun: init sync, resyncs at the recorder's adaptive
// intervals, finalize, on random-walk or step + random-walk clocks) and
// prints the error of the corrected timestamps against the truth:
//
//	clocksim -ranks 16384 -nodes 1024 -long 3600 -shape rw -json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/clocksync/sim"
	"github.com/gclock/gclock/clocksync/sim/longrun"
)

type row struct {
	*sim.Report
	Wall float64 `json:"wall_seconds"`
}

func main() {
	ranks := flag.Int("ranks", 64, "number of simulated ranks")
	nodes := flag.Int("nodes", 4, "number of simulated nodes (ranks are placed in blocks)")
	algs := flag.String("alg", "h2hca,hca3,hca2,hca,jk,skampi", "comma-separated algorithms (h2hca, hca3, hca2, hca, jk, skampi, none)")
	seed := flag.Uint64("seed", 1, "simulation seed")
	fit := flag.Int("fitpoints", clocksync.DefaultFitPoints, "fit points per model")
	pp := flag.Int("pingpongs", clocksync.DefaultPingPongs, "ping-pongs per fit point")
	off := flag.String("offset", clocksync.DefaultOffsetAlg, "offset algorithm: skampi or meanrtt")
	recompute := flag.Bool("recompute", false, "recompute intercepts")
	span := flag.Float64("fitspan", 0, "spread each client's fit points over at least this many seconds")
	inter := flag.String("inter", clocksync.DefaultInter, "h2hca inter-node algorithm")
	intra := flag.String("intra", clocksync.DefaultIntra, "h2hca intra-node algorithm")
	asJSON := flag.Bool("json", false, "print JSON lines instead of a table")
	d := sim.DefaultParams(0, 0, 0)
	skew := flag.Float64("skew", d.SkewMax, "node clock skews uniform in ±skew")
	drift := flag.Float64("drift", d.DriftMax, "skew change rate uniform in ±drift per second")
	asym := flag.Float64("asym", d.Asymmetry, "latency asymmetry per direction (fraction)")
	jitter := flag.Float64("jitter", d.InterJitter, "mean exponential inter-node jitter [s] (intra-node: 30 %)")
	outliers := flag.Float64("outliers", d.OutlierProb, "probability of a latency outlier per message")
	long := flag.Float64("long", 0, "simulate a long run of this many seconds with resyncs (clocksync/sim/longrun) instead of one sync")
	shape := flag.String("shape", "rw", "with -long: node clock shape, rw (random walk 0.05 ppm/√s) or step (±1 ppm step + the random walk)")
	resync := flag.Float64("resync", 2, "with -long: GCLOCK_RESYNC, the base resync interval (s)")
	noResync := flag.Bool("noresync", false, "with -long: sync at the start and the end only (the control)")
	flag.Parse()
	if *long > 0 {
		os.Exit(runLong(*ranks, *nodes, *seed, *long, *shape, *resync, *noResync, *asJSON))
	}
	params := func() sim.Params {
		p := sim.DefaultParams(*ranks, *nodes, *seed)
		p.SkewMax, p.DriftMax, p.Asymmetry, p.OutlierProb = *skew, *drift, *asym, *outliers
		p.InterJitter, p.IntraJitter = *jitter, 0.3**jitter
		return p
	}

	var rows []row
	for _, a := range strings.Split(*algs, ",") {
		a = strings.TrimSpace(a)
		cfg := clocksync.DefaultConfig()
		cfg.Algorithm = a
		cfg.FitPoints, cfg.PingPongs, cfg.OffsetAlg, cfg.RecomputeIntercept = *fit, *pp, *off, *recompute
		cfg.FitSpan, cfg.Inter, cfg.Intra = *span, *inter, *intra
		start := time.Now()
		rep, err := sim.RunSync(params(), cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "clocksim: %s: %v\n", a, err)
			os.Exit(1)
		}
		rows = append(rows, row{rep, time.Since(start).Seconds()})
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				fmt.Fprintf(os.Stderr, "clocksim: %v\n", err)
				os.Exit(1)
			}
		}
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "algorithm\tranks\tnodes\tfit\tpp\tduration [s]\tmax|err| 0s [µs]\tmax|err| 10s [µs]\twall [s]\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.4f\t%.3f\t%.3f\t%.2f\t\n", r.Algorithm, r.Ranks, r.Nodes, r.FitPoints, r.PingPongs,
			r.Duration, r.MaxErr0*1e6, r.MaxErr10*1e6, r.Wall)
	}
	tw.Flush()
}

// runLong runs one longrun simulation and prints its result.
func runLong(ranks, nodes int, seed uint64, dur float64, shape string, resync float64, noResync, asJSON bool) int {
	c := longrun.Config{Ranks: ranks, Nodes: nodes, Seed: seed, Duration: dur, Resync: resync, NoResync: noResync}
	switch shape {
	case "rw":
		c.Shape = longrun.RandomWalk
	case "step":
		c.Shape = longrun.StepWander
	default:
		fmt.Fprintf(os.Stderr, "clocksim: -shape %q: want rw or step\n", shape)
		return 2
	}
	r, err := longrun.Run(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "clocksim: %v\n", err)
		return 1
	}
	if asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fmt.Fprintf(os.Stderr, "clocksim: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Printf("%s, %d ranks on %d nodes, %.0f s: %d knots (intervals %.2f-%.2f s); corrected timestamps: max %.3f µs (rank %d at %.1f s), p99 %.3f µs, median %.3f µs, at the knots %.3f µs; %d timestamps; resyncs %.2f ms each (%.3f %% of the run); wall %.1f s simulation + %.1f s correction\n",
		r.Shape, r.Ranks, r.Nodes, dur, r.Knots, r.MinInterval, r.MaxInterval, r.MaxErr*1e6, r.WorstRank, r.WorstT,
		r.P99Err*1e6, r.MedianErr*1e6, r.KnotMaxErr*1e6, r.Samples, r.ResyncVirtual*1e3, r.ResyncShare*100, r.SimWall, r.CorrectWall)
	return 0
}
