package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/internal/launch"
	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// Namespace hosts (docs/explanation/testbed.md): scripts/netns-hosts.sh runs the ranks
// on separate "hosts" of this one machine, each a network and UTS namespace
// with its own hostname, joined by veth links to a bridge; Open MPI talks
// TCP between hosts and shared memory within one. MPI_COMM_TYPE_SHARED then
// splits per host, so H2HCA's hierarchy is the real one (no
// GCLOCK_NODE_SIZE), and the sync's messages between node leaders cross a
// real network stack with its µs of jitter. All hosts still read the
// machine's one CLOCK_MONOTONIC, so the truth is exact: without injection
// the raw local time itself, with GCLOCK_FAKE_CLOCK the injection's
// inverse (measureAccuracy).

// needNetns fails the test when the test bed cannot run here.
func needNetns(t *testing.T) {
	t.Helper()
	needSetup(t)
	if os.Geteuid() != 0 {
		t.Fatal("namespace hosts need root (network and UTS namespaces): run the tests as root, as CI does (`make test`)")
	}
	for _, tool := range []string{"ip", "unshare", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found on PATH: namespace hosts need iproute2 and util-linux (`make test` as root installs them)", tool)
		}
	}
	if out, err := exec.Command("unshare", "--net", "--uts", "true").CombinedOutput(); err != nil {
		t.Fatalf("cannot create network and UTS namespaces here (a container without CAP_SYS_ADMIN?): unshare --net --uts: %v\n%s", err, out)
	}
}

// nsRun is one run on namespace hosts: clockprog with Iters rounds, or
// Prog (in binDir) with Args.
type nsRun struct {
	Hosts, Slots   int
	Fake           string
	Iters, SleepUS int
	Env            []string
	Prog           string
	Args           []string
}

// runNetns runs the program on Hosts × Slots ranks of a fresh test bed
// (`netns-hosts.sh with`, which tears the bed down on exit) and returns
// the traces and their directory.
func runNetns(t *testing.T, nr nsRun) ([]rankTrace, string) {
	t.Helper()
	np := nr.Hosts * nr.Slots
	dir := filepath.Join(t.TempDir(), "tr")
	if keep := os.Getenv("GCLOCK_TEST_KEEP"); keep != "" {
		// keep the traces for a study (issue 38: the knots' and the
		// model's share of the error are split offline)
		d, err := os.MkdirTemp(keep, strings.ReplaceAll(t.Name(), "/", "_")+"-")
		if err != nil {
			t.Fatalf("GCLOCK_TEST_KEEP: %v", err)
		}
		dir = filepath.Join(d, "tr")
		t.Logf("traces kept in %s", dir)
	}
	env := append([]string{"GCLOCK_DIR=" + dir, "LD_PRELOAD=" + libPath}, nr.Env...)
	if nr.Fake != "" {
		env = append(env, "GCLOCK_FAKE_CLOCK="+nr.Fake)
	}
	argv := []string{"bash", filepath.Join(repoRoot, "scripts", "netns-hosts.sh"), "with", strconv.Itoa(nr.Hosts), strconv.Itoa(nr.Slots), "-np", strconv.Itoa(np)}
	for _, kv := range env {
		argv = append(argv, "-x", kv)
	}
	if nr.Prog == "" {
		argv = append(argv, filepath.Join(binDir, "clockprog"), strconv.Itoa(nr.Iters), strconv.Itoa(nr.SleepUS))
	} else {
		argv = append(append(argv, filepath.Join(binDir, nr.Prog)), nr.Args...)
	}
	r := runBed(t, argv)
	if r.Code != 0 {
		t.Fatalf("%s on %d namespace hosts × %d exited %d:\n%s", argv[len(argv)-1], nr.Hosts, nr.Slots, r.Code, r.Stderr)
	}
	checkTornDown(t, bedID(t, r.Stderr))
	traces := readTraces(t, dir, np)
	for rank, rt := range traces {
		if n := len(withoutFlush(rt.Events)); nr.Prog == "" && n != 2*nr.Iters {
			t.Errorf("rank %d: %d MPI events, want %d", rank, n, 2*nr.Iters)
		}
		if _, ok := rt.Meta.Epoch(1); !ok {
			t.Fatalf("rank %d: no sync epoch 1", rank)
		}
	}
	return traces, dir
}

// runBed runs the test bed's `with` command. On a timeout the script gets
// SIGTERM, so its exit trap removes the namespaces and what runs in them
// (after a SIGKILL the next `up` removes the stale bed).
func runBed(t *testing.T, argv []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	cmd.Dir = t.TempDir()
	cmd.Env = mpiBaseEnv()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	release, err := launch.HoldStdin(cmd)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	release()
	res := result{Stdout: so.String(), Stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s: timed out after 90 s\nstderr:\n%s", strings.Join(argv, " "), res.Stderr)
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return res
}

// bedID returns the test bed id `with` reported on stderr.
func bedID(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(l, "netns-hosts: test bed "); ok {
			id, _, _ := strings.Cut(rest, ":")
			return id
		}
	}
	t.Fatalf("netns-hosts.sh did not name its test bed on stderr:\n%s", stderr)
	return ""
}

