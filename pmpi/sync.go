package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/clocksync"
)

// builtinSyncName selects the recorder's own SKaMPI-Offset fallback
// (GCLOCK_SYNC=pmpi-skampi-offset) instead of clocksync.Sync; kept as an
// independent cross-check of the clocksync package on real MPI.
const builtinSyncName = fallbackAlgorithm

// intraAutoNote is recorded in an epoch's params ("intra_auto") when the
// intra-node level was switched to hca3 because of the timer.
const intraAutoNote = "hca3 because GCLOCK_TIMER=mpi_wtime (Open MPI's MPI_Wtime starts per process, so ranks of a node do not share it) and GCLOCK_SYNC_INTRA is unset"

// syncConfig reads clocksync's configuration (GCLOCK_SYNC, ...). It
// reports whether the built-in fallback was asked for. timer is the timer
// in use: with mpi_wtime the ranks of one node do not share a time source
// (Open MPI's MPI_Wtime subtracts a start point each process takes), so
// ClockPropSync would be wrong there; unless GCLOCK_SYNC_INTRA says
// otherwise the intra-node level becomes hca3 (intraAuto).
func syncConfig(nodeID int, timer string) (cfg clocksync.Config, builtin, intraAuto bool, err error) {
	cfg, builtin, err = syncConfigEnv(nodeID)
	if err == nil && timer == "mpi_wtime" && strings.TrimSpace(os.Getenv("GCLOCK_SYNC_INTRA")) == "" && cfg.Intra == "clockprop" {
		cfg.Intra = "hca3"
		intraAuto = true
	}
	return cfg, builtin, intraAuto, err
}

func syncConfigEnv(nodeID int) (clocksync.Config, bool, error) {
	builtin := strings.EqualFold(strings.TrimSpace(os.Getenv("GCLOCK_SYNC")), builtinSyncName)
	getenv := os.Getenv
	if builtin {
		getenv = func(k string) string {
			if k == "GCLOCK_SYNC" {
				return ""
			}
			return os.Getenv(k)
		}
	}
	cfg, err := clocksync.ConfigFromEnv(getenv)
	if err != nil {
		return cfg, builtin, fmt.Errorf("clock sync configuration: %w", err)
	}
	cfg.NodeID = nodeID
	return cfg, builtin, nil
}

// Sync retries (GCLOCK_SYNC_RETRY_US): when rank 0's self-check finds a
// residual above the threshold, the whole sync is run again, at most
// syncRetries more times, and the attempt with the smallest largest
// residual is kept. A machine with more busy processes than cores (other
// jobs, or a test suite running beside the ranks) can starve a whole sync
// of co-scheduled ping-pongs; the self-check sees that (docs/explanation/clock-accuracy.md).
const (
	syncRetries          = 2
	defaultSyncRetryUS   = 5.0
	syncRetryEnvVariable = "GCLOCK_SYNC_RETRY_US"
)

