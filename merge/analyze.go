package merge

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gclock/gclock/trace"
)

// InstanceKey names one collective instance: communicator id and sequence
// number.
type InstanceKey struct {
	Comm uint64
	Seq  uint32
}

// Options configure Analyze. The zero value analyses everything with the
// interpolating clock model.
type Options struct {
	Clock ClockMode
	// From and To bound the analysed window in ns relative to the run start
	// (the earliest corrected MPI_Init exit). HasTo false means no end.
	// Events go to sinks when their Enter lies in the window; instances are
	// aggregated when their first Enter does.
	From  float64
	To    float64
	HasTo bool
	// TopN is how many worst instances (by entry skew) to keep; default 10.
	TopN int
	// Capture lists instances to return in full, corrected and raw
	// (the zoomed Figure-10 view).
	Capture []InstanceKey
	// Sinks receive every event in the window in global Enter order. The
	// *GEvent is only valid during Add.
	Sinks []Sink
	// Progress, when set, is called now and then with events processed and
	// the expected total (0 when unknown).
	Progress func(done, total int64)
	// Resolve resolves call sites; nil uses a fresh NewResolver().
	Resolve *Resolver
}

// Zoom is one captured instance, corrected and raw.
type Zoom struct {
	Key   InstanceKey
	Found bool
	Inst  Instance // corrected times
	Raw   Instance // raw (uncorrected, coarsely aligned) times
}

// Result is what Analyze returns.
type Result struct {
	Analysis *Analysis
	Zooms    []Zoom
	// WorstRaw holds Analysis.Worst[i] with raw (uncorrected) times.
	WorstRaw []Instance
	// RunStartNS is the global time the window is relative to.
	RunStartNS float64
}

// batchPool recycles per-rank event batches between decoders and merger.
type batch struct{ ev []GEvent }

// rankState is the per-rank state of one analysis pass.
type rankState struct {
	in      *RankInput
	corr    *Corrector
	shift   float64
	commIdx []int32 // by Comm.Local: dense comm index, -1 unknown
	commPos []int32 // by Comm.Local: position in the comm's members
	objs    []trace.Object
	sites   map[uint64]int32 // pc -> site index
	// decoder results
	out      chan *batch
	free     chan *batch
	err      error
	unknown  int // events on undefined communicators
	unsorted int // events sent after later ones (overlap beyond the reorder window)
	badTimes int // exit before enter
	pcCache  [256]pcSlot
}

type pcSlot struct {
	pc   uint64
	site int32
	ok   bool
}

// Analyze makes one streaming pass over run: corrects every timestamp,
// merges all ranks by global time, matches collective instances and
// computes the metrics. Memory is bounded by the number of ranks times the
// reader's chunk size plus the open (not yet complete) instances.
func Analyze(run *Run, opt Options) (*Result, error) {
	p, err := Prepare(run, opt)
	if err != nil {
		return nil, err
	}
	return p.Run()
}

// Pass is a prepared analysis: correction models and communicator tables
// are built, the window is known, no event has been read yet.
type Pass struct{ a *analyzer }

// Prepare builds the correction models and communicator tables of run.
func Prepare(run *Run, opt Options) (*Pass, error) {
	if run == nil || len(run.Ranks) == 0 {
		return nil, &LoadError{Kind: ErrNoData, Msg: "no rank files to analyse"}
	}
	if opt.TopN <= 0 {
		opt.TopN = 10
	}
	if opt.Resolve == nil {
		opt.Resolve = NewResolver()
	}
	return &Pass{a: newAnalyzer(run, opt)}, nil
}

// Window returns the analysed window in absolute global ns. end is +Inf
// when neither --to nor every rank's footer bounds it; ok reports whether
// start is known before reading (every rank without MPI_Init time makes it
// the first event's time instead).
func (p *Pass) Window() (start, end float64, ok bool) {
	a := p.a
	if math.IsInf(a.runStart, 1) {
		return 0, math.Inf(1), false
	}
	start = a.runStart + a.opt.From
	end = math.Inf(1)
	if a.opt.HasTo {
		end = a.runStart + a.opt.To
	} else {
		last := math.Inf(-1)
		for _, rs := range a.ranks {
			if rs == nil {
				continue
			}
			f := rs.in.Meta.Footer
			if f == nil || f.EndNS == 0 {
				last = math.Inf(1)
				break
			}
			if g := rs.corr.Global(f.EndNS); g > last {
				last = g
			}
		}
		end = last
	}
	return start, end, true
}

// SetProgress sets the progress callback (see Options.Progress).
func (p *Pass) SetProgress(fn func(done, total int64)) { p.a.opt.Progress = fn }

// AddSink adds a sink to a prepared pass.
func (p *Pass) AddSink(s Sink) { p.a.opt.Sinks = append(p.a.opt.Sinks, s) }

// Run reads all events once and returns the analysis.
func (p *Pass) Run() (*Result, error) {
	if err := p.a.run(); err != nil {
		return nil, err
	}
	return p.a.result(), nil
}