// checkTornDown asserts that nothing of bed id is left: no namespace, no
// state directory, no process in its namespaces.
func checkTornDown(t *testing.T, id string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	if strings.Contains(string(out), "gclock-"+id+"-") {
		t.Errorf("test bed %s left namespaces behind:\n%s", id, out)
	}
	if _, err := os.Stat(filepath.Join("/run/gclock-netns", id)); err == nil {
		t.Errorf("test bed %s left its state directory /run/gclock-netns/%s", id, id)
	}
}

// checkHosts asserts that MPI saw one host per namespace: Slots
// consecutive ranks (Open MPI's default by-slot mapping) share a hostname
// and the node id MPI_COMM_TYPE_SHARED gave them, and hosts differ.
func checkHosts(t *testing.T, traces []rankTrace, hosts, slots int) {
	t.Helper()
	names := map[string]int{} // hostname -> node id
	for rank, rt := range traces {
		h := rt.Meta.Header
		wantNode := rank / slots
		if h.NodeID != wantNode || h.NodeSize != slots {
			t.Errorf("rank %d on %q: node %d of size %d, want node %d of size %d (MPI_COMM_TYPE_SHARED per namespace host)", rank, h.Host, h.NodeID, h.NodeSize, wantNode, slots)
		}
		if id, ok := names[h.Host]; ok && id != h.NodeID {
			t.Errorf("rank %d: host %q is node %d here and node %d on another rank", rank, h.Host, h.NodeID, id)
		}
		names[h.Host] = h.NodeID
		if h.Inject != nil && h.Inject.NodeSize != 0 {
			t.Errorf("rank %d: injection keyed by GCLOCK_NODE_SIZE=%d, want the real node id", rank, h.Inject.NodeSize)
		}
		for _, e := range rt.Meta.Epochs {
			// More ranks on the machine than CPUs, though each namespace
			// host sees all the CPUs: the timed loops must take turns.
			if want := strconv.FormatBool(len(traces) > numCPU(t)); e.Params["pingpong_token"] != want {
				t.Errorf("rank %d epoch %d: pingpong_token %q, want %s (%d ranks on the machine, %d CPUs)", rank, e.Index, e.Params["pingpong_token"], want, len(traces), numCPU(t))
			}
			// ... and a resync meeting's broadcasts must sleep, not poll
			// (D59): a polling rank took a core from the epoch after it.
			if want := strconv.FormatBool(len(traces) <= numCPU(t)); e.Index == 0 && e.Params["meeting_poll"] != want {
				t.Errorf("rank %d epoch 0: meeting_poll %q, want %s (%d ranks on the machine, %d CPUs)", rank, e.Params["meeting_poll"], want, len(traces), numCPU(t))
			}
		}
	}
	if len(names) != hosts {
		t.Errorf("ranks ran on %d distinct hosts %v, want %d", len(names), names, hosts)
	}
	if slots > 1 && !strings.Contains(traces[0].Meta.Epochs[0].Algorithm, "clockprop") {
		t.Errorf("epoch 0 algorithm %q: want H2HCA with ClockPropSync within the real nodes", traces[0].Meta.Epochs[0].Algorithm)
	}
}

