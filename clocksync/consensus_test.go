package clocksync_test

import (
	"math"
	"testing"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/clocksync/sim"
)

func TestKnotConsensus(t *testing.T) {
	const us = 1e-6
	for _, tc := range []struct {
		name  string
		vs    []float64
		want  float64
		agree int
	}{
		{"all agree: the median", []float64{0.1 * us, -0.2 * us, 0.3 * us, 0, 0.2 * us}, 0.1 * us, 5},
		{"one outlier", []float64{0.1 * us, 4.7 * us, 0.3 * us, 0, 0.2 * us}, 0.15 * us, 4},
		{"two outliers of one sign", []float64{0, 4.7 * us, 0.2 * us, 4.9 * us, 0.1 * us}, 0.1 * us, 3},
		{"outliers on both sides", []float64{-5 * us, 0.1 * us, 5 * us, 0.3 * us, 0.2 * us}, 0.2 * us, 3},
		{"tie: the group nearer the median of all", []float64{0, 0.1 * us, 4 * us, 4.1 * us, 2.2 * us}, 4.05 * us, 2},
		{"one value", []float64{3 * us}, 3 * us, 1},
		// spread over 1.6 µs, each within ±1 µs of the middle one: no
		// group agrees within 1 µs by more than 3 of 5, so a loose pair
		// measures more (the TCP knots that missed by 0.75-1.32 µs had
		// such groups)
		{"spread wider than 1 µs: no majority", []float64{0, 0.3 * us, 0.6 * us, 1.2 * us, 1.6 * us}, 0.6 * us, 3},
		{"a group within 1 µs among a wider spread", []float64{-0.9 * us, 0, 0.2 * us, 0.4 * us, 0.9 * us}, 0.3 * us, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, agree := clocksync.KnotConsensus(tc.vs, clocksync.KnotAgree)
			if math.Abs(got-tc.want) > 1e-12 || agree != tc.agree {
				t.Errorf("KnotConsensus(%v) = %g, %d; want %g, %d", tc.vs, got, agree, tc.want, tc.agree)
			}
		})
	}
	if v, n := clocksync.KnotConsensus(nil, clocksync.KnotAgree); !math.IsNaN(v) || n != 0 {
		t.Errorf("KnotConsensus(nil) = %g, %d; want NaN, 0", v, n)
	}
}

// scriptedOffset is SKaMPI-Offset whose client results carry a scripted
// bias and uncertainty, as a TCP hop's offsets do when one direction's
// delay is in another mode than the other's.
type scriptedOffset struct {
	clocksync.SKaMPIOffset
	bias  []float64
	u     float64
	calls int // on the client
}

func (s *scriptedOffset) MeasureOffset(t clocksync.Transport, clk clocksync.Clock, ref, client int) (clocksync.ClockOffset, error) {
	return s.MeasureOffsetDetrended(t, clk, ref, client, 0)
}

// MeasureOffsetDetrended is the scripted MeasureOffset of the resyncs
// (the embedded SKaMPIOffset's would bypass the script).
func (s *scriptedOffset) MeasureOffsetDetrended(t clocksync.Transport, clk clocksync.Clock, ref, client int, slope float64) (clocksync.ClockOffset, error) {
	ob, err := s.SKaMPIOffset.MeasureOffsetDetrended(t, clk, ref, client, slope)
	if err != nil || t.Rank() != client {
		return ob, err
	}
	if s.calls < len(s.bias) {
		ob.Offset += s.bias[s.calls]
	}
	ob.Uncertainty = s.u
	s.calls++
	return ob, nil
}

