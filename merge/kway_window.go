package merge

// The windowed k-way merge (issue 37): with many ranks the merge does not
// pick one event at a time from a heap of every rank's cursor (at 16,384
// ranks each event was a 14-level sift and a cache miss on the next
// top's cursor, event and sums). It takes, rank after rank, every event
// below a time watermark, copies them into one window array and sorts the
// window; a rank's cursor and batch are touched once per window instead
// of once per event. The order is exactly the heap's.
//
// Which order is that: the heap compares each rank's head by (Enter,
// rank). A rank's stream is in time order except where it is not (an
// overlap deeper than the reorder limits: order.go counts those events),
// and an event that enters before its rank's previous one is on top as
// soon as its predecessor has left (every other head is at or after the
// predecessor). So the heap hands events on in the order of (effective
// key, rank, position in the rank's stream), where an event's effective
// key is the largest Enter of its rank's stream up to it. The window
// sorts by the same triple, so both merges give the same stream, ties and
// disorder included (TestKWayMerge_WindowedOrderIsTheHeapOrder).

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/gclock/gclock/merge/datamodel"
)

// windowRanks is the number of ranks from which the serial analysis
// merges in windows (a variable: tests set it to compare both merges).
var windowRanks = 512

// wEntry is one event of the window: its effective key, its cursor (the
// cursors are in ascending rank order, so ci orders like the rank) and its
// position in the window's event array (in the order the events were
// taken, so within one rank the stream's order).
type wEntry struct {
	key  float64
	ci   int32
	slot int32
}

func wLess(a, b wEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	if a.ci != b.ci {
		return a.ci < b.ci
	}
	return a.slot < b.slot
}

func wCmp(a, b wEntry) int {
	if wLess(a, b) {
		return -1
	}
	if wLess(b, a) {
		return 1
	}
	return 0
}

// windowMerge is the state of the windowed merge.
type windowMerge struct {
	cs    []*cursor
	head  []float64 // by ci: effective key of the cursor's next event
	mx    []float64 // by ci: effective key of the last event taken
	held  []int32   // by ci: events of the rank in the window (taken, not yet consumed)
	ended []bool    // by ci: the rank's stream has ended
	live  int       // cursors not ended

	ev          []datamodel.GEvent // the window's events, by slot
	endAt       []bool             // by slot: the rank's stream ends after this event
	ent, sorted []wEntry           // the window in taking order, and sorted
	tmp         []wEntry           // bucket sort's scratch
	bySlot      []wEntry           // the entries left for the next window, by slot
	count       [bucketSortDepth][]int32
	// rs: by ci, the rank's state, whose running sums the consumer
	// touches for an event of the rank, prefetched a few events ahead
	// (nil: none). The consumer finds the state here too: one array by
	// ci, whose entry the prefetch brought into the cache, instead of
	// the cursor (a cache miss per event at 16,384 ranks) and a
	// separate array of addresses (another).
	rs []*rankState
	// visit: gather's list of the cursors it takes events from
	visit []int32

	target int     // events a window aims at
	limit  int32   // events of one rank a window holds at most
	delta  float64 // the window's width in ns (adapted to target)
}

// prefetchAhead is how many events ahead of the one consumed the
// windowed merge prefetches.
const prefetchAhead = 8

// rsSumOff and rsPauseOff are the offsets in a rankState of the running
// sums the consumer of an event updates (analyzer.consume).
const (
	rsSumOff   = unsafe.Offsetof(rankState{}.sum) + unsafe.Offsetof(datamodel.RankSummary{}.Events)
	rsPauseOff = unsafe.Offsetof(rankState{}.pause) + unsafe.Offsetof(pauseState{}.last)
)

// windowTarget is the number of events a window of n ranks aims at: a few
// per rank, so that a rank's cursor is touched once for several events,
// and at most 2^16 (8 MB of events, within the last-level cache).
func windowTarget(n int) int { return min(1<<16, max(8192, 4*n)) }

