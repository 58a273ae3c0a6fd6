// Package clocksync implements the clock synchronisation algorithms of
// Hunold & Carpen-Amarie (HCA, HCA2, HCA3, JK, SKaMPI-Offset,
// Mean-RTT-Offset, ClockPropSync, H2HCA, HlHCA) against a small transport
// interface, so the same code runs over PMPI and on a simulated network.
package clocksync

// Clock provides the time of one process in seconds. A local clock wraps the
// hardware timer; a global clock (GlobalClockLM) wraps another Clock and a
// linear model of its offset to the reference.
type Clock interface {
	GetTime() float64
}

// Transport is all clocksync needs of MPI: blocking point-to-point between
// known pairs, a byte broadcast and a split. Ranks are ranks of this
// transport's communicator.
type Transport interface {
	Rank() int
	Size() int
	// Send sends v to dst (MPI_Send of len(v) doubles).
	Send(dst int, v []float64) error
	// Ssend is the synchronous variant (MPI_Ssend) used by Mean-RTT-Offset.
	Ssend(dst int, v []float64) error
	// Recv receives exactly len(v) doubles from src into v.
	Recv(src int, v []float64) error
	// Bcast broadcasts b from root; non-roots get the root's bytes back
	// (their b is ignored and may be nil).
	Bcast(root int, b []byte) ([]byte, error)
	// Split partitions the communicator like MPI_Comm_split. color < 0 means
	// MPI_UNDEFINED: the caller gets a nil Transport.
	Split(color, key int) (Transport, error)
	// Barrier synchronises all members.
	Barrier() error
}
