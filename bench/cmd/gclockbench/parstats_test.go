package main

import (
	"reflect"
	"testing"
)

// TestParseParStats_ReadsRSSCPUAndProcess0sBytes: the statistics lines of
// GCLOCK_PAR_STATS=1 give every process's peak RSS and CPU time (user +
// system; 0 where an older tracemerge printed none) and process 0's bytes
// received by kind.
func TestParseParStats_ReadsRSSCPUAndProcess0sBytes(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		rss          []int64
		cpu          []float64
		recv0        int64
		kinds        []string
	}{
		{"with CPU", "tracemerge: process 0: received 100 bytes, sent 5 bytes, peak RSS 2000 kB, CPU 6.18 s user, 1.53 s system (received: stream to 0 90, control 10)\n" +
			"tracemerge: process 1: received 5 bytes, sent 100 bytes, peak RSS 3000 kB, CPU 6.45 s user, 0.88 s system (received: control 5)\n",
			[]int64{2000, 3000}, []float64{7.71, 7.33}, 100, []string{"stream to 0 90", "control 10"}},
		{"without CPU", "tracemerge: process 0: received 7 bytes, sent 0 bytes, peak RSS 10 kB (received: control 7)\n",
			[]int64{10}, []float64{0}, 7, []string{"control 7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := parseParStats(tc.stderr)
			if !reflect.DeepEqual(s.rss, tc.rss) || s.recv0 != tc.recv0 || !reflect.DeepEqual(s.recv0Kinds, tc.kinds) {
				t.Errorf("rss %v recv0 %d kinds %q, want %v %d %q", s.rss, s.recv0, s.recv0Kinds, tc.rss, tc.recv0, tc.kinds)
			}
			if len(s.cpu) != len(tc.cpu) {
				t.Fatalf("cpu %v, want %v", s.cpu, tc.cpu)
			}
			for i := range s.cpu {
				if d := s.cpu[i] - tc.cpu[i]; d > 1e-9 || d < -1e-9 {
					t.Errorf("cpu %v, want %v", s.cpu, tc.cpu)
				}
			}
		})
	}
}
