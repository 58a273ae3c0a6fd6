package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfiles_WrittenWhereTheEnvironmentSaysOrReportedByFileName: with
// GCLOCK_CPUPROFILE and GCLOCK_MEMPROFILE set, a run of tracemerge leaves
// a gzipped pprof profile in each file (and the heap at its peak in
// FILE.peak); a path that cannot be created is
// reported on stderr by its name and the analysis still runs.
func TestProfiles_WrittenWhereTheEnvironmentSaysOrReportedByFileName(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-such-dir", "p.prof")
	for _, tc := range []struct {
		name, cpu, mem string
		wantFiles      []string
		wantStderr     []string
	}{
		{"both", filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof"), []string{"cpu.prof", "mem.prof", "mem.prof.peak"}, nil},
		{"cpu only", filepath.Join(dir, "cpu2.prof"), "", []string{"cpu2.prof"}, nil},
		{"unwritable paths", bad, bad, nil, []string{"GCLOCK_CPUPROFILE", "GCLOCK_MEMPROFILE", bad}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
				t.Setenv(k, "")
			}
			t.Setenv("GCLOCK_CPUPROFILE", tc.cpu)
			t.Setenv("GCLOCK_MEMPROFILE", tc.mem)
			var stderr, stdout bytes.Buffer
			stop := startProfiles(&stderr)
			if code := run([]string{"help"}, &stdout, &stderr); code != exitOK {
				t.Fatalf("tracemerge help: exit %d", code)
			}
			stop()
			for _, name := range tc.wantFiles {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
					t.Errorf("%s: %d bytes, not a gzipped profile", name, len(b))
				}
			}
			for _, s := range tc.wantStderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr %q does not name %q", stderr.String(), s)
				}
			}
			if tc.wantStderr == nil && stderr.Len() != 0 {
				t.Errorf("stderr: %q", stderr.String())
			}
		})
	}
}

// TestProfilePath_EachProcessOfALaunchedRunGetsItsOwnFile: under Open
// MPI, MPICH or Slurm the profile's path gets the process's rank; alone,
// the path is the variable's.
func TestProfilePath_EachProcessOfALaunchedRunGetsItsOwnFile(t *testing.T) {
	for _, tc := range []struct {
		name, rankVar, rank, want string
	}{
		{"alone", "", "", "p.prof"},
		{"Open MPI", "OMPI_COMM_WORLD_RANK", "3", "p.prof.3"},
		{"MPICH", "PMI_RANK", "0", "p.prof.0"},
		{"Slurm", "SLURM_PROCID", "12", "p.prof.12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
				t.Setenv(k, "")
			}
			if tc.rankVar != "" {
				t.Setenv(tc.rankVar, tc.rank)
			}
			t.Setenv("GCLOCK_CPUPROFILE", "p.prof")
			if got := profilePath("GCLOCK_CPUPROFILE"); got != tc.want {
				t.Errorf("profilePath = %q, want %q", got, tc.want)
			}
		})
	}
}