func newWindowMerge(cs []*cursor) *windowMerge {
	n := len(cs)
	w := &windowMerge{cs: cs, head: make([]float64, n), mx: make([]float64, n), held: make([]int32, n),
		ended: make([]bool, n), live: n, target: windowTarget(n), delta: 1}
	// A rank's share of a window is bounded so that a burst (a rank with
	// many events in a short time) cannot make the window unbounded: the
	// window then ends just before the first event left out (cut).
	w.limit = int32(max(4, 2*w.target/max(n, 1)))
	// a window never holds more than limit events of each rank: its
	// arrays are made once at that size (grown by appending, the arrays
	// left behind cost tens of MB of peak RSS at 16,384 ranks)
	most := int(w.limit) * n
	w.ev, w.endAt = make([]datamodel.GEvent, 0, most), make([]bool, 0, most)
	w.ent, w.sorted, w.tmp = make([]wEntry, 0, most), make([]wEntry, 0, most), make([]wEntry, 0, most)
	w.bySlot = make([]wEntry, 0, most)
	for ci, c := range cs {
		w.mx[ci] = math.Inf(-1)
		w.head[ci] = c.b.ev[c.i].Enter
	}
	return w
}

// minHead is the smallest head key of the cursors not ended (+Inf: none);
// a NaN head counts as -Inf (it is taken in the next window whatever its
// watermark).
func (w *windowMerge) minHead() float64 {
	m := math.Inf(1)
	for ci, h := range w.head {
		if w.ended[ci] {
			continue
		}
		if h != h {
			return math.Inf(-1)
		}
		m = min(m, h)
	}
	return m
}

// gather takes every event with an effective key below wm from every
// rank (at most limit per rank in the window), appending them to the
// window, and returns the window's bound: the first entry not taken, as
// (key, ci) with every entry before it in order taken. took counts the
// events taken. A rank whose stream ends is marked at its last event.
func (w *windowMerge) gather(wm float64, all bool) (bk float64, bci int32, took int) {
	bk, bci = wm, -1
	if all {
		bk, bci = math.Inf(1), math.MaxInt32
	}
	// First the ranks to take from (their heads, limits and ends are in
	// arrays by ci, read in order), then their cursors, each prefetched
	// a few ranks ahead along its chain (the cursor, its batch, the
	// event at its head: three cache misses in a row at 16,384 ranks).
	w.visit = w.visit[:0]
	for ci, hk := range w.head {
		if w.ended[ci] || (hk >= wm && !all) || w.held[ci] >= w.limit {
			if !w.ended[ci] && w.held[ci] >= w.limit && (hk < bk || hk == bk && int32(ci) < bci || hk != hk) {
				// held back by the limit: nothing of this rank from
				// its head on can be consumed in this window
				bk, bci = hk, int32(ci)
				if hk != hk {
					bk = math.Inf(-1)
				}
			}
			continue
		}
		w.visit = append(w.visit, int32(ci))
	}
	deep := len(w.cs) >= prefetchRanks
	for vi, ci32 := range w.visit {
		if deep {
			w.prefetchCursor(vi)
		}
		ci := int(ci32)
		c := w.cs[ci]
		m := w.mx[ci]
		for {
			ev := &c.b.ev[c.i]
			k := ev.Enter
			if k < m {
				k = m // effective key: the largest Enter so far
			}
			if k >= wm && !all {
				break
			}
			if w.held[ci] >= w.limit {
				sk := k
				if sk != sk {
					sk = math.Inf(-1)
				}
				if sk < bk || sk == bk && int32(ci) < bci {
					bk, bci = sk, int32(ci)
				}
				break
			}
			m = k
			sk := k
			if sk != sk {
				sk = math.Inf(-1) // sorted first: NaN breaks every order
			}
			slot := int32(len(w.ev))
			w.ev = append(w.ev, *ev)
			w.endAt = append(w.endAt, false)
			w.ent = append(w.ent, wEntry{key: sk, ci: int32(ci), slot: slot})
			w.held[ci]++
			took++
			c.i++
			if c.i == len(c.b.ev) && !c.next() {
				w.endAt[slot] = true
				w.ended[ci] = true
				w.live--
				break
			}
		}
		w.mx[ci] = m
		if !w.ended[ci] {
			w.head[ci] = max(c.b.ev[c.i].Enter, m) // NaN if either is
		}
	}
	return bk, bci, took
}

