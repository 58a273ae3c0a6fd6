package clocksync

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Default parameters, chosen from the simulated measurements documented in
// docs/explanation/clocksync.md.
const (
	DefaultAlgorithm = "h2hca"
	DefaultInter     = "hca3"
	DefaultIntra     = "clockprop"
	DefaultMid       = "hca3"
	DefaultFitPoints = 100
	DefaultPingPongs = 50
	DefaultOffsetAlg = "skampi"
)

// Config selects and parameterises the synchronisation run by Sync.
type Config struct {
	// Algorithm is "h2hca" (default), "h3hca", "hca3", "hca2", "hca",
	// "jk", "skampi" (offset only), "clockprop" (one shared time source)
	// or "none".
	Algorithm string
	// Inter and Intra are the H2HCA levels (defaults "hca3" and
	// "clockprop"); any algorithm but "h2hca" and "none" is allowed.
	Inter, Intra string
	// Mid is the H3HCA level between the sockets of a node (default
	// "hca3"; GCLOCK_SYNC_MID).
	Mid string
	// FitPoints is nfitpoints of LearnClockModel (JK: per client).
	FitPoints int
	// PingPongs is the number of ping-pongs per fit point (nexchanges).
	PingPongs int
	// OffsetAlg is "skampi" (default) or "meanrtt".
	OffsetAlg string
	// RecomputeIntercept re-measures each intercept after its fit
	// (Algorithm 2); for HCA2 it is the hierarchical_intercepts variant.
	RecomputeIntercept bool
	// NodeID is this rank's node index, the H2HCA split colour.
	NodeID int
	// SocketID is this rank's socket within its node (e.g. the hwloc
	// package index); used by "h3hca" only. Left 0 on all ranks, h3hca
	// behaves like h2hca.
	SocketID int
	// CheckRanks is the sample size of CheckClockAccuracy (default: all
	// ranks up to 64, else 64).
	CheckRanks int
	// EarlyExit is SKaMPIOffset.EarlyExit (0: off).
	EarlyExit int
	// FitSpan (seconds, GCLOCK_FIT_SPAN) spreads every client's fit points
	// over at least this span of its clock, trading sync time for a
	// longer regression baseline and so a better slope (0: back to back,
	// as in the papers).
	FitSpan float64
	// NoEndAnchor (GCLOCK_SYNC_ANCHOR=0) keeps the fitted models as they
	// are. By default a sync that learns clock models (HCA3, HCA2, HCA,
	// JK, and H2HCA over them; not H3HCA) ends with an end anchor: one
	// offset-only pass of the resync's tree (NewResyncAlg) that keeps each
	// rank's fitted slope and re-measures its offset at the end of the
	// sync, where tracemerge puts the epoch's knot (EndAnchor).
	NoEndAnchor bool
}

