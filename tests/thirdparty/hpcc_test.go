package thirdparty

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

const hpccRanks = 4

// needHPCC returns the hpcc binary, installing Debian's hpcc package when
// running as root, and fails the test with the exact command otherwise.
func needHPCC(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("hpcc"); err == nil {
		return p
	}
	const cmd = "apt-get install -y --no-install-recommends hpcc"
	if os.Geteuid() != 0 {
		t.Fatalf("hpcc (Debian package hpcc) is not installed; run: sudo %s", cmd)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Fatalf("hpcc is not installed and apt-get is missing; install the HPC Challenge benchmark (Debian package hpcc) by hand")
	}
	t.Logf("installing hpcc: apt-get update && %s", cmd)
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "--no-install-recommends", "hpcc"}} {
		c := exec.Command("apt-get", args...)
		c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("apt-get %s failed: %v\n%s\nrun: %s", strings.Join(args, " "), err, tail(string(out), 20), cmd)
		}
	}
	p, err := exec.LookPath("hpcc")
	if err != nil {
		t.Fatalf("apt-get installed hpcc but it is not on PATH: %v", err)
	}
	return p
}

// hpccValidation extracts hpcc's own verdicts from hpccoutf.txt as a sorted
// set of normalised lines, per section:
//
//   - every line saying passed/PASSED/failed/FAILED/Validates, cut after the
//     verdict word, with floating-point numbers replaced by "<f>" (PTRANS
//     prints timings and rates on its verdict lines, DGEMM a residual of
//     randomly seeded matrices);
//   - "N tests completed and passed" with N replaced by "#" (PTRANS repeats
//     its test a time-dependent number of times); failure counts are kept;
//   - "Node(s) with error N";
//   - from the summary section, the keys that state a validation outcome
//     (Success, *Errors*, PTRANS_residual) and the problem setup (*_N,
//     CommWorldProcs), with their values.
//
// Timings never appear, so a correct run gives the same set every time.
func hpccValidation(t *testing.T, path string) (set []string, failures []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("hpcc left no result file: %v", err)
	}
	defer f.Close()
	var (
		section   = "preamble"
		seen      = map[string]bool{}
		floatRe   = regexp.MustCompile(`[-+]?\d+\.\d*(?:[eE][-+]?\d+)?`)
		verdictRe = regexp.MustCompile(`(?i)\b(passed|failed|validates)\b`)
		cutRe     = regexp.MustCompile(`(PASSED|FAILED)\b.*$`)
		passCount = regexp.MustCompile(`^\s*\d+ tests completed and passed`)
		summaryRe = regexp.MustCompile(`^(Success|[A-Za-z_]*Errors?[A-Za-z_]*|PTRANS_residual|[A-Za-z]+_N|CommWorldProcs)=`)
		ended     bool
	)
	add := func(s string) {
		s = section + ": " + strings.Join(strings.Fields(s), " ")
		if !seen[s] {
			seen[s] = true
			set = append(set, s)
		}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Begin of ") && strings.HasSuffix(line, " section."):
			section = strings.TrimSuffix(strings.TrimPrefix(line, "Begin of "), " section.")
			continue
		case strings.HasPrefix(line, "End of HPC Challenge tests"):
			ended = true
		}
		trimmed := strings.TrimSpace(line)
		if section == "Summary" {
			if summaryRe.MatchString(trimmed) {
				add(trimmed)
				if strings.HasPrefix(trimmed, "Success=") && trimmed != "Success=1" {
					failures = append(failures, trimmed)
				}
			}
			continue
		}
		if strings.HasPrefix(trimmed, "- ") { // HPL's description of the check
			continue
		}
		if strings.HasPrefix(trimmed, "Node(s) with error") {
			add(trimmed)
			if trimmed != "Node(s) with error 0" {
				failures = append(failures, section+": "+trimmed)
			}
			continue
		}
		if !verdictRe.MatchString(trimmed) {
			continue
		}
		s := cutRe.ReplaceAllString(trimmed, "$1")
		s = floatRe.ReplaceAllString(s, "<f>")
		s = passCount.ReplaceAllString(s, "# tests completed and passed")
		add(s)
		if strings.Contains(s, "FAILED") || (strings.Contains(s, "failed") && !strings.HasPrefix(s, "0 ")) {
			failures = append(failures, section+": "+trimmed)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if !ended {
		failures = append(failures, "hpccoutf.txt does not end with \"End of HPC Challenge tests\"")
	}
	sort.Strings(set)
	return set, failures
}

