package clocksync

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// HCA3Offset is the offset-only resynchronisation used between MPI_Init and
// MPI_Finalize (issue 10): the inverted binomial tree of HCA3 (Algorithm 1
// of the H2HCA paper), in which each client measures ONE offset with Offset
// (SKaMPI-Offset, Algorithm 7) against its partner's already corrected
// clock instead of learning a model with LEARN_CLOCK_MODEL (Algorithm 2).
// That is floor(log2 p) + 1 rounds of Offset's ping-pongs, O(log p), in
// place of FitPoints times as many.
//
// A resync only has to add a knot to the offset curve: the offset now.
// The slope of each rank's clock model is kept from Prior (its previous
// epoch's model, relative to the reference), so the partner's clock the
// client measures against keeps drifting correctly during the few
// milliseconds the tree takes; tracemerge interpolates the slope between
// neighbouring knots (correct.Corrector).
type HCA3Offset struct {
	Offset OffsetAlg
	// Prior is this rank's latest model (offset to the reference as a
	// function of local seconds); its slope is kept.
	Prior LinearModel
	// PriorSlopeBound bounds Prior's slope error against the clock's
	// true rate relative to the reference now (0: taken as exact): the
	// knot's bound widens by it away from the measurement (KnotBound),
	// and a client of this rank counts that widening over the time
	// between this rank's measurement and its own.
	PriorSlopeBound float64
	// Repeats (> 1) lets a pair measure up to Repeats offsets when the
	// first one is loose: its Uncertainty (SKaMPI's interval half-width)
	// above Loose seconds, as over a network hop, where one offset's
	// midpoint can miss by microseconds. A loose pair measures at least
	// MinRepeats offsets and goes on until a clear majority of them agree
	// (KnotConsensus), or Repeats were measured; the knot is the median
	// of the largest agreeing group (each offset moved to a common time
	// with Prior's slope). On shared memory the first offset is tight and
	// the pair stops there.
	Repeats, MinRepeats int
	Loose               float64
	// LoosePingPongs (> 0) is the number of ping-pongs of a loose pair's
	// repeated offsets when Offset is a SKaMPIOffset measuring fewer: a
	// resync's first offset takes ResyncPingPongs, and where that one is
	// loose (a network hop) the repeats take the full syncs' count
	// (decisions.md D84). Both sides of the pair know it: the reference
	// serves the repeats the client asks for with the same count.
	LoosePingPongs int

	// last describes this rank's own knot of the latest SyncClocks (the
	// client side of its pair; zero on the reference).
	last KnotStats
}

// KnotStats describes how a client's knot was chosen: the offsets its
// pair measured, how many of them agreed (KnotConsensus's group), and
// that group's spread (largest minus smallest, seconds). A resync epoch
// records them (pmpi: params knot_offsets, knot_agree, knot_spread_ns),
// so a knot that missed the truth can be told from its neighbours.
type KnotStats struct {
	Offsets, Agree int
	Spread         float64
}

// LastKnot returns this rank's KnotStats of the latest SyncClocks; ok is
// false when the rank measured no offset (the reference, or a rank whose
// node leader measured for it).
func (a *HCA3Offset) LastKnot() (KnotStats, bool) { return a.last, a.last.Offsets > 0 }

// Name returns "hca3-offset/<offset>".
func (a *HCA3Offset) Name() string { return "hca3-offset/" + a.Offset.Name() }