// DefaultConfig returns the defaults: H2HCA with HCA3 between nodes and
// ClockPropSync within them, DefaultFitPoints fit points of DefaultPingPongs
// SKaMPI ping-pongs.
func DefaultConfig() Config {
	return Config{
		Algorithm: DefaultAlgorithm,
		Inter:     DefaultInter,
		Intra:     DefaultIntra,
		Mid:       DefaultMid,
		FitPoints: DefaultFitPoints,
		PingPongs: DefaultPingPongs,
		OffsetAlg: DefaultOffsetAlg,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Algorithm == "" {
		c.Algorithm = d.Algorithm
	}
	if c.Inter == "" {
		c.Inter = d.Inter
	}
	if c.Intra == "" {
		c.Intra = d.Intra
	}
	if c.Mid == "" {
		c.Mid = DefaultMid
	}
	if c.FitPoints <= 0 {
		c.FitPoints = d.FitPoints
	}
	if c.PingPongs <= 0 {
		c.PingPongs = d.PingPongs
	}
	if c.OffsetAlg == "" {
		c.OffsetAlg = d.OffsetAlg
	}
	return c
}

var (
	algorithms = []string{"h2hca", "h3hca", "hca3", "hca2", "hca", "jk", "skampi", "clockprop", "none"}
	offsetAlgs = []string{"skampi", "meanrtt"}
)

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// ConfigFromEnv reads the configuration from the environment through getenv
// (os.Getenv in production): GCLOCK_SYNC, GCLOCK_SYNC_INTER,
// GCLOCK_SYNC_INTRA, GCLOCK_SYNC_MID, GCLOCK_FITPOINTS, GCLOCK_PINGPONGS, GCLOCK_OFFSET_ALG,
// GCLOCK_RECOMPUTE_INTERCEPT, GCLOCK_FIT_SPAN, GCLOCK_SYNC_ANCHOR. Unset variables keep their defaults. NodeID is
// left to the caller.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	str := func(name string, dst *string, allowed []string) error {
		v := strings.ToLower(strings.TrimSpace(getenv(name)))
		if v == "" {
			return nil
		}
		if !oneOf(v, allowed) {
			return fmt.Errorf("clocksync: %s=%q: want one of %s", name, v, strings.Join(allowed, ", "))
		}
		*dst = v
		return nil
	}
	num := func(name string, dst *int) error {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("clocksync: %s=%q: want a positive integer", name, v)
		}
		*dst = n
		return nil
	}
	levels := []string{"hca3", "hca2", "hca", "jk", "skampi", "clockprop"}
	if err := str("GCLOCK_SYNC", &c.Algorithm, algorithms); err != nil {
		return c, err
	}
	if err := str("GCLOCK_SYNC_INTER", &c.Inter, levels); err != nil {
		return c, err
	}
	if err := str("GCLOCK_SYNC_INTRA", &c.Intra, levels); err != nil {
		return c, err
	}
	if err := str("GCLOCK_SYNC_MID", &c.Mid, levels); err != nil {
		return c, err
	}
	if err := num("GCLOCK_FITPOINTS", &c.FitPoints); err != nil {
		return c, err
	}
	if err := num("GCLOCK_PINGPONGS", &c.PingPongs); err != nil {
		return c, err
	}
	if err := str("GCLOCK_OFFSET_ALG", &c.OffsetAlg, offsetAlgs); err != nil {
		return c, err
	}
	if v := strings.TrimSpace(getenv("GCLOCK_FIT_SPAN")); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return c, fmt.Errorf("clocksync: GCLOCK_FIT_SPAN=%q: want a duration in seconds >= 0", v)
		}
		c.FitSpan = f
	}
	flag := func(name string, dst *bool) error {
		v := strings.TrimSpace(getenv(name))
		switch strings.ToLower(v) {
		case "":
		case "1", "true", "yes", "on":
			*dst = true
		case "0", "false", "no", "off":
			*dst = false
		default:
			return fmt.Errorf("clocksync: %s=%q: want 1/0, true/false, yes/no or on/off", name, v)
		}
		return nil
	}
	anchor := !c.NoEndAnchor
	if err := flag("GCLOCK_SYNC_ANCHOR", &anchor); err != nil {
		return c, err
	}
	c.NoEndAnchor = !anchor
	if err := flag("GCLOCK_RECOMPUTE_INTERCEPT", &c.RecomputeIntercept); err != nil {
		return c, err
	}
	return c, nil
}

func (c Config) newOffsetAlg() (OffsetAlg, error) {
	switch c.OffsetAlg {
	case "skampi":
		return &SKaMPIOffset{PingPongs: c.PingPongs, EarlyExit: c.EarlyExit}, nil
	case "meanrtt":
		return &MeanRTTOffset{PingPongs: c.PingPongs}, nil
	}
	return nil, fmt.Errorf("unknown offset algorithm %q (want skampi or meanrtt)", c.OffsetAlg)
}

