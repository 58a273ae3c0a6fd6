package main

// Sections 7 and 8: the cost of loading the library into a program that
// never calls MPI, and the Go benchmarks.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ---------------------------------------------------------------- 7

func benchExec(c *Config, rep *Report) []Row {
	const sec = "7"
	sz := c.sizes()
	name := fmt.Sprintf("/bin/true × %d, never calls MPI_Init", sz.trueExecs)
	loop := func(env []string) (map[string]float64, error) {
		t0 := time.Now()
		for range sz.trueExecs {
			cmd := exec.Command("/bin/true")
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				return nil, fmt.Errorf("/bin/true under %v: %v %s", env, err, tail(string(out), 200))
			}
		}
		return map[string]float64{"ms": float64(time.Since(t0).Nanoseconds()) / 1e6 / float64(sz.trueExecs)}, nil
	}
	vs := []variant{{"none", func() (map[string]float64, error) { return loop(nil) }}}
	libE := c.libErr()
	if libE == nil {
		vs = append(vs, variant{"preload", func() (map[string]float64, error) { return loop(c.preloadEnv(c.Work)) }})
	}
	s, errs := interleave(c.Reps, vs, c.logf)
	if errs["none"] != nil {
		return []Row{unavailable(sec, name, errs["none"])}
	}
	b := s.get("none", "ms")
	if libE == nil {
		libE = errs["preload"]
	}
	if libE != nil {
		return []Row{{Section: sec, Name: name + ", no preload", Value: num(median(b)) + " ms/exec"}, unavailable(sec, name+", added by preload", libE)}
	}
	p := s.get("preload", "ms")
	return []Row{{Section: sec, Name: name + ", added by LD_PRELOAD",
		Value: signed(pairedDiff(b, p)) + " ms/exec", Baseline: num(median(b)) + " ms/exec without",
		Ratio: ratio(median(p), median(b)), Notes: fmt.Sprintf("%d interleaved runs; with preload %s", len(p), spread(p, "ms", 1))}}
}

// ---------------------------------------------------------------- 8

func benchGoTest(c *Config, rep *Report) []Row {
	const sec = "8"
	sz := c.sizes()
	r, err := runCmd(5*time.Minute, c.Root, nil, "go", "test", "-run", "^$", "-bench", ".", "-benchmem",
		"-benchtime", sz.goBenchtime, "./trace", "./merge", "./clocksync")
	rows, keep := parseGoBench(r.Stdout, r.Stderr, sz.goBenchtime)
	rep.GoBench = strings.Join(keep, "\n")
	if len(rows) == 0 {
		why := errors.New("no Benchmark functions in ./trace ./merge ./clocksync")
		if err != nil {
			why = err
		}
		rows = append(rows, unavailable(sec, "go test -bench (trace, merge, clocksync)", why))
	}
	return rows
}

// parseGoBench turns `go test -bench` output into table rows (the key line
// of each benchmark family, and one row per failed package) and the raw
// lines kept for the doc.
func parseGoBench(stdout, stderr, benchtime string) ([]Row, []string) {
	const sec = "8"
	// The table keeps the key line of each benchmark family: its last
	// sub-benchmark, the largest case by the packages' convention. The doc
	// keeps every line under the table.
	var keep []string
	var rows []Row
	family := map[string]int{} // family -> index in rows
	pkg := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "pkg: ") || strings.HasPrefix(l, "Benchmark") {
			keep = append(keep, l)
		}
		if p, ok := strings.CutPrefix(l, "pkg: github.com/gclock/gclock/"); ok {
			pkg = p
		}
		f := strings.Fields(l)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		fam, _, _ := strings.Cut(f[0], "/")
		row := Row{Section: sec, Name: fmt.Sprintf("go test -bench ./%s %s", pkg, f[0]), Value: strings.Join(f[2:], " "),
			Notes: fmt.Sprintf("%s iterations at -benchtime %s", f[1], benchtime)}
		if i, ok := family[pkg+fam]; ok {
			rows[i] = row
			continue
		}
		family[pkg+fam] = len(rows)
		rows = append(rows, row)
	}
	// Packages that failed (e.g. do not build right now) get a row each,
	// with the first compiler or test message that names them.
	all := stdout + "\n" + stderr
	for _, l := range strings.Split(all, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "FAIL" || !strings.HasPrefix(f[1], "github.com/gclock/gclock/") {
			continue
		}
		p := strings.TrimPrefix(f[1], "github.com/gclock/gclock/")
		why := strings.Join(f[2:], " ")
		for _, m := range strings.Split(all, "\n") {
			if strings.HasPrefix(m, p+"/") && strings.Contains(m, ".go:") {
				why = strings.TrimSpace(why + " " + m)
				break
			}
		}
		rows = append(rows, unavailable(sec, "go test -bench ./"+p, fmt.Errorf("%s", why)))
	}
	return rows, keep
}
