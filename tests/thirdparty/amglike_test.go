package thirdparty

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/trace"
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
	// Rank 1 (rank % 4 == 1) computes twice as long as the others.
	args := []string{"--iters", strconv.Itoa(iters), "--compute-us", "400", "--imbalance", "1.0"}

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
	checkClockQuality(t, ranks, rep, fakeNodeSize)
	crossCheckMerge(t, ranks, rep)
	p2p := checkP2P(t, ranks)
	t.Logf("point-to-point: %s", p2p)
	crossCheckP2P(t, ranks, p2p, rep)

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

	// The corrected timeline must show who is slow: rank 1, the rank with
	// the extra compute, enters the world MPI_Allreduce last more often than
	// any other rank. (Counted, not summed: one scheduler hiccup of another
	// rank on a loaded machine can outweigh many small waits.)
	lastCount, late := lateness(ranks, trace.CommWorldID, trace.OpAllreduce)
	worst := 0
	for r := range lastCount {
		if lastCount[r] > lastCount[worst] {
			worst = r
		}
	}
	t.Logf("world MPI_Allreduce, corrected clocks: times last per rank %v, waits caused %v ms", lastCount, msList(late))
	if worst != 1 {
		t.Errorf("rank %d, not the slowed-down rank 1, enters MPI_Allreduce last most often: times last per rank %v", worst, lastCount)
	}
}

// lateness counts, per world rank, the instances of op on comm it entered
// last and sums the waits it caused the others, with merge's default clock
// correction.
func lateness(ranks []*rankTrace, comm uint64, op trace.Op) (lastCount []int, late []float64) {
	type arrival struct {
		rank  int
		enter float64
	}
	inst := map[uint32][]arrival{}
	for r, rt := range ranks {
		corr, _ := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
		for _, ev := range rt.Events {
			c, ok := rt.Meta.CommByLocal(ev.Comm)
			if !ok || c.ID != comm || ev.Op != op {
				continue
			}
			inst[ev.Seq] = append(inst[ev.Seq], arrival{r, corr.Global(ev.EnterNS)})
		}
	}
	lastCount, late = make([]int, len(ranks)), make([]float64, len(ranks))
	for _, as := range inst {
		last := as[0]
		for _, a := range as[1:] {
			if a.enter > last.enter {
				last = a
			}
		}
		lastCount[last.rank]++
		for _, a := range as {
			late[last.rank] += last.enter - a.enter
		}
	}
	return lastCount, late
}

func msList(ns []float64) []string {
	out := make([]string, len(ns))
	for i, v := range ns {
		out[i] = strconv.FormatFloat(v/1e6, 'f', 2, 64)
	}
	return out
}