// numCPU is the machine's CPUs online, as the recorder counts them.
func numCPU(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("getconf", "_NPROCESSORS_ONLN").Output()
	if err != nil {
		t.Fatalf("getconf _NPROCESSORS_ONLN: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("getconf _NPROCESSORS_ONLN: %q: %v", out, err)
	}
	return n
}

// clockViolations runs tracemerge's analysis with the default clock mode
// and returns the clock-condition violations it found.
func clockViolations(t *testing.T, dir string) (int, float64) {
	t.Helper()
	run, err := rundir.Load(dir, rundir.OpenTrace)
	if err != nil {
		t.Fatalf("merge.Load(%s): %v", dir, err)
	}
	a, err := merge.Analyze(run, merge.Options{})
	if err != nil {
		t.Fatalf("merge.Analyze: %v", err)
	}
	return a.Analysis.Clock.Violations, a.Analysis.Clock.MaxViolationNS
}

// TestNetns_AccuracyOverTCP: 2 hosts × 2 ranks and 4 hosts × 1 rank, with
// and without injected clocks per host, and 2 hosts × 1 rank (no more
// ranks than CPUs here: the resync meetings poll); every corrected event time must be
// within the bound of the exact truth, and the analysis must find no
// clock-condition violation.
func TestNetns_AccuracyOverTCP(t *testing.T) {
	needNetns(t)
	for _, tc := range []struct {
		hosts, slots int
		fake         string
		boundNS      float64
	}{
		{2, 2, "", 1e3},
		{4, 1, "", 1e3},
		// every rank has a CPU: the resync meetings' broadcasts poll
		// (D59), and the epochs after them must stay as accurate
		{2, 1, "", 1e3},
		{2, 2, fakeSpec, 1e3},
		{4, 1, fakeSpec, 1e3},
	} {
		name := fmt.Sprintf("hosts%d_x%d", tc.hosts, tc.slots)
		if tc.fake != "" {
			name += "_linear"
		}
		t.Run(name, func(t *testing.T) {
			twoTries(t, tc.boundNS, func(t *testing.T, v *verdict) []rankTrace {
				traces, dir := runNetns(t, nsRun{Hosts: tc.hosts, Slots: tc.slots, Fake: tc.fake, Iters: 100, SleepUS: 10000})
				checkHosts(t, traces, tc.hosts, tc.slots)
				if tc.fake != "" {
					// The injection is keyed by the real node id: host i gets pair i mod 2.
					for rank, rt := range traces {
						h := rt.Meta.Header
						want := fakePairs[h.NodeID%len(fakePairs)]
						if h.Inject == nil || h.Inject.OffsetNS != want[0] || h.Inject.DriftPPM != want[1] {
							t.Errorf("rank %d (node %d): injection %+v, want offset %g ns drift %g ppm", rank, h.NodeID, h.Inject, want[0], want[1])
						}
					}
				}
				a := measureAccuracy(t, traces, nil)
				t.Log(a)
				// every knot's true error, so that each run's worst case can
				// be traced to its knot (issue 38: the rank two TCP hops
				// from rank 0)
				t.Logf("knot errors (epoch@s:error/duration/bound ns):\n%s", knotErrors(traces))
				if tc.fake != "" && a.MaxRaw < 1e6 {
					t.Errorf("uncorrected error only %.0f us: the injection did not take effect", a.MaxRaw/1e3)
				}
				if a.MaxInterp > tc.boundNS {
					v.errorf("corrected times off by up to %.3f us (bound %.1f us); worst: %s",
						a.MaxInterp/1e3, tc.boundNS/1e3, worstTimestamp(traces))
				}
				if n, max := clockViolations(t, dir); n != 0 {
					v.errorf("tracemerge finds %d clock-condition violations (max %.0f ns) on the corrected timeline", n, max)
				}
				return traces
			})
		})
	}
}

// verdict collects the failures of one accuracy run that a sync knot
// measured off the truth can cause (twoTries); structural failures go to
// t.Errorf at once.
type verdict struct {
	fails []string
}

func (v *verdict) errorf(format string, args ...any) {
	v.fails = append(v.fails, fmt.Sprintf(format, args...))
}

// twoTries runs one accuracy measurement, and a second one only when the
// first failed on accuracy AND one of its sync knots itself missed the
// exact truth by more than half the bound: the knot's error is the
// measurement of that one sync under the machine's load, and the
// model's slopes at the knots come from the same noisy syncs, so a knot
// half the bound off can carry timestamps between knots past the bound
// (4 ranks on 2 namespace hosts over TCP, 4 ranks on 2 vCPUs: knots
// -0.92 and -0.87 µs off put timestamps 1.08 µs off; the whole test
// failed in 3 of 9 runs on the ninth session's build and 2 of 4 on
// the build before, the failures looked at each with a knot 0.9-1.9 µs
// off, within the knots' recorded sync-path bounds of 9-34 µs, which
// checkSyncBounds checks; 8 oversubscribed ranks at load 11 once took
// 5.7 s to sync and missed 10 µs). Used by the TCP tests
// here and TestAccuracy_InjectedClocksCorrectToTruth. A failure whose knots were all
// within the bound is the model's and fails at once; the second run's
// failures are reported whatever their cause. A knot outside its own
// recorded sync-path bound fails at once (checkSyncBounds reports it
// through t, not through the verdict): the bound holds at the knot
// (docs/explanation/clock-accuracy.md, "Sync-path bounds").
func twoTries(t *testing.T, boundNS float64, try func(t *testing.T, v *verdict) []rankTrace) {
	t.Helper()
	v := &verdict{}
	traces := try(t, v)
	if len(v.fails) > 0 && !t.Failed() {
		if miss, where := worstKnot(traces); miss > boundNS/2 {
			t.Logf("first run: knot %s missed the exact truth by %.3f µs (half the test's bound %.1f µs or more); running once more. Its failures:\n%s",
				where, miss/1e3, boundNS/1e3, strings.Join(v.fails, "\n"))
			v = &verdict{}
			try(t, v)
		}
	}
	for _, f := range v.fails {
		t.Error(f)
	}
}

// worstKnot is the largest true error of any rank's epoch model at its
// knot (correct.KnotTime: the one the interpolation goes through), and which.
func worstKnot(traces []rankTrace) (float64, string) {
	in0 := traces[0].Meta.Header.Inject
	worst, where := 0.0, ""
	for rank, rt := range traces {
		in := rt.Meta.Header.Inject // nil: the timer is the truth (Injection's methods are nil-safe), as in measureAccuracy
		for _, e := range rt.Meta.Epochs {
			kt := correct.KnotTime(e)
			if err := math.Abs(e.Model.Global(kt) - in0.Recorded(in.TrueTime(kt))); err > worst {
				worst, where = err, fmt.Sprintf("rank %d epoch %d", rank, e.Index)
			}
		}
	}
	return worst, where
}

// TestNetns_NonLinearStepOverTCP: odd hosts' clocks change frequency by
// 20 ppm 0.7 s into the run (GCLOCK_FAKE_CLOCK's step term, keyed by the
// real node id), host 0's clock is exact. With the init and finalize
// epochs only, a straight line between them must miss the bend by the
// chord geometry (µs), and the corrected timeline must equal that
// prediction event by event within the bound: what remains is the sync's
// own error over TCP. Resync epochs (docs/explanation/clocksync.md) are what shrink the
// chord error itself.
func TestNetns_NonLinearStepOverTCP(t *testing.T) {
	needNetns(t)
	// The step comes 2.4 s after the injection's anchor (rank 0's timer
	// at start), inside a 4 s loop: the 4-host init sync over TCP took
	// 1.1-1.9 s on the CI VM (2026-11-25; ≈ 0.4 s on earlier machines),
	// where a step at 900 ms, then at 1.8 s, fell inside epoch 0 and left
	// no bend to see. 50 fit points instead of 100 halve the sync; the
	// chord geometry tested here does not depend on them.
	const stepNS = 2.4e9
	const fake = "0:0,1e6:10+step(2400ms,20ppm)"
	// 2 hosts × 1: no more ranks than CPUs here, so the meetings before
	// the resync epochs poll (D59); the epochs must stay as accurate.
	for _, tc := range []struct{ hosts, slots int }{{2, 2}, {4, 1}, {2, 1}} {
		t.Run(fmt.Sprintf("hosts%d_x%d", tc.hosts, tc.slots), func(t *testing.T) {
			traces, dir := runNetns(t, nsRun{Hosts: tc.hosts, Slots: tc.slots, Fake: fake, Iters: 400, SleepUS: 10000,
				Env: []string{"GCLOCK_RESYNC=0", "GCLOCK_FITPOINTS=50"}})
			checkHosts(t, traces, tc.hosts, tc.slots)
			in0 := traces[0].Meta.Header.Inject
			if in0 == nil || len(in0.Terms) != 0 || in0.OffsetNS != 0 || in0.DriftPPM != 0 {
				t.Fatalf("rank 0 (host 0): injection %+v, want the exact pair 0:0", in0)
			}
			worstPred, worstDev := 0.0, 0.0
			for rank, rt := range traces {
				in := rt.Meta.Header.Inject
				if wantTerms := rt.Meta.Header.NodeID % 2; in == nil || len(in.Terms) != wantTerms {
					t.Fatalf("rank %d (node %d): injection %+v, want %d step term(s)", rank, rt.Meta.Header.NodeID, in, wantTerms)
				}
				c, _ := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
				e0, _ := rt.Meta.Epoch(0)
				e1, _ := rt.Meta.Epoch(1)
				t0, t1 := in.TrueTime(e0.EndNS), in.TrueTime(e1.EndNS)
				if step := float64(in.AnchorNS) + stepNS; len(in.Terms) > 0 && (step < t0 || step > in.TrueTime(e1.StartNS)) {
					t.Fatalf("rank %d: the step at %.2f s falls outside the run between the epochs (epoch 0 ends at %.2f s, epoch 1 starts at %.2f s): the test cannot see the bend",
						rank, stepNS/1e9, (t0-float64(in.AnchorNS))/1e9, (in.TrueTime(e1.StartNS)-float64(in.AnchorNS))/1e9)
				}
				x0, x1 := in.Extra(t0), in.Extra(t1)
				for _, ev := range rt.Events {
					for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
						raw := in.TrueTime(ts)
						pred := in.Extra(raw) - (x0 + (x1-x0)*(raw-t0)/(t1-t0))
						err := c.Global(ts) - in0.Recorded(raw)
						worstPred = math.Max(worstPred, math.Abs(pred))
						worstDev = math.Max(worstDev, math.Abs(err-pred))
					}
				}
			}
			t.Logf("chord error up to %.2f µs; corrected minus predicted at most %.3f µs", worstPred/1e3, worstDev/1e3)
			if worstPred < 2e3 {
				t.Errorf("the step bends the clock by only %.2f µs against the chord: the term did not take effect", worstPred/1e3)
			}
			if worstDev > 1e3 {
				t.Errorf("corrected times deviate from the chord geometry by up to %.3f µs (bound 1 µs)", worstDev/1e3)
			}
			// Not asserted: an uncorrected bend of several µs may well
			// break the clock condition across a 10 µs TCP hop.
			n, max := clockViolations(t, dir)
			t.Logf("tracemerge: %d clock-condition violations (max %.0f ns)", n, max)
		})
	}
}

