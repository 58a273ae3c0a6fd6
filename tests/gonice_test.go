package tests

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// gclockGoObject is the file the recorder's Go runtime runs from.
const gclockGoObject = "libgclock-go.so"

// niceLine is one line of progs/gonice.c: a thread of a rank, who runs it
// and its nice value.
type niceLine struct {
	rank int
	who  string // "main", "app", "in=<object>"
	nice int
}

func parseNice(t *testing.T, out string) []niceLine {
	t.Helper()
	var ls []niceLine
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "thread" {
			t.Fatalf("gonice printed %q: want \"thread RANK WHO NICE\"\n%s", line, out)
		}
		rank, err1 := strconv.Atoi(f[1])
		nice, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			t.Fatalf("gonice printed %q: rank or nice not a number", line)
		}
		ls = append(ls, niceLine{rank, f[2], nice})
	}
	return ls
}

// TestGoNice_RuntimeThreadsYieldTheRank: the Go runtime's own threads run at
// GCLOCK_GO_NICE (default 19) so that their wake-ups at every buffer
// hand-off do not preempt the rank (docs/explanation/recorder.md, "The Go runtime's
// threads"); the application's threads, started before and after MPI_Init,
// and the MPI library's keep the nice value the job was started with (2
// here); 0 leaves the runtime's threads alone, and a bad value is said
// once and leaves them alone too. Every run records completely.
func TestGoNice_RuntimeThreadsYieldTheRank(t *testing.T) {
	const jobNice = 2
	cases := []struct {
		name   string
		value  string // GCLOCK_GO_NICE; "" unset
		goNice int    // the runtime's threads
		note   string // in rank 0's stderr
	}{
		{"default", "", 19, ""},
		{"off", "0", jobNice, ""},
		{"seven", "7", 7, ""},
		{"bad", "high", jobNice, `GCLOCK_GO_NICE="high": want a nice value from 0`},
	}
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			prog := m.prog(t, "gonice")
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "tr")
					env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "GCLOCK_BUFFER=64", "LD_PRELOAD=" + m.Lib}
					if c.value != "" {
						env = append(env, "GCLOCK_GO_NICE="+c.value)
					}
					argv := append([]string{"nice", "-n", strconv.Itoa(jobNice)}, m.argv(2, env, prog, "3000")...)
					r := runCmd(t, t.TempDir(), env, argv...)
					if r.Code != 0 {
						t.Fatalf("gonice: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
					}
					goThreads := map[int]int{}
					for _, l := range parseNice(t, r.Stdout) {
						switch {
						case l.who == "in="+gclockGoObject:
							goThreads[l.rank]++
							if l.nice != c.goNice {
								t.Errorf("rank %d: a thread of the Go runtime at nice %d, want %d", l.rank, l.nice, c.goNice)
							}
						case l.who == "in=running":
							// Running at that moment: whose cannot be told.
						default:
							if l.nice != jobNice {
								t.Errorf("rank %d: thread %s at nice %d, want the job's %d", l.rank, l.who, l.nice, jobNice)
							}
						}
					}
					for rank := 0; rank < 2; rank++ {
						if goThreads[rank] < 2 {
							t.Errorf("rank %d: %d threads blocked in %s, want the Go runtime's (at least 2)\n%s",
								rank, goThreads[rank], gclockGoObject, r.Stdout)
						}
					}
					if got := strings.Count(r.Stderr, "GCLOCK_GO_NICE"); (c.note != "") != (got == 1) || !strings.Contains(r.Stderr, c.note) {
						t.Errorf("stderr says GCLOCK_GO_NICE %d times, want %s\n%s", got,
							map[bool]string{true: fmt.Sprintf("once: %q", c.note), false: "never"}[c.note != ""], r.Stderr)
					}
					for rank, rt := range readTraces(t, dir, 2) {
						if rt.Meta.Footer == nil || len(rt.Events) < 3000 {
							t.Errorf("rank %d: footer %v, %d events: want a complete recording of 3000 barriers",
								rank, rt.Meta.Footer, len(rt.Events))
						}
					}
				})
			}
		})
	}
}