// runHPCC runs hpcc on hpccRanks ranks in a fresh directory with the test
// input; traceDir != "" runs it under the preload.
func runHPCC(t *testing.T, hpcc, traceDir string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	in, err := os.ReadFile(filepath.Join("testdata", "hpccinf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hpccinf.txt"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	mpirun(t, dir, 150*time.Second, hpccRanks, traceDir, hpcc)
	return dir
}

// TestHPCC_ValidationUnchangedAndTraceConsistent runs the HPC Challenge
// suite without and with the recorder and an emulated 2-node clock error.
func TestHPCC_ValidationUnchangedAndTraceConsistent(t *testing.T) {
	needPreload(t)
	hpcc := needHPCC(t)

	plainDir := runHPCC(t, hpcc, "")
	traceDir := t.TempDir()
	tracedDir := runHPCC(t, hpcc, traceDir)

	plain, plainFail := hpccValidation(t, filepath.Join(plainDir, "hpccoutf.txt"))
	traced, tracedFail := hpccValidation(t, filepath.Join(tracedDir, "hpccoutf.txt"))
	if len(plainFail) > 0 {
		t.Errorf("hpcc failed its own validation without the preload (machine problem, not gclock's):\n%s", strings.Join(plainFail, "\n"))
	}
	if len(tracedFail) > 0 {
		t.Errorf("hpcc failed its own validation under the preload:\n%s", strings.Join(tracedFail, "\n"))
	}
	if len(plain) < 10 {
		t.Errorf("only %d validation lines found in hpcc's output; the parser no longer understands hpccoutf.txt:\n%s", len(plain), strings.Join(plain, "\n"))
	}
	if d := diffSets(plain, traced); d != "" {
		t.Errorf("hpcc's validation results differ with the preload (- without, + with):\n%s", d)
	} else {
		t.Logf("hpcc validation identical with and without preload (%d verdict lines)", len(plain))
	}

	ranks := loadTraces(t, traceDir, hpccRanks)
	rep := checkTrace(t, ranks)
	t.Logf("hpcc trace: %s", rep)
	if rep.Instances == 0 {
		t.Fatalf("no collective instance recorded from hpcc")
	}
	if n := len(rep.OpInstances); n < 4 {
		t.Errorf("hpcc trace covers only %d collective kinds (%v); hpcc calls at least Allreduce, Bcast, Reduce, Barrier and Alltoall", n, rep.OpInstances)
	}
	checkClockQuality(t, ranks, rep, fakeNodeSize)
	crossCheckMerge(t, ranks, rep)
	p2p := checkP2P(t, ranks)
	t.Logf("point-to-point: %s", p2p)
	crossCheckP2P(t, ranks, p2p, rep)
}

// checkClockQuality states how good the corrected clock must be on this
// machine: the injected error is milliseconds, the corrected error must be
// two orders of magnitude below it.
func checkClockQuality(t *testing.T, ranks []*rankTrace, rep traceReport, nodeSize string) {
	t.Helper()
	const maxErrNS = 100e3 // 100 µs; the injected offsets are 1.5 and 3 ms
	for _, rt := range ranks {
		in := rt.Meta.Header.Inject
		if in == nil {
			t.Errorf("%s: header records no clock injection although GCLOCK_FAKE_CLOCK=%s was set", rt.Path, fakeClock)
			continue
		}
		if fmt.Sprint(in.NodeSize) != nodeSize {
			t.Errorf("%s: injection node size %d, want %s", rt.Path, in.NodeSize, nodeSize)
		}
	}
	if rep.MaxClockErr > maxErrNS {
		t.Errorf("corrected clock is off the true clock by up to %.1f µs, want < %.0f µs", rep.MaxClockErr/1e3, maxErrNS/1e3)
	}
	if rep.SyncInstances > 0 && rep.RawViolations == 0 {
		t.Errorf("raw (uncorrected) times show no clock-condition violation at all although ms of clock error were injected: the injection seems not applied")
	}
}

// diffSets returns the lines only in a (prefixed "-") or only in b ("+").
func diffSets(a, b []string) string {
	in := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, x := range a {
		if !mb[x] {
			out = append(out, "- "+x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			out = append(out, "+ "+x)
		}
	}
	return strings.Join(out, "\n")
}