// TestNetns_ResyncHoldsNonLinearClocksOverTCP: odd hosts' clocks carry
// the three non-linear shapes of issue 10 at once (a frequency step, a
// sine wander and a random-walk frequency; the sine's period shortened to
// 4 s so that a 3 s run bends), host 0's clock is exact, and the sync's
// messages cross TCP between namespace hosts. The chord through the init
// and finalize epochs alone (the same trace without its resync epochs)
// must miss by microseconds — else the test proves nothing — while the
// curve through resync knots every 0.25 s (chord error between knots
// about 0.2 µs at most) stays within 2 µs of the exact truth (issue 10's
// goal), and tracemerge finds no clock-condition violation. 2 µs, not
// less: the knots themselves are offsets measured over TCP between
// namespace hosts of a shared 2-vCPU machine, and in repeated runs
// (docs/explanation/clock-accuracy.md) their true errors reached 1.3-1.9
// µs at times within sync-path bounds of 10-45 µs. With a bound of 1.5
// µs the test failed in 2 of 5 runs of the build of 2026-11-29 and in 1
// of 4 of the build before it (hosts2_x2 1.64 then 1.51 µs, hosts4_x1
// above 1.5 µs; the passing runs' maxima 1.0-1.45 µs), while the chord
// through init and finalize alone missed by 7.5-10 µs: 2 µs still fails
// a resync that does not hold, by a factor of four.
func TestNetns_ResyncHoldsNonLinearClocksOverTCP(t *testing.T) {
	needNetns(t)
	const fake = "0:0,1e6:10+step(1s,2ppm)+sin(5us,4s)+rw(1s,0.05ppm,7)"
	// 2 hosts × 1: no more ranks than CPUs here, so the meetings before
	// the resync epochs poll (D59); the epochs must stay as accurate.
	for _, tc := range []struct{ hosts, slots int }{{2, 2}, {4, 1}, {2, 1}} {
		t.Run(fmt.Sprintf("hosts%d_x%d", tc.hosts, tc.slots), func(t *testing.T) {
			const boundNS = 2e3
			twoTries(t, boundNS, func(t *testing.T, v *verdict) []rankTrace {
				traces, dir := runNetns(t, nsRun{Hosts: tc.hosts, Slots: tc.slots, Fake: fake, Iters: 200, SleepUS: 10000,
					Env: []string{"GCLOCK_RESYNC=0.25", "GCLOCK_RESYNC_BUDGET=0"}})
				checkHosts(t, traces, tc.hosts, tc.slots)
				resyncs := 0
				for _, e := range traces[0].Meta.Epochs {
					if e.Params["resync"] != "" {
						resyncs++
					}
				}
				a := measureAccuracy(t, traces, nil)
				if plain, n := withoutCopiedKnots(traces); n > 0 {
					b := measureAccuracy(t, plain, nil)
					t.Logf("%d knots copied from a node leader before the member entered the resync; with them at the epochs' ends instead (as before knot_copied): max %.3f µs", n, b.MaxInterp/1e3)
				}
				chord := chordOnlyError(t, traces)
				t.Logf("%d resync epochs over %.1f s; max |corrected - truth| %.3f µs (p99 %.3f µs); init + finalize only %.2f µs; init only %.2f µs",
					resyncs, a.Span/1e9, a.MaxInterp/1e3, a.P99Interp/1e3, chord/1e3, a.MaxInit/1e3)
				if resyncs < 4 {
					t.Errorf("%d resync epochs in a %.1f s run with GCLOCK_RESYNC=0.25", resyncs, a.Span/1e9)
				}
				checkKnotParams(t, traces)
				dev, gap, chordGap := chordDeviation(t, traces)
				t.Logf("largest gap between knots %.0f ms, where the exact chord misses by up to %.3f µs; corrected minus the chord through the true knots at most %.3f µs", gap/1e6, chordGap/1e3, dev/1e3)
				checkSyncBounds(t, traces, 100)
				t.Logf("worst timestamp: %s; knots' true errors (epoch@knot time:error/duration/bound/offsets,agreeing,spread):\n%s", worstTimestamp(traces), knotErrors(traces))
				if chord < 2e3 {
					t.Errorf("init + finalize alone miss by only %.2f µs: the injected shapes did not bend the clocks", chord/1e3)
				}
				if a.MaxInterp > boundNS {
					v.errorf("corrected times off by up to %.3f µs (bound %.1f µs); worst timestamp: %s; knots' true errors:\n%s", a.MaxInterp/1e3, boundNS/1e3, worstTimestamp(traces), knotErrors(traces))
				}
				if n, max := clockViolations(t, dir); n != 0 {
					v.errorf("tracemerge finds %d clock-condition violations (max %.0f ns) on the corrected timeline", n, max)
				}
				return traces
			})
		})
	}
}

