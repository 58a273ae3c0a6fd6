package rundir

import (
	"github.com/gclock/gclock/trace"
)

// RankMeta is what the analysis needs to know about one rank file before reading
// its events: the header, the communicators and sync epochs the file
// defines, the footer (nil when the rank did not finish cleanly) and the
// chunks the reader had to drop.
type RankMeta struct {
	Header trace.Header
	Comms  []trace.Comm
	Epochs []trace.Epoch
	Footer *trace.Footer
	// EventChunks is the number of event chunks the file holds (0 when
	// unknown); used for progress only.
	EventChunks int
	Damage      []trace.Damage
	// Live is what the rank's live sidecar gave back when the file has no
	// footer (the rank died): nil when there was none to read.
	Live *LiveInfo
}

// LiveInfo describes the events recovered from a rank's live sidecar
// (trace.ReadLive) after its events from the rank file.
type LiveInfo struct {
	Path    string
	Events  int
	Threads int
	LastNS  int64  // latest recovered exit (local ns), 0 when none
	Err     string // what could not be read ("" all)
	// End, InFlight, LastCall and Tids are trace.LiveRecovery's: how the
	// process ended (nil: not recorded), the calls its threads were in,
	// each thread's last returned call (package merge/postmortem).
	End      *trace.End
	InFlight []trace.InFlight
	LastCall []*trace.Event
	Tids     []int32
}

// Source is one rank's trace as the analysis reads it. *trace.Reader satisfies it
// through OpenTrace; tests use in-memory sources.
type Source interface {
	// Meta returns the rank's metadata. It may be called again after
	// NextChunk returned io.EOF to learn about damage found while reading.
	Meta() *RankMeta
	// NextChunk returns the next chunk of events, reusing dst's storage,
	// and io.EOF after the last one. Other errors end the rank's stream.
	NextChunk(dst []trace.Event) ([]trace.Event, error)
}

// PieceSource is a Source that can also hand out its events in pieces of
// at most max (a trace file: trace.Reader.NextEvents), so that the decoder
// of one of many ranks holds a piece instead of a whole chunk.
type PieceSource interface {
	NextEvents(dst []trace.Event, max int) ([]trace.Event, error)
}

// HorizonSource is a Source that can say how early its events still to
// come may start (trace.Reader.Horizon: the SPAN frames of the chunks not
// yet read): a local time, math.MaxInt64 when nothing is left; ok false
// when it cannot promise anything. The decoder then orders a rank's
// overlapping chunks exactly instead of within ReorderWindow.
type HorizonSource interface {
	Horizon() (ns int64, ok bool)
}

// Opener opens the rank file at path.
type Opener func(path string) (Source, error)

// MemSource is an in-memory Source (tests, benchmarks, synthetic input).
// Events are handed out ChunkSize at a time (all at once when 0).
type MemSource struct {
	M         RankMeta
	Events    []trace.Event
	ChunkSize int
	pos       int
}

// Meta implements Source.
func (s *MemSource) Meta() *RankMeta { return &s.M }

// NextChunk implements Source.
func (s *MemSource) NextChunk(dst []trace.Event) ([]trace.Event, error) {
	if s.pos >= len(s.Events) {
		return dst[:0], errEOF
	}
	n := len(s.Events) - s.pos
	if s.ChunkSize > 0 && n > s.ChunkSize {
		n = s.ChunkSize
	}
	dst = append(dst[:0], s.Events[s.pos:s.pos+n]...)
	s.pos += n
	return dst, nil
}

// Rewind makes the source deliver its events again from the start.
func (s *MemSource) Rewind() { s.pos = 0 }

// Rest returns the events not handed out yet.
func (s *MemSource) Rest() []trace.Event { return s.Events[s.pos:] }

// traceSource adapts *trace.Reader to Source; a rank file without footer
// is followed by the events of its live sidecar.
type traceSource struct {
	r        *trace.Reader
	m        RankMeta
	live     *trace.LiveRecovery
	liveDone bool
	// first events of the file's chunks (only with a live sidecar): a
	// handed half already in the file is skipped
	firsts map[liveKey]bool
}

// shareHeader gives the reader's copy of the header (trace.Reader keeps
// one in its Meta) the maps and strings of the source's, which Load has
// replaced by the ones all ranks share: the reader's copy kept every
// rank's own settings map and strings alive (≈ 430 bytes a rank, 7 MB at
// 16,384 ranks).
func (s *traceSource) shareHeader() { s.r.Meta().Header = s.m.Header }

// fileSize implements sizer: the size of the rank file when it was opened.
func (s *traceSource) fileSize() int64 { return s.r.Meta().Size }

type liveKey struct {
	enter, exit int64
	op          trace.Op
	seq, req    uint32
}

