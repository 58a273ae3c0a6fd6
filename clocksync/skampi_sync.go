package clocksync

import "fmt"

// SKaMPISync is the offset-only synchronisation of SKaMPI
// (Compute_And_Set_Clock_Offsets, Algorithm 8 of the HCA paper): the root
// measures the offset to every other rank in turn with the offset algorithm
// (SKaMPI_PingPong) and each rank subtracts its offset; no drift model, so
// the error grows with the skew. O(p) rounds. The per-rank MPI_Barrier of
// the paper is left out: the blocking ping-pongs already order the rounds.
type SKaMPISync struct {
	Offset OffsetAlg
}

// Name returns "skampi/<offset>".
func (a *SKaMPISync) Name() string { return "skampi/" + a.Offset.Name() }

// SyncClocks returns a GlobalClockOffset over clk.
func (a *SKaMPISync) SyncClocks(t Transport, clk Clock) (Clock, error) {
	const root = 0
	p, r := t.Size(), t.Rank()
	if r == root {
		for c := 0; c < p; c++ {
			if c == root {
				continue
			}
			if _, err := a.Offset.MeasureOffset(t, clk, root, c); err != nil {
				return nil, fmt.Errorf("skampi sync: offset of %d: %w", c, err)
			}
		}
		return &GlobalClockOffset{Base: clk}, nil
	}
	ob, err := a.Offset.MeasureOffset(t, clk, root, r)
	if err != nil {
		return nil, fmt.Errorf("skampi sync: %w", err)
	}
	return &GlobalClockOffset{Base: clk, Offset: ob.Offset}, nil
}