// withoutCopiedKnots returns traces with the knot_copied marks removed
// (tracemerge then puts a node member's knot that precedes its epoch at
// the epoch's end, as before the mark) and how many it removed: the same
// run read both ways.
func withoutCopiedKnots(traces []rankTrace) ([]rankTrace, int) {
	out := make([]rankTrace, len(traces))
	n := 0
	for i, rt := range traces {
		meta := *rt.Meta
		meta.Epochs = append([]trace.Epoch(nil), rt.Meta.Epochs...)
		for j, e := range meta.Epochs {
			if e.Params["knot_copied"] == "" {
				continue
			}
			p := make(map[string]string, len(e.Params))
			for k, v := range e.Params {
				p[k] = v
			}
			delete(p, "knot_copied")
			meta.Epochs[j].Params = p
			n++
		}
		out[i] = rankTrace{Meta: &meta, Events: rt.Events}
	}
	return out, n
}

// checkKnotParams checks the resync epochs' knot params (pmpi/resync.go):
// each rank that measured against a node leader says how many offsets it
// measured and how many agreed, rank 0 measures none; it logs how often
// pairs needed more than one offset.
func checkKnotParams(t *testing.T, traces []rankTrace) {
	t.Helper()
	knots, repeated, offsets := 0, 0, 0
	for rank, rt := range traces {
		for _, e := range rt.Meta.Epochs {
			if e.Params["resync"] == "" || e.Params["knot_offsets"] == "" {
				continue
			}
			n, err1 := strconv.Atoi(e.Params["knot_offsets"])
			k, err2 := strconv.Atoi(e.Params["knot_agree"])
			sp, err3 := strconv.ParseFloat(e.Params["knot_spread_ns"], 64)
			if rank == 0 || err1 != nil || err2 != nil || err3 != nil || k < 1 || k > n || n > clocksync.ResyncRepeats || sp < 0 || sp > 2*clocksync.KnotAgree*1e9 {
				t.Errorf("rank %d epoch %d: knot params %q/%q/%q", rank, e.Index, e.Params["knot_offsets"], e.Params["knot_agree"], e.Params["knot_spread_ns"])
			}
			knots++
			offsets += n
			if n > 1 {
				repeated++
			}
		}
	}
	if knots == 0 {
		t.Errorf("no resync epoch records its knot's offsets")
	}
	t.Logf("resync knots between hosts: %d, %d of them from several offsets (%.1f offsets per knot)", knots, repeated, float64(offsets)/float64(max(knots, 1)))
}

