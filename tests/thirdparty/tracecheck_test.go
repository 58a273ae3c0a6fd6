package thirdparty

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// rankTrace is one rank file, read completely.
type rankTrace struct {
	Path   string
	Meta   *trace.Meta
	Events []trace.Event
}

// loadTraces finds every *.gct file below dir (GCLOCK_DIR may put a run in
// a per-job subdirectory) and reads it with the trace package. It fails the
// test unless there is exactly one complete file per rank of one job.
func loadTraces(t *testing.T, dir string, np int) []*rankTrace {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".gct") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing trace directory %s: %v", dir, err)
	}
	if len(paths) != np {
		t.Fatalf("trace directory %s holds %d .gct files, want one per rank (%d): %v", dir, len(paths), np, paths)
	}
	ranks := make([]*rankTrace, np)
	for _, p := range paths {
		r, err := trace.Open(p)
		if err != nil {
			t.Fatalf("opening %s: %v", p, err)
		}
		rt := &rankTrace{Path: p, Meta: r.Meta()}
		var chunk []trace.Event
		for {
			chunk, err = r.NextChunk(chunk)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				t.Fatalf("reading %s: %v", p, err)
			}
			rt.Events = append(rt.Events, chunk...)
		}
		r.Close()
		h := rt.Meta.Header
		if h.Rank < 0 || h.Rank >= np {
			t.Fatalf("%s: header says rank %d of %d, want 0..%d", p, h.Rank, h.WorldSize, np-1)
		}
		if ranks[h.Rank] != nil {
			t.Fatalf("%s and %s both claim rank %d", ranks[h.Rank].Path, p, h.Rank)
		}
		if h.WorldSize != np {
			t.Errorf("%s: world size %d, want %d", p, h.WorldSize, np)
		}
		ranks[h.Rank] = rt
	}
	for _, rt := range ranks {
		m := rt.Meta
		if m.Header.JobID != ranks[0].Meta.Header.JobID {
			t.Errorf("%s: job %q, rank 0 has job %q", rt.Path, m.Header.JobID, ranks[0].Meta.Header.JobID)
		}
		if !m.Complete() {
			var why []string
			if m.Footer == nil {
				why = append(why, "no footer (the recorder did not finish cleanly)")
			}
			for _, d := range m.Damage {
				why = append(why, d.Err)
			}
			t.Errorf("%s: incomplete trace: %s", rt.Path, strings.Join(why, "; "))
			continue
		}
		if m.Footer.Dropped != 0 {
			t.Errorf("%s: footer reports %d dropped events", rt.Path, m.Footer.Dropped)
		}
		if m.Footer.Events != uint64(len(rt.Events)) {
			t.Errorf("%s: footer counts %d events, the chunks hold %d", rt.Path, m.Footer.Events, len(rt.Events))
		}
		if len(m.Epochs) == 0 {
			t.Errorf("%s: no clock sync epoch", rt.Path)
		}
	}
	return ranks
}

// traceReport summarises what checkTrace found.
type traceReport struct {
	Events, Collectives, Instances int
	OpInstances                    map[string]int // including single-member communicators
	SingleMember                   int            // instances on one-member communicators
	ZeroByte                       map[string]int // multi-member instances moving no data, per op
	Comms                          int
	// Clock error of the corrected timeline against the injected truth (ns).
	MaxClockErr float64
	// Synchronizing instances, their worst clock-condition violation with
	// corrected times, with the exact true times, and with raw local times.
	SyncInstances                        int
	MaxViolation, MaxTrueViol, MaxRawVio float64
	Violations, RawViolations            int
	CheckMaxNS                           float64 // Algorithm 6 residuals in rank 0's epochs
}

