package trace

import (
	"fmt"
	"sort"
)

// Meta is everything a trace file says besides its events: the header plus
// the comm, epoch and footer frames appended during the run, folded
// together, and the damage found while reading.
type Meta struct {
	Name   string // file name as given to Open / NewReader
	Size   int64  // file size in bytes
	Minor  int    // minor format version of the file
	Header Header
	// Comms in the order first written; a later frame with the same ID and
	// Local replaces the earlier one (e.g. to record FreedNS).
	Comms []Comm
	// Epochs sorted by Index; a later frame with the same Index replaces
	// the earlier one.
	Epochs []Epoch
	// Footer is nil when the file has no intact footer frame (the recorder
	// did not finish cleanly).
	Footer *Footer
	// EventChunks counts EVENTS frames with intact checksums found by Open.
	// A chunk whose payload then fails to decode is skipped during
	// iteration and added to Damage.
	EventChunks int
	// Chunks locates each intact EVENTS frame.
	Chunks []ChunkInfo
	// Damage lists skipped regions in file order as found by Open, followed
	// by undecodable chunks found while iterating.
	Damage []Damage
	// UnknownFrames counts intact frames of kinds this reader does not know
	// (written by a newer minor version); they are skipped.
	UnknownFrames int

	decodeFailed int // chunks with intact checksums that failed to decode
	idx          commIndex
}

// commIndex finds Comms by (ID, Local), by Local and by ID in O(1): a
// program that creates and frees communicators in a loop writes hundreds of
// thousands of Comm frames, and a scan per frame made reading such a file
// quadratic (56 s for two ranks of 100,000 MPI_Comm_dup/free).
type commIndex struct {
	n       int // len(Comms) the maps describe
	byKey   map[commKey]int
	byLocal map[uint32]int // the last in Comms order
	byID    map[uint64]int // the last in Comms order
}

type commKey struct {
	id    uint64
	local uint32
}

// index returns the comm index, rebuilt if Comms changed other than
// through addComm.
func (m *Meta) index() *commIndex {
	x := &m.idx
	if x.byKey != nil && x.n == len(m.Comms) {
		return x
	}
	*x = commIndex{byKey: map[commKey]int{}, byLocal: map[uint32]int{}, byID: map[uint64]int{}}
	for i := range m.Comms {
		x.add(m.Comms[i], i)
	}
	x.n = len(m.Comms)
	return x
}

func (x *commIndex) add(c Comm, i int) {
	k := commKey{c.ID, c.Local}
	if _, ok := x.byKey[k]; !ok {
		x.byKey[k] = i
	}
	x.byLocal[c.Local] = i
	x.byID[c.ID] = i
}

// ChunkInfo locates one intact EVENTS frame.
type ChunkInfo struct {
	Index  int   // event chunk index (counting damaged chunks too)
	Offset int64 // byte offset of the frame header
	Bytes  int   // payload bytes (compressed)
	Codec  Codec // compression of the payload (from the frame's flags)
	// From the SPAN frame after it (minor version 1), when Spanned: its
	// events and earliest and latest local enter time.
	Events      int
	First, Last int64
	Spanned     bool
}

// CommByLocal returns the comm with the given Local index (the index used
// in Event.Comm). If several comms were written with the same Local index,
// the last one wins.
func (m *Meta) CommByLocal(idx uint32) (*Comm, bool) {
	if i, ok := m.index().byLocal[idx]; ok {
		return &m.Comms[i], true
	}
	return nil, false
}

// CommByID returns the comm with the given agreed ID (the last written if
// several share it).
func (m *Meta) CommByID(id uint64) (*Comm, bool) {
	if i, ok := m.index().byID[id]; ok {
		return &m.Comms[i], true
	}
	return nil, false
}

// Epoch returns the sync epoch with the given Index (0 = MPI_Init,
// 1 = MPI_Finalize).
func (m *Meta) Epoch(index int) (*Epoch, bool) {
	// Sorted as the reader keeps them: a binary search; a slice set by
	// hand may not be, so a miss looks at every epoch.
	i := sort.Search(len(m.Epochs), func(i int) bool { return m.Epochs[i].Index >= index })
	if i < len(m.Epochs) && m.Epochs[i].Index == index {
		return &m.Epochs[i], true
	}
	for i := range m.Epochs {
		if m.Epochs[i].Index == index {
			return &m.Epochs[i], true
		}
	}
	return nil, false
}

// LastEpoch returns the epoch with the highest Index, if any.
func (m *Meta) LastEpoch() (*Epoch, bool) {
	if len(m.Epochs) == 0 {
		return nil, false
	}
	return &m.Epochs[len(m.Epochs)-1], true
}

// Complete reports whether the file ended cleanly (a footer was found) and
// no damage was recorded.
func (m *Meta) Complete() bool { return m.Footer != nil && len(m.Damage) == 0 }

// addComm folds one COMM frame in; false if it names its members by a
// reference (Comm.Same) to a communicator this file does not define (that
// frame was damaged), in which case its Members stay empty.
func (m *Meta) addComm(c Comm) bool {
	x := m.index()
	ok := true
	if c.Same != 0 && len(c.Members) == 0 {
		i, found := x.byLocal[c.Same-1]
		ok = found
		if found {
			c.Members = m.Comms[i].Members
		}
	}
	if i, found := x.byKey[commKey{c.ID, c.Local}]; found {
		m.Comms[i] = c
		return ok
	}
	m.Comms = append(m.Comms, c)
	x.add(c, len(m.Comms)-1)
	x.n = len(m.Comms)
	return ok
}

// addEpoch keeps Epochs sorted by Index with one binary search per frame:
// the recorder writes a resync epoch every 2 s by default, so a day-long
// run has 43,200 of them, and a scan and a sort per frame made reading its
// file take 8.7 s.
func (m *Meta) addEpoch(e Epoch) {
	i := sort.Search(len(m.Epochs), func(i int) bool { return m.Epochs[i].Index >= e.Index })
	switch {
	case i < len(m.Epochs) && m.Epochs[i].Index == e.Index:
		m.Epochs[i] = e
	case i == len(m.Epochs):
		m.Epochs = append(m.Epochs, e)
	default:
		m.Epochs = append(m.Epochs, Epoch{})
		copy(m.Epochs[i+1:], m.Epochs[i:])
		m.Epochs[i] = e
	}
}

// Summary describes the file's state in one line for users, e.g.
// "rank-00007.gct: 11 intact chunks, 1 dropped; no footer (the recorder did
// not finish cleanly)".
func (m *Meta) Summary() string {
	s := fmt.Sprintf("%s: %d intact chunks", m.Name, m.EventChunks-m.decodeFailed)
	dropped := 0
	for _, d := range m.Damage {
		if d.Kind == KindEvents.String() {
			dropped++
		}
	}
	s += fmt.Sprintf(", %d dropped", dropped)
	if other := len(m.Damage) - dropped; other > 0 {
		s += fmt.Sprintf(", %d other damaged regions", other)
	}
	if m.Footer == nil {
		s += "; no footer (the recorder did not finish cleanly)"
	}
	return s
}