// prefetchCursor asks for what gather needs of the cursors visited
// later than the vi-th, one link further at each distance: the cursor
// 8 ahead, the batch of the one 4 ahead (its cursor asked for before),
// the events from the head on (gatherHead of them) of the one 2 ahead
// (its batch asked for before).
func (w *windowMerge) prefetchCursor(vi int) {
	v := w.visit
	if j := vi + 8; j < len(v) {
		prefetchSpan(uintptr(unsafe.Pointer(w.cs[v[j]])), 1)
	}
	if j := vi + 4; j < len(v) {
		if b := w.cs[v[j]].b; b != nil {
			prefetchSpan(uintptr(unsafe.Pointer(b)), 1)
		}
	}
	if j := vi + 2; j < len(v) {
		if c := w.cs[v[j]]; c.b != nil && c.i < len(c.b.ev) {
			k := min(len(c.b.ev)-c.i, gatherHead)
			prefetchSpan(uintptr(unsafe.Pointer(&c.b.ev[c.i])), k*gEventSize/64)
		}
	}
}

// gatherHead is how many events from a cursor's head prefetchCursor asks
// for: about what a window takes of a rank at 16,384 ranks (its target
// of 4 events a rank), so that the copies of all of them, not only the
// first, find their lines on the way (the events after the head were a
// cache miss each; BenchmarkKWayMerge at 16,384 ranks, eight rounds
// against the head event alone: 227 against 245–251 cpu-ns an event).
const gatherHead = 4

// sortWindow sorts w.ent into w.sorted by (key, ci, slot).
func (w *windowMerge) sortWindow() {
	n := len(w.ent)
	w.sorted = slices.Grow(w.sorted[:0], n)[:n]
	w.tmp = slices.Grow(w.tmp[:0], n)[:n]
	w.bucketSort(w.ent, w.sorted, w.tmp, 0)
}

// bucketSortDepth bounds the levels of bucketSort: a bucket still large
// at the last level is sorted by comparisons.
const bucketSortDepth = 3

// bucketSort sorts src into dst (of src's length) by (key, ci, slot): a
// bucket sort by key (the keys of a window spread over its width), each
// bucket in turn the same way (events of many ranks close in time make a
// few buckets large), small ones by insertion. tmp is scratch of src's
// length; src is scratch too once scattered.
func (w *windowMerge) bucketSort(src, dst, tmp []wEntry, depth int) {
	n := len(src)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range src {
		lo, hi = min(lo, src[i].key), max(hi, src[i].key)
	}
	nb := n / 2
	if n < 64 || depth >= bucketSortDepth || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(hi > lo) {
		copy(dst, src)
		if !slices.IsSortedFunc(dst, wCmp) { // equal keys come in taking order
			slices.SortFunc(dst, wCmp)
		}
		return
	}
	scale := float64(nb) / (hi - lo)
	w.count[depth] = slices.Grow(w.count[depth][:0], nb+1)[:nb+1]
	cnt := w.count[depth]
	clear(cnt)
	bucket := func(k float64) int {
		b := int((k - lo) * scale) // monotone in k
		return min(max(b, 0), nb-1)
	}
	for i := range src {
		cnt[bucket(src[i].key)+1]++
	}
	for b := 1; b <= nb; b++ {
		cnt[b] += cnt[b-1]
	}
	// cnt[b] is bucket b's start; scatter advances it to its end
	for i := range src {
		b := bucket(src[i].key)
		dst[cnt[b]] = src[i]
		cnt[b]++
	}
	start := int32(0)
	for b := 0; b < nb; b++ {
		end := cnt[b]
		s := dst[start:end]
		switch {
		case len(s) <= 1:
		case len(s) > 32:
			t := tmp[start:end]
			copy(t, s)
			w.bucketSort(t, s, src[start:end], depth+1) // src's part is free now
		default:
			for i := 1; i < len(s); i++ {
				x := s[i]
				j := i
				for j > 0 && wLess(x, s[j-1]) {
					s[j] = s[j-1]
					j--
				}
				s[j] = x
			}
		}
		start = end
	}
}