func (r traceReport) String() string {
	var ops []string
	for op, n := range r.OpInstances {
		ops = append(ops, fmt.Sprintf("%s=%d", op, n))
	}
	sort.Strings(ops)
	return fmt.Sprintf("%d events (%d collective) in %d instances (%d on one-member comms) on %d comms [%s]; corrected clock error max %.2f µs "+
		"(self-check max %.2f µs); %d synchronizing instances: max violation corrected %.2f µs (%d > 0), "+
		"true %.3f µs, raw %.1f µs (%d > 0)",
		r.Events, r.Collectives, r.Instances, r.SingleMember, r.Comms, strings.Join(ops, " "), r.MaxClockErr/1e3, r.CheckMaxNS/1e3,
		r.SyncInstances, r.MaxViolation/1e3, r.Violations, r.MaxTrueViol/1e3, r.MaxRawVio/1e3, r.RawViolations)
}

type instKey struct {
	comm uint64
	seq  uint32
}

type member struct {
	rank int
	ev   *trace.Event
}

// maxErrors bounds how many individual problems of one kind are printed.
const maxErrors = 10

// checkTrace checks collective matching and the clock condition. The
// correction is merge's default (interpolation between the sync epochs),
// the same tracemerge applies.
func checkTrace(t *testing.T, ranks []*rankTrace) traceReport {
	t.Helper()
	rep := traceReport{OpInstances: map[string]int{}, ZeroByte: map[string]int{}}
	complain := map[string]int{}
	errorf := func(kind, format string, args ...any) {
		complain[kind]++
		if complain[kind] <= maxErrors {
			t.Errorf(kind+": "+format, args...)
		}
	}
	defer func() {
		for kind, n := range complain {
			if n > maxErrors {
				t.Errorf("%s: %d more not shown", kind, n-maxErrors)
			}
		}
	}()

	// Communicator tables must agree on members across ranks.
	members := map[uint64][]int32{}
	for _, rt := range ranks {
		for _, c := range rt.Meta.Comms {
			if c.ID == trace.CommSelfID {
				continue
			}
			if prev, ok := members[c.ID]; ok {
				if fmt.Sprint(prev) != fmt.Sprint(c.Members) {
					errorf("comm table", "comm %#x: rank %d lists members %v, another rank %v", c.ID, rt.Meta.Header.Rank, c.Members, prev)
				}
				continue
			}
			members[c.ID] = c.Members
		}
	}
	rep.Comms = len(members)

	// Group collective events by (comm id, seq); check per-rank sequences.
	inst := map[instKey][]member{}
	for rank, rt := range ranks {
		seqs := map[uint64][]uint32{}
		for i := range rt.Events {
			ev := &rt.Events[i]
			rep.Events++
			if !ev.Op.IsCollective() {
				continue
			}
			rep.Collectives++
			c, ok := rt.Meta.CommByLocal(ev.Comm)
			if !ok {
				errorf("unknown comm", "rank %d event %d (%s): comm index %d is not in the rank's comm table", rank, i, ev.Op, ev.Comm)
				continue
			}
			if ev.ExitNS < ev.EnterNS {
				errorf("time order", "rank %d event %d (%s): exit %d before enter %d", rank, i, ev.Op, ev.ExitNS, ev.EnterNS)
			}
			seqs[c.ID] = append(seqs[c.ID], ev.Seq)
			if c.ID == trace.CommSelfID || len(c.Members) < 2 {
				// One member: the instance is complete by itself (and
				// MPI_COMM_SELF's id is the same on every rank).
				rep.Instances++
				rep.OpInstances[ev.Op.String()]++
				rep.SingleMember++
				continue
			}
			k := instKey{c.ID, ev.Seq}
			inst[k] = append(inst[k], member{rank, ev})
		}
		for id, s := range seqs {
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
			for i, v := range s {
				if v != uint32(i) {
					errorf("sequence", "rank %d comm %#x: collective sequence numbers are not 0..%d (position %d holds %d)", rank, id, len(s)-1, i, v)
					break
				}
			}
		}
	}

	// Clock correction (merge's default) and the exact truth from the
	// injection recorded in each header.
	corr := make([]*correct.Corrector, len(ranks))
	for i, rt := range ranks {
		c, note := correct.NewCorrector(correct.ClockInterp, rt.Meta.Epochs, 0)
		if note != "" {
			t.Logf("rank %d clock correction: %s", i, note)
		}
		corr[i] = c
	}
	inj0 := ranks[0].Meta.Header.Inject
	if ranks[0].Meta.Header.Timer.Name == "mpi_wtime" && inj0 == nil {
		t.Fatalf("rank 0 recorded MPI_Wtime without injection: Open MPI's MPI_Wtime has a per-process start point, so there is no shared truth to check against")
	}
	truth := func(rank int, local int64) float64 { // true time in rank 0's recorded timebase
		T := ranks[rank].Meta.Header.Inject.TrueTime(local)
		if inj0 == nil {
			return T
		}
		return T + inj0.OffsetNS + inj0.DriftPPM*1e-6*T
	}
	errAt := func(rank int, local int64) float64 {
		e := math.Abs(corr[rank].Global(local) - truth(rank, local))
		rep.MaxClockErr = math.Max(rep.MaxClockErr, e)
		return e
	}
	for _, e := range ranks[0].Meta.Epochs {
		for _, c := range e.Check {
			rep.CheckMaxNS = math.Max(rep.CheckMaxNS, math.Abs(c.OffsetNS))
		}
	}

	keys := make([]instKey, 0, len(inst))
	for k := range inst {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].comm != keys[j].comm {
			return keys[i].comm < keys[j].comm
		}
		return keys[i].seq < keys[j].seq
	})
	const trueSlack = 100 // ns: float rounding of the injection and timer reads
	for _, k := range keys {
		ms := inst[k]
		rep.Instances++
		want := members[k.comm]
		got := make([]int32, len(ms))
		for i, m := range ms {
			got[i] = int32(m.rank)
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		wantSorted := append([]int32(nil), want...)
		sort.Slice(wantSorted, func(i, j int) bool { return wantSorted[i] < wantSorted[j] })
		if fmt.Sprint(got) != fmt.Sprint(wantSorted) {
			errorf("unmatched instance", "comm %#x seq %d (%s): recorded by ranks %v, members are %v", k.comm, k.seq, ms[0].ev.Op, got, wantSorted)
			continue
		}
		op, root := ms[0].ev.Op, ms[0].ev.Root
		same := true
		for _, m := range ms[1:] {
			if m.ev.Op != op || (op.HasRoot() && m.ev.Root != root) {
				errorf("mismatched instance", "comm %#x seq %d: rank %d recorded %s root %d, rank %d recorded %s root %d",
					k.comm, k.seq, ms[0].rank, op, root, m.rank, m.ev.Op, m.ev.Root)
				same = false
				break
			}
		}
		if !same {
			continue
		}
		rep.OpInstances[op.String()]++
		var moved uint64
		for _, m := range ms {
			moved += m.ev.Sent + m.ev.Recv
		}
		if moved == 0 && op != trace.OpBarrier {
			rep.ZeroByte[op.String()]++
		}
		lastEnter, firstExit := math.Inf(-1), math.Inf(1)
		lastEnterT, firstExitT := math.Inf(-1), math.Inf(1)
		lastEnterR, firstExitR := math.Inf(-1), math.Inf(1)
		var errEnter, errExit float64
		for _, m := range ms {
			en, ex := corr[m.rank].Global(m.ev.EnterNS), corr[m.rank].Global(m.ev.ExitNS)
			ee, xe := errAt(m.rank, m.ev.EnterNS), errAt(m.rank, m.ev.ExitNS)
			if en > lastEnter {
				lastEnter, errEnter = en, ee
			}
			if ex < firstExit {
				firstExit, errExit = ex, xe
			}
			lastEnterT = math.Max(lastEnterT, truth(m.rank, m.ev.EnterNS))
			firstExitT = math.Min(firstExitT, truth(m.rank, m.ev.ExitNS))
			lastEnterR = math.Max(lastEnterR, float64(m.ev.EnterNS))
			firstExitR = math.Min(firstExitR, float64(m.ev.ExitNS))
		}
		if !op.Synchronizing() {
			continue
		}
		rep.SyncInstances++
		v, vt, vr := lastEnter-firstExit, lastEnterT-firstExitT, lastEnterR-firstExitR
		rep.MaxViolation = math.Max(rep.MaxViolation, v)
		rep.MaxTrueViol = math.Max(rep.MaxTrueViol, vt)
		rep.MaxRawVio = math.Max(rep.MaxRawVio, vr)
		if v > 0 {
			rep.Violations++
		}
		if vr > 0 {
			rep.RawViolations++
		}
		if vt > trueSlack {
			errorf("causality", "comm %#x seq %d (%s): in true time the first exit is %.0f ns before the last enter; the recorder's timestamps or the matching are wrong",
				k.comm, k.seq, op, vt)
		}
		// The corrected times of the two ranks involved are each off by at
		// most their measured error, so a violation up to their sum is
		// explained by the clock; anything beyond is not.
		if allowed := errEnter + errExit + trueSlack; v > allowed {
			errorf("clock condition", "comm %#x seq %d (%s): first exit %.0f ns before last enter with corrected clocks, more than the measured clock error allows (%.0f ns)",
				k.comm, k.seq, op, v, allowed)
		}
	}
	return rep
}

