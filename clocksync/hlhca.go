package clocksync

import (
	"fmt"
	"strings"
)

// HlHCA is the l-level hierarchical scheme of Section IV of the H2HCA paper
// (H2HCA generalised; H3HCA is l = 3: nodes, sockets, cores). Levels[0]
// synchronises the first process of every top-level group (e.g. node),
// Levels[k] the first process of every depth-(k+1) group within each
// depth-k group, and the last level all processes of each innermost group,
// each level on top of the clock the previous one produced.
//
// Colors[d] is this rank's group at depth d+1 within its depth-d group
// (len(Colors) == len(Levels)-1): the depth-(d+1) groups are split from the
// depth-d group, so they nest by construction and a colour only needs to be
// unique within its parent (e.g. the socket index within the node). With
// two levels and Colors = {NodeID} it is Algorithm 4; with all socket
// colours equal, H3HCA degenerates to H2HCA.
type HlHCA struct {
	Levels []SyncAlg
	Colors []int
}

// NewH3HCA returns the three-level scheme H3HCA: inter between nodes, mid
// between the sockets of a node, intra within a socket. socketID need only
// be unique within the node.
func NewH3HCA(inter, mid, intra SyncAlg, nodeID, socketID int) *HlHCA {
	return &HlHCA{Levels: []SyncAlg{inter, mid, intra}, Colors: []int{nodeID, socketID}}
}

// Name returns "h<l>hca(<level0>,<level1>,...)".
func (a *HlHCA) Name() string {
	names := make([]string, len(a.Levels))
	for i, l := range a.Levels {
		names[i] = l.Name()
	}
	return fmt.Sprintf("h%dhca(%s)", len(a.Levels), strings.Join(names, ","))
}

// SyncClocks runs the levels from the outermost inwards. The reference is
// rank 0 of t, which must be rank 0 of its group at every depth (true when
// ranks keep their order, as Split with key = rank guarantees).
func (a *HlHCA) SyncClocks(t Transport, clk Clock) (Clock, error) {
	L := len(a.Levels)
	if L < 1 || len(a.Colors) != L-1 {
		return nil, fmt.Errorf("h%dhca: %d levels need %d colours, got %d", L, L, L-1, len(a.Colors))
	}
	for d, c := range a.Colors {
		if c < 0 {
			return nil, fmt.Errorf("h%dhca: colour %d at depth %d < 0", L, c, d+1)
		}
	}
	// groups[d] is this rank's group at depth d (groups[0] = t), split
	// from its parent group.
	groups := make([]Transport, L)
	groups[0] = t
	for d := 1; d < L; d++ {
		g, err := groups[d-1].Split(a.Colors[d-1], groups[d-1].Rank())
		if err != nil {
			return nil, fmt.Errorf("h%dhca: create depth-%d communicator: %w", L, d, err)
		}
		groups[d] = g
	}
	// comms[k] is this rank's communicator at level k, nil if not a member:
	// the first processes of the depth-(k+1) groups within its depth-k
	// group.
	comms := make([]Transport, L)
	comms[L-1] = groups[L-1]
	for k := 0; k < L-1; k++ {
		color := -1
		if groups[k+1].Rank() == 0 {
			color = 0
		}
		c, err := groups[k].Split(color, groups[k].Rank())
		if err != nil {
			return nil, fmt.Errorf("h%dhca: create level-%d communicator: %w", L, k, err)
		}
		if !isNilTransport(c) {
			comms[k] = c
		}
	}
	var g Clock = NewGlobalClockLM(clk, LinearModel{}) // dummy clock
	for k, alg := range a.Levels {
		if comms[k] == nil || comms[k].Size() < 2 {
			continue
		}
		var err error
		if g, err = alg.SyncClocks(comms[k], g); err != nil {
			return nil, fmt.Errorf("h%dhca: level %d %s: %w", L, k, alg.Name(), err)
		}
	}
	return g, nil
}
