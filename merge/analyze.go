package merge

import (
	"container/heap"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/gclock/gclock/merge/callsite"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
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
	Clock correct.ClockMode
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
	Sinks []datamodel.Sink
	// StreamSinks receive every event of the run, inside the window or not,
	// in global Enter order (the point-to-point analysis, P2PStream).
	StreamSinks []datamodel.Sink
	// Progress, when set, is called now and then with events processed and
	// the expected total (0 when unknown).
	Progress func(done, total int64)
	// Resolve resolves call sites; nil uses a fresh callsite.NewResolver().
	Resolve *callsite.Resolver
	// Refine holds correct.ClockRefined's moves (Result.Refinement of a first
	// pass with correct.ClockInterp; RefinedAnalyze runs both).
	Refine *Refinement
	// CLC is the controlled-logical-clock repair to apply (clc.go; nil:
	// none); CollectRepairs makes the pass list its collectives'
	// clock-condition violations (Result.Repairs).
	CLC            *CLC
	CollectRepairs bool
}

// Zoom is one captured instance, corrected and raw.
type Zoom struct {
	Key   InstanceKey
	Found bool
	Inst  datamodel.Instance // corrected times
	Raw   datamodel.Instance // raw (uncorrected, coarsely aligned) times
}

// Result is what Analyze returns.
type Result struct {
	Analysis *datamodel.Analysis
	Zooms    []Zoom
	// WorstRaw holds Analysis.Worst[i] with raw (uncorrected) times.
	WorstRaw []datamodel.Instance
	// RunStartNS is the global time the window is relative to (ns
	// relative to Analysis.OriginNS, like every global time).
	RunStartNS float64
	// Refinement is what correct.ClockRefined would move (refine.go), computed
	// from this pass's happened-before facts.
	Refinement *Refinement
	// Repairs are the collectives' violations (Options.CollectRepairs),
	// RepairsDropped those beyond MaxRepairs.
	Repairs        []datamodel.Repair
	RepairsDropped int
	// OriginNS is the origin of the pass's global times.
	OriginNS int64
}

// rankState is the per-rank state of one analysis pass.
type rankState struct {
	in      *rundir.RankInput
	corr    *correct.Corrector
	shift   float64
	commIdx []int32 // by Comm.Local: dense comm index, -1 unknown
	commPos []int32 // by Comm.Local: position in the comm's members
	objs    []trace.Object
	sites   map[uint64]int32 // pc -> site index
	// decoder results
	out      chan *batch
	free     chan *batch
	err      error
	unknown  int  // events on undefined communicators
	unsorted int  // events sent after later ones (overlap beyond the reorder window)
	heaped   bool // the decoder's order went to its heap (chunks overlap: order.go)
	badTimes int  // exit before enter
	pcCache  []pcSlot
	sum      datamodel.RankSummary // Events, TimeInMPI: written by the merge goroutine
	pause    pauseState            // MPI_Pcontrol pauses: merge goroutine
	wait     rankWait              // written by the metrics goroutine
	// remoteDamage: damage another process's decoder found (dist.go)
	remoteDamage []string
	// sync: the rank's decoder when it runs on the merge goroutine
	sync *decState
}