// mergeWindows is analyzer.run's merge loop over the cursors cs (in
// ascending rank order, each on its first event) in windows.
func (a *analyzer) mergeWindows(cs []*cursor, sinks []datamodel.Sink, total int64) (int64, error) {
	w := newWindowMerge(cs)
	w.rs = make([]*rankState, len(cs))
	for ci, c := range cs {
		w.rs[ci] = c.rs
	}
	rss := w.rs
	a.startWindow(w.minHead())
	var n int64
	err := w.run(func(ev *datamodel.GEvent, ci int32, end bool) error {
		rs := rss[ci]
		if err := a.consume(ev, rs, sinks); err != nil {
			return err
		}
		n++
		if a.opt.Progress != nil && n&0xffff == 0 {
			a.opt.Progress(n, total)
		}
		if end {
			a.m.endRank(int32(rs.in.Rank))
		}
		return nil
	})
	return n, err
}

// run hands every event on to emit in the merged order, with its cursor
// and whether its rank's stream ends after it.
func (w *windowMerge) run(emit func(ev *datamodel.GEvent, ci int32, end bool) error) error {
	for w.live > 0 || len(w.ent) > 0 {
		carried := len(w.ent)
		mh := w.minHead()
		for _, e := range w.ent { // carried entries: not after any head of their rank
			mh = min(mh, e.key)
		}
		wm := max(mh+w.delta, math.Nextafter(mh, math.Inf(1)))
		all := math.IsInf(wm, 1) || wm != wm
		bk, bci, took := w.gather(wm, all)
		w.sortWindow()
		// consume what lies before the bound
		cons := 0
		for i, e := range w.sorted {
			if !(e.key < bk || e.key == bk && e.ci <= bci) {
				break
			}
			if w.rs != nil && i+prefetchAhead < len(w.sorted) {
				// every event's rank is another one, cold: ask for
				// what a later event needs while this one is consumed
				// (addresses only: the state is not loaded here)
				f := w.sorted[i+prefetchAhead]
				p := uintptr(unsafe.Pointer(w.rs[f.ci]))
				prefetchLines4(uintptr(unsafe.Pointer(&w.ev[f.slot])), p+rsSumOff, p+rsPauseOff)
			}
			if err := emit(&w.ev[e.slot], e.ci, w.endAt[e.slot]); err != nil {
				return err
			}
			w.held[e.ci]--
			cons++
		}
		if cons == 0 {
			// cannot happen (the window's smallest entry is always
			// below its bound); never loop for ever
			return fmt.Errorf("internal error: the windowed merge made no progress (%d events waiting, %d ranks open)", carried+took, w.live)
		}
		// the rest waits for the next window: moved to the front of
		// the window's arrays in slot order (each to a slot not after
		// its own, so in place)
		rest := w.sorted[cons:]
		if len(rest) > 256 {
			// in slot order by marking the slots (a sort of thousands
			// of entries by slot was 3 % of a 16,384-rank run's CPU)
			nev := len(w.ev)
			w.bySlot = slices.Grow(w.bySlot[:0], nev)[:nev]
			for i := range w.bySlot {
				w.bySlot[i].slot = -1
			}
			for _, e := range rest {
				w.bySlot[e.slot] = e
			}
			rest = rest[:0] // the same entries, in slot order
			for _, e := range w.bySlot {
				if e.slot >= 0 {
					rest = append(rest, e)
				}
			}
		} else {
			slices.SortFunc(rest, func(a, b wEntry) int { return int(a.slot - b.slot) })
		}
		w.ent = w.ent[:0]
		for i, e := range rest {
			w.ev[i], w.endAt[i] = w.ev[e.slot], w.endAt[e.slot]
			w.ent = append(w.ent, wEntry{key: e.key, ci: e.ci, slot: int32(i)})
		}
		w.ev, w.endAt = w.ev[:len(rest)], w.endAt[:len(rest)]
		// the next window's width: aim at target events (growing at
		// most twofold, so that the window stays near its target)
		f := float64(w.target) / float64(max(took, 1))
		w.delta *= min(2, max(0.25, f))
		if !(w.delta > 0) || math.IsInf(w.delta, 0) {
			w.delta = 1
		}
	}
	return nil
}
