package thirdparty

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestAMGLike_OutputIdenticalAndCallCountsExact runs the bundled AMG-like
// program (examples/amglike) without and with the recorder. Its stdout must
// be byte-identical, and because its communication is fixed by its
// parameters, the trace must hold exactly the collective instances the
// program makes (ground truth), all matched and within the clock error.
func TestAMGLike_OutputIdenticalAndCallCountsExact(t *testing.T) {
	needPreload(t)
	if _, err := exec.LookPath("mpicc"); err != nil {
		t.Fatalf("mpicc not found on PATH: run `make setup` as root or `sudo apt-get install -y libopenmpi-dev`")
	}
	out, err := exec.Command("make", "-C", filepath.Join(repoRoot, "examples")).CombinedOutput()
	if err != nil {
		t.Fatalf("building examples: %v\n%s", err, out)
	}
	prog := filepath.Join(repoRoot, "examples", "amglike", "amglike")
	const np, iters = 4, 40
	args := []string{"--iters", strconv.Itoa(iters), "--compute-us", "300", "--imbalance", "0.3"}

	plain := mpirun(t, t.TempDir(), 60*time.Second, np, "", prog, args...)
	traceDir := t.TempDir()
	traced := mpirun(t, t.TempDir(), 60*time.Second, np, traceDir, prog, args...)
	if plain.Stdout != traced.Stdout {
		t.Errorf("amglike stdout differs with the preload\nwithout:\n%s\nwith:\n%s", plain.Stdout, traced.Stdout)
	}
	m := regexp.MustCompile(`(?m)^solves (\d+), final`).FindStringSubmatch(plain.Stdout)
	if m == nil {
		t.Fatalf("amglike printed no \"solves N, final\" line:\n%s", plain.Stdout)
	}
	solves, _ := strconv.Atoi(m[1])

	ranks := loadTraces(t, traceDir, np)
	rep := checkTrace(t, ranks)
	t.Logf("amglike trace: %s", rep)
	checkClockQuality(t, ranks, rep)

	// Known call counts on 4 ranks (2 x 2 grid, so 2 row communicators):
	// world Allreduce 3 per PCG iteration + 2 per solve start + 1 checksum,
	// row Allreduce 1 per iteration on each of the 2 rows, one coarse-level
	// Gather and Scatter per V-cycle (one per iteration and per solve start),
	// Barrier 3, Bcast/Allgather/Alltoall 1 each in the setup.
	const rows = 2
	want := map[string]int{
		"MPI_Allreduce": 3*iters + 2*solves + 1 + rows*iters,
		"MPI_Gather":    iters + solves,
		"MPI_Scatter":   iters + solves,
		"MPI_Barrier":   3,
		"MPI_Bcast":     1,
		"MPI_Allgather": 1,
		"MPI_Alltoall":  1,
	}
	if fmt.Sprint(rep.OpInstances) != fmt.Sprint(want) {
		t.Errorf("collective instances recorded %v, the program makes %v", rep.OpInstances, want)
	}
}