// PCName returns a function naming a raw call-site pc for the exports
// (CSV, Perfetto), looking the pc up in the objects of the lowest rank
// whose object list contains it. With ASLR, ranks load objects at
// different bases, so this is exact for that rank and a best effort for
// others; the per-call-site tables of the Analysis are exact (resolved per
// rank). The function is safe for concurrent use (outputs run in their own
// goroutines).
func (p *Pass) PCName() func(pc uint64) string {
	a := p.a
	var mu sync.Mutex
	cache := map[uint64]string{}
	return func(pc uint64) string {
		mu.Lock()
		defer mu.Unlock()
		if s, ok := cache[pc]; ok {
			return s
		}
		name := ""
		for _, rs := range a.ranks {
			if rs == nil {
				continue
			}
			objs := rs.objs
			i := sort.Search(len(objs), func(i int) bool { return objs[i].Hi > pc })
			if i < len(objs) && objs[i].Lo <= pc && pc < objs[i].Hi {
				name = a.opt.Resolve.Resolve(objs[i].Path, pc-objs[i].Base).String()
				break
			}
		}
		if len(cache) < 1<<16 {
			cache[pc] = name
		}
		return name
	}
}

type analyzer struct {
	rn    *Run
	opt   Options
	ranks []*rankState // by world rank (nil when missing)
	m     matcher
	an    Analysis

	wFrom, wTo float64
	runStart   float64
	problems   []string

	ops       [64]opAccum
	sites     []siteKey
	siteIndex map[siteKey]int32
	siteMu    sync.Mutex
	csAcc     [][]*csAccum  // by site: one per op seen there
	rankAcc   []RankSummary // Events, TimeInMPI: merge goroutine
	rankWait  []rankWait    // metrics goroutine
	// finished instances travel in batches to the metrics goroutine
	finBatch  []*openInst
	finCh     chan []*openInst
	finDone   chan struct{}
	finErr    error
	worst     worstHeap
	zooms     []Zoom
	zoomIdx   map[InstanceKey]int
	clockViol int
	maxViol   float64
	first     bool
	instances int
	incomp    int
	events    int
	opMism    int
}

type rankWait struct {
	wait, lateness float64
	last           int
}

type opAccum struct {
	used                                     bool
	count, calls                             int
	total                                    float64
	entrySkew, exitSkew, wait, latency, span accum
	viol                                     int
	maxViol                                  float64
	histExit, histWait                       hist
}

type csAccum struct {
	site  int32
	op    trace.Op
	calls int
	total float64
	wait  accum
}

type siteKey struct {
	obj  string // object path, "" when the pc lies in no known object
	addr uint64 // vaddr inside obj (pc - base), or the raw pc
	pc   uint64 // one raw pc seen for it
}

func newAnalyzer(run *Run, opt Options) *analyzer {
	a := &analyzer{rn: run, opt: opt, siteIndex: map[siteKey]int32{}, first: true}
	a.an.Dir = run.Dir
	a.an.JobID = run.JobID
	a.an.WorldSize = run.WorldSize
	a.an.ClockMode = opt.Clock.String()
	a.an.MissingRanks = append([]int(nil), run.Missing...)
	a.problems = append(a.problems, run.Problems...)
	a.ranks = make([]*rankState, run.WorldSize)
	a.rankAcc = make([]RankSummary, run.WorldSize)
	a.rankWait = make([]rankWait, run.WorldSize)
	for r := range a.rankAcc {
		a.rankAcc[r].Rank = int32(r)
	}
	a.zoomIdx = map[InstanceKey]int{}
	for _, k := range opt.Capture {
		if _, dup := a.zoomIdx[k]; !dup {
			a.zoomIdx[k] = len(a.zooms)
			a.zooms = append(a.zooms, Zoom{Key: k})
		}
	}

	// Raw-mode alignment: ranks whose raw timebase is seconds away from the
	// reference (MPI_Wtime with per-process start points, different hosts'
	// monotonic clocks) are shifted so their MPI_Init exits coincide; closer
	// timebases are left untouched so raw shows the true raw clock error.
	var refStart int64
	for _, ri := range run.Ranks {
		if ri.Meta.Header.StartNS != 0 {
			refStart = ri.Meta.Header.StartNS
			break
		}
	}
	var fallback []string
	for _, ri := range run.Ranks {
		rs := &rankState{in: ri, sites: map[uint64]int32{}}
		h := &ri.Meta.Header
		if h.StartNS != 0 && refStart != 0 {
			if d := refStart - h.StartNS; d > 1e9 || d < -1e9 {
				rs.shift = float64(d)
			}
		}
		var note string
		rs.corr, note = NewCorrector(opt.Clock, ri.Meta.Epochs, rs.shift)
		if note != "" {
			fallback = append(fallback, fmt.Sprintf("rank %d: %s", ri.Rank, note))
		}
		rs.objs = append([]trace.Object(nil), h.Objects...)
		sort.Slice(rs.objs, func(i, j int) bool { return rs.objs[i].Lo < rs.objs[j].Lo })
		a.ranks[ri.Rank] = rs
		a.rankAcc[ri.Rank].Host = h.Host
	}
	if len(fallback) > 0 {
		a.problems = append(a.problems, "clock model fallback: "+strings.Join(firstN(fallback, 8), "; "))
	}
	a.buildComms()

	// The window is relative to the earliest corrected MPI_Init exit.
	a.runStart = math.Inf(1)
	for _, rs := range a.ranks {
		if rs != nil && rs.in.Meta.Header.StartNS != 0 {
			if g := rs.corr.Global(rs.in.Meta.Header.StartNS); g < a.runStart {
				a.runStart = g
			}
		}
	}
	return a
}

