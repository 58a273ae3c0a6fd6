// The serial order in a partitioned pass (part.go): per-producer sources
// cut into rounds, the merge of their events by the serial merge key, and
// the key that orders records on process 0.

package merge

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gclock/gclock/merge/datamodel"
)

// partSource is a consumer's view of one producer's stream: segments of
// payload by round, and the last round the producer is done with.
type partSource struct {
	p    int
	box  *inbox
	done int32
	eos  bool
	segs []partMsg
}

// fill reads messages until the producer is done with round r.
func (s *partSource) fill(r int32, last int32) error {
	for s.done < r && !s.eos {
		m, err := s.box.get(r)
		if err != nil {
			return err
		}
		if m.eos {
			s.eos, s.done = true, last
		} else {
			s.done = max(s.done, m.done)
		}
		if len(m.ev) > 0 || len(m.body) > 0 {
			if len(s.segs) > 0 && m.round < s.segs[len(s.segs)-1].round {
				return fmt.Errorf("parallel analysis: process %d sent round %d after %d", s.p, m.round, s.segs[len(s.segs)-1].round)
			}
			s.segs = append(s.segs, m)
		}
	}
	return nil
}

// take removes and returns the segments of round r.
func (s *partSource) take(r int32) []partMsg {
	i := 0
	for i < len(s.segs) && s.segs[i].round <= r {
		i++
	}
	out := s.segs[:i:i]
	s.segs = s.segs[i:]
	return out
}

// evCursor walks one source's events of a round.
type evCursor struct {
	segs []partMsg
	si   int
	i    int
}

func (c *evCursor) cur() *datamodel.GEvent {
	for c.si < len(c.segs) && c.i >= len(c.segs[c.si].ev) {
		c.si++
		c.i = 0
	}
	if c.si >= len(c.segs) {
		return nil
	}
	return &c.segs[c.si].ev[c.i]
}

// evRank is the merge rank of an event or end marker.
func evRank(e *datamodel.GEvent) int32 {
	if e.Rank < 0 {
		return -1 - e.Rank
	}
	return e.Rank
}

// mergeRound calls fn for the events of the sources' segments in the
// serial merge order (Enter, then rank; each rank is one source's).
func mergeRound(cs []*evCursor, fn func(ev *datamodel.GEvent, src int) error) error {
	for {
		var best *datamodel.GEvent
		bi := -1
		for i, c := range cs {
			e := c.cur()
			if e == nil {
				continue
			}
			if best == nil || e.Enter < best.Enter || (e.Enter == best.Enter && evRank(e) < evRank(best)) {
				best, bi = e, i
			}
		}
		if best == nil {
			return nil
		}
		if err := fn(best, bi); err != nil {
			return err
		}
		cs[bi].i++
	}
}

// mergeKey is an event's place in the serial merge order: its global
// enter, its rank and its ordinal in the rank. The replays' keys (partKey,
// p2pRecKey) order by it first.
type mergeKey struct {
	enter float64
	rank  int32
	ord   uint64
}

// before reports whether a comes before b in the serial merge order, and
// same whether they are the same place.
func (a *mergeKey) before(b *mergeKey) (before, same bool) {
	if a.enter != b.enter {
		return a.enter < b.enter, false
	}
	if a.rank != b.rank {
		return a.rank < b.rank, false
	}
	return a.ord < b.ord, a.ord == b.ord
}

// partKey orders the serial finalisation points: the merge key of the
// event (sub 0) or rank end (sub 1) at which an instance was finalised,
// the event's ordinal in its rank, then (comm, seq) among the instances
// finalised at one point; sub 2 is the end of input.
type partKey struct {
	mergeKey
	sub  uint8
	comm int32
	seq  uint32
}

// appendKey appends k as recReader.readKey reads it (29 bytes).
func appendKey(b []byte, k *partKey) []byte {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k.enter))
	b = binary.LittleEndian.AppendUint32(b, uint32(k.rank))
	b = append(b, k.sub)
	b = binary.LittleEndian.AppendUint64(b, k.ord)
	b = binary.LittleEndian.AppendUint32(b, uint32(k.comm))
	return binary.LittleEndian.AppendUint32(b, k.seq)
}

func keyLess(a, b *partKey) bool {
	if before, same := a.mergeKey.before(&b.mergeKey); !same {
		return before
	}
	if a.sub != b.sub {
		return a.sub < b.sub
	}
	if a.comm != b.comm {
		return a.comm < b.comm
	}
	return a.seq < b.seq
}