// syncRetryThreshold reads GCLOCK_SYNC_RETRY_US (µs; 0 turns retries off).
func syncRetryThreshold(getenv func(string) string) (float64, error) {
	v := strings.TrimSpace(getenv(syncRetryEnvVariable))
	if v == "" {
		return defaultSyncRetryUS * 1e-6, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f != f {
		return 0, fmt.Errorf("%s=%q: want microseconds >= 0 (0: no retries)", syncRetryEnvVariable, v)
	}
	return f * 1e-6, nil
}

// clocksyncRun runs clocksync.Sync and its accuracy check (collective),
// retrying as described above when retryS > 0 (seconds). intraAuto records
// syncConfig's automatic intra-node choice in the params.
func clocksyncRun(cfg clocksync.Config, intraAuto bool, retryS float64) func(clocksync.Transport, clocksync.Clock) (*syncOutcome, error) {
	if strings.EqualFold(cfg.Algorithm, "none") {
		retryS = 0 // nothing to improve by running it again
	}
	return func(t clocksync.Transport, clk clocksync.Clock) (*syncOutcome, error) {
		var outs []*syncOutcome
		var worsts []string
		bestIdx, bestWorst := 0, math.Inf(1)
		for attempt := 0; ; attempt++ {
			out, err := clocksyncOnce(cfg, intraAuto, t, clk)
			if err != nil {
				return nil, err
			}
			outs = append(outs, out)
			// Rank 0 alone has the residuals: it decides for everyone
			// whether to retry and which attempt to keep.
			dec := []int64{0, 0}
			if t.Rank() == 0 {
				worst := 0.0
				for _, r := range out.Check {
					worst = math.Max(worst, math.Abs(r.Offset))
				}
				worsts = append(worsts, strconv.FormatFloat(worst*1e6, 'f', 3, 64))
				if worst < bestWorst {
					bestIdx, bestWorst = attempt, worst
				}
				if retryS > 0 && worst > retryS && attempt < syncRetries {
					dec[0] = 1
				}
				dec[1] = int64(bestIdx)
			}
			v, err := bcastInt64s(t, 0, dec)
			if err != nil {
				return nil, fmt.Errorf("sync retry decision: %w", err)
			}
			if len(v) != 2 || v[1] < 0 || int(v[1]) >= len(outs) {
				return nil, fmt.Errorf("sync retry decision: malformed broadcast %v", v)
			}
			bestIdx = int(v[1])
			if v[0] == 0 {
				break
			}
		}
		best := outs[bestIdx]
		// The end anchor comes last, after the self-check and the retries:
		// the knot is the epoch's end, and the anchor measures there.
		if best.res != nil {
			a0 := time.Now()
			if err := clocksync.EndAnchor(cfg, t, clk, best.res); err != nil {
				return nil, err
			}
			anchorUS := ceilUS(time.Since(a0).Nanoseconds())
			best.fromResult(best.res)
			if best.Params != nil {
				// the first resync's expected cost (adapt.go, armResync)
				best.Params["end_anchor_us"] = strconv.FormatInt(anchorUS, 10)
			}
		}
		if best.Params != nil {
			best.Params["retry_us"] = strconv.FormatFloat(retryS*1e6, 'g', -1, 64)
			best.Params["attempts"] = strconv.Itoa(len(outs))
			best.Params["kept_attempt"] = strconv.Itoa(bestIdx)
			if t.Rank() == 0 && len(worsts) > 1 {
				best.Params["attempt_max_residual_us"] = strings.Join(worsts, ",")
			}
		}
		return best, nil
	}
}

// clocksyncOnce is one clocksync.SyncModels (the fitted models, before
// the end anchor) and its self-check.
func clocksyncOnce(cfg clocksync.Config, intraAuto bool, t clocksync.Transport, clk clocksync.Clock) (*syncOutcome, error) {
	res, err := clocksync.SyncModels(cfg, t, clk)
	if err != nil {
		return nil, err
	}
	out := &syncOutcome{}
	out.fromResult(res)
	if intraAuto && out.Params != nil {
		out.Params["intra_auto"] = intraAutoNote
	}
	rs, err := clocksync.CheckClockAccuracy(t, res.Global, cfg)
	if err != nil {
		return nil, fmt.Errorf("accuracy check: %w", err)
	}
	for _, r := range rs {
		out.Check = append(out.Check, residual{Rank: r.Rank, Offset: r.Offset})
	}
	return out, nil
}

// fromResult fills o from a clocksync result (the models, the clock, the
// params map itself).
func (o *syncOutcome) fromResult(res *clocksync.Result) {
	o.res = res
	o.Algorithm = res.Algorithm
	o.Params = res.Params
	o.SlopeS, o.Intercept = res.Model.Slope, res.Model.Intercept
	o.FitPoints, o.PingPongs = res.FitPoints, res.PingPongs
	o.Duration = time.Duration(res.Duration * 1e9)
	o.Global = res.Global
	o.Anchor = res.Anchor
	o.Chain = o.Chain[:0]
	for _, m := range res.Chain {
		o.Chain = append(o.Chain, [2]float64{m.Slope, m.Intercept})
	}
}

// setKnotNS records in params, next to knot_at_s (the global time, in
// seconds since base0, at which the epoch's sync-path bound holds:
// clocksync.KnotBound), that time on this rank's local clock as
// "knot_ns" (local timer ns), through the epoch's flattened model m
// (offset(x) = m.Slope·x + m.Intercept, x local seconds since base0).
// tracemerge puts the epoch's knot there (correct.NewCorrector): the bound
// is proven at the measurement, and the model's slope error would add
// between it and the epoch's end. Nothing is recorded without a bound,
// or on the reference, whose bound is 0 everywhere.
func setKnotNS(params map[string]string, m clocksync.LinearModel, base0 int64) {
	if params == nil {
		return
	}
	delete(params, "knot_ns")
	at, err := strconv.ParseFloat(params["knot_at_s"], 64)
	b, berr := strconv.ParseFloat(params["bound_ns"], 64)
	if err != nil || berr != nil || !(b > 0) || math.IsInf(at, 0) || math.IsNaN(at) {
		return
	}
	x := m.Local(at)
	if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e9 {
		return
	}
	params["knot_ns"] = strconv.FormatInt(base0+int64(math.Round(x*1e9)), 10)
}
