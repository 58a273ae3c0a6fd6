package clocksync

import (
	"fmt"
	"reflect"
)

// H2HCA is the two-level hierarchical scheme of Algorithm 4 (H2HCA paper):
// the first process of every node (NodeID is the split colour) takes part
// in the inter-node synchronisation Inter on comm_internode, then every node
// runs Intra (normally ClockPropSync) on comm_intranode on top of the
// resulting clock. Node sizes may differ and may be 1.
type H2HCA struct {
	Inter, Intra SyncAlg
	NodeID       int

	// The communicators of the last SyncClocks and the transport they were
	// split from: a second SyncClocks on the same transport (the resync
	// epochs reuse one H2HCA) takes them again instead of splitting anew.
	// Every member reuses or splits together, as all run the same epochs.
	// Splitting per epoch leaked two communicators per resync, ran out of
	// the recorder's private communicator table after about 30 epochs on
	// the leaders only and left the other ranks waiting in the next split.
	parent       Transport
	intra, inter Transport
}

// Name returns "h2hca(<inter>,<intra>)".
func (a *H2HCA) Name() string {
	return fmt.Sprintf("h2hca(%s,%s)", a.Inter.Name(), a.Intra.Name())
}

// SyncClocks implements SYNC_CLOCKS of Algorithm 4. The reference is world
// rank 0: it is the first process of its node and rank 0 of
// comm_internode (ranks keep their order through the splits).
func (a *H2HCA) SyncClocks(t Transport, clk Clock) (Clock, error) {
	if a.NodeID < 0 {
		return nil, fmt.Errorf("h2hca: node id %d < 0", a.NodeID)
	}
	intra, inter, err := a.split(t)
	if err != nil {
		return nil, err
	}
	// Step 1: synchronisation between nodes.
	dummy := NewGlobalClockLM(clk, LinearModel{}) // dummy clock
	if t.Rank() == 0 {
		withBound(dummy, 0) // the reference
	}
	var global1 Clock = dummy
	if inter != nil && inter.Size() > 1 {
		if global1, err = a.Inter.SyncClocks(inter, clk); err != nil {
			return nil, fmt.Errorf("h2hca: inter-node %s: %w", a.Inter.Name(), err)
		}
	}
	// Step 2: synchronisation within the compute node.
	global2 := global1
	if intra.Size() > 1 {
		if global2, err = a.Intra.SyncClocks(intra, global2); err != nil {
			return nil, fmt.Errorf("h2hca: intra-node %s: %w", a.Intra.Name(), err)
		}
	}
	return global2, nil
}

// split returns comm_intranode and comm_internode (nil on ranks that lead
// no node), made at the first call for t and reused after.
func (a *H2HCA) split(t Transport) (intra, inter Transport, err error) {
	if a.parent == t && a.intra != nil {
		return a.intra, a.inter, nil
	}
	intra, err = t.Split(a.NodeID, t.Rank())
	if err != nil {
		return nil, nil, fmt.Errorf("h2hca: create intra-node communicator: %w", err)
	}
	color := -1
	if intra.Rank() == 0 {
		color = 0
	}
	inter, err = t.Split(color, t.Rank())
	if err != nil {
		return nil, nil, fmt.Errorf("h2hca: create inter-node communicator: %w", err)
	}
	if isNilTransport(inter) {
		inter = nil
	}
	a.parent, a.intra, a.inter = t, intra, inter
	return intra, inter, nil
}

// isNilTransport reports whether t is nil or a typed nil pointer (a Split
// implementation returning (*T)(nil) for MPI_UNDEFINED).
func isNilTransport(t Transport) bool {
	if t == nil {
		return true
	}
	v := reflect.ValueOf(t)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
