package main

// Parallel tracemerge under mpirun (docs/explanation/tracemerge.md "Parallel
// tracemerge"): every process reads, decodes and corrects its share of the
// rank files (process 0 a smaller one, GCLOCK_PAR_SHARE0). Without
// per-event output the collective analysis is partitioned: the processes
// match and measure their share of the instances and process 0 aggregates
// their results in the serial order (merge/part.go). With per-event
// output, processes 1..K-1 hand their events to process 0, which merges
// them with its own, analyses and writes every output (merge/dist.go).
// MPI is loaded at run time (package mpirt), so tracemerge builds without
// MPI.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/mpirt"
)

// launchedRank is this process's rank from the launcher's environment, -1
// when none is set.
func launchedRank() int {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
		if v := os.Getenv(k); v != "" {
			var r int
			if _, err := fmt.Sscan(v, &r); err == nil && r >= 0 {
				return r
			}
		}
	}
	return -1
}

// parallel is a started parallel analysis (nil world: serial).
type parallel struct {
	world  *mpirt.World
	dist   *merge.Dist
	count  *merge.CountingTransport // d.T: bytes sent and received
	stderr io.Writer
}

// abort ends every process of the job (MPI_Abort) after process 0 failed
// in a partitioned pass, where the others wait for its messages.
func (p *parallel) abort(code int) {
	if p == nil || p.world == nil || !p.dist.Parted() {
		return
	}
	p.world.Abort(code)
}

// close stops the workers (process 0), gathers every process's bytes sent
// and received and peak RSS (printed with GCLOCK_PAR_STATS=1) and
// finalizes MPI.
func (p *parallel) close() {
	if p == nil || p.world == nil {
		return
	}
	var all []merge.ProcStats
	err := p.dist.Close()
	if err == nil {
		// The workers stopped serving and each sends its statistics.
		all, err = merge.GatherStats(p.world, 0, p.world.Size, procStats(p.count))
	}
	if os.Getenv("GCLOCK_PAR_STATS") == "1" {
		for _, s := range all {
			fmt.Fprintf(p.stderr, "tracemerge: %v\n", s)
		}
		if err != nil {
			fmt.Fprintf(p.stderr, "tracemerge: warning: %v\n", err)
		}
	}
	_ = p.world.Finalize()
}

// procStats is this process's statistics: what c counted, the peak RSS
// (getrusage, kB on Linux) and the CPU time used so far.
func procStats(c *merge.CountingTransport) merge.ProcStats {
	var s merge.ProcStats
	s.Sent, s.Recv = c.Counts()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.MaxRSSkB = int64(ru.Maxrss)
		s.UserMs = ru.Utime.Nano() / 1e6
		s.SysMs = ru.Stime.Nano() / 1e6
	}
	return s
}