// buildComms assigns dense indices to the communicators all ranks define
// and maps every rank's local comm index to (dense index, member position).
func (a *analyzer) buildComms() {
	byID := map[uint64]int32{}
	var conflicts []string
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		maxLocal := -1
		for _, c := range rs.in.Meta.Comms {
			if int(c.Local) > maxLocal && c.Local < maxLocalComms {
				maxLocal = int(c.Local)
			}
		}
		rs.commIdx = make([]int32, maxLocal+1)
		rs.commPos = make([]int32, maxLocal+1)
		for i := range rs.commIdx {
			rs.commIdx[i] = -1
		}
		for _, c := range rs.in.Meta.Comms {
			if c.Local >= maxLocalComms {
				continue
			}
			pos := int32(-1)
			for i, w := range c.Members {
				if int(w) == rs.in.Rank {
					pos = int32(i)
					break
				}
			}
			if pos < 0 || len(c.Members) == 0 {
				continue // a comm this rank is not in: ignore
			}
			self := c.ID == trace.CommSelfID || len(c.Members) == 1
			var idx int32
			if self {
				// per-rank: never matched across ranks
				idx = a.m.addComm(c.ID, c.Members, a.rn.WorldSize)
			} else if i, ok := byID[c.ID]; ok {
				idx = i
				if !sameMembers(a.m.comms[i].members, c.Members) {
					conflicts = append(conflicts, fmt.Sprintf("comm %#x differs between rank %d and an earlier rank", c.ID, rs.in.Rank))
					continue
				}
			} else {
				idx = a.m.addComm(c.ID, c.Members, a.rn.WorldSize)
				byID[c.ID] = idx
			}
			rs.commIdx[c.Local] = idx
			rs.commPos[c.Local] = pos
		}
	}
	if len(conflicts) > 0 {
		a.problems = append(a.problems, "communicator definitions disagree: "+strings.Join(firstN(conflicts, 5), "; "))
	}
	// per world rank: the comms it is a member of (for end-of-stream)
	a.m.memberOf = make([][]memberRef, a.rn.WorldSize)
	for ci, cs := range a.m.comms {
		for pos, w := range cs.members {
			if int(w) >= 0 && int(w) < a.rn.WorldSize {
				a.m.memberOf[w] = append(a.m.memberOf[w], memberRef{comm: int32(ci), pos: int32(pos)})
			}
		}
	}
	a.m.ended = make([]bool, a.rn.WorldSize)
	a.m.fin = a.enqueue
}

// maxLocalComms bounds the per-rank communicator index a file may use.
const maxLocalComms = 1 << 16

