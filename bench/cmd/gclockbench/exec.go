package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gclock/gclock/internal/launch"
)

// result is what one child process left behind.
type result struct {
	Stdout, Stderr string
	Wall           time.Duration
	MaxRSSKB       int64   // peak resident set of the child; see runRSS
	CPU            float64 // user + system seconds of the child and its waited-for children (runCmd)
}

// runRSS is runCmd for a command whose peak memory is a figure. It runs the
// command under /usr/bin/time, whose fork gives the child a fresh, small
// address space: Go starts children with clone(CLONE_VM|CLONE_VFORK), and
// Linux folds the high-water RSS of the address space a process leaves at
// exec into its ru_maxrss, so wait4 on a direct child reports at least this
// harness's own peak. Without /usr/bin/time it reports the wait4 figure,
// and an error note.
func runRSS(timeout time.Duration, dir string, env []string, argv ...string) (result, string, error) {
	tm, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		r, err := runCmd(timeout, dir, env, argv...)
		return r, "peak RSS from wait4 (upper bound: includes the harness; install GNU time for the child's own)", err
	}
	f, err := os.CreateTemp("", "gclockbench-rss-")
	if err != nil {
		return result{}, "", err
	}
	f.Close()
	defer os.Remove(f.Name())
	r, err := runCmd(timeout, dir, env, append([]string{tm, "-o", f.Name(), "-f", "%M"}, argv...)...)
	b, rerr := os.ReadFile(f.Name())
	kb, perr := strconv.ParseInt(strings.TrimSpace(lastLine(string(b))), 10, 64)
	if err == nil && (rerr != nil || perr != nil) {
		return r, "", fmt.Errorf("/usr/bin/time left no peak RSS: %q", b)
	}
	r.MaxRSSKB = kb
	return r, "peak RSS of the process itself (GNU time %M)", err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// runCmd runs argv in dir with extra environment, killing it after timeout.
// A non-zero exit is an error that quotes the tail of stderr.
func runCmd(timeout time.Duration, dir string, env []string, argv ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	release, err := launch.HoldStdin(cmd)
	if err != nil {
		return result{}, err
	}
	t0 := time.Now()
	err = cmd.Run()
	release()
	r := result{Stdout: out.String(), Stderr: errb.String(), Wall: time.Since(t0)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSSKB = ru.Maxrss
		}
		r.CPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	if ctx.Err() == context.DeadlineExceeded {
		return r, fmt.Errorf("%s: killed after %v", filepath.Base(argv[0]), timeout)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w: %s", filepath.Base(argv[0]), err, tail(r.Stderr+r.Stdout, 300))
	}
	return r, nil
}

// tail returns the last n bytes of s on one line.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return strings.Join(strings.Fields(s), " ")
}

// mpiRun builds an mpirun command line for np ranks. env entries
// ("NAME=value") are passed to the ranks only with -x, so mpirun itself
// never runs under LD_PRELOAD.
func mpiRun(np int, env []string, prog string, args ...string) []string {
	argv := []string{"mpirun", "--oversubscribe", "-np", strconv.Itoa(np)}
	if np > 2 { // more ranks than cores: Open MPI refuses to bind them
		argv = append(argv, "--bind-to", "none")
	}
	for _, e := range env {
		argv = append(argv, "-x", e)
	}
	argv = append(argv, prog)
	return append(argv, args...)
}

// keyValues parses "key value" lines (the C benchmarks' output); repeated
// keys keep the last value. Lines that do not parse are ignored.
func keyValues(s string) map[string]float64 {
	m := map[string]float64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			m[f[0]] = v
		}
	}
	return m
}

// need returns the values of keys in m, or an error naming the first
// missing one and quoting the output.
func need(m map[string]float64, out string, keys ...string) ([]float64, error) {
	vs := make([]float64, len(keys))
	for i, k := range keys {
		v, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("output lacks %q: %s", k, tail(out, 200))
		}
		vs[i] = v
	}
	return vs, nil
}

// variant is one arm of an interleaved comparison. run returns named
// figures of one execution.
type variant struct {
	name string
	run  func() (map[string]float64, error)
}

// samples holds, per variant and figure name, one value per repetition
// (index = repetition, so arms can be paired).
type samples map[string]map[string][]float64

func (s samples) get(v, fig string) []float64 { return s[v][fig] }

// interleave runs the variants A B C A B C ... reps times, so slow drifts of
// a shared, noisy machine hit every arm alike. A variant that fails is
// recorded in errs and not run again.
func interleave(reps int, vs []variant, logf func(string, ...any)) (samples, map[string]error) {
	s := samples{}
	errs := map[string]error{}
	for r := 0; r < reps; r++ {
		for _, v := range vs {
			if errs[v.name] != nil {
				continue
			}
			m, err := v.run()
			if err != nil {
				errs[v.name] = err
				logf("  %s: %v", v.name, err)
				continue
			}
			if s[v.name] == nil {
				s[v.name] = map[string][]float64{}
			}
			for k, x := range m {
				s[v.name][k] = append(s[v.name][k], x)
			}
		}
	}
	return s, errs
}

// median of xs (NaN-free); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

// pairedDiff returns the median over repetitions of b[i]-a[i].
func pairedDiff(a, b []float64) float64 {
	n := min(len(a), len(b))
	d := make([]float64, n)
	for i := range n {
		d[i] = b[i] - a[i]
	}
	return median(d)
}

// pairedRatios returns b[i]/a[i] for each repetition where a[i] > 0: the
// ratio of two arms run back to back, which a slow drift of a shared
// machine moves less than it moves either arm.
func pairedRatios(a, b []float64) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 {
			r = append(r, b[i]/a[i])
		}
	}
	return r
}

// spread formats min..max of xs, to show how noisy a median is.
func spread(xs []float64, unit string, scale float64) string {
	if len(xs) == 0 {
		return ""
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%s..%s %s", num(lo/scale), num(hi/scale), unit)
}

// num formats a figure with 3 significant digits (no exponent below 1e7).
func num(x float64) string {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	switch {
	case ax == 0:
		return "0"
	case ax >= 1e7:
		return strconv.FormatFloat(x, 'e', 2, 64)
	case ax >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case ax >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case ax >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	default:
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
}

// ratio formats b/a as "1.23×" (3 significant digits below 0.1).
func ratio(b, a float64) string {
	if a == 0 {
		return "—"
	}
	if r := b / a; r < 0.1 && r > -0.1 {
		return num(r) + "×"
	}
	return fmt.Sprintf("%.2f×", b/a)
}

// signed formats an added amount: "+1.23" or "-0.456".
func signed(x float64) string {
	if x >= 0 {
		return "+" + num(x)
	}
	return num(x)
}

// dur formats ns in the unit that keeps 3 significant digits readable.
func dur(ns float64) string {
	a := ns
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1e9:
		return num(ns/1e9) + " s"
	case a >= 1e6:
		return num(ns/1e6) + " ms"
	case a >= 1e3:
		return num(ns/1e3) + " µs"
	}
	return num(ns) + " ns"
}

// dirBytes sums the sizes of the regular files under dir whose name ends in
// suffix ("" for all).
func dirBytes(dir, suffix string) (int64, int, error) {
	var total int64
	var files int
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), suffix) {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			total += fi.Size()
			files++
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	return total, files, err
}
