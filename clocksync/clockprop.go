package clocksync

import "fmt"

// ClockPropSync is ClockPropSync (Algorithm 3 of the H2HCA paper): the
// process p_ref (rank 0 of the node-level communicator) broadcasts its
// flattened clock (FlattenClock) and every other process rebuilds it on top
// of its own local clock (UnflattenClock). Only correct when all members
// read the same time source.
type ClockPropSync struct{}

// Name returns "clockprop".
func (ClockPropSync) Name() string { return "clockprop" }

// SyncClocks implements Algorithm 3. The buffer size and contents go in one
// Transport.Bcast (the two MPI_Bcast calls of the paper are the PMPI
// transport's business).
func (ClockPropSync) SyncClocks(t Transport, clk Clock) (Clock, error) {
	const pRef = 0
	if t.Rank() == pRef {
		if _, err := t.Bcast(pRef, FlattenClock(clk)); err != nil {
			return nil, fmt.Errorf("clockprop: bcast clock: %w", err)
		}
		return clk, nil
	}
	buf, err := t.Bcast(pRef, nil)
	if err != nil {
		return nil, fmt.Errorf("clockprop: bcast clock: %w", err)
	}
	c, err := UnflattenClock(buf, BaseClock(clk))
	if err != nil {
		return nil, fmt.Errorf("clockprop: %w", err)
	}
	return c, nil
}