func sameMembers(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maxBatch bounds the events of one batch handed from a decoder to the
// merger, so memory per rank stays ≈ the reader's chunk plus a few
// batches, whatever the chunk size.
const maxBatch = 2048

// decode is one rank's decoder goroutine: read chunks, correct, batch.
func (a *analyzer) decode(rs *rankState, done <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(rs.out)
	defer func() {
		if r := recover(); r != nil {
			rs.err = fmt.Errorf("reader failed: %v", r)
		}
	}()
	var raw []trace.Event
	empty := 0
	d := &rankOrder{rs: rs, done: done, lastSent: math.Inf(-1)}
	for {
		var err error
		raw, err = rs.in.Src.NextChunk(raw[:0])
		if err != nil {
			if !errors.Is(err, errEOF) {
				rs.err = err
			}
			d.finish()
			return
		}
		if len(raw) == 0 {
			if empty++; empty > 1<<20 {
				rs.err = errors.New("reader returns empty chunks without end")
				d.finish()
				return
			}
			continue
		}
		empty = 0
		for off := 0; off < len(raw); off += maxBatch {
			part := raw[off:min(off+maxBatch, len(raw))]
			b := d.newBatch()
			a.convert(rs, part, b)
			if !d.add(b) {
				return
			}
		}
	}
}

// ReorderWindow is how many events a rank's stream is held back to put
// overlapping chunks back in time order. A rank writes one chunk per
// thread buffer, so with several threads calling MPI, chunks overlap in
// time. The window is only used once a rank's chunks are seen to overlap.
const ReorderWindow = 1 << 15

// rankOrder turns one rank's batches (each sorted) into a time-ordered
// stream. It holds the latest batch back; when a new batch starts before
// the held one ends, it switches to a min-heap of up to ReorderWindow
// events. Events that still come out before already sent ones (overlap
// deeper than the window) are counted in rs.unsorted.
type rankOrder struct {
	rs       *rankState
	done     <-chan struct{}
	held     *batch
	heap     []GEvent // min-heap by Enter, used after the first overlap
	reorder  bool
	out      *batch
	lastSent float64
	stopped  bool
}

func (d *rankOrder) newBatch() *batch {
	select {
	case b := <-d.rs.free:
		return b
	default:
		return &batch{ev: make([]GEvent, 0, maxBatch)}
	}
}

func (d *rankOrder) recycle(b *batch) {
	select {
	case d.rs.free <- b:
	default:
	}
}

// send hands a batch to the merger; false when the analysis was stopped.
func (d *rankOrder) send(b *batch) bool {
	if d.stopped {
		return false
	}
	for i := range b.ev {
		if b.ev[i].Enter < d.lastSent {
			d.rs.unsorted++
		} else {
			d.lastSent = b.ev[i].Enter
		}
	}
	select {
	case d.rs.out <- b:
		return true
	case <-d.done:
		d.stopped = true
		return false
	}
}

// add takes one sorted batch.
func (d *rankOrder) add(b *batch) bool {
	if d.reorder {
		return d.push(b)
	}
	if d.held == nil {
		d.held = b
		return true
	}
	h := d.held
	if b.ev[0].Enter < h.ev[len(h.ev)-1].Enter { // chunks overlap: reorder from now on
		d.reorder = true
		d.held = nil
		return d.push(h) && d.push(b)
	}
	d.held = b
	return d.send(h)
}

// push moves b's events into the heap and emits what the window allows.
func (d *rankOrder) push(b *batch) bool {
	for i := range b.ev {
		d.heap = append(d.heap, b.ev[i])
		siftUpEv(d.heap, len(d.heap)-1)
	}
	d.recycle(b)
	for len(d.heap) > ReorderWindow {
		if !d.emit(d.popEv()) {
			return false
		}
	}
	return true
}

func (d *rankOrder) emit(ev GEvent) bool {
	if d.out == nil {
		d.out = d.newBatch()
		d.out.ev = d.out.ev[:0]
	}
	d.out.ev = append(d.out.ev, ev)
	if len(d.out.ev) >= maxBatch {
		o := d.out
		d.out = nil
		return d.send(o)
	}
	return true
}

func (d *rankOrder) popEv() GEvent {
	h := d.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	d.heap = h[:n]
	siftDownEv(d.heap, 0)
	return top
}

// finish sends everything still held (end of the rank's stream).
func (d *rankOrder) finish() {
	if d.held != nil {
		h := d.held
		d.held = nil
		if !d.send(h) {
			return
		}
	}
	for len(d.heap) > 0 {
		if !d.emit(d.popEv()) {
			return
		}
	}
	if d.out != nil && len(d.out.ev) > 0 {
		d.send(d.out)
		d.out = nil
	}
}

func evLess(a, b *GEvent) bool {
	if a.Enter != b.Enter {
		return a.Enter < b.Enter
	}
	return a.LocalEnter < b.LocalEnter
}

func siftUpEv(h []GEvent, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !evLess(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDownEv(h []GEvent, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && evLess(&h[r], &h[l]) {
			m = r
		}
		if !evLess(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// convert corrects one piece of a rank's raw events into b, sorted by
// global Enter.
func (a *analyzer) convert(rs *rankState, raw []trace.Event, b *batch) {
	if cap(b.ev) < len(raw) {
		b.ev = make([]GEvent, len(raw))
	}
	b.ev = b.ev[:len(raw)]
	rank := int32(rs.in.Rank)
	corr := rs.corr
	cache := &rs.pcCache
	sorted := true
	last := math.Inf(-1)
	for i := range raw {
		e := &raw[i]
		g := &b.ev[i]
		g.Rank = rank
		g.Op = e.Op
		g.Seq = e.Seq
		g.Root = e.Root
		g.Sent = e.Sent
		g.Recv = e.Recv
		g.LocalEnter = e.EnterNS
		g.LocalExit = e.ExitNS
		g.Callsite = e.Callsite
		// direct-mapped pc cache in front of the per-rank map
		slot := &cache[(e.Callsite>>2)&uint64(len(cache)-1)]
		if slot.pc != e.Callsite || !slot.ok {
			slot.pc, slot.site, slot.ok = e.Callsite, a.siteOf(rs, e.Callsite), true
		}
		g.site = slot.site
		g.RawEnter = float64(e.EnterNS) + rs.shift
		g.RawExit = float64(e.ExitNS) + rs.shift
		g.Enter = corr.Global(e.EnterNS)
		g.Exit = corr.Global(e.ExitNS)
		if e.ExitNS < e.EnterNS {
			rs.badTimes++
		}
		if int(e.Comm) < len(rs.commIdx) && rs.commIdx[e.Comm] >= 0 {
			g.commIdx = rs.commIdx[e.Comm]
			g.commRank = rs.commPos[e.Comm]
			g.CommID = a.m.comms[g.commIdx].id
		} else {
			g.commIdx = -1
			g.commRank = -1
			g.CommID = 0
			if e.Op.IsCollective() {
				rs.unknown++
			}
		}
		if g.Enter < last {
			sorted = false
		}
		last = g.Enter
	}
	if !sorted {
		sort.SliceStable(b.ev, func(i, j int) bool { return b.ev[i].Enter < b.ev[j].Enter })
	}
}

// cursor is one rank's position in the k-way merge.
type cursor struct {
	rs  *rankState
	b   *batch
	i   int
	key float64
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return cursorLess(h[i], h[j]) }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// siftTop restores the heap after the top cursor's key grew. It is
// heap.Fix(h, 0) specialised to the concrete type (no interface calls: this
// runs once per event); container/heap still does Init and Pop.
func (h cursorHeap) siftTop() {
	n := len(h)
	i := 0
	c := h[0]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && cursorLess(h[r], h[l]) {
			m = r
		}
		if !cursorLess(h[m], c) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = c
}

func cursorLess(a, b *cursor) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.rs.in.Rank < b.rs.in.Rank
}

// next advances c to its next batch; false at the end of the rank's stream.
func (c *cursor) next() bool {
	if c.b != nil {
		select {
		case c.rs.free <- c.b:
		default:
		}
		c.b = nil
	}
	b, ok := <-c.rs.out
	if !ok {
		return false
	}
	c.b, c.i, c.key = b, 0, b.ev[0].Enter
	return true
}

func (a *analyzer) run() error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var total int64
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		if f := rs.in.Meta.Footer; f != nil && total >= 0 {
			total += int64(f.Events)
		} else {
			total = -1
		}
		rs.out = make(chan *batch, 2)
		rs.free = make(chan *batch, 4)
		wg.Add(1)
		go a.decode(rs, done, &wg)
	}
	if total < 0 {
		total = 0
	}
	a.startMetrics()
	defer func() {
		close(done)
		wg.Wait()
		a.stopMetrics()
	}()
	for r, rs := range a.ranks {
		if rs == nil {
			a.m.endRank(int32(r))
		}
	}

	h := make(cursorHeap, 0, len(a.rn.Ranks))
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		c := &cursor{rs: rs}
		if c.next() {
			h = append(h, c)
		} else {
			a.m.endRank(int32(rs.in.Rank))
		}
	}
	heap.Init(&h)
	if math.IsInf(a.runStart, 1) && len(h) > 0 {
		a.runStart = h[0].key
	}
	a.wFrom = a.runStart + a.opt.From
	a.wTo = math.Inf(1)
	if a.opt.HasTo {
		a.wTo = a.runStart + a.opt.To
	}
	sinks := a.opt.Sinks
	var n int64
	for len(h) > 0 {
		c := h[0]
		ev := &c.b.ev[c.i]
		if ev.Enter >= a.wFrom && ev.Enter <= a.wTo {
			a.events++
			ra := &a.rankAcc[ev.Rank]
			ra.Events++
			ra.TimeInMPI += ev.Exit - ev.Enter
			if a.first {
				a.an.StartNS, a.an.EndNS, a.first = ev.Enter, ev.Exit, false
			} else if ev.Exit > a.an.EndNS {
				a.an.EndNS = ev.Exit
			}
			for _, s := range sinks {
				if err := s.Add(ev); err != nil {
					return fmt.Errorf("writing output: %w", err)
				}
			}
		}
		if ev.commIdx >= 0 && ev.Op.IsCollective() {
			a.m.add(ev)
		}
		n++
		if a.opt.Progress != nil && n&0xffff == 0 {
			a.opt.Progress(n, total)
		}
		c.i++
		if c.i < len(c.b.ev) {
			c.key = c.b.ev[c.i].Enter
			h.siftTop()
			continue
		}
		if c.next() {
			h.siftTop()
			continue
		}
		heap.Pop(&h)
		a.m.endRank(int32(c.rs.in.Rank))
	}
	a.m.flush()
	if a.opt.Progress != nil {
		a.opt.Progress(n, total)
	}
	a.stopMetrics()
	return a.finErr
}

// The metrics goroutine: instances the matcher resolved are finalized
// (metrics, aggregation) off the merge goroutine, which only matches.
const finBatchSize = 256

func (a *analyzer) startMetrics() {
	a.finCh = make(chan []*openInst, 8)
	a.m.recycled = make(chan []*openInst, 16)
	a.finDone = make(chan struct{})
	a.finBatch = make([]*openInst, 0, finBatchSize)
	go func() {
		defer close(a.finDone)
		defer func() {
			if r := recover(); r != nil {
				a.finErr = fmt.Errorf("internal error in metrics: %v", r)
				for range a.finCh { // keep the merge from blocking
				}
			}
		}()
		for b := range a.finCh {
			for _, in := range b {
				a.finalize(in)
			}
			select {
			case a.m.recycled <- b: // back to the pools (or left to the GC)
			default:
			}
		}
	}()
}

// enqueue hands one resolved instance to the metrics goroutine.
func (a *analyzer) enqueue(in *openInst) {
	a.finBatch = append(a.finBatch, in)
	if len(a.finBatch) < finBatchSize {
		return
	}
	a.finCh <- a.finBatch
	a.m.reclaim()
	if n := len(a.m.spare); n > 0 {
		a.finBatch = a.m.spare[n-1]
		a.m.spare = a.m.spare[:n-1]
	} else {
		a.finBatch = make([]*openInst, 0, finBatchSize)
	}
}

// stopMetrics flushes the last batch and waits for the metrics goroutine
// (idempotent).
func (a *analyzer) stopMetrics() {
	if a.finCh == nil {
		return
	}
	if len(a.finBatch) > 0 {
		a.finCh <- a.finBatch
		a.finBatch = nil
	}
	close(a.finCh)
	<-a.finDone
	a.finCh = nil
}

// finalize computes one instance's metrics and aggregates it.
func (a *analyzer) finalize(in *openInst) {
	cs := in.comm
	n := len(cs.members)
	first := true
	var fe, le, fx, lx float64
	lastPos := -1
	for p := 0; p < n; p++ {
		if in.state[p] != stArrived {
			continue
		}
		e, x := in.enter[p], in.exit[p]
		if first {
			fe, le, fx, lx, lastPos, first = e, e, x, x, p, false
			continue
		}
		if e < fe {
			fe = e
		}
		if e > le {
			le, lastPos = e, p
		}
		if x < fx {
			fx = x
		}
		if x > lx {
			lx = x
		}
	}
	if first {
		return
	}
	if in.opMismatch {
		a.opMism++
	}
	if len(a.zooms) == 0 {
		// no capture requested
	} else if zi, ok := a.zoomIdx[InstanceKey{cs.id, in.seq}]; ok && !cs.self {
		z := &a.zooms[zi]
		z.Found = true
		z.Inst = a.buildInstance(in, false)
		z.Raw = a.buildInstance(in, true)
	}
	if fe < a.wFrom || fe > a.wTo {
		return
	}
	a.instances++
	complete := in.got == n
	if !complete {
		a.incomp++
	}
	op := in.op
	if int(op) >= len(a.ops) {
		return
	}
	oa := &a.ops[op]
	oa.used = true
	oa.count++
	oa.calls += in.got
	entrySkew, exitSkew := le-fe, lx-fx
	oa.entrySkew.add(entrySkew)
	oa.exitSkew.add(exitSkew)
	oa.latency.add(fx - le)
	oa.span.add(lx - fe)
	oa.histExit.add(exitSkew)
	if op.Synchronizing() && in.got >= 2 && fx < le {
		v := le - fx
		oa.viol++
		a.clockViol++
		if v > oa.maxViol {
			oa.maxViol = v
		}
		if v > a.maxViol {
			a.maxViol = v
		}
	}
	lastRank := cs.members[lastPos]
	var caused float64
	for p := 0; p < n; p++ {
		if in.state[p] != stArrived {
			continue
		}
		w := le - in.enter[p]
		d := in.exit[p] - in.enter[p]
		oa.total += d
		oa.wait.add(w)
		oa.histWait.add(w)
		wr := cs.members[p]
		a.rankWait[wr].wait += w
		caused += w
		if site := in.site[p]; site >= 0 {
			ca := a.csAccFor(site, op)
			ca.calls++
			ca.total += d
			ca.wait.add(w)
		}
	}
	if in.got >= 2 {
		rw := &a.rankWait[lastRank]
		rw.last++
		rw.lateness += caused
	}
	if len(a.worst) < a.opt.TopN || entrySkew > a.worst[0].inst.EntrySkew {
		w := worstEntry{inst: a.buildInstance(in, false), raw: a.buildInstance(in, true)}
		if len(a.worst) < a.opt.TopN {
			heap.Push(&a.worst, w)
		} else {
			a.worst[0] = w
			heap.Fix(&a.worst, 0)
		}
	}
}

// buildInstance copies an open instance into an Instance (arrived members
// only) with corrected or raw times.
func (a *analyzer) buildInstance(in *openInst, raw bool) Instance {
	cs := in.comm
	inst := Instance{CommID: cs.id, Seq: in.seq, Op: in.op, OpName: in.op.String(), Complete: in.got == len(cs.members), LastRank: -1, MaxWaitRank: -1}
	var sites []int32
	var pcs []uint64
	for p, w := range cs.members {
		if in.state[p] != stArrived {
			continue
		}
		e, x := in.enter[p], in.exit[p]
		if raw {
			e, x = in.rawEnter[p], in.rawExit[p]
		}
		inst.Ranks = append(inst.Ranks, w)
		inst.Enter = append(inst.Enter, e)
		inst.Exit = append(inst.Exit, x)
		sites = append(sites, in.site[p])
		pcs = append(pcs, in.pc[p])
	}
	computeInstanceMetrics(&inst)
	inst.lastSite, inst.waitSite = -1, -1
	for i, r := range inst.Ranks {
		if r == inst.LastRank {
			inst.lastSite, inst.LastCallsite = sites[i], pcs[i]
		}
		if r == inst.MaxWaitRank {
			inst.waitSite = sites[i]
		}
	}
	return inst
}

// computeInstanceMetrics fills the metric fields of inst from its Enter and
// Exit slices.
func computeInstanceMetrics(inst *Instance) {
	if len(inst.Enter) == 0 {
		return
	}
	fe, le, fx, lx := inst.Enter[0], inst.Enter[0], inst.Exit[0], inst.Exit[0]
	last := 0
	for i := range inst.Enter {
		e, x := inst.Enter[i], inst.Exit[i]
		if e < fe {
			fe = e
		}
		if e > le {
			le, last = e, i
		}
		if x < fx {
			fx = x
		}
		if x > lx {
			lx = x
		}
	}
	inst.EntrySkew = le - fe
	inst.ExitSkew = lx - fx
	inst.Latency = fx - le
	inst.Span = lx - fe
	inst.LastRank = inst.Ranks[last]
	first := 0
	for i, e := range inst.Enter {
		if e < inst.Enter[first] {
			first = i
		}
	}
	inst.MaxWaitRank = inst.Ranks[first]
	inst.Violation = 0
	if inst.Op.Synchronizing() && len(inst.Enter) >= 2 && fx < le {
		inst.Violation = le - fx
	}
}

// siteOf maps a pc of rank rs to a dense call-site index: (object, address
// inside the object), so ranks with different load bases (ASLR) share
// sites. Called from the rank's decoder goroutine: the per-rank cache is
// its own, the shared index is locked (misses are rare: one per distinct pc).
func (a *analyzer) siteOf(rs *rankState, pc uint64) int32 {
	if s, ok := rs.sites[pc]; ok {
		return s
	}
	k := siteKey{addr: pc, pc: pc}
	objs := rs.objs
	i := sort.Search(len(objs), func(i int) bool { return objs[i].Hi > pc })
	if i < len(objs) && objs[i].Lo <= pc && pc < objs[i].Hi {
		k.obj = objs[i].Path
		k.addr = pc - objs[i].Base
	}
	lookup := siteKey{obj: k.obj, addr: k.addr}
	a.siteMu.Lock()
	s, ok := a.siteIndex[lookup]
	if !ok {
		s = int32(len(a.sites))
		a.siteIndex[lookup] = s
		a.sites = append(a.sites, k)
	}
	a.siteMu.Unlock()
	rs.sites[pc] = s
	return s
}

// csAccFor returns the accumulator of (site, op).
func (a *analyzer) csAccFor(site int32, op trace.Op) *csAccum {
	for int(site) >= len(a.csAcc) {
		a.csAcc = append(a.csAcc, nil)
	}
	for _, ca := range a.csAcc[site] {
		if ca.op == op {
			return ca
		}
	}
	ca := &csAccum{site: site, op: op}
	a.csAcc[site] = append(a.csAcc[site], ca)
	return ca
}

func (a *analyzer) result() *Result {
	an := &a.an
	an.Events = a.events
	an.Instances = a.instances
	an.Incomplete = a.incomp
	if a.opt.From != 0 {
		an.WindowFrom = a.wFrom
	}
	if a.opt.HasTo {
		an.WindowTo = a.wTo
	}
	for op := range a.ops {
		oa := &a.ops[op]
		if !oa.used {
			continue
		}
		name := trace.Op(op).String()
		an.Ops = append(an.Ops, OpSummary{
			Op: name, Count: oa.count, Calls: oa.calls, TotalTime: oa.total,
			EntrySkew: oa.entrySkew.stats(), ExitSkew: oa.exitSkew.stats(),
			Wait: oa.wait.stats(), Latency: oa.latency.stats(), Span: oa.span.stats(),
			Violations: oa.viol, MaxViolation: oa.maxViol,
		})
		an.Hists = append(an.Hists, OpHistograms{Op: name, ExitSkew: oa.histExit.export(), Wait: oa.histWait.export()})
	}
	sort.SliceStable(an.Ops, func(i, j int) bool { return an.Ops[i].TotalTime > an.Ops[j].TotalTime })

	for _, list := range a.csAcc {
		for _, ca := range list {
			sk := a.sites[ca.site]
			loc := a.opt.Resolve.Resolve(sk.obj, sk.addr)
			an.Callsites = append(an.Callsites, CallsiteSummary{
				Callsite: sk.pc, Function: loc.Function, File: loc.File, Line: loc.Line, Object: sk.obj,
				Op: ca.op.String(), Calls: ca.calls, TotalTime: ca.total, Wait: ca.wait.stats(),
			})
		}
	}
	sort.SliceStable(an.Callsites, func(i, j int) bool {
		if an.Callsites[i].Wait.Total != an.Callsites[j].Wait.Total {
			return an.Callsites[i].Wait.Total > an.Callsites[j].Wait.Total
		}
		return an.Callsites[i].Callsite < an.Callsites[j].Callsite
	})
	for r := range a.rankAcc {
		if a.ranks[r] != nil {
			ra := a.rankAcc[r]
			ra.TotalWait, ra.TotalLateness, ra.LastCount = a.rankWait[r].wait, a.rankWait[r].lateness, a.rankWait[r].last
			an.Ranks = append(an.Ranks, ra)
		}
	}
	ws := append([]worstEntry(nil), a.worst...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].inst.EntrySkew > ws[j].inst.EntrySkew })
	an.Worst = []Instance{}
	var worstRaw []Instance
	for _, w := range ws {
		a.resolveInstance(&w.inst)
		a.resolveInstance(&w.raw)
		an.Worst = append(an.Worst, w.inst)
		worstRaw = append(worstRaw, w.raw)
	}
	for i := range a.zooms {
		a.resolveInstance(&a.zooms[i].Inst)
		a.resolveInstance(&a.zooms[i].Raw)
	}

	// Decoder problems.
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		name := filepath.Base(rs.in.Path)
		if rs.err != nil {
			a.problems = append(a.problems, fmt.Sprintf("%s: reading stopped early: %v; events before it are used", name, rs.err))
		}
		// damage found while reading (not known when the file was opened)
		if m := rs.in.Src.Meta(); m != nil && len(m.Damage) > rs.in.knownDamage {
			for _, d := range m.Damage[rs.in.knownDamage:] {
				a.problems = append(a.problems, damageString(rs.in.Path, d))
			}
		}
		if rs.unknown > 0 {
			a.problems = append(a.problems, fmt.Sprintf("%s: %d collective events on an undefined communicator: not matched", name, rs.unknown))
		}
		if rs.unsorted > 0 {
			a.problems = append(a.problems, fmt.Sprintf("%s: %d events come after later ones (chunks overlap by more than the reorder window of %d events): the merged order is approximate there", name, rs.unsorted, ReorderWindow))
		}
		if rs.badTimes > 0 {
			a.problems = append(a.problems, fmt.Sprintf("%s: %d events exit before they enter", name, rs.badTimes))
		}
	}
	if a.m.dupes > 0 {
		a.problems = append(a.problems, fmt.Sprintf("%d events repeat or go back in a communicator's sequence numbers: ignored for matching", a.m.dupes))
	}
	if a.opMism > 0 {
		a.problems = append(a.problems, fmt.Sprintf("%d instances whose members recorded different operations (sequence numbers out of step)", a.opMism))
	}
	if a.incomp > 0 {
		a.problems = append(a.problems, fmt.Sprintf("%d of %d instances are incomplete (a member's event is missing): their metrics cover the members present", a.incomp, a.instances))
	}
	an.Problems = a.problems
	if an.Problems == nil {
		an.Problems = []string{}
	}
	an.Clock = a.clockQuality()
	return &Result{Analysis: an, Zooms: a.zooms, WorstRaw: worstRaw, RunStartNS: a.runStart}
}