// crossCheckMerge runs tracemerge's own analysis (merge.Load + merge.Analyze,
// default interpolating clock) on the same run and requires it to agree
// with the independent matching above: no problems, no incomplete
// instance, and the same number of instances per collective.
func crossCheckMerge(t *testing.T, ranks []*rankTrace, rep traceReport) {
	t.Helper()
	dir := filepath.Dir(ranks[0].Path)
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatalf("merge.Load(%s): %v", dir, err)
	}
	defer run.Close()
	res, err := merge.Analyze(run, merge.Options{})
	if err != nil {
		t.Fatalf("merge.Analyze(%s): %v", dir, err)
	}
	a := res.Analysis
	if len(a.Problems) > 0 {
		t.Errorf("tracemerge reports problems: %s", strings.Join(a.Problems, "; "))
	}
	if a.Incomplete != 0 {
		t.Errorf("tracemerge finds %d incomplete instances of %d", a.Incomplete, a.Instances)
	}
	got := map[string]int{}
	for _, o := range a.Ops {
		got[o.Op] = o.Count
	}
	if fmt.Sprint(got) != fmt.Sprint(rep.OpInstances) {
		t.Errorf("tracemerge counts instances per op %v, this test's matching %v", got, rep.OpInstances)
	}
	t.Logf("tracemerge: %d instances, %d clock-condition violations (max %.2f µs); this test (synchronizing ops only): %d (max %.2f µs)",
		a.Instances, a.Clock.Violations, a.Clock.MaxViolationNS/1e3, rep.Violations, rep.MaxViolation/1e3)

	// Every clock-condition violation tracemerge reports (by all its rules,
	// including the data-flow ones for rooted ops) must be explainable by the
	// clock error, which this test knows exactly from the injected truth:
	// two ranks' corrected times are off by at most 2 x MaxClockErr. A
	// larger "violation" is an instance that is none in true time, and the
	// report's warning that "cross-rank times are off by at least that
	// much" would be false.
	allowed := 2*rep.MaxClockErr + 100
	if a.Clock.MaxViolationNS > allowed {
		var ops []string
		for _, o := range a.Ops {
			if o.MaxViolation > allowed {
				hint := ""
				if n := rep.ZeroByte[o.Op]; n > 0 {
					hint = fmt.Sprintf("; %d of its instances move 0 bytes, which MPI libraries may complete without waiting for anyone", n)
				}
				ops = append(ops, fmt.Sprintf("%s: %d violations up to %.1f µs%s", o.Op, o.Violations, o.MaxViolation/1e3, hint))
			}
		}
		t.Errorf("tracemerge reports clock-condition violations up to %.1f µs, but the corrected clocks are within %.2f µs of the injected truth, "+
			"so at most %.2f µs can be clock error: its clock condition flags instances that are no violation in true time (%s)",
			a.Clock.MaxViolationNS/1e3, rep.MaxClockErr/1e3, allowed/1e3, strings.Join(ops, "; "))
	}
}