// TestHCA3Offset_ConsensusOutvotesBiasedOffsets: a loose pair measures
// until a clear majority of its offsets agree, so three biased offsets
// among the first five (where the median of five failed) do not move the
// knot; agreeing offsets stop at five, and a tight first offset (shared
// memory) at one.
func TestHCA3Offset_ConsensusOutvotesBiasedOffsets(t *testing.T) {
	const us = 1e-6
	for _, tc := range []struct {
		name    string
		bias    []float64
		u       float64
		calls   int
		agree   int // the knot's group (LastKnot)
		scatter bool
	}{
		{"tight first offset", nil, 0.2 * us, 1, 1, false},
		{"loose, all agree", nil, 12 * us, clocksync.ResyncMinRepeats, clocksync.ResyncMinRepeats, false},
		{"loose, one outlier", []float64{0, 4.7 * us}, 12 * us, clocksync.ResyncMinRepeats, clocksync.ResyncMinRepeats - 1, false},
		{"loose, three of five biased alike", []float64{0, 4.7 * us, 4.8 * us, 4.6 * us}, 12 * us, 9, 6, false},
		{"loose, no consensus", []float64{0, 5 * us, -5 * us, 10 * us, -10 * us, 15 * us, -15 * us, 20 * us, -20 * us, 25 * us}, 12 * us, clocksync.ResyncRepeats, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sim.DefaultParams(2, 2, 1)
			p.DriftMax = 0
			w := sim.New(p)
			var got clocksync.Clock
			var client *scriptedOffset
			algs := make([]*clocksync.HCA3Offset, 2)
			err := w.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
				off := &scriptedOffset{SKaMPIOffset: clocksync.SKaMPIOffset{PingPongs: 20}, bias: tc.bias, u: tc.u}
				alg := &clocksync.HCA3Offset{Offset: off, Repeats: clocksync.ResyncRepeats, MinRepeats: clocksync.ResyncMinRepeats, Loose: clocksync.ResyncLoose}
				algs[r] = alg
				g, err := alg.SyncClocks(tr, clk)
				if r == 1 {
					got, client = g, off
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if client.calls != tc.calls {
				t.Errorf("client measured %d offsets, want %d", client.calls, tc.calls)
			}
			if st, ok := algs[0].LastKnot(); ok {
				t.Errorf("the reference reports a knot of its own: %+v", st)
			}
			st, ok := algs[1].LastKnot()
			if !ok || st.Offsets != tc.calls || st.Spread < 0 || st.Spread > 2*clocksync.KnotAgree {
				t.Errorf("client's knot stats %+v (ok %v): want %d offsets, spread within 2 × %g s (the group lies within KnotAgree of one of its values)", st, ok, tc.calls, clocksync.KnotAgree)
			}
			if !tc.scatter && st.Agree != tc.agree || tc.scatter && st.Agree >= clearMajorityOf(tc.calls) {
				t.Errorf("client's knot group has %d offsets, want %d (no consensus: under a clear majority)", st.Agree, tc.agree)
			}
			if tc.scatter {
				return // no group agrees: the count is the point
			}
			x := got.GetTime()
			m, _ := clocksync.Flatten(got)
			if e := math.Abs(m.Offset(x) - trueOffset(w, 1, x)); e > 0.3*us {
				t.Errorf("knot off the truth by %.3f µs", e/us)
			}
		})
	}
}

// clearMajorityOf is the group size that ends a loose pair's measuring
// (clocksync's clearMajority: n/2+2 of n).
func clearMajorityOf(n int) int { return n/2 + 2 }

// expiringTransport is a transport whose pair deadline (PairDeadline)
// passes after the client's first `after` questions.
type expiringTransport struct {
	clocksync.Transport
	after, asked int
}

func (e *expiringTransport) PairExpired() bool {
	e.asked++
	return e.asked > e.after
}

