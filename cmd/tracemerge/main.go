// Command tracemerge turns a gclock run directory (one rank-NNNNN.gct file
// per MPI rank) into answers: which collectives cost time, which ranks
// arrive late and who waits for them, at which call site, and a picture.
//
//	tracemerge DIR -o OUT [options]    analyse and write reports into OUT
//	tracemerge info DIR                summarise a run
//
// Exit codes: 0 ok; 1 usage error; 2 no usable data (nothing written);
// 3 partial data: outputs were written from the intact data but the run has
// problems (missing ranks, damaged chunks, unfinished ranks, incomplete
// instances); 4 the outputs could not be written.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes (documented in usage and docs/explanation/tracemerge.md).
const (
	exitOK      = 0
	exitUsage   = 1
	exitNoData  = 2
	exitPartial = 3
	exitOutput  = 4
)

func main() {
	stop := startProfiles(os.Stderr) // GCLOCK_CPUPROFILE, GCLOCK_MEMPROFILE
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without os.Exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "info":
			return cmdInfo(args[1:], stdout, stderr)
		case "bench-synth": // hidden: peak RSS / throughput measurement
			return cmdBenchSynth(args[1:], stdout, stderr)
		case "help":
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
	}
	return cmdAnalyze(args, stdout, stderr)
}

const usageText = `tracemerge: analyse a gclock MPI trace run

Usage:
  tracemerge DIR -o OUT [options]   analyse the run in DIR, write reports into OUT
  tracemerge info [--clock=MODE] [--json] DIR
                                    summarise a run: ranks, hosts, events per op,
                                    time span, sync epochs, damage
  tracemerge help                   this text
  mpirun -np K tracemerge DIR -o OUT [options]
                                    the same analysis over K processes (Open MPI
                                    or MPICH, loaded at run time): the workers
                                    decode the rank files and, with only
                                    --formats json,txt and K >= 3, analyse a
                                    share of the instances; identical outputs

DIR is one run directory holding rank-NNNNN.gct files (gclock-trace/<job>/).

Outputs in OUT (select with --formats):
  svg       gantt.svg: Gantt chart of all ranks (wait time hatched);
            with --instance also instance-<comm>-<seq>.svg
  html      index.html: self-contained report (tables, histograms, Gantt)
  txt       imbalance.txt: imbalance report
  json      imbalance.json: the full analysis (merge.Analysis), and
            p2p.json: point-to-point messages and waits (docs/explanation/p2p.md),
            and for runs with one-sided calls rma.json (docs/explanation/rma.md)
  csv       events.csv: one row per event: rank,op,comm,seq,root,bytes_sent,
            bytes_recv,local_enter_ns,local_exit_ns,global_enter_ns,
            global_exit_ns,callsite,enter_err_ns,exit_err_ns (global times
            in rank 0's timer, ns; err: the clock's estimated error, ns)
  csvgz     events.csv.gz: the same, gzip-compressed (pandas/polars read it)
  perfetto  trace.pftrace: Perfetto's native protobuf trace (ui.perfetto.dev,
            trace_processor), ns timestamps, one track per rank, message flows
  perfetto-json  trace.json: the legacy Chrome JSON trace, µs timestamps
            (for small runs: the Perfetto UI runs out of memory near 1 GB)
  otf2      otf2/traces.otf2: OTF2 archive for Vampir, Scalasca/Cube and other
            OTF2 readers (needs a build with libotf2: make finds it)
  paraver   trace.prv, trace.pcf, trace.row: Paraver trace (BSC tools)
Default: svg,html,json,txt always, and the per-event exports csv,perfetto
while the run has at most --per-event-limit MPI calls (a note on stderr
says when they were left out and how to get them).
The imbalance report is also printed to stdout (unless -q), whatever the
formats; warnings and problems go to stderr.

Options:
  -o, --out DIR        output directory (created; default "tracemerge-out")
  --clock MODE         interp (default): interpolate each rank's clock offset
                       through its sync epochs (MPI_Init, resyncs, MPI_Finalize);
                       refined: interp moved where the trace's happened-before
                       facts require (one more pass); init: MPI_Init epoch
                       only; raw: no correction
  --from T, --to T     analyse only [T_from, T_to] after the run start
                       (earliest MPI_Init exit); units ns, us, µs, ms, s, m
                       e.g. --from 1.5s --to 2s
  --instance COMM:SEQ  zoom into one collective instance (repeatable or
                       comma-separated): COMM is "world", a comm id (decimal
                       or 0x hex, as printed in the report); writes
                       instance-<comm>-<seq>.svg, raw vs corrected side by side
  --formats LIST       comma-separated subset of svg,html,csv,csvgz,json,
                       perfetto,perfetto-json,otf2,paraver,txt, or all
                       (default svg,html,csv,json,perfetto,txt)
  --per-event-limit N  write the per-event exports (csv, csvgz, perfetto,
                       perfetto-json) only for runs/windows of at most N MPI
                       calls (default 500000 when --formats is not given,
                       no limit when it is; 0: no limit)
  --ranks LIST         Gantt: draw only these ranks, one per lane (e.g. 0-63,100);
                       expands the grouped lanes of a big run
  --ranks-per-lane N   Gantt: ranks grouped per lane (default: one per lane up
                       to 512 ranks, beyond that about 256 lanes; a grouped
                       lane shows its ranks' average)
  --top N              worst instances to list (default 10)
  --no-root-causes     skip the delay and critical-path analysis (docs/explanation/rootcause.md)
  --rendezvous-bytes N standard sends (MPI_Send/Isend) of at least N bytes wait
                       for the receive like MPI_Ssend and count as Late Receiver
                       (default 65536, above common eager limits; 0: only
                       synchronous sends)
  --width PX           Gantt plot width in pixels (default 1200: with labels
                       the chart fits a 1400-px browser window unscaled)
  --debug-dir DIR      extra directory to find executables/libraries for
                       call-site resolution (repeatable)
  -q, --quiet          no report on stdout, no progress bar
  -h, --help           this text

Exit codes:
  0  success
  1  usage error (bad option or argument)
  2  no usable data: empty or unreadable directory, no valid trace file,
     files of different runs mixed (nothing is written), or no event at
     all in the run or the --from/--to window
  3  partial data: outputs were written from the intact data, but ranks are
     missing, chunks damaged, ranks did not finish, or instances are
     incomplete (each problem is listed on stderr and in the reports)
  4  outputs could not be written (OUT not writable, disk full)
`