// startParallel joins the MPI job when tracemerge was started by an MPI
// launcher with more than one process. It returns the parallel state for
// process 0 (nil: run serially), or done with the exit code when this
// process has finished (a worker, or a process that must not write).
//
// partition says the partitioned analysis is possible (no per-event
// output); it is used with 3 or more processes, or with 2 when
// GCLOCK_PAR_PARTITION=1 (0: never), and process 0 still ships events
// when the pass does not allow it (merge.Dist.Partition).
func startParallel(dir string, opt merge.Options, mode correct.ClockMode, partition, quiet bool, stderr io.Writer) (p *parallel, code int, done bool) {
	size := mpirt.LaunchedSize()
	tasks, _ := strconv.Atoi(os.Getenv("SLURM_STEP_NUM_TASKS"))
	if size == 0 && tasks > 1 {
		// srun --mpi=none: tasks without a process manager to join.
		if launchedRank() > 0 {
			return nil, exitOK, true
		}
		fmt.Fprintf(stderr, "tracemerge: warning: srun started %d tasks without an MPI process manager (--mpi=none?): analysing serially on task 0 alone (use srun --mpi=pmix or --mpi=pmi2)\n", tasks)
		return nil, 0, false
	}
	if size == 0 || size == 1 {
		return nil, 0, false
	}
	world, err := mpirt.Init("")
	if err != nil {
		// Every process got the same command line: only rank 0 analyses.
		if r := launchedRank(); r > 0 {
			return nil, exitOK, true
		}
		fmt.Fprintf(stderr, "tracemerge: warning: started by an MPI launcher but %v: analysing serially on process 0\n", err)
		return nil, 0, false
	}
	if world.Size <= 1 {
		_ = world.Finalize()
		// Several tasks, each its own world of one (the library did not
		// reach the launcher, e.g. MPICH under srun --mpi=pmix): one
		// serial analysis, not one per task writing the same outputs.
		if tasks > 1 || size > 1 {
			if launchedRank() > 0 {
				return nil, exitOK, true
			}
			fmt.Fprintf(stderr, "tracemerge: warning: started as %d tasks but the MPI library (%s) sees 1 process: analysing serially on task 0 alone (under srun: --mpi=pmix with Open MPI, --mpi=pmi2 with MPICH; GCLOCK_LIBMPI names the library)\n", max(tasks, size), world.Impl)
		}
		return nil, 0, false
	}
	switch v := os.Getenv("GCLOCK_PAR_PARTITION"); v {
	case "0":
		partition = false
	case "1":
	case "":
		// On 2 processes shipping the events was faster on the 2-core
		// test machine (docs/explanation/tracemerge.md "Partitioned analysis").
		partition = partition && world.Size >= 3
	default:
		if world.Rank == 0 {
			fmt.Fprintf(stderr, "tracemerge: warning: GCLOCK_PAR_PARTITION=%q is not 0 or 1: partitioning with 3 or more processes\n", v)
		}
		partition = partition && world.Size >= 3
	}
	count := &merge.CountingTransport{T: world}
	d := &merge.Dist{Procs: world.Size, Me: world.Rank, T: count, Share0: merge.DefaultShare0(world.Size), Partition: partition}
	if partition {
		d.Share0 = merge.DefaultPartShare0(world.Size)
	}
	if v := os.Getenv("GCLOCK_PAR_TEST_FAIL"); v != "" && v == fmt.Sprint(world.Rank) {
		d.FailPart = errors.New("failing on purpose (GCLOCK_PAR_TEST_FAIL)")
	}
	if v := os.Getenv("GCLOCK_PAR_SHARE0"); v != "" && world.Rank == 0 {
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil || f < 0 || f > 1 {
			fmt.Fprintf(stderr, "tracemerge: warning: GCLOCK_PAR_SHARE0=%q is not a number in [0, 1]: using %g\n", v, d.Share0)
		} else {
			d.Share0, d.Share0Fixed = f, true
		}
	}
	if mode == correct.ClockRefined {
		// Several passes whose options depend on the earlier ones: process
		// 0 runs them alone.
		if world.Rank != 0 {
			_ = world.Finalize()
			return nil, exitOK, true
		}
		if !quiet {
			fmt.Fprintf(stderr, "tracemerge: note: --clock refined is analysed by process 0 alone (%d processes started)\n", world.Size)
		}
		_ = world.Finalize()
		return nil, 0, false
	}
	if world.Rank == 0 {
		if !quiet && partition {
			fmt.Fprintf(stderr, "tracemerge: parallel analysis on %d processes (%s): partitioned: all decode a share of the rank files (process 0 a share of %g) and match a share of the collective instances and of the point-to-point messages (by receiving rank), process 0 aggregates in the serial order, analyses one-sided communication and writes\n",
				world.Size, world.Impl, d.Share0)
		} else if !quiet {
			fmt.Fprintf(stderr, "tracemerge: parallel analysis on %d processes (%s): all decode and merge the rank files (process 0 a share of %g), process 0 analyses and writes\n",
				world.Size, world.Impl, d.Share0)
		}
		return &parallel{world: world, dist: d, count: count, stderr: stderr}, 0, false
	}
	code = exitOK
	if err := serveWorker(dir, opt, d); err != nil {
		fmt.Fprintf(stderr, "tracemerge: process %d: %v\n", world.Rank, err)
		code = exitNoData
		if d.Parted() {
			// The others wait for this process's messages: end the job.
			fmt.Fprintf(stderr, "tracemerge: process %d: aborting the parallel analysis\n", world.Rank)
			world.Abort(code)
		}
	}
	// Process 0 waits for every worker's statistics (parallel.close).
	if _, err := merge.GatherStats(world, world.Rank, world.Size, procStats(count)); err != nil {
		fmt.Fprintf(stderr, "tracemerge: process %d: %v\n", world.Rank, err)
	}
	_ = world.Finalize()
	return nil, code, true
}

// serveWorker loads the run as process 0 does and serves its share of the
// rank files until process 0 says stop (again, after a partitioned pass
// that met damaged input).
func serveWorker(dir string, opt merge.Options, d *merge.Dist) error {
	for {
		err := serveOnce(dir, opt, d)
		if !errors.Is(err, merge.ErrPartitionRerun) {
			return err
		}
	}
}

// serveOnce serves one pass.
func serveOnce(dir string, opt merge.Options, d *merge.Dist) error {
	run, err := rundir.Load(dir, nil)
	var pass *merge.Pass
	if err == nil {
		defer run.Close()
		pass, err = merge.Prepare(run, opt)
	}
	if err != nil {
		// Process 0 fails the same way, or, when it could read the run,
		// fails with this reason.
		if serr := merge.ServeNothing(d, err); serr != nil {
			return errors.Join(err, serr)
		}
		return nil
	}
	return pass.Serve(d)
}
