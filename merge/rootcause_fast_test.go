package merge

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/trace/synth"
)

// TestRootCause_FastWaiterAgreesWithWaitOf: the N×N waiters that
// waitFast handles in one body get the same attributions, costs,
// critical path and marks as through waitOf, bit for bit, on runs that
// take both paths (collective-only, a slowed rank, split communicators,
// halo exchanges of every form, histories short enough to cut
// intervals); and waitFast takes most of the waiters of a
// collective-only run, so the comparison is not empty.
func TestRootCause_FastWaiterAgreesWithWaitOf(t *testing.T) {
	cases := []struct {
		name     string
		cfg      synth.Config
		hist     int
		minShare float64 // of the N×N waiters through waitFast
	}{
		{"collectives 8 ranks", synth.Config{Ranks: 8, Steps: 3000, Seed: 3}, 0, 0.5},
		{"collectives, one rank slowed, world only", synth.Config{Ranks: 6, Steps: 2000, Seed: 5, SplitGroups: 1, Slowdown: map[int]float64{2: 3}}, 0, 0.5},
		{"collectives, three groups", synth.Config{Ranks: 9, Steps: 2000, Seed: 7, SplitGroups: 3}, 0, 0.3},
		{"halo", synth.Config{Ranks: 8, Steps: 800, Seed: 11, Halo: true}, 0, 0},
		{"halo of every form", synth.Config{Ranks: 12, Steps: 800, Seed: 13, Halo: true, HaloMix: true}, 0, 0},
		{"short history", synth.Config{Ranks: 8, Steps: 1500, Seed: 17, Halo: true}, 64, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if _, err := synth.Generate(dir, tc.cfg); err != nil {
				t.Fatal(err)
			}
			run, err := Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			pass, err := Prepare(run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var c rcCapture
			pass.AddStreamSink(&c)
			if _, err := pass.Run(); err != nil {
				t.Fatal(err)
			}
			result := func(off bool) (string, int, int) {
				rc := NewRootCauseStream(run, RootCauseOptions{HistoryPerRank: tc.hist}, nil)
				rc.fastOff = off
				for j := 0; j < len(c.evs); j += asyncBatch {
					if err := addBatch(rc, rc, c.evs[j:min(j+asyncBatch, len(c.evs))]); err != nil {
						t.Fatal(err)
					}
				}
				res := rc.Result()
				if res == nil || res.TotalWaitNS <= 0 {
					t.Fatalf("no waits in the run (%+v): the test needs some", res)
				}
				js, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := json.Marshal(rc.Marks(res, 50))
				if err != nil {
					t.Fatal(err)
				}
				return string(js) + string(ms) + fmt.Sprint(rc.criticalStints()), rc.fastWaits, rc.waitStates
			}
			slow, nSlow, _ := result(true)
			fast, nFast, waits := result(false)
			if nSlow != 0 {
				t.Fatalf("waitFast took %d waiters with fastOff set", nSlow)
			}
			if fast != slow {
				t.Errorf("results with waitFast differ from waitOf's (%d vs %d bytes; %d of %d waiters fast)", len(fast), len(slow), nFast, waits)
			}
			if share := float64(nFast) / float64(waits); share < tc.minShare {
				t.Errorf("waitFast took %d of %d wait states (%.2f), want at least %.2f", nFast, waits, share, tc.minShare)
			}
			t.Logf("%d of %d wait states through waitFast", nFast, waits)
		})
	}
}