// knotErrors lists every rank's sync epochs with the true error of the
// epoch's model at its knot (correct.KnotTime, the knot the interpolation
// goes through), where the knot lies (s after the rank's first), the
// epoch's duration and its sync-path bound.
func knotErrors(traces []rankTrace) string {
	in0 := traces[0].Meta.Header.Inject
	var b strings.Builder
	for rank, rt := range traces {
		in := rt.Meta.Header.Inject
		fmt.Fprintf(&b, "rank %d:", rank)
		var t0 int64
		for i, e := range rt.Meta.Epochs {
			kt := correct.KnotTime(e)
			if i == 0 {
				t0 = kt
			}
			err := e.Model.Global(kt) - in0.Recorded(in.TrueTime(kt))
			fmt.Fprintf(&b, " %d@%.3fs:%+.3fµs/%.1fms/b%s", e.Index, float64(kt-t0)/1e9, err/1e3, float64(e.EndNS-e.StartNS)/1e6, e.Params["bound_ns"])
			if n := e.Params["knot_offsets"]; n != "" { // offsets/agreeing/spread of the knot's pair
				fmt.Fprintf(&b, "/k%s,%s,%sns", n, e.Params["knot_agree"], e.Params["knot_spread_ns"])
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// worstTimestamp names the event timestamp whose interp correction is
// farthest from the truth: rank, op, and where it lies between the knots.
func worstTimestamp(traces []rankTrace) string {
	in0 := traces[0].Meta.Header.Inject
	worst, what := -1.0, ""
	for rank, rt := range traces {
		in := rt.Meta.Header.Inject
		c, _ := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
		for _, ev := range rt.Events {
			for side, ts := range []int64{ev.EnterNS, ev.ExitNS} {
				e := math.Abs(c.Global(ts) - in0.Recorded(in.TrueTime(ts)))
				if e <= worst {
					continue
				}
				worst = e
				prev, next := "none", "none"
				for _, ep := range rt.Meta.Epochs {
					switch {
					case ep.EndNS <= ts:
						prev = fmt.Sprintf("epoch %d %.1f ms before", ep.Index, float64(ts-ep.EndNS)/1e6)
					case next == "none":
						next = fmt.Sprintf("epoch %d %.1f ms after (it started %.1f ms after)", ep.Index, float64(ep.EndNS-ts)/1e6, float64(ep.StartNS-ts)/1e6)
					}
				}
				what = fmt.Sprintf("rank %d %s %s, %.3f µs off; knots: %s, %s", rank, ev.Op, [2]string{"enter", "exit"}[side], e/1e3, prev, next)
			}
		}
	}
	return what
}

// chordOnlyError is the largest |corrected - truth| of the traces when
// their resync epochs are left out: what GCLOCK_RESYNC=0 would give.
func chordOnlyError(t *testing.T, traces []rankTrace) float64 {
	t.Helper()
	in0 := traces[0].Meta.Header.Inject
	worst := 0.0
	for rank, rt := range traces {
		var ends []trace.Epoch
		for _, e := range rt.Meta.Epochs {
			if e.Params["resync"] == "" {
				ends = append(ends, e)
			}
		}
		c, note := correct.NewCorrector(correct.ClockInterp, ends, 0)
		if c.Mode() != correct.ClockInterp {
			t.Fatalf("rank %d: no chord through init and finalize: %s", rank, note)
		}
		in := rt.Meta.Header.Inject
		for _, ev := range withoutFlush(rt.Events) {
			for _, ts := range []int64{ev.EnterNS, ev.ExitNS} {
				worst = math.Max(worst, math.Abs(c.Global(ts)-in0.Recorded(in.TrueTime(ts))))
			}
		}
	}
	return worst
}

// TestNetns_StaleBedRemoved: a test bed whose script was killed with
// SIGKILL (no trap runs) leaves namespaces and running ranks; the next
// `stale` (also run by every `up`) must remove all of it, and a bed of a
// live owner must survive that.
func TestNetns_StaleBedRemoved(t *testing.T) {
	needNetns(t)
	script := filepath.Join(repoRoot, "scripts", "netns-hosts.sh")
	// A live bed made by hand (owner 0: kept until down) must survive.
	up, err := exec.Command("bash", script, "up", "1").Output()
	if err != nil {
		t.Fatalf("netns-hosts.sh up 1: %v", err)
	}
	keep, ok := strings.CutPrefix(strings.TrimSpace(string(up)), "GCLOCK_NETNS_ID=")
	if !ok {
		t.Fatalf("netns-hosts.sh up printed %q, want GCLOCK_NETNS_ID=<id>", up)
	}
	defer func() {
		if out, err := exec.Command("bash", script, "down", keep).CombinedOutput(); err != nil {
			t.Errorf("netns-hosts.sh down %s: %v\n%s", keep, err, out)
		}
		checkTornDown(t, keep)
	}()

	cmd := exec.Command("bash", script, "with", "2", "1", "-np", "2", "sleep", "60")
	cmd.Env = mpiBaseEnv()
	// stderr goes to a file: a pipe would stay open in the orphaned ranks
	// after the SIGKILL, and cmd.Wait would wait for them.
	sePath := filepath.Join(t.TempDir(), "stderr")
	seFile, err := os.Create(sePath)
	if err != nil {
		t.Fatal(err)
	}
	defer seFile.Close()
	cmd.Stderr = seFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderr := func() string { b, _ := os.ReadFile(sePath); return string(b) }
	// Wait until both ranks run in the bed's namespaces.
	var id string
	var ranks []string // pids of the two sleeping ranks
	deadline := time.Now().Add(30 * time.Second)
	for {
		if id == "" && strings.Contains(stderr(), "test bed ") {
			id = bedID(t, stderr())
		}
		if id != "" {
			ranks = ranks[:0]
			for h := 0; h < 2; h++ {
				out, _ := exec.Command("ip", "netns", "pids", fmt.Sprintf("gclock-%s-h%d", id, h)).Output()
				for _, pid := range strings.Fields(string(out)) {
					if c, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(c)) == "sleep" {
						ranks = append(ranks, pid)
					}
				}
			}
			if len(ranks) == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the ranks did not start within 30 s in bed %q:\n%s", id, stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no trap
	cmd.Wait()
	if out, _ := exec.Command("ip", "netns", "list").Output(); !strings.Contains(string(out), "gclock-"+id+"-h1") {
		t.Fatalf("after SIGKILL bed %s is already gone: nothing tested", id)
	}
	if out, err := exec.Command("bash", script, "stale").CombinedOutput(); err != nil {
		t.Fatalf("netns-hosts.sh stale: %v\n%s", err, out)
	}
	checkTornDown(t, id)
	for _, pid := range ranks {
		// gone, or a zombie waiting for whoever reaps orphans here
		if st, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("rank process %s of the stale bed still runs: %s", pid, st)
		}
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); !strings.Contains(string(out), "gclock-"+keep+"-h0") {
		t.Errorf("stale removed the live bed %s made by up", keep)
	}
}

// TestNetns_P2PClockConditionOverTCP: tests/progs/p2p.c's halo rounds
// (Isend/Irecv/Waitall to both ring neighbours, one rank 5 ms late in one
// round) and a late blocking send, on namespace hosts with injected clocks
// per host: every message must be matched and the corrected timeline must keep the clock
// condition for messages (a receive ends after its send began) and for
// collectives, with messages crossing TCP between hosts and shared memory
// within one.
func TestNetns_P2PClockConditionOverTCP(t *testing.T) {
	needNetns(t)
	needP2P(t)
	// 2 hosts × 1: no more ranks than CPUs here, so the meetings before
	// the resync epochs poll (D59); the epochs must stay as accurate.
	for _, tc := range []struct{ hosts, slots int }{{2, 2}, {4, 1}, {2, 1}} {
		t.Run(fmt.Sprintf("hosts%d_x%d", tc.hosts, tc.slots), func(t *testing.T) {
			traces, dir := runNetns(t, nsRun{Hosts: tc.hosts, Slots: tc.slots, Fake: fakeSpec, Prog: "p2p", Args: []string{t.TempDir(), "late", "5"}})
			checkHosts(t, traces, tc.hosts, tc.slots)
			run, err := rundir.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			an, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: correct.ClockInterp})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d messages, %d p2p clock-condition violations (max %.0f ns)", an.Messages, an.Violations, an.MaxViolationNS)
			np := tc.hosts * tc.slots
			if an.Messages != 5*2*np+1 || an.UnmatchedSends != 0 || an.UnmatchedRecvs != 0 || an.Unresolved != 0 || an.Uncompleted != 0 {
				t.Errorf("messages %d (want %d), unmatched sends %d, receives %d, unresolved %d, uncompleted %d",
					an.Messages, 5*2*np+1, an.UnmatchedSends, an.UnmatchedRecvs, an.Unresolved, an.Uncompleted)
			}
			if an.Violations != 0 {
				t.Errorf("%d point-to-point clock-condition violations (max %.0f ns) on the corrected timeline", an.Violations, an.MaxViolationNS)
			}
			if n, max := clockViolations(t, dir); n != 0 {
				t.Errorf("%d collective clock-condition violations (max %.0f ns) on the corrected timeline", n, max)
			}
			// The check has teeth: the raw timestamps (±5 ms apart) break it.
			raw, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: correct.ClockRaw})
			if err != nil {
				t.Fatal(err)
			}
			if raw.Violations == 0 {
				t.Errorf("raw timestamps keep the clock condition: the injection did not take effect")
			}
		})
	}
}