// NewSyncAlg builds the synchronisation algorithm named name from c (the
// offset algorithm, fit points and ping-pongs of c; "h2hca" uses c.Inter,
// c.Intra and c.NodeID). "none" returns nil.
func (c Config) NewSyncAlg(name string) (SyncAlg, error) {
	c = c.withDefaults()
	if name == "none" {
		return nil, nil
	}
	if name == "clockprop" {
		return ClockPropSync{}, nil
	}
	if name == "h3hca" {
		var lv [3]SyncAlg
		for i, n := range []string{c.Inter, c.Mid, c.Intra} {
			a, err := c.NewSyncAlg(n)
			if err != nil || a == nil {
				return nil, fmt.Errorf("h3hca level %d %q: %v", i, n, err)
			}
			if _, ok := a.(*H2HCA); ok {
				return nil, fmt.Errorf("h3hca level %d cannot be h2hca", i)
			}
			if _, ok := a.(*HlHCA); ok {
				return nil, fmt.Errorf("h3hca level %d cannot be h3hca", i)
			}
			lv[i] = a
		}
		return NewH3HCA(lv[0], lv[1], lv[2], c.NodeID, c.SocketID), nil
	}
	if name == "h2hca" {
		inter, err := c.NewSyncAlg(c.Inter)
		if err != nil || inter == nil {
			return nil, fmt.Errorf("h2hca inter-node level %q: %v", c.Inter, err)
		}
		intra, err := c.NewSyncAlg(c.Intra)
		if err != nil || intra == nil {
			return nil, fmt.Errorf("h2hca intra-node level %q: %v", c.Intra, err)
		}
		if _, nested := inter.(*H2HCA); nested {
			return nil, fmt.Errorf("h2hca inter-node level cannot be h2hca")
		}
		if _, nested := intra.(*H2HCA); nested {
			return nil, fmt.Errorf("h2hca intra-node level cannot be h2hca")
		}
		return &H2HCA{Inter: inter, Intra: intra, NodeID: c.NodeID}, nil
	}
	o, err := c.newOffsetAlg()
	if err != nil {
		return nil, err
	}
	switch name {
	case "hca3":
		return &HCA3{FitPoints: c.FitPoints, Offset: o, RecomputeIntercept: c.RecomputeIntercept, FitSpan: c.FitSpan}, nil
	case "hca2":
		return &HCA2{FitPoints: c.FitPoints, Offset: o, RecomputeIntercept: c.RecomputeIntercept, FitSpan: c.FitSpan}, nil
	case "hca":
		return &HCA{FitPoints: c.FitPoints, Offset: o, FitSpan: c.FitSpan}, nil
	case "jk":
		return &JK{FitPoints: c.FitPoints, Offset: o, RecomputeIntercept: c.RecomputeIntercept, FitSpan: c.FitSpan}, nil
	case "skampi":
		return &SKaMPISync{Offset: o}, nil
	}
	return nil, fmt.Errorf("unknown sync algorithm %q (want one of %s)", name, strings.Join(algorithms, ", "))
}

// Result is what Sync returns to the MPI library for one sync epoch.
type Result struct {
	// Global is the global clock of this rank.
	Global Clock
	// Model is the flattened model: offset(x) = Slope*x + Intercept
	// relative to the local clock passed to Sync (global = x - offset(x)).
	Model LinearModel
	// Chain is the per-level models, innermost first (see Flatten).
	Chain []LinearModel
	// Algorithm names the algorithm, e.g. "h2hca(hca3/skampi,clockprop)".
	Algorithm string
	// Params records all parameters as strings.
	Params               map[string]string
	FitPoints, PingPongs int
	// Duration is the sync's duration in seconds on the local clock.
	Duration float64
	// Bound bounds |Global - reference| (seconds) when the model was made
	// (SyncBound); -1: not known. Also in Params["bound_ns"].
	Bound float64
	// Knot is Bound with the global time it holds at and its slope bound
	// (SyncKnotBound; meaningful when Bound >= 0). Also in
	// Params["knot_at_s"] and Params["bound_slope"].
	Knot KnotBound
	// Anchor is the end anchor's resynchronisation (nil without one),
	// with its communicators: the recorder reuses it for its resync
	// epochs.
	Anchor *ResyncAlg

	alg SyncAlg // the algorithm run (EndAnchor shares H2HCA's communicators)
}

// endAnchored reports whether Sync ends with an end anchor: the
// algorithm learns clock models (slopes) and NoEndAnchor is not set.
// Offset-only and shared-clock algorithms have nothing to re-anchor.
func (c Config) endAnchored() bool {
	if c.NoEndAnchor {
		return false
	}
	fits := func(name string) bool {
		switch name {
		case "hca3", "hca2", "hca", "jk":
			return true
		}
		return false
	}
	switch c.Algorithm {
	case "h2hca":
		return fits(c.Inter)
	case "h3hca":
		// NewResyncAlg keeps two levels only: its node members would copy
		// the leader's clock across the sockets H3HCA syncs apart.
		return false
	}
	return fits(c.Algorithm)
}

