package clocksync_test

import (
	"math"
	"testing"

	"github.com/gclock/gclock/clocksync"
	"github.com/gclock/gclock/clocksync/sim"
)

// runLayout runs cfg on a world whose simulated nodes are sockets (own
// clocks), two sockets per physical node; NodeID is the physical node,
// SocketID the socket within it (0 or 1).
func runLayout(t *testing.T, p sim.Params, cfg clocksync.Config) (maxErr0, maxErr10 float64, res []*clocksync.Result) {
	t.Helper()
	w := sim.New(p)
	res = make([]*clocksync.Result, p.Ranks)
	err := w.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
		c := cfg
		c.NodeID, c.SocketID = w.NodeOf(r)/2, w.NodeOf(r)%2
		var err error
		res[r], err = clocksync.Sync(c, tr, clk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	T := w.MaxNow()
	for r, x := range res {
		maxErr0 = math.Max(maxErr0, math.Abs(w.Error(r, x.Global, T)))
		maxErr10 = math.Max(maxErr10, math.Abs(w.Error(r, x.Global, T+10)))
	}
	return maxErr0, maxErr10, res
}

// TestH3HCA_SocketsWithOwnClocks: 5 nodes x 2 sockets with their own
// clocks, uneven cores per socket. ClockPropSync across sockets (H2HCA with
// clockprop inside a node) is wrong there; H3HCA with HCA3 between the
// sockets of a node and ClockPropSync inside a socket is right.
func TestH3HCA_SocketsWithOwnClocks(t *testing.T) {
	p := sim.DefaultParams(41, 10, 3) // 10 sockets, 4-5 cores each
	cfg := cfgFor("h3hca", 50, 30)
	e0, e10, res := runLayout(t, p, cfg)
	t.Logf("%s: %.3f µs at 0 s, %.3f µs at 10 s", res[0].Algorithm, e0*1e6, e10*1e6)
	if res[0].Algorithm != "h3hca(hca3/skampi,hca3/skampi,clockprop)" {
		t.Errorf("Algorithm = %q", res[0].Algorithm)
	}
	if e0 > 0.3e-6 || e10 > 5e-6 {
		t.Errorf("h3hca error %.3f / %.3f µs too large", e0*1e6, e10*1e6)
	}
	wrong, _, _ := runLayout(t, p, cfgFor("h2hca", 50, 30))
	if wrong < 10e-6 {
		t.Errorf("h2hca with clockprop across sockets with different clocks: error only %.3f µs, the test layout is not exercising sockets", wrong*1e6)
	}
}

// TestHlHCA_TwoLevelsIsH2HCA: the generic scheme with two levels and the
// node colour reproduces Algorithm 4 exactly.
func TestHlHCA_TwoLevelsIsH2HCA(t *testing.T) {
	p := unevenNodes(2)
	w1, w2 := sim.New(p), sim.New(p)
	m1 := make([]clocksync.LinearModel, p.Ranks)
	m2 := make([]clocksync.LinearModel, p.Ranks)
	mk := func() clocksync.SyncAlg {
		return &clocksync.HCA3{FitPoints: 20, Offset: &clocksync.SKaMPIOffset{PingPongs: 10}}
	}
	if err := w1.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
		g, err := (&clocksync.H2HCA{Inter: mk(), Intra: clocksync.ClockPropSync{}, NodeID: w1.NodeOf(r)}).SyncClocks(tr, clk)
		m1[r], _ = clocksync.Flatten(g)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := w2.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
		g, err := (&clocksync.HlHCA{Levels: []clocksync.SyncAlg{mk(), clocksync.ClockPropSync{}}, Colors: []int{w2.NodeOf(r)}}).SyncClocks(tr, clk)
		m2[r], _ = clocksync.Flatten(g)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for r := range m1 {
		if m1[r] != m2[r] {
			t.Fatalf("rank %d: H2HCA %+v, HlHCA %+v", r, m1[r], m2[r])
		}
	}
}

// TestH3HCA_WithoutSocketsIsH2HCA: all socket ids 0 (the caller does not
// know sockets) gives H2HCA's models (up to the virtual time the extra
// splits take: the fits happen slightly later on drifting clocks).
func TestH3HCA_WithoutSocketsIsH2HCA(t *testing.T) {
	p := unevenNodes(4)
	// H3HCA has no end anchor (Config.NoEndAnchor): compare with H2HCA's
	// fitted models.
	c2 := cfgFor("h2hca", 20, 10)
	c2.NoEndAnchor = true
	h2, err := sim.RunSync(p, c2)
	if err != nil {
		t.Fatal(err)
	}
	w := sim.New(p)
	models := make([]clocksync.LinearModel, p.Ranks)
	if err := w.Run(func(r int, tr clocksync.Transport, clk *sim.Clock) error {
		c := cfgFor("h3hca", 20, 10)
		c.NodeID, c.SocketID = w.NodeOf(r), 0
		res, err := clocksync.Sync(c, tr, clk)
		if err == nil {
			models[r] = res.Model
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for r := range models {
		a, b := models[r], h2.Results[r].Model
		if math.Abs(a.Slope-b.Slope) > 1e-9 || math.Abs(a.Offset(0.1)-b.Offset(0.1)) > 2e-9 {
			t.Fatalf("rank %d: h3hca without sockets %v, h2hca %v", r, a, b)
		}
	}
}