// SyncClocks runs the HCA3 tree with one offset measurement per pair.
func (a *HCA3Offset) SyncClocks(t Transport, clk Clock) (Clock, error) {
	nprocs, r := t.Size(), t.Rank()
	nrounds := floorLog2(nprocs)
	maxPower := 1 << nrounds
	a.last = KnotStats{}
	// The reference (rank 0) keeps the identity; every other rank's clock
	// is replaced when it has measured.
	dummy := NewGlobalClockLM(clk, LinearModel{})
	if r == 0 {
		withBound(dummy, 0)
	}
	var myClk Clock = dummy
	measure := func(ref, client int) error {
		if r == ref {
			if err := a.serve(t, myClk, ref, client); err != nil {
				return err
			}
			return sendBound(t, client, ref, myClk)
		}
		icept, ms, err := a.knot(t, clk, ref, client)
		if err != nil {
			return err
		}
		refBound, known, err := recvBound(t, ref)
		if err != nil {
			return err
		}
		// offset(x) = slope·x + intercept passes through the knot.
		lm := LinearModel{Slope: a.Prior.Slope, Intercept: icept}
		g := NewGlobalClockLM(clk, lm)
		// The clocks drift apart during a measurement at Prior's rate,
		// give or take Prior's slope error and the partner clock's.
		rate := math.Abs(lm.Slope) + a.PriorSlopeBound
		if known {
			rate += refBound.Slope
		}
		if own, x := modelBoundAt(lm, rate, ms.xs, ms.ys, ms.us, ms.ws); own > 0 && known {
			// The bound holds at the measurement it rests on, with the
			// partner's bound widened to then; the slope is Prior's.
			at := lm.Global(x)
			withKnotBound(g, KnotBound{Bound: refBound.Within(at) + own, At: at, Slope: a.PriorSlopeBound})
		}
		myClk = g
		return nil
	}
	for i := nrounds; i >= 1; i-- {
		runningPower, nextPower := 1<<i, 1<<(i-1)
		if r >= maxPower {
			break
		}
		var err error
		switch {
		case r%runningPower == 0:
			err = measure(r, r+nextPower)
		case r%runningPower == nextPower:
			err = measure(r-nextPower, r)
		}
		if err != nil {
			return nil, fmt.Errorf("hca3-offset round %d: %w", nrounds-i+1, err)
		}
	}
	var err error
	switch {
	case r >= maxPower:
		err = measure(r-maxPower, r)
	case r < nprocs-maxPower:
		err = measure(r, r+maxPower)
	}
	if err != nil {
		return nil, fmt.Errorf("hca3-offset remaining ranks: %w", err)
	}
	return myClk, nil
}

// serve is the reference's side of one pair: one offset measurement, and
// more while the client asks for them (Repeats > 1).
func (a *HCA3Offset) serve(t Transport, clk Clock, ref, client int) error {
	flag := []float64{0}
	for n := 0; ; n++ {
		if _, err := a.offsetAlg(n).MeasureOffset(t, clk, ref, client); err != nil {
			return err
		}
		if a.Repeats <= 1 {
			return nil
		}
		if err := t.Recv(client, flag); err != nil {
			return fmt.Errorf("hca3-offset: ref %d: recv from %d: %w", ref, client, err)
		}
		if flag[0] == 0 {
			return nil
		}
	}
}

// offsetAlg is the offset measurement of a pair's offset number n (0:
// the first): Offset, or for a repeat of a loose pair Offset with
// LoosePingPongs ping-pongs.
func (a *HCA3Offset) offsetAlg(n int) OffsetAlg {
	if n == 0 || a.LoosePingPongs <= 0 {
		return a.Offset
	}
	s, ok := a.Offset.(*SKaMPIOffset)
	if !ok || s.PingPongs >= a.LoosePingPongs {
		return a.Offset
	}
	loose := *s
	loose.PingPongs = a.LoosePingPongs
	return &loose
}

// PairDeadline is an optional interface of a Transport: PairExpired
// reports that the time of the client's current pair is over (pmpi's
// resync epochs bound each pair's offset measurements, issue 38), and a
// loose pair then measures no more offsets: its knot is the consensus
// of those it has, with their wider bound.
type PairDeadline interface {
	PairExpired() bool
}

// knotMeasurements are a pair's offset measurements (ClockOffset's
// fields): the knot's bound is ModelBound's over all of them.
type knotMeasurements struct {
	xs, ys, us, ws []float64
}