// SyncBound is the error bound of rank t.Rank()'s global clock g after a
// sync over t: 0 on rank 0 (the reference), g's ClockBound where the
// algorithm computed one (HCA3, HCA3Offset, and ClockPropSync copying
// them), -1 otherwise.
func SyncBound(t Transport, g Clock) float64 {
	if t.Rank() == 0 {
		return 0
	}
	if b, ok := ClockBound(g); ok {
		return b
	}
	return -1
}

// SyncKnotBound is SyncBound with the time the bound holds at and its
// slope bound (KnotBound): the zero KnotBound on rank 0; ok false when
// not known.
func SyncKnotBound(t Transport, g Clock) (KnotBound, bool) {
	if t.Rank() == 0 {
		return KnotBound{}, true
	}
	return ClockKnotBound(g)
}

// setBoundParams records res's bound, where it holds and its slope bound
// in res.Params (bound_ns, knot_at_s, bound_slope), or removes them when
// not known.
func (res *Result) setBoundParams(t Transport, g Clock) {
	res.Bound = SyncBound(t, g)
	k, ok := SyncKnotBound(t, g)
	if !ok {
		k = KnotBound{Bound: -1}
	}
	res.Knot = k
	if v := BoundParam(res.Bound); v != "" && ok {
		res.Params["bound_ns"] = v
		res.Params["knot_at_s"] = strconv.FormatFloat(k.At, 'f', 9, 64)
		res.Params["bound_slope"] = strconv.FormatFloat(k.Slope, 'g', 4, 64)
		return
	}
	delete(res.Params, "bound_ns")
	delete(res.Params, "knot_at_s")
	delete(res.Params, "bound_slope")
}

// BoundParam formats a SyncBound for an epoch's Params["bound_ns"] ("" when
// not known).
func BoundParam(b float64) string {
	if b < 0 {
		return ""
	}
	return strconv.FormatFloat(b*1e9, 'f', 1, 64)
}

// Sync runs the synchronisation selected by cfg over t (collective: every
// rank of t calls it) on top of local, the rank's local clock, and returns
// the global clock of this rank and its flattened model: SyncModels, then
// EndAnchor.
func Sync(cfg Config, t Transport, local Clock) (*Result, error) {
	res, err := SyncModels(cfg, t, local)
	if err != nil {
		return nil, err
	}
	if err := EndAnchor(cfg, t, local, res); err != nil {
		return nil, err
	}
	return res, nil
}

// EndAnchor ends a sync that learned clock models (cfg.endAnchored: not
// with NoEndAnchor, offset-only or shared-clock algorithms, or H3HCA) by
// re-measuring every rank's offset now with one offset-only pass of the
// resync tree (NewResyncAlg), keeping the fitted slopes (collective).
//
// Why: tracemerge takes an epoch's knot, the model's value at the epoch's
// end. A fitted model is a regression over the sync's whole duration (a
// second over TCP between hosts), composed over the tree's rounds, each
// fitted at another time; on a clock whose frequency wanders during the
// sync its value at the end misses by microseconds (4 namespace hosts
// over TCP, 2026-11-25: 2.3 µs) while an offset measured at the end, like
// a resync's knot, does not. res is updated in place: Global, Model,
// Chain, Bound, Duration, Anchor and Params (end_anchor_alg,
// fit_bound_ns, end_anchor_shift_ns). Call it right before the epoch ends
// (after the self-check): the knot is extrapolated with the fitted slope
// from the anchor's measurement to the epoch's end.
func EndAnchor(cfg Config, t Transport, local Clock, res *Result) error {
	cfg = cfg.withDefaults()
	if !cfg.endAnchored() || res.Global == nil {
		return nil
	}
	start := local.GetTime()
	fit := res.Model
	ra, err := NewResyncAlg(cfg, fit)
	if err != nil {
		return fmt.Errorf("clocksync: end anchor: %w", err)
	}
	if res.Bound >= 0 {
		ra.SetPriorSlopeBound(res.Knot.Slope)
	}
	if h, ok := res.alg.(*H2HCA); ok {
		ra.shareComms(h)
	}
	g, err := ra.SyncClocks(t, local)
	if err != nil {
		return fmt.Errorf("clocksync: end anchor %s on rank %d of %d: %w", ra.Name(), t.Rank(), t.Size(), err)
	}
	if res.Params == nil {
		res.Params = map[string]string{}
	}
	res.Params["end_anchor_alg"] = ra.Name()
	res.Anchor = ra
	res.Duration += local.GetTime() - start
	fitBound, anchorBound := res.Bound, SyncBound(t, g)
	if fitBound >= 0 {
		res.Params["fit_bound_ns"] = BoundParam(fitBound)
	}
	if anchorLoose(anchorBound, fitBound) {
		// A disturbed anchor (its ping-pongs all delayed: other load took
		// the cores) can miss by its whole bound; the fit's regression
		// over the sync was not disturbed alike. Keep the fit. The bounds
		// pass down the tree, so a client of a loose anchor is loose too.
		res.Params["end_anchor_kept"] = "fit"
		res.Params["end_anchor_bound_ns"] = BoundParam(anchorBound)
		return nil
	}
	res.Params["end_anchor_kept"] = "anchor"
	res.Global = g
	res.Model, res.Chain = FlattenTo(g, local)
	// How far the anchor moved the knot: anchored minus fitted global
	// time now.
	x := local.GetTime()
	shift := (fit.Slope*x + fit.Intercept) - (res.Model.Slope*x + res.Model.Intercept)
	res.Params["end_anchor_shift_ns"] = strconv.FormatFloat(shift*1e9, 'f', 1, 64)
	res.setBoundParams(t, g)
	return nil
}

