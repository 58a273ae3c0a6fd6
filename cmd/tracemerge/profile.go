package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts the profiles the environment asks for: a CPU
// profile into the file GCLOCK_CPUPROFILE names, and, when the returned
// stop runs, a heap profile (every allocation since the start, and what
// is in use, "go tool pprof -sample_index=alloc_space") into the file
// GCLOCK_MEMPROFILE names. A profile that cannot be written is reported on
// stderr, naming its file, and left out; the analysis runs on.
//
// Under a launcher (parallel tracemerge) every process writes its own
// files: the path gets the process's rank as a suffix (profilePath).
func startProfiles(stderr io.Writer) (stop func()) {
	var stops []func()
	if path := profilePath("GCLOCK_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err != nil {
			fmt.Fprintf(stderr, "tracemerge: GCLOCK_CPUPROFILE: %v (no CPU profile)\n", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			fmt.Fprintf(stderr, "tracemerge: GCLOCK_CPUPROFILE: %s: %v (no CPU profile)\n", path, err)
		} else {
			stops = append(stops, func() {
				pprof.StopCPUProfile()
				if err := f.Close(); err != nil {
					fmt.Fprintf(stderr, "tracemerge: GCLOCK_CPUPROFILE: %s: %v\n", path, err)
				}
			})
		}
	}
	if path := profilePath("GCLOCK_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 16 << 10 // fine enough for per-rank tables
		peak := startPeakHeap()
		stops = append(stops, func() {
			if err := peak.write(path + ".peak"); err != nil {
				fmt.Fprintf(stderr, "tracemerge: GCLOCK_MEMPROFILE: %v (no profile at the peak)\n", err)
			}
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(stderr, "tracemerge: GCLOCK_MEMPROFILE: %v (no heap profile)\n", err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// writeHeapProfile writes the allocation profile into path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the in-use figures as of the end of the run
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// profilePath is the file the environment variable name gives, with
// ".<rank>" appended when the process runs under a launcher that says
// its rank (Open MPI, MPICH/Hydra, Slurm), so that the processes of a
// parallel run do not write over each other's profiles.
func profilePath(name string) string {
	path := os.Getenv(name)
	if path == "" {
		return ""
	}
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
		if r := os.Getenv(k); r != "" {
			return path + "." + r
		}
	}
	return path
}
