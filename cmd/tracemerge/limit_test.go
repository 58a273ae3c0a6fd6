package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// countCalls reads every rank file of dir and counts the records that
// start a call, and all records.
func countCalls(t *testing.T, dir string) (calls, records int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "rank-*.gct"))
	if len(files) == 0 {
		t.Fatalf("no rank files in %s", dir)
	}
	for _, f := range files {
		r, err := trace.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := r.ReadAll()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			records++
			if !e.Op.Continues(e.Seq) {
				calls++
			}
		}
	}
	return calls, records
}

// TestCLI_PerEventLimitCountsCallsFromFooters: the per-event limit counts
// MPI calls, not records, and the rank files' footers (trace.Footer.Calls)
// let tracemerge decide before the pass. A halo run whose Waitalls write
// four records per call: at a limit of exactly its calls the exports are
// written in full although its records are more; one below they are left
// out with the note; with a window (--from), where the footers cannot
// decide, the same limit is applied while streaming.
func TestCLI_PerEventLimitCountsCallsFromFooters(t *testing.T) {
	tmp := t.TempDir()
	run := filepath.Join(tmp, "run")
	gen(t, run, synth.Config{Ranks: 4, Steps: 200, Seed: 4, Halo: true})
	calls, records := countCalls(t, run)
	if records <= calls {
		t.Fatalf("halo run has %d records for %d calls: no multi-record calls to test with", records, calls)
	}
	var footers int64
	files, _ := filepath.Glob(filepath.Join(run, "rank-*.gct"))
	for _, f := range files {
		r, err := trace.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if ft := r.Meta().Footer; ft != nil {
			footers += int64(ft.Calls)
		}
		r.Close()
	}
	if footers != int64(calls) {
		t.Errorf("footers count %d calls, the events hold %d", footers, calls)
	}
	// tracemerge info counts them too (from the events, not the footers).
	stdout, stderr, code := runBin(t, tmp, "info", "run")
	if want := fmt.Sprintf("calls:     %d ", calls); code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("tracemerge info: exit %d, no %q in:\n%s%s", code, want, stdout, stderr)
	}
	cases := []struct {
		name   string
		limit  int
		window bool
		want   bool // events.csv and trace.pftrace written
	}{
		{"limit = calls", calls, false, true},
		{"limit = calls - 1", calls - 1, false, false},
		{"window, limit = calls", calls, true, true},
		{"window, limit = calls - 1", calls - 1, true, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := "out" + strconv.Itoa(i)
			args := []string{"run", "-o", out, "-q", "--per-event-limit", strconv.Itoa(tc.limit)}
			if tc.window {
				args = append(args, "--from", "0s")
			}
			_, stderr, code := runBin(t, tmp, args...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			if !tc.want {
				// The footers give the count; a window only a bound.
				want := fmt.Sprintf("the run has %d MPI calls, more than %d", calls, tc.limit)
				if tc.window {
					want = fmt.Sprintf("the run has more than %d MPI calls", tc.limit)
				}
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
			for _, f := range []string{"events.csv", "trace.pftrace"} {
				_, err := os.Stat(filepath.Join(tmp, out, f))
				if written := err == nil; written != tc.want {
					t.Errorf("%s written: %v, want %v (%d calls, %d records, limit %d)", f, written, tc.want, calls, records, tc.limit)
				}
				if noted := strings.Contains(stderr, "not written") && strings.Contains(stderr, f); noted == tc.want {
					t.Errorf("note naming %s on stderr: %v, want %v:\n%s", f, noted, !tc.want, stderr)
				}
			}
		})
	}
}