// p2pReport summarises the point-to-point check.
type p2pReport struct {
	Sent, Received       int    // messages
	SentBytes, RecvBytes uint64 // payload bytes
	Channels             int    // distinct (comm, source, destination, tag)
	Unresolved           int    // completed receives without a resolved source (e.g. cancelled)
}

func (r p2pReport) String() string {
	return fmt.Sprintf("%d messages sent (%d bytes), %d received (%d bytes) on %d channels, %d receive completions without a source",
		r.Sent, r.SentBytes, r.Received, r.RecvBytes, r.Channels, r.Unresolved)
}

type channel struct {
	comm     uint64
	src, dst int32 // world ranks
	tag      int32
}

// checkP2P checks the recorded point-to-point traffic for conservation:
// on every channel (communicator, source, destination, tag) the recorded
// sends and the recorded completed receives count the same messages. Sends
// are counted where they start (blocking sends, MPI_Isend & co., the send
// half of MPI_Sendrecv, MPI_Start of a persistent send); receives where they
// complete (MPI_Recv, the receive half of MPI_Sendrecv, and MPI_Wait*/Test*
// records completing a receive request), with the source and tag resolved
// from the status. Byte counts are compared per channel too. Peers are
// world ranks in the trace.
func checkP2P(t *testing.T, ranks []*rankTrace) p2pReport {
	t.Helper()
	var rep p2pReport
	sends := map[channel]int{}
	recvs := map[channel]int{}
	sentB := map[channel]uint64{}
	recvB := map[channel]uint64{}
	// Event.Peer is already a world rank (the recorder translates comm
	// ranks); it must be a member of the event's communicator.
	world := func(rt *rankTrace, comm uint32, peer int32) (uint64, int32, bool) {
		c, ok := rt.Meta.CommByLocal(comm)
		if !ok || peer < 0 {
			return 0, 0, false
		}
		for _, m := range c.Members {
			if m == peer {
				return c.ID, peer, true
			}
		}
		return 0, 0, false
	}
	bad := 0
	for _, rt := range ranks {
		me := int32(rt.Meta.Header.Rank)
		reqs := map[uint32]trace.Op{} // request id -> the op that created it
		send := func(ev *trace.Event) {
			if ev.Peer == trace.PeerNull {
				return
			}
			id, dst, ok := world(rt, ev.Comm, ev.Peer)
			if !ok {
				bad++
				if bad <= maxErrors {
					t.Errorf("rank %d: %s to peer %d on comm index %d: peer not in the communicator", me, ev.Op, ev.Peer, ev.Comm)
				}
				return
			}
			k := channel{id, me, dst, ev.Tag}
			sends[k]++
			sentB[k] += ev.Sent
			rep.Sent++
			rep.SentBytes += ev.Sent
		}
		recv := func(ev *trace.Event) {
			if ev.Peer == trace.PeerNull {
				return
			}
			if ev.Peer == trace.PeerAny || ev.Tag == trace.TagAny {
				rep.Unresolved++
				return
			}
			id, src, ok := world(rt, ev.Comm, ev.Peer)
			if !ok {
				bad++
				if bad <= maxErrors {
					t.Errorf("rank %d: %s from peer %d on comm index %d: peer not in the communicator", me, ev.Op, ev.Peer, ev.Comm)
				}
				return
			}
			k := channel{id, src, me, ev.Tag}
			recvs[k]++
			recvB[k] += ev.Recv
			rep.Received++
			rep.RecvBytes += ev.Recv
		}
		for i := range rt.Events {
			ev := &rt.Events[i]
			switch {
			case ev.Op.IsRequestStart():
				if ev.Req != 0 {
					reqs[ev.Req] = ev.Op
				}
				if ev.Op.IsSend() { // MPI_Isend & co.: the message starts here
					send(ev)
				}
			case ev.Op.IsSend(): // blocking sends
				send(ev)
			case ev.Op == trace.OpRecv:
				recv(ev)
			case ev.Op == trace.OpSendrecv || ev.Op == trace.OpSendrecvReplace:
				if ev.Seq == 0 {
					send(ev)
				} else {
					recv(ev)
				}
			case ev.Op == trace.OpStart || ev.Op == trace.OpStartall:
				if op, ok := reqs[ev.Req]; ok && op != trace.OpRecvInit {
					send(ev)
				}
			case ev.Op.IsCompletion():
				if ev.Req == 0 {
					continue
				}
				if op, ok := reqs[ev.Req]; ok && (op == trace.OpIrecv || op == trace.OpRecvInit) {
					recv(ev)
				}
			}
		}
	}
	keys := map[channel]bool{}
	for k := range sends {
		keys[k] = true
	}
	for k := range recvs {
		keys[k] = true
	}
	rep.Channels = len(keys)
	for k := range keys {
		if sends[k] != recvs[k] || sentB[k] != recvB[k] {
			bad++
			if bad <= maxErrors {
				t.Errorf("channel comm %#x %d->%d tag %d: %d messages (%d bytes) sent, %d (%d bytes) received",
					k.comm, k.src, k.dst, k.tag, sends[k], sentB[k], recvs[k], recvB[k])
			}
		}
	}
	if bad > maxErrors {
		t.Errorf("point-to-point: %d more problems not shown", bad-maxErrors)
	}
	return rep
}