// anchorLoose reports whether an end anchor's bound (seconds) is too
// loose to replace the fitted knot: above 1 µs and above 4 times the
// fit's bound (the loose-knot rule of correct.NewCorrector). Unknown
// bounds (< 0) and the reference (0) never are.
func anchorLoose(anchorBound, fitBound float64) bool {
	return fitBound > 0 && anchorBound > 1e-6 && anchorBound > 4*fitBound
}

// SyncModels is Sync without the end anchor: the algorithm's fitted
// models.
func SyncModels(cfg Config, t Transport, local Clock) (*Result, error) {
	cfg = cfg.withDefaults()
	alg, err := cfg.NewSyncAlg(cfg.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("clocksync: %w", err)
	}
	res := &Result{
		Algorithm: "none",
		FitPoints: cfg.FitPoints,
		PingPongs: cfg.PingPongs,
		Params: map[string]string{
			"algorithm":           cfg.Algorithm,
			"fitpoints":           strconv.Itoa(cfg.FitPoints),
			"pingpongs":           strconv.Itoa(cfg.PingPongs),
			"offset_alg":          cfg.OffsetAlg,
			"recompute_intercept": strconv.FormatBool(cfg.RecomputeIntercept),
			"end_anchor":          strconv.FormatBool(cfg.endAnchored()),
			"ranks":               strconv.Itoa(t.Size()),
		},
	}
	if cfg.Algorithm == "h2hca" || cfg.Algorithm == "h3hca" {
		res.Params["inter"] = cfg.Inter
		res.Params["intra"] = cfg.Intra
		res.Params["node_id"] = strconv.Itoa(cfg.NodeID)
	}
	if cfg.Algorithm == "h3hca" {
		res.Params["mid"] = cfg.Mid
		res.Params["socket_id"] = strconv.Itoa(cfg.SocketID)
	}
	if cfg.EarlyExit > 0 {
		res.Params["early_exit"] = strconv.Itoa(cfg.EarlyExit)
	}
	if cfg.FitSpan > 0 {
		res.Params["fit_span"] = strconv.FormatFloat(cfg.FitSpan, 'g', -1, 64)
	}
	start := local.GetTime()
	g := local
	if alg != nil {
		res.Algorithm = alg.Name()
		if g, err = alg.SyncClocks(t, local); err != nil {
			return nil, fmt.Errorf("clocksync: sync %s on rank %d of %d: %w", alg.Name(), t.Rank(), t.Size(), err)
		}
	}
	res.Duration = local.GetTime() - start
	res.Global = g
	res.alg = alg
	res.Model, res.Chain = FlattenTo(g, local)
	res.setBoundParams(t, g)
	return res, nil
}