// checkSyncBounds: every rank's every epoch must carry its sync-path bound
// (Params["bound_ns"], clocksync.SyncBound) and the knot's exact error at
// the knot's time (correct.KnotTime: where the bound was proven, as
// knotErrors computes it) must lie within it, up to slackNS (rounding).
// It logs the largest and median bound of the ranks other than 0.
func checkSyncBounds(t *testing.T, traces []rankTrace, slackNS float64) {
	t.Helper()
	in0 := traces[0].Meta.Header.Inject
	worst, loosest := 0.0, 0.0
	var bounds []float64
	for rank, rt := range traces {
		in := rt.Meta.Header.Inject
		for _, e := range rt.Meta.Epochs {
			b, err := strconv.ParseFloat(e.Params["bound_ns"], 64)
			if err == nil && rank > 0 {
				bounds = append(bounds, b)
			}
			if err != nil || b < 0 {
				t.Errorf("rank %d epoch %d: no sync-path bound recorded (bound_ns %q)", rank, e.Index, e.Params["bound_ns"])
				continue
			}
			kt := correct.KnotTime(e) // where the bound was proven
			kerr := math.Abs(e.Model.Global(kt) - in0.Recorded(in.TrueTime(kt)))
			if kerr > b+slackNS {
				t.Errorf("rank %d epoch %d: knot off by %.3f µs, outside its recorded bound %.3f µs", rank, e.Index, kerr/1e3, b/1e3)
			}
			worst, loosest = math.Max(worst, kerr), math.Max(loosest, b)
		}
	}
	med := math.NaN()
	if len(bounds) > 0 {
		sort.Float64s(bounds)
		med = bounds[len(bounds)/2]
	}
	t.Logf("sync-path bounds: largest %.3f µs, median %.3f µs (ranks > 0); largest knot error %.3f µs", loosest/1e3, med/1e3, worst/1e3)
}