// TestHCA3Offset_PairDeadlineStopsTheRepeats: a loose pair whose
// transport says the pair's time is over (pmpi's resync pair deadline)
// measures no further offset, however far from a consensus it is; the
// knot is the consensus of what it measured. A transport without the
// interface, or whose deadline has not passed, measures as before.
func TestHCA3Offset_PairDeadlineStopsTheRepeats(t *testing.T) {
	const us = 1e-6
	spread := []float64{0, 5 * us, -5 * us, 10 * us, -10 * us, 15 * us, -15 * us, 20 * us, -20 * us}
	for _, tc := range []struct {
		name     string
		deadline bool
		after    int // questions answered "not expired"
		calls    int
	}{
		{"no deadline interface", false, 0, clocksync.ResyncRepeats},
		{"expired after the first offset", true, 0, 1},
		{"expired after the third offset", true, 2, 3},
		{"never expired", true, 100, clocksync.ResyncRepeats},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sim.DefaultParams(2, 2, 1)
			p.DriftMax = 0
			w := sim.New(p)
			var client *scriptedOffset
			var alg1 *clocksync.HCA3Offset
			err := w.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
				off := &scriptedOffset{SKaMPIOffset: clocksync.SKaMPIOffset{PingPongs: 20}, bias: spread, u: 12 * us}
				alg := &clocksync.HCA3Offset{Offset: off, Repeats: clocksync.ResyncRepeats, MinRepeats: clocksync.ResyncMinRepeats, Loose: clocksync.ResyncLoose}
				var t2 clocksync.Transport = tr
				if tc.deadline && r == 1 {
					t2 = &expiringTransport{Transport: tr, after: tc.after}
				}
				_, err := alg.SyncClocks(t2, clk)
				if r == 1 {
					client, alg1 = off, alg
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if client.calls != tc.calls {
				t.Errorf("client measured %d offsets, want %d", client.calls, tc.calls)
			}
			if st, ok := alg1.LastKnot(); !ok || st.Offsets != tc.calls {
				t.Errorf("client's knot stats %+v (ok %v): want %d offsets", st, ok, tc.calls)
			}
		})
	}
}

// TestHCA3Offset_LoosePairRepeatsWithMorePingPongs: a loose pair's first
// offset takes the SKaMPIOffset's ping-pongs and its repeats take
// LoosePingPongs (the resyncs: 16, then the full syncs' 50 over a network
// hop, D84); both sides agree on the count (the pair ends with no message
// left over and the knot on the truth), and without LoosePingPongs, or
// with fewer than the first offset's, every offset takes the first's.
func TestHCA3Offset_LoosePairRepeatsWithMorePingPongs(t *testing.T) {
	const us = 1e-6
	const first = 16
	for _, tc := range []struct {
		name  string
		loose int
		want  int // ping-pongs of each repeat
	}{
		{"as the first offset", 0, first},
		{"fewer than the first", 8, first},
		{"the full syncs' count", 50, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sim.DefaultParams(2, 2, 1)
			p.DriftMax = 0
			w := sim.New(p)
			var got clocksync.Clock
			var client *countingTransport
			var alg1 *clocksync.HCA3Offset
			err := w.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
				ct := &countingTransport{Transport: tr}
				off := &clocksync.SKaMPIOffset{PingPongs: first}
				// every first offset is loose: the pair measures MinRepeats
				alg := &clocksync.HCA3Offset{Offset: off, Repeats: clocksync.ResyncRepeats, MinRepeats: clocksync.ResyncMinRepeats, Loose: 1e-15, LoosePingPongs: tc.loose}
				g, err := alg.SyncClocks(ct, clk)
				if r == 1 {
					got, client, alg1 = g, ct, alg
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			st, ok := alg1.LastKnot()
			if !ok || st.Offsets < 2 {
				t.Fatalf("client's knot stats %+v (ok %v): want a loose pair's repeats", st, ok)
			}
			// the client sends one message a ping-pong and a flag after
			// each offset
			want := first + (st.Offsets-1)*tc.want + st.Offsets
			if client.sends != want {
				t.Errorf("client sent %d messages for %d offsets; want %d (%d ping-pongs, then %d a repeat, and a flag each)", client.sends, st.Offsets, want, first, tc.want)
			}
			x := got.GetTime()
			m, _ := clocksync.Flatten(got)
			if e := math.Abs(m.Offset(x) - trueOffset(w, 1, x)); e > 0.3*us {
				t.Errorf("knot off the truth by %.3f µs", e/us)
			}
		})
	}
}