// resolveInstance names the call sites of an instance's last and
// longest-waiting ranks.
func (a *analyzer) resolveInstance(in *Instance) {
	name := func(site int32) string {
		if site < 0 || int(site) >= len(a.sites) {
			return ""
		}
		sk := a.sites[site]
		return a.opt.Resolve.Resolve(sk.obj, sk.addr).String()
	}
	in.LastSite, in.MaxWaitSite = name(in.lastSite), name(in.waitSite)
}

// clockQuality states how far the timeline can be trusted.
func (a *analyzer) clockQuality() ClockQuality {
	q := ClockQuality{Mode: a.opt.Clock.String(), Violations: a.clockViol, MaxViolationNS: a.maxViol, Warnings: []string{}}
	var ref *RankInput
	if len(a.rn.Ranks) > 0 {
		ref = a.rn.Ranks[0] // rank 0 when present: it holds the checks
	}
	if ref != nil {
		eps := append([]trace.Epoch(nil), ref.Meta.Epochs...)
		sort.SliceStable(eps, func(i, j int) bool { return eps[i].Index < eps[j].Index })
		for _, e := range eps {
			q.Algorithms = append(q.Algorithms, e.Algorithm)
			m := 0.0
			for _, c := range e.Check {
				if v := math.Abs(c.OffsetNS); v > m {
					m = v
				}
			}
			q.CheckMaxNS = append(q.CheckMaxNS, m)
		}
	}
	var specs []string
	seen := map[string]bool{}
	for _, ri := range a.rn.Ranks {
		if in := ri.Meta.Header.Inject; in != nil {
			q.Injected = true
			if !seen[in.Spec] {
				seen[in.Spec] = true
				specs = append(specs, in.Spec)
			}
		}
	}
	if q.Injected {
		q.InjectSpec = strings.Join(specs, " | ")
		emu := ""
		for _, ri := range a.rn.Ranks {
			if in := ri.Meta.Header.Inject; in != nil && in.NodeSize > 0 {
				emu = fmt.Sprintf(", nodes emulated with GCLOCK_NODE_SIZE=%d ranks each", in.NodeSize)
				break
			}
		}
		q.Warnings = append(q.Warnings, fmt.Sprintf(
			"CLOCK ERROR WAS INJECTED: this run's timers were deliberately faked (GCLOCK_FAKE_CLOCK=%s%s); the recorded times are a test, not the machine's real clocks", q.InjectSpec, emu))
	}
	if a.opt.Clock == ClockRaw {
		q.Warnings = append(q.Warnings,
			"CLOCK MODE RAW: timestamps are uncorrected local times; skews, waits, the late rank and the Gantt order across ranks are not trustworthy")
	}
	if a.clockViol > 0 {
		q.Warnings = append(q.Warnings, fmt.Sprintf(
			"%d clock-condition violations (max %s): a rank left a synchronizing collective before the last rank entered it, so the timestamps in use (mode %s) are off by at least that much",
			a.clockViol, FormatNS(a.maxViol), a.opt.Clock))
	}
	return q
}

// worstEntry is one of the top-N instances, corrected and raw.
type worstEntry struct{ inst, raw Instance }

// worstHeap is a min-heap by entry skew holding the top-N instances.
type worstHeap []worstEntry

func (h worstHeap) Len() int           { return len(h) }
func (h worstHeap) Less(i, j int) bool { return h[i].inst.EntrySkew < h[j].inst.EntrySkew }
func (h worstHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstHeap) Push(x any)        { *h = append(*h, x.(worstEntry)) }
func (h *worstHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// FormatNS formats a duration in ns with a readable unit.
func FormatNS(ns float64) string {
	v := math.Abs(ns)
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}