// knot is the client's side: the intercept of the line of Prior's slope
// through the consensus of the measured offsets (KnotConsensus), and the
// measurements, which bound its error (modelBoundAt).
func (a *HCA3Offset) knot(t Transport, clk Clock, ref, client int) (float64, knotMeasurements, error) {
	var icepts, xs, ys, us, ws []float64
	for {
		// each ping-pong's drift at Prior's slope is taken out before
		// the minimum filter (decisions.md D88)
		ob, err := MeasureOffsetDetrended(a.offsetAlg(len(icepts)), t, clk, ref, client, a.Prior.Slope)
		if err != nil {
			return 0, knotMeasurements{}, err
		}
		icepts = append(icepts, ob.Offset-a.Prior.Slope*ob.Timestamp)
		xs, ys, us, ws = append(xs, ob.Timestamp), append(ys, ob.Offset), append(us, ob.Uncertainty), append(ws, ob.Window)
		if a.Repeats <= 1 {
			break
		}
		more := us[0] > a.Loose && len(icepts) < a.Repeats
		if pd, ok := t.(PairDeadline); ok && more && pd.PairExpired() {
			more = false // the pair's time is over (a resync's deadline)
		}
		if more && len(icepts) >= a.MinRepeats {
			_, agree := KnotConsensus(icepts, KnotAgree)
			more = !clearMajority(agree, len(icepts))
		}
		flag := []float64{0}
		if more {
			flag[0] = 1
		}
		if err := t.Send(ref, flag); err != nil {
			return 0, knotMeasurements{}, fmt.Errorf("hca3-offset: client %d: send to %d: %w", client, ref, err)
		}
		if !more {
			break
		}
	}
	group := consensusGroup(icepts, KnotAgree)
	icept := median(group)
	a.last = KnotStats{Offsets: len(icepts), Agree: len(group), Spread: slices.Max(group) - slices.Min(group)}
	return icept, knotMeasurements{xs, ys, us, ws}, nil
}

// KnotAgree (seconds) is how close two offsets of one pair must be to
// agree in KnotConsensus. Over TCP between namespace hosts (SKaMPI
// half-widths 11–37 µs) most offsets fall within ±0.5 µs of the truth,
// and 1–2 % of them 3.5–5 µs off (one direction's delay in another
// mode than the other's; a loaded machine: up to milliseconds).
const KnotAgree = 1e-6

// KnotConsensus returns the median of the largest group of vs that lie
// within a window tol wide (ties: the group whose median is nearest the
// median of all), and the group's size. With no outlier it is the median
// of all; unlike the median it stays in the agreeing group when outliers
// of one sign are as many as the good values on one side. The window is
// tol wide, not ±tol around one of them: over TCP between namespace hosts
// the resync knots whose group of offsets spread over 1.0-1.7 µs (±1 µs
// of one) missed the truth by 0.75-1.32 µs, every other one by at most
// 0.41 µs (27 knots of 9 runs of TestNetns_AccuracyOverTCP's 4 × 1 hosts;
// decisions.md, "A resync knot's offsets agree within 1 µs, not ±1 µs").
// A pair whose offsets do not agree that closely measures more of them
// (HCA3Offset.Repeats).
func KnotConsensus(vs []float64, tol float64) (float64, int) {
	if len(vs) == 0 {
		return math.NaN(), 0
	}
	g := consensusGroup(vs, tol)
	return median(g), len(g)
}

// consensusGroup returns KnotConsensus's group (vs non-empty).
func consensusGroup(vs []float64, tol float64) []float64 {
	all := median(vs)
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	var best []float64
	bestDist := math.Inf(1)
	j := 0
	for i := range s {
		j = max(j, i)
		for j+1 < len(s) && s[j+1]-s[i] <= tol {
			j++
		}
		group := s[i : j+1]
		m := median(group)
		if d := math.Abs(m - all); len(group) > len(best) || (len(group) == len(best) && d < bestDist) {
			best, bestDist = group, d
		}
	}
	return append([]float64(nil), best...)
}

// clearMajority reports whether a group of agree among n offsets is a
// majority that one more offset could not turn: 4 of 5, 5 of 6 or 7,
// 6 of 8 or 9.
func clearMajority(agree, n int) bool { return agree >= n/2+2 }

// median returns the median of vs (not modified).
func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

// ResyncRepeats, ResyncMinRepeats and ResyncLoose are the HCA3Offset
// settings of the resyncs and end anchors: when the first offset's
// uncertainty exceeds 2 µs, at least 5 and up to 9 offsets per pair,
// until a clear majority agrees (KnotConsensus). Over TCP between
// namespace hosts single offsets missed the truth by up to 5 µs at times
// (TestNetns_ResyncHoldsNonLinearClocksOverTCP); on shared memory
// (uncertainty ≈ 0.1–0.3 µs) one offset is kept and the resync costs
// what it did.
const (
	ResyncRepeats    = 9
	ResyncMinRepeats = 5
	ResyncLoose      = 2e-6
)