func keyOf(e *trace.Event) liveKey {
	return liveKey{e.EnterNS, e.ExitNS, e.Op, e.Seq, e.Req}
}

// OpenTrace opens a gclock trace file (trace.Open) as a Source.
func OpenTrace(path string) (Source, error) {
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	r.InStartOrder() // a rarely calling thread's chunk is read when it starts
	ts := &traceSource{r: r}
	tm := r.Meta()
	ts.m = RankMeta{Header: tm.Header, Comms: tm.Comms, Epochs: tm.Epochs, Footer: tm.Footer,
		EventChunks: tm.EventChunks, Damage: tm.Damage}
	if tm.Footer == nil {
		lp := path + trace.LiveSuffix
		rec, err := trace.ReadLive(lp)
		if err != trace.ErrNoLive {
			info := &LiveInfo{Path: lp}
			if rec != nil {
				ts.live, ts.firsts = rec, map[liveKey]bool{}
				info.Threads, info.LastNS = rec.Threads, rec.LastNS
				info.End, info.InFlight, info.LastCall, info.Tids = rec.End, rec.InFlight, rec.LastCall, rec.Tids
				for _, h := range rec.Halves {
					info.Events += len(h.Events) // until NextChunk skips written halves
				}
			}
			if err != nil {
				info.Err = err.Error()
			}
			ts.m.Live = info
		}
	}
	return ts, nil
}

// Meta implements Source; Damage is refreshed from the reader, which adds
// chunks it finds undecodable while iterating.
func (s *traceSource) Meta() *RankMeta {
	s.m.Damage = s.r.Meta().Damage
	return &s.m
}

// NextChunk implements Source: the rank file's chunks, then the live
// sidecar's events as one chunk.
func (s *traceSource) NextChunk(dst []trace.Event) ([]trace.Event, error) {
	out, err := s.r.NextChunk(dst)
	if s.firsts != nil && err == nil && len(out) > 0 {
		s.firsts[keyOf(&out[0])] = true
	}
	if err == errEOF && !s.liveDone && s.live != nil {
		s.liveDone = true
		out = out[:0]
		n := 0
		for _, h := range s.live.Halves {
			if h.Handed && s.firsts[keyOf(&h.Events[0])] {
				continue // written before the process died
			}
			out = append(out, h.Events...)
			n += len(h.Events)
		}
		s.m.Live.Events = n
		if n > 0 {
			return out, nil
		}
	}
	return out, err
}

// Horizon implements HorizonSource: the reader's, while the live
// sidecar's events (no spans) are not due.
func (s *traceSource) Horizon() (int64, bool) {
	if s.live != nil {
		return 0, false
	}
	return s.r.Horizon()
}

// NextEvents implements PieceSource: the rank file in pieces; a rank file
// followed by its live sidecar goes by whole chunks (NextChunk), as the
// sidecar's halves are matched against the first event of each chunk.
func (s *traceSource) NextEvents(dst []trace.Event, max int) ([]trace.Event, error) {
	if s.live != nil {
		return s.NextChunk(dst)
	}
	return s.r.NextEvents(dst, max)
}

// Close closes the file.
func (s *traceSource) Close() error { return s.r.Close() }

// Release implements Releaser: the reader drops its chunk buffers.
func (s *traceSource) Release() { s.r.Release() }

// Releaser is a Source that can drop the buffers it keeps between reads
// (read again, it allocates them anew). A rank's decoder calls it when
// the rank's stream has ended, so that thousands of finished ranks do not
// hold their last chunk while the other ranks end and the reports are
// written.
type Releaser interface{ Release() }

// DropReader closes src when it reads a rank file (OpenTrace) and lets go
// of the reader and of the live sidecar's events, keeping only the rank's
// metadata, which it returns (the same *RankMeta as src.Meta()): what a
// process of a partitioned pass keeps of a rank file it does not decode.
// For any other Source it does nothing and returns ok false.
func DropReader(src Source) (m *RankMeta, ok bool) {
	ts, ok := src.(*traceSource)
	if !ok {
		return nil, false
	}
	m = ts.Meta()
	_ = ts.Close() // read-only: nothing to lose
	// m points into ts: let go of what else it holds.
	ts.r, ts.live, ts.firsts = nil, nil, nil
	return m, true
}

// LateDamage words, one problem line each naming the file, the damage
// found while reading ri's events that was not known when the file was
// opened (Load reported that); nil when there is none.
func (ri *RankInput) LateDamage() []string {
	m := ri.Src.Meta()
	if m == nil || len(m.Damage) <= ri.knownDamage {
		return nil
	}
	var out []string
	for _, d := range m.Damage[ri.knownDamage:] {
		out = append(out, damageString(ri.Path, d))
	}
	return out
}
