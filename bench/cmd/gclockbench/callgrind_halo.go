package main

// Section 10, the goal workload: the instructions libgclock.so executes per
// step of section 9's halo program (2 ranks, both MPIs), split by function,
// so that a change's effect on the program the goal is set on shows as an
// exact count where section 9's wall-time ratio moves by ±0.04 from run to
// run.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// haloCallgrindSteps is how many steps the counted halo runs make (about
// 7 s per MPI under callgrind on the 2-vCPU VM).
const haloCallgrindSteps = 20000

// haloEventsPerStep is what one step of bench/c/halo.c records on a rank:
// two MPI_Irecv, two MPI_Isend, MPI_Waitall's four completions and one
// MPI_Allreduce.
const haloEventsPerStep = 9

func benchCallgrindHalo(c *Config, rep *Report) []Row {
	const sec = "10"
	name := func(mpi string) string {
		return fmt.Sprintf("libgclock.so instructions per halo step, %s (bench/c/halo.c %d 8, 2 ranks: 2 Irecv + 2 Isend + Waitall of the 4 + 8-byte Allreduce, %d events per step)",
			mpi, haloCallgrindSteps, haloEventsPerStep)
	}
	var rows []Row
	halo, err := c.bin("halo")
	if err == nil {
		err = c.libErr()
	}
	if err != nil {
		rows = append(rows, unavailable(sec, name("Open MPI"), err))
	} else {
		rows = append(rows, haloCallgrindRow(c, sec, name("Open MPI"), c.Lib, func(env []string, out string) []string {
			return mpiRun(2, env, "valgrind", "--tool=callgrind", "--callgrind-out-file="+out, halo, fmt.Sprint(haloCallgrindSteps), "8")
		}))
	}
	mp := mpichApps(c, nil)
	if mp.err == nil && mp.prog["halo"] == "" {
		mp.err = errors.New("halo not compiled with MPICH's mpicc")
	}
	if mp.err == nil {
		if _, err := os.Stat(mp.lib); err != nil {
			mp.err = fmt.Errorf("%s not built (make MPI=mpich lib)", rel(c.Root, mp.lib))
		}
	}
	if mp.err != nil {
		return append(rows, unavailable(sec, name("MPICH"), mp.err))
	}
	return append(rows, haloCallgrindRow(c, sec, name("MPICH (build/mpich/libgclock.so)"), mp.lib, func(env []string, out string) []string {
		return mpichRun(2, false, env, "valgrind", "--tool=callgrind", "--callgrind-out-file="+out, mp.prog["halo"], fmt.Sprint(haloCallgrindSteps), "8")
	}))
}

// haloCallgrindRow runs the halo program's two ranks under callgrind with
// lib preloaded and sums libgclock.so's functions per rank and step.
func haloCallgrindRow(c *Config, sec, name, lib string, argv func(env []string, out string) []string) Row {
	dir := c.runDir("callgrind-halo")
	env := []string{"LD_PRELOAD=" + lib, "GCLOCK_DIR=" + dir, "GODEBUG=asyncpreemptoff=1"}
	// %p: one output file per rank (callgrind puts the pid in its name).
	if _, err := runCmd(3*time.Minute, dir, nil, argv(env, filepath.Join(dir, "callgrind.%p.out"))...); err != nil {
		return unavailable(sec, name, err)
	}
	outs, _ := filepath.Glob(filepath.Join(dir, "callgrind.*.out"))
	if len(outs) != 2 {
		return unavailable(sec, name, fmt.Errorf("callgrind wrote %d output files in %s, want one per rank (2)", len(outs), dir))
	}
	per := map[string]float64{}
	for _, o := range outs {
		a, err := runCmd(time.Minute, dir, nil, "callgrind_annotate", "--threshold=100", o)
		if err != nil {
			return unavailable(sec, name, err)
		}
		fs := libCFunctions(a.Stdout, filepath.Base(lib))
		if len(fs) == 0 {
			return unavailable(sec, name, fmt.Errorf("callgrind_annotate lists no C function of %s in %s", rel(c.Root, lib), o))
		}
		for f, v := range fs {
			per[f] += v / float64(len(outs)) / haloCallgrindSteps
		}
	}
	return haloRow(sec, name, per)
}

// haloRow is section 10's row of one halo count: per is instructions per
// rank and step by function.
func haloRow(sec, name string, per map[string]float64) Row {
	total := 0.0
	type fn struct {
		name string
		ir   float64
	}
	var fs []fn
	for n, v := range per {
		total += v
		fs = append(fs, fn{n, v})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].ir > fs[j].ir || (fs[i].ir == fs[j].ir && fs[i].name < fs[j].name) })
	var top []string
	for i := 0; i < len(fs) && i < 6; i++ {
		top = append(top, fmt.Sprintf("%s %s (%s %%)", fs[i].name, num(fs[i].ir), num(100*fs[i].ir/total)))
	}
	return Row{Section: sec, Name: name,
		Value: fmt.Sprintf("%s per step (%s per event)", num(total), num(total/haloEventsPerStep)),
		Notes: fmt.Sprintf("valgrind --tool=callgrind on both ranks, mean of the two; all of the library's C code in the run (wrappers, request table, column split, chunk writer, init and finalize; not the Go runtime, not libmpi, not libzstd); per step, largest: %s. Not exact from run to run: the two ranks' MPI polls differ, and a resync meeting (gclock_resync_point) falls into the run when callgrind runs slowly; the column split's count no longer moves with the load (chunk layout 3 stores timing values in whole bytes, one store each, since format 5.0; before, their varints were longer the slower callgrind ran, ±10 %%)",
			strings.Join(top, ", "))}
}