// ResyncPingPongs is the recorder's default number of ping-pongs per
// offset of a resync epoch (GCLOCK_RESYNC_PINGPONGS; the full syncs and
// their end anchors keep GCLOCK_PINGPONGS, 50). With 4 ranks on 2 loaded
// cores a resync epoch's pair took 36 µs a ping-pong and, with its first
// offset loose, measured 5 offsets: 50 ping-pongs each made the epochs
// 8-11 ms at the median, 16 made them 3-5 ms, with knots as close to the
// truth (docs/explanation/clock-accuracy.md, "Resync cost at 4 ranks").
const ResyncPingPongs = 16

// ResyncAlg is the offset-only resynchronisation of the resync epochs
// (NewResyncAlg). One value serves every resync of a run: H2HCA keeps its
// node and leader communicators between epochs, and SetPrior hands each
// epoch the rank's latest model.
type ResyncAlg struct {
	SyncAlg
	offsets []*HCA3Offset
}

// LastKnot returns this rank's KnotStats of the latest resync between
// node leaders (the inter-node HCA3Offset), ok false when it measured
// none there.
func (a *ResyncAlg) LastKnot() (KnotStats, bool) { return a.offsets[0].LastKnot() }

// SetPrior sets the model whose slope the next resync keeps.
func (a *ResyncAlg) SetPrior(prior LinearModel) {
	for _, o := range a.offsets {
		o.Prior = prior
	}
}

// SetPriorSlopeBound sets the bound on the prior's slope error
// (HCA3Offset.PriorSlopeBound) for the next resync.
func (a *ResyncAlg) SetPriorSlopeBound(s float64) {
	for _, o := range a.offsets {
		o.PriorSlopeBound = s
	}
}

// SetLoosePingPongs sets the ping-pongs of a loose pair's repeated
// offsets (HCA3Offset.LoosePingPongs; n < 1: as the first offset's).
func (a *ResyncAlg) SetLoosePingPongs(n int) {
	for _, o := range a.offsets {
		o.LoosePingPongs = max(n, 0)
	}
}

// NewResyncAlg returns the offset-only resynchronisation matching cfg's
// algorithm for a rank whose previous model is prior: H2HCA and H3HCA keep
// their hierarchy (HCA3Offset between node leaders, the configured
// intra-node algorithm, normally ClockPropSync, inside nodes: node members
// share the leader's clock); every flat algorithm becomes HCA3Offset.
func NewResyncAlg(cfg Config, prior LinearModel) (*ResyncAlg, error) {
	cfg = cfg.withDefaults()
	off, err := cfg.newOffsetAlg()
	if err != nil {
		return nil, err
	}
	inter := &HCA3Offset{Offset: off, Prior: prior, Repeats: ResyncRepeats, MinRepeats: ResyncMinRepeats, Loose: ResyncLoose}
	if cfg.Algorithm != "h2hca" && cfg.Algorithm != "h3hca" {
		return &ResyncAlg{SyncAlg: inter, offsets: []*HCA3Offset{inter}}, nil
	}
	ra := &ResyncAlg{offsets: []*HCA3Offset{inter}}
	var intra SyncAlg
	switch cfg.Intra {
	case "clockprop":
		intra = &ClockPropSync{}
	default:
		o := &HCA3Offset{Offset: off, Prior: prior, Repeats: ResyncRepeats, MinRepeats: ResyncMinRepeats, Loose: ResyncLoose}
		ra.offsets = append(ra.offsets, o)
		intra = o
	}
	ra.SyncAlg = &H2HCA{Inter: inter, Intra: intra, NodeID: cfg.NodeID}
	return ra, nil
}

// shareComms lets the resync's H2HCA use the node and leader
// communicators main (the sync it follows) already made on the same
// transport, instead of splitting its own.
func (a *ResyncAlg) shareComms(main *H2HCA) {
	h, ok := a.SyncAlg.(*H2HCA)
	if !ok || main.NodeID != h.NodeID || main.intra == nil {
		return
	}
	h.parent, h.intra, h.inter = main.parent, main.intra, main.inter
}

// SetPingPongs sets the ping-pongs per offset measurement of the next
// resyncs (SKaMPIOffset.PingPongs; n < 1 leaves them).
func (a *ResyncAlg) SetPingPongs(n int) {
	if n < 1 {
		return
	}
	for _, o := range a.offsets {
		if s, ok := o.Offset.(*SKaMPIOffset); ok {
			s.PingPongs = n
		}
	}
}