// crossCheckP2P runs tracemerge's point-to-point pass (merge.AnalyzeP2P)
// and requires it to agree with checkP2P: every message matched, the same
// message and byte counts, and no point-to-point clock-condition violation
// beyond the clock error measured against the truth.
func crossCheckP2P(t *testing.T, ranks []*rankTrace, p p2pReport, rep traceReport) {
	t.Helper()
	dir := filepath.Dir(ranks[0].Path)
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatalf("merge.Load(%s): %v", dir, err)
	}
	defer run.Close()
	res, err := merge.AnalyzeP2P(run, merge.P2POptions{})
	if err != nil {
		t.Fatalf("merge.AnalyzeP2P(%s): %v", dir, err)
	}
	t.Logf("tracemerge point-to-point: %d messages (%d bytes), %d unmatched sends, %d unmatched receives, %d unresolved, %d clock-condition violations (max %.2f µs)",
		res.Messages, res.Bytes, res.UnmatchedSends, res.UnmatchedRecvs, res.Unresolved, res.Violations, res.MaxViolationNS/1e3)
	if res.Messages != p.Received || res.Bytes != p.RecvBytes || res.UnmatchedSends != 0 || res.UnmatchedRecvs != 0 {
		t.Errorf("tracemerge matches %d messages (%d bytes) with %d unmatched sends and %d unmatched receives; this test counts %d sent and %d received messages (%d bytes), all balanced per channel",
			res.Messages, res.Bytes, res.UnmatchedSends, res.UnmatchedRecvs, p.Sent, p.Received, p.RecvBytes)
	}
	if allowed := 2*rep.MaxClockErr + 100; res.MaxViolationNS > allowed {
		t.Errorf("tracemerge reports point-to-point clock-condition violations up to %.2f µs, more than the measured clock error allows (%.2f µs)",
			res.MaxViolationNS/1e3, allowed/1e3)
	}
}
