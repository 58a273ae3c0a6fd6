package main

import (
	"fmt"
	"os"
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

// clocksyncRun runs clocksync.Sync and its accuracy check (collective).
// intraAuto records syncConfig's automatic intra-node choice in the params.
func clocksyncRun(cfg clocksync.Config, intraAuto bool) func(clocksync.Transport, clocksync.Clock) (*syncOutcome, error) {
	return func(t clocksync.Transport, clk clocksync.Clock) (*syncOutcome, error) {
		res, err := clocksync.Sync(cfg, t, clk)
		if err != nil {
			return nil, err
		}
		out := &syncOutcome{
			Algorithm: res.Algorithm,
			Params:    res.Params,
			SlopeS:    res.Model.Slope,
			Intercept: res.Model.Intercept,
			FitPoints: res.FitPoints,
			PingPongs: res.PingPongs,
			Duration:  time.Duration(res.Duration * 1e9),
			Global:    res.Global,
		}
		if intraAuto && out.Params != nil {
			out.Params["intra_auto"] = intraAutoNote
		}
		for _, m := range res.Chain {
			out.Chain = append(out.Chain, [2]float64{m.Slope, m.Intercept})
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
}