// Analyze makes one streaming pass over run: corrects every timestamp,
// merges all ranks by global time, matches collective instances and
// computes the metrics. Memory is bounded by the number of ranks times the
// reader's chunk size plus the open (not yet complete) instances.
func Analyze(run *rundir.Run, opt Options) (*Result, error) {
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
func Prepare(run *rundir.Run, opt Options) (*Pass, error) {
	if run == nil || len(run.Ranks) == 0 {
		return nil, &rundir.LoadError{Kind: rundir.ErrNoData, Msg: "no rank files to analyse"}
	}
	if opt.TopN <= 0 {
		opt.TopN = 10
	}
	if opt.Resolve == nil {
		opt.Resolve = callsite.NewResolver()
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
		end = a.footerEnd()
	}
	return start, end, true
}

// Origin is the run's time origin (RunOrigin): every global float64 time
// of the pass (GEvent, Window, Analysis) is ns relative to it, and the
// absolute time in rank 0's timebase is Origin() + round(t).
func (p *Pass) Origin() int64 { return p.a.origin }

// SetProgress sets the progress callback (see Options.Progress).
func (p *Pass) SetProgress(fn func(done, total int64)) { p.a.opt.Progress = fn }

// AddSink adds a sink to a prepared pass.
func (p *Pass) AddSink(s datamodel.Sink) { p.a.opt.Sinks = append(p.a.opt.Sinks, s) }

// AddStreamSink adds a sink that receives every event of the run, whatever
// the window (Options.StreamSinks).
func (p *Pass) AddStreamSink(s datamodel.Sink) { p.a.opt.StreamSinks = append(p.a.opt.StreamSinks, s) }

// Run reads all events once and returns the analysis.
func (p *Pass) Run() (*Result, error) {
	if err := p.a.run(); err != nil {
		return nil, err
	}
	r := p.a.result()
	p.a.release()
	return r, nil
}

// release drops what only the pass needed once its result is taken: the
// sinks (the caller holds those it reads results from; the Pass, kept
// alive by SiteName's closure while the outputs are written, would
// otherwise keep the point-to-point and root-cause streams' state, ≈ 250
// MB at 16,384 ranks, through the output phase), the ranks' decoders
// and batches, and the matcher's pools of instances.
func (a *analyzer) release() {
	a.opt.Sinks, a.opt.StreamSinks = nil, nil
	for _, rs := range a.ranks {
		if rs != nil {
			rs.out, rs.free, rs.sync, rs.pcCache = nil, nil, nil, nil
		}
	}
	a.m = matcher{}
}

// PCName returns a function naming a raw call-site pc without knowing its
// rank, looking the pc up in the objects of the lowest rank whose object
// list contains it. With ASLR, ranks load objects at different bases, so
// this is exact for that rank only: the exports use SiteName, which
// resolves per rank. The function is safe for concurrent use (outputs run in their own
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

// ErrorBar returns a function giving the estimated clock error (ns) of
// the global time of world rank rank's local timestamp local: the rank's
// correct.Corrector.ErrorBar (-1: unknown, e.g. --clock raw or a rank without
// three knots; 0 for rank 0, the reference). Safe for concurrent use.
func (p *Pass) ErrorBar() func(rank int32, local int64) float64 {
	a := p.a
	return func(rank int32, local int64) float64 {
		if rank < 0 || int(rank) >= len(a.ranks) || a.ranks[rank] == nil {
			return -1
		}
		return a.ranks[rank].corr.ErrorBar(local)
	}
}

// SiteName returns a function naming the call site pc of an event of
// world rank rank, for the exports (CSV, Perfetto): the pc is placed in
// that rank's own loaded objects (Header.Objects), so position-independent
// executables and libraries loaded at different bases (ASLR) resolve
// correctly on every rank. Names are cached per (object path, offset), so
// ranks sharing a site share the lookup. Unknown ranks fall back to
// PCName. Safe for concurrent use.
func (p *Pass) SiteName() func(rank int32, pc uint64) string {
	a := p.a
	var mu sync.Mutex
	byKey := map[siteKey]string{}
	fallback := p.PCName()
	return func(rank int32, pc uint64) string {
		if rank < 0 || int(rank) >= len(a.ranks) || a.ranks[rank] == nil {
			return fallback(pc)
		}
		objs := a.ranks[rank].objs
		i := sort.Search(len(objs), func(i int) bool { return objs[i].Hi > pc })
		if i >= len(objs) || objs[i].Lo > pc || pc >= objs[i].Hi {
			return ""
		}
		k := siteKey{obj: objs[i].Path, addr: pc - objs[i].Base}
		mu.Lock()
		defer mu.Unlock()
		if s, ok := byKey[k]; ok {
			return s
		}
		s := a.opt.Resolve.Resolve(k.obj, k.addr).String()
		if len(byKey) < 1<<16 {
			byKey[k] = s
		}
		return s
	}
}

type analyzer struct {
	rn    *rundir.Run
	opt   Options
	ranks []*rankState // by world rank (nil when missing)
	m     matcher
	an    datamodel.Analysis

	wFrom, wTo float64
	runStart   float64
	origin     int64 // RunOrigin: global float64 times are relative to it
	problems   []string
	looseKnots []string // correct.Corrector.LooseKnots per rank
	rep        repairs  // Options.CollectRepairs (metrics goroutine)
	hb         *hbGrid  // happened-before facts (refine.go)
	p2pHB      *hbGrid  // the point-to-point messages' facts (Pass.p2pFacts), merged into hb at the end

	ops       [256]opAccum
	sites     []siteKey
	siteRank  []int32 // parallel to sites: the rank whose raw pc sites[i].pc is (the lowest seen)
	siteIndex map[siteKey]int32
	siteMu    sync.Mutex
	csAcc     [][]*csAccum         // by site: one per op seen there
	pair      *pairMatrix          // wait caused by causer for waiter, metrics goroutine
	wscr      waitScratch          // metrics goroutine
	exits     map[exitKey]*exitAcc // exit-delay profiles, metrics goroutine
	exitOrder []exitKey
	// finished instances travel in batches to the metrics goroutine
	finBatch  []*openInst
	finSlots  int // member slots of the instances in finBatch
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
	dist      *Dist // parallel analysis: ranks decoded elsewhere (dist.go)
	failed    error // a worker that could not prepare the run (ServeNothing)
	// partIrregular counts what a partitioned pass cannot reproduce
	// exactly (part.go): > 0 runs the pass again the event-shipping way.
	partIrregular int
	// p2pTarget: process 0's point-to-point stream, replayed from the
	// owners' records in a partitioned pass (p2p_part.go)
	p2pTarget *P2PStream
	// rcFed: process 0's root-cause stream, fed with the wait states the
	// owners find (p2p_pipe.go), when it drives p2pTarget
	rcFed *RootCauseStream
}

func newAnalyzer(run *rundir.Run, opt Options) *analyzer {
	a := &analyzer{rn: run, opt: opt, siteIndex: map[siteKey]int32{}, first: true}
	a.an.Dir = run.Dir
	a.an.JobID = run.JobID
	a.an.WorldSize = run.WorldSize
	a.an.ClockMode = opt.Clock.String()
	a.an.MissingRanks = append([]int(nil), run.Missing...)
	a.problems = append(a.problems, run.Problems...)
	a.ranks = make([]*rankState, run.WorldSize)
	a.zoomIdx = map[InstanceKey]int{}
	for _, k := range opt.Capture {
		if _, dup := a.zoomIdx[k]; !dup {
			a.zoomIdx[k] = len(a.zooms)
			a.zooms = append(a.zooms, Zoom{Key: k})
		}
	}

	// Raw-mode alignment (correct.RawShift) to the reference start.
	var refStart int64
	if ri := run.FirstStart(); ri != nil {
		refStart = ri.Meta.Header.StartNS
	}
	a.origin = RunOrigin(run, opt.Clock)
	a.an.OriginNS = a.origin
	var fallback []rundir.RankNote
	for _, ri := range run.Ranks {
		rs := &rankState{in: ri, sites: map[uint64]int32{}, pcCache: make([]pcSlot, pcCacheLen(len(run.Ranks)))}
		h := &ri.Meta.Header
		rs.shift = correct.RawShift(refStart, h.StartNS)
		var note string
		rs.corr, note = correct.NewCorrector(opt.Clock, ri.Meta.Epochs, rs.shift)
		rs.corr.SetOrigin(a.origin)
		rs.corr.SetRefinement(opt.Refine.Move(int32(ri.Rank), rs.corr.Origin()))
		rs.corr.SetCLC(opt.CLC.Move(int32(ri.Rank)))
		if note != "" {
			fallback = append(fallback, rundir.RankNote{Rank: ri.Rank, Text: note})
		}
		if l := rs.corr.LooseKnots(); l != "" {
			a.looseKnots = append(a.looseKnots, fmt.Sprintf("rank %d: %s", ri.Rank, l))
		}
		rs.objs = append([]trace.Object(nil), h.Objects...)
		sort.Slice(rs.objs, func(i, j int) bool { return rs.objs[i].Lo < rs.objs[j].Lo })
		a.ranks[ri.Rank] = rs
		rs.sum = datamodel.RankSummary{Rank: int32(ri.Rank), Host: h.Host}
	}
	if len(fallback) > 0 {
		a.problems = append(a.problems, "clock model fallback: "+strings.Join(rundir.FirstN(rundir.SameTextLines(fallback), 8), "; "))
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
	a.hb = newHBGrid(a.runStart, a.footerEnd(), len(a.ranks))
	return a
}

// footerEnd is the latest corrected footer time of any rank, +Inf when a
// rank has none (the run's end is known only after reading).
func (a *analyzer) footerEnd() float64 {
	last := math.Inf(-1)
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		f := rs.in.Meta.Footer
		if f == nil || f.EndNS == 0 {
			return math.Inf(1)
		}
		if g := rs.corr.Global(f.EndNS); g > last {
			last = g
		}
	}
	return last
}

// buildComms assigns dense indices to the communicators all ranks define
// and maps every rank's local comm index to (dense index, member position).
func (a *analyzer) buildComms() {
	byID := map[uint64]int32{}
	positions := memberPositions{world: a.rn.WorldSize}
	var conflicts []string
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		maxLocal := -1
		limit := maxLocalComms(len(rs.in.Meta.Comms))
		for _, c := range rs.in.Meta.Comms {
			if int(c.Local) > maxLocal && c.Local < limit {
				maxLocal = int(c.Local)
			}
		}
		rs.commIdx = make([]int32, maxLocal+1)
		rs.commPos = make([]int32, maxLocal+1)
		for i := range rs.commIdx {
			rs.commIdx[i] = -1
		}
		for _, c := range rs.in.Meta.Comms {
			if c.Local >= limit {
				continue
			}
			pos := positions.of(c.Members, rs.in.Rank)
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
				if !rundir.SameMembers(a.m.comms[i].members, c.Members) {
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
		a.problems = append(a.problems, "communicator definitions disagree: "+strings.Join(rundir.FirstN(conflicts, 5), "; "))
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

// memberPositions finds a rank's position in a communicator's member
// list for buildComms. A list as long as a good part of the world
// (MPI_COMM_WORLD and its duplicates, shared by every member's metadata:
// rundir's shareMembers) gets an index by world rank, built once: a scan
// of the list for each of its members was quadratic in the ranks (134 M
// steps for MPI_COMM_WORLD at 16,384 ranks). Shorter lists are scanned.
// Either way the position is the rank's first in the list.
type memberPositions struct {
	world int
	index map[memberList][]int32 // position + 1 by world rank, 0: not a member
}

// memberList names one shared member list: its first element and length.
type memberList struct {
	first *int32
	n     int
}

// memberIndexMin is the shortest member list memberPositions indexes; a
// list is also indexed only when it holds an eighth of the world or more,
// so an index (4 bytes a world rank) costs at most 32 bytes a member.
const memberIndexMin = 64

// of returns rank's first position in members, -1 when it is not one.
func (p *memberPositions) of(members []int32, rank int) int32 {
	if len(members) < memberIndexMin || 8*len(members) < p.world || rank < 0 || rank >= p.world {
		for i, w := range members {
			if int(w) == rank {
				return int32(i)
			}
		}
		return -1
	}
	key := memberList{&members[0], len(members)}
	idx, ok := p.index[key]
	if !ok {
		idx = make([]int32, p.world)
		for i, w := range members {
			if w >= 0 && int(w) < p.world && idx[w] == 0 {
				idx[w] = int32(i + 1)
			}
		}
		if p.index == nil {
			p.index = map[memberList][]int32{}
		}
		p.index[key] = idx
	}
	return idx[rank] - 1
}

// maxLocalComms bounds the per-rank communicator index a file with n
// communicator definitions may use (the index sizes a dense table, so a
// damaged index must not allocate gigabytes). The recorder numbers the
// communicators it registers 0, 1, 2, ... and defines each, so a program
// that creates and frees communicators in a loop has indexes up to n; a
// fixed bound of 65,536 left every collective on a later one unmatched.
func maxLocalComms(n int) uint32 {
	return uint32(min(2*n+1<<16, 1<<30))
}

// footerEvents is the events the rank files' footers count (the total
// progress reports count towards, the partitioned plan's sizes); ok is
// false, and total 0, when a file has no footer.
func (a *analyzer) footerEvents() (total int64, ok bool) {
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		f := rs.in.Meta.Footer
		if f == nil {
			return 0, false
		}
		total += int64(f.Events)
	}
	return total, true
}

func (a *analyzer) run() error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	if a.dist != nil {
		return a.runDist()
	}
	total, _ := a.footerEvents()
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		depth := 2
		if len(a.rn.Ranks) > 64 {
			depth = 1 // many ranks: the heap always has others to merge
		}
		if len(a.rn.Ranks) > syncRanks {
			// thousands: the rank is decoded on the merge goroutine
			// when its cursor needs a batch (decState.syncStep)
			rs.sync = a.newDecState(rs, nil, true)
			continue
		}
		rs.out = make(chan *batch, depth)
		rs.free = make(chan *batch, depth+2)
		wg.Add(1)
		go a.decode(rs, done, &wg)
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

	h := newCursorHeap(len(a.rn.Ranks))
	for _, rs := range a.ranks {
		if rs == nil {
			continue
		}
		c := &cursor{rs: rs}
		if c.next() {
			h.add(c)
		} else {
			a.m.endRank(int32(rs.in.Rank))
		}
	}
	sinks := a.opt.Sinks
	if len(a.rn.Ranks) >= windowRanks {
		// many ranks: windows instead of the heap (kway_window.go)
		n, err := a.mergeWindows(h.cur, sinks, total)
		if err != nil {
			return err
		}
		a.m.flush()
		if a.opt.Progress != nil {
			a.opt.Progress(n, total)
		}
		a.stopMetrics()
		return a.finErr
	}
	heap.Init(h)
	if h.Len() > 0 {
		a.startWindow(h.e[0].key)
	} else {
		a.startWindow(math.Inf(1))
	}
	var n int64
	for h.Len() > 0 {
		c := h.top()
		if err := a.consume(&c.b.ev[c.i], c.rs, sinks); err != nil {
			return err
		}
		n++
		if a.opt.Progress != nil && n&0xffff == 0 {
			a.opt.Progress(n, total)
		}
		if done := h.advanceTop(); done != nil {
			a.m.endRank(int32(done.rs.in.Rank))
		}
	}
	a.m.flush()
	if a.opt.Progress != nil {
		a.opt.Progress(n, total)
	}
	a.stopMetrics()
	return a.finErr
}

// consume takes the next event of the merged stream (rs: its rank).
func (a *analyzer) consume(ev *datamodel.GEvent, rs *rankState, sinks []datamodel.Sink) error {
	if ev.Enter >= a.wFrom && ev.Enter <= a.wTo {
		a.events++
		ra := &rs.sum
		ra.Events++
		rs.pause.observe(ev)
		if !ev.Continuation() {
			ra.TimeInMPI += ev.Exit - ev.Enter
		}
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
	for _, s := range a.opt.StreamSinks {
		if err := s.Add(ev); err != nil {
			return fmt.Errorf("point-to-point pass: %w", err)
		}
	}
	if ev.CommIdx >= 0 && ev.Op.IsCollective() {
		a.m.add(ev)
	}
	return nil
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
		an.Ops = append(an.Ops, datamodel.OpSummary{
			Op: name, Count: oa.count, Calls: oa.calls, TotalTime: oa.total,
			EntrySkew: oa.entrySkew.stats(), ExitSkew: oa.exitSkew.stats(),
			Wait: oa.wait.stats(), Latency: oa.latency.stats(), Span: oa.span.stats(),
			Violations: oa.viol, MaxViolation: oa.maxViol, WaitClass: WaitClassOf(trace.Op(op)).String(), ZeroByte: oa.zeroByte,
		})
		an.Hists = append(an.Hists, datamodel.OpHistograms{Op: name, ExitSkew: oa.histExit.export(), Wait: oa.histWait.export()})
	}
	sort.SliceStable(an.Ops, func(i, j int) bool { return an.Ops[i].TotalTime > an.Ops[j].TotalTime })

	for _, list := range a.csAcc {
		for _, ca := range list {
			sk := a.sites[ca.site]
			loc := a.opt.Resolve.Resolve(sk.obj, sk.addr)
			an.Callsites = append(an.Callsites, datamodel.CallsiteSummary{
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
	for r, rs := range a.ranks {
		if rs != nil {
			ra := rs.sum
			ra.TotalWait, ra.TotalLateness, ra.LastCount, ra.CausedCount = rs.wait.wait, rs.wait.lateness, rs.wait.last, rs.wait.caused
			ra.MadeWait = a.pairTop(r, true, 3)
			ra.WaitedFor = a.pairTop(r, false, 3)
			an.Ranks = append(an.Ranks, ra)
		}
	}
	var pauses []*pauseState
	var config map[string]string
	for _, rs := range a.ranks {
		if rs != nil {
			pauses = append(pauses, &rs.pause)
			if config == nil {
				config = rs.in.Meta.Header.Config
			}
		}
	}
	an.Selective = selectiveTracing(config, pauses)
	ws := append([]worstEntry(nil), a.worst...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].inst.EntrySkew > ws[j].inst.EntrySkew })
	an.Worst = []datamodel.Instance{}
	var worstRaw []datamodel.Instance
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
		a.problems = append(a.problems, rs.in.LateDamage()...)
		a.problems = append(a.problems, rs.remoteDamage...)
		if rs.unknown > 0 {
			a.problems = append(a.problems, fmt.Sprintf("%s: %d collective events on an undefined communicator: not matched", name, rs.unknown))
		}
		if rs.unsorted > 0 {
			a.problems = append(a.problems, fmt.Sprintf("%s: %d events come after later ones (its threads' chunks overlap in time by more than tracemerge holds back: %d events, %d where the file marks where its chunks start): the merged order is approximate there", name, rs.unsorted, ReorderWindow, ExactReorderLimit))
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
	if an.Ops == nil {
		an.Ops = []datamodel.OpSummary{}
	}
	if an.Callsites == nil {
		an.Callsites = []datamodel.CallsiteSummary{}
	}
	if an.Ranks == nil {
		an.Ranks = []datamodel.RankSummary{}
	}
	if an.Hists == nil {
		an.Hists = []datamodel.OpHistograms{}
	}
	an.ExitDelays = a.exitDelays()
	an.Clock = a.clockQuality()
	var ref *Refinement
	if a.p2pHB != nil {
		a.hb.merge(a.p2pHB)
	}
	an.Clock.Bounds, ref = a.hb.bounds(a.origin, a.opt.Refine == nil)
	if a.opt.Refine != nil { // this pass applied a refinement: report it
		applied(an.Clock.Bounds, a.opt.Refine)
		ref = a.opt.Refine
	}
	summariseBounds(&an.Clock)
	flagOps(an)
	return &Result{Analysis: an, Zooms: a.zooms, WorstRaw: worstRaw, RunStartNS: a.runStart, Refinement: ref,
		Repairs: a.rep.list, RepairsDropped: a.rep.dropped, OriginNS: a.origin}
}

// startWindow fixes the run's start (first, the earliest event's key, when
// no start was set; +Inf for an empty run) and the analysis window
// [From, To] relative to it.
func (a *analyzer) startWindow(first float64) {
	if math.IsInf(a.runStart, 1) {
		a.runStart = first
	}
	a.wFrom = a.runStart + a.opt.From
	a.wTo = math.Inf(1)
	if a.opt.HasTo {
		a.wTo = a.runStart + a.opt.To
	}
}
