package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// tagNet connects in-process "processes" by one channel per (from, to,
// tag), like MPI's matching by source and tag.
type tagNet struct {
	mu sync.Mutex
	ch map[[3]int]chan []byte
}

type tagTransport struct {
	n  *tagNet
	me int
}

func (n *tagNet) get(from, to, tag int) chan []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [3]int{from, to, tag}
	c := n.ch[k]
	if c == nil {
		c = make(chan []byte, 16) // small messages do not wait, as in MPI
		n.ch[k] = c
	}
	return c
}

func (t *tagTransport) Send(dest, tag int, b []byte) error {
	t.n.get(t.me, dest, tag) <- append([]byte(nil), b...)
	return nil
}

func (t *tagTransport) Recv(src, tag int, b []byte) error {
	m := <-t.n.get(src, t.me, tag)
	if len(m) > len(b) {
		return fmt.Errorf("message of %d bytes into %d", len(m), len(b))
	}
	copy(b, m)
	return nil
}

// partAnalyse runs the analysis of dir on k in-process processes with the
// partition asked for, as tracemerge does (a rerun the event-shipping way
// when the partitioned pass says so), and returns process 0's results as
// JSON and whether the partitioned pass was kept.
func partAnalyse(t *testing.T, dir string, k int, share0 float64, opt Options) (an, p2p []byte, parted bool) {
	t.Helper()
	an, p2p, parted, _ = partAnalyseWith(t, dir, k, share0, opt, false)
	return an, p2p, parted
}

// partAnalyseWith is partAnalyse, with the root-cause analysis as a
// stream sink over every event feeding the point-to-point one when roots
// is set (as tracemerge runs by default; its result is then part of
// p2p), and the bytes process 0 received by kind.
// startPartWorkers starts processes 1..k-1 of an in-process partitioned
// analysis of dir on n, each serving until its pass is not rerun (a
// rerun loads the run again, as cmd/tracemerge's workers do); wait waits
// for them and fails t with the first worker's error.
func startPartWorkers(n *tagNet, dir string, k int, opt Options) (wait func(t *testing.T)) {
	var wg sync.WaitGroup
	errs := make([]error, k)
	for w := 1; w < k; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			d := &Dist{Procs: k, Me: w, T: &tagTransport{n, w}}
			for {
				run, err := rundir.Load(dir, nil)
				if err != nil {
					errs[w] = ServeNothing(d, err)
					return
				}
				pass, err := Prepare(run, opt)
				if err == nil {
					err = pass.Serve(d)
				}
				run.Close()
				if !errors.Is(err, ErrPartitionRerun) {
					errs[w] = err
					return
				}
			}
		}(w)
	}
	return func(t *testing.T) {
		t.Helper()
		wg.Wait()
		for w, e := range errs {
			if e != nil {
				t.Fatalf("process %d: %v", w, e)
			}
		}
	}
}

// lastRecvMsgs0 is the messages process 0 received in partAnalyseWith's
// last run, by kind.
var lastRecvMsgs0 [NumKinds]int64

func partAnalyseWith(t *testing.T, dir string, k int, share0 float64, opt Options, roots bool) (an, p2p []byte, parted bool, recv0 [NumKinds]int64) {
	t.Helper()
	n := &tagNet{ch: map[[3]int]chan []byte{}}
	wait := startPartWorkers(n, dir, k, opt)
	ct := &CountingTransport{T: &tagTransport{n, 0}}
	d := &Dist{Procs: k, Me: 0, T: ct, Share0: share0, Partition: k > 1}
	var res *Result
	var ps *P2PStream
	var rs *RMAStream
	var rc *RootCauseStream
	for {
		run, err := rundir.Load(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		pass, err := Prepare(run, opt)
		if err != nil {
			t.Fatal(err)
		}
		if k > 1 {
			pass.SetDist(d)
		}
		ps = NewP2PStream(run, P2POptions{}, pass.SiteName())
		as := NewAsyncSink(ps)
		if roots {
			rc = NewRootCauseStream(run, RootCauseOptions{TopN: 10, Stream: ps}, pass.SiteName())
			as = NewAsyncSink(rc)
		}
		pass.AddStreamSink(as)
		rs = NewRMAStream(run, RMAOptions{})
		pass.AddStreamSink(rs)
		res, err = pass.Run()
		if cerr := as.Close(); cerr != nil && err == nil {
			err = cerr
		}
		run.Close()
		if errors.Is(err, ErrPartitionRerun) {
			parted = false
			d.Partition = false
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		parted = d.Parted() && d.Partition
		if (ps.ownerEnds > 0) != parted {
			t.Errorf("point-to-point analysis partitioned: %v (%d owners), the pass: %v", ps.ownerEnds > 0, ps.ownerEnds, parted)
		}
		break
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	wait(t)
	var err error
	if an, err = json.Marshal(res.Analysis); err != nil {
		t.Fatal(err)
	}
	out := []any{ps.Result(), rs.Result()}
	if rc != nil {
		out = append(out, rc.Result())
	}
	if p2p, err = json.Marshal(out); err != nil {
		t.Fatal(err)
	}
	_, recv0 = ct.Counts()
	lastRecvMsgs0 = ct.Received()
	return an, p2p, parted, recv0
}

// TestPartitionIdentical: the partitioned analysis (instances matched and
// measured by their owners, aggregated on process 0 in the serial order)
// gives the serial analysis byte for byte on 2, 3 and 5 processes, with
// several communicators, rooted collectives, imbalanced ranks,
// point-to-point messages, a window, every clock mode but refined; and a
// damaged run falls back to shipping events and still agrees.
func TestPartitionIdentical(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 12, Steps: 3000, Seed: 5, ChunkEvents: 256, Halo: true,
		SplitGroups: 3, Slowdown: map[int]float64{7: 1.6}}); err != nil {
		t.Fatal(err)
	}
	// Every form of halo exchange: wildcard receives, synchronous sends,
	// persistent requests (started, freed, created again), a nonblocking
	// collective in the Waitall, MPI_Sendrecv, blocking MPI_Send/MPI_Recv.
	mix := filepath.Join(t.TempDir(), "mix")
	if _, err := synth.Generate(mix, synth.Config{Ranks: 11, Steps: 2000, Seed: 3, ChunkEvents: 256, Halo: true, HaloMix: true,
		SplitGroups: 2, Slowdown: map[int]float64{4: 1.8}}); err != nil {
		t.Fatal(err)
	}
	// The same forms with sequence numbers that wrap past 2^32. Their first
	// numbers are not 0 (as if 2^32 collectives came before), which the
	// partitioned decoders take for numbers lost: the pass falls back to
	// shipping events and must agree with the serial one all the same.
	wrap := filepath.Join(t.TempDir(), "wrap")
	if _, err := synth.Generate(wrap, synth.Config{Ranks: 11, Steps: 2000, Seed: 3, ChunkEvents: 256, Halo: true, HaloMix: true,
		SplitGroups: 2, Slowdown: map[int]float64{4: 1.8}, FirstSeq: math.MaxUint32 - 600}); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged")
	if _, err := synth.Generate(damaged, synth.Config{Ranks: 6, Steps: 3000, Seed: 9, ChunkEvents: 256,
		CorruptChunks: []synth.ChunkRef{{Rank: 2, Chunk: 3}}, MissingRanks: []int{4}}); err != nil {
		t.Fatal(err)
	}
	defer func(n int64) { partRoundEvents = n }(partRoundEvents)
	oldWindow := windowRanks
	defer func() { windowRanks = oldWindow }()
	for _, tc := range []struct {
		name   string
		dir    string
		opt    Options
		parts  bool  // the partitioned pass must be kept
		rounds int64 // events per round (0: the default)
		window bool  // decoders (and the serial pass) merge their ranks in windows (kway_window.go), not by the heap
	}{
		{"interp", dir, Options{Clock: correct.ClockInterp, TopN: 4}, true, 0, false},
		{"interp-rounds", dir, Options{Clock: correct.ClockInterp, TopN: 4}, true, 3000, false},
		{"raw", dir, Options{Clock: correct.ClockRaw}, true, 0, false},
		{"init-window", dir, Options{Clock: correct.ClockInit, From: 2e6, To: 40e6, HasTo: true}, true, 7000, false},
		{"damaged", damaged, Options{Clock: correct.ClockInterp}, false, 0, false},
		{"mix", mix, Options{Clock: correct.ClockInterp, TopN: 3}, true, 0, false},
		{"mix-rounds", mix, Options{Clock: correct.ClockInterp}, true, 2500, false},
		{"mix-windows", mix, Options{Clock: correct.ClockInterp, TopN: 3}, true, 2500, true},
		{"interp-windows", dir, Options{Clock: correct.ClockInterp, TopN: 4}, true, 0, true},
		{"wrap-rounds", wrap, Options{Clock: correct.ClockInterp, TopN: 3}, false, 2500, false},
	} {
		partRoundEvents = 1 << 17
		windowRanks = oldWindow
		if tc.window {
			windowRanks = 2
		}
		if tc.rounds > 0 {
			partRoundEvents = tc.rounds
		}
		an1, p1, _ := partAnalyse(t, tc.dir, 1, 0, tc.opt)
		if !bytes.Contains(an1, []byte(`"instances":`)) {
			t.Fatalf("%s: serial analysis looks empty: %.200s", tc.name, an1)
		}
		if tc.dir == mix {
			// the forms must be there for the comparison to cover them
			for _, want := range []string{`"op":"MPI_Ibarrier","instances":286,"complete":286`, `"cancelled":0`, `"late_receiver":{"count":`,
				`"requests":`, `"recv_op":"MPI_Recv"`, `"op":"MPI_Waitall"`} {
				if !bytes.Contains(p1, []byte(want)) {
					t.Fatalf("%s: the serial point-to-point result lacks %s: %.2000s", tc.name, want, p1)
				}
			}
			if bytes.Contains(p1, []byte(`"late_receiver":{"count":0`)) || bytes.Contains(p1, []byte(`"unresolved":1`)) {
				t.Fatalf("%s: no late receivers or unresolved wildcards: %.600s", tc.name, p1)
			}
		}
		for _, k := range []struct {
			k     int
			share float64
		}{{2, 0.3}, {2, 0}, {3, 0}, {3, 1}, {5, 0}} {
			t.Run(fmt.Sprintf("%s-k%d-share%g", tc.name, k.k, k.share), func(t *testing.T) {
				ank, pk, parted := partAnalyse(t, tc.dir, k.k, k.share, tc.opt)
				if parted != tc.parts {
					t.Errorf("partitioned pass kept: %v, want %v", parted, tc.parts)
				}
				if !bytes.Equal(an1, ank) {
					t.Errorf("analysis with %d processes differs from the serial one (%d vs %d bytes)\n%s", k.k, len(ank), len(an1), firstDiff(an1, ank))
				}
				if !bytes.Equal(p1, pk) {
					t.Errorf("point-to-point/RMA results with %d processes differ (%d vs %d bytes)\n%s", k.k, len(pk), len(p1), firstDiff(p1, pk))
				}
			})
		}
	}
}

// firstDiff shows where two byte strings first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n serial: %s\n    got: %s", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}

// TestPartition_TwoProcessesWithRootCauses_ProcessZeroOnlyFeedsTheStream:
// with the root-cause analysis on (a stream sink over every event, as
// tracemerge runs by default), a partitioned pass of 2 processes leaves
// process 0 only the replay and the stream: process 1 decodes every rank
// and owns every instance, so process 0 receives no decoder-to-owner
// data; the results (collective, point-to-point, one-sided, root causes)
// are the serial ones byte for byte. With 3 processes, and with 2 and
// no root causes, nothing changes (process 0 still owns instances at 2).
func TestPartition_TwoProcessesWithRootCauses_ProcessZeroOnlyFeedsTheStream(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mix")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 11, Steps: 1500, Seed: 3, ChunkEvents: 256, Halo: true, HaloMix: true,
		SplitGroups: 2, Slowdown: map[int]float64{4: 1.8}}); err != nil {
		t.Fatal(err)
	}
	opt := Options{Clock: correct.ClockInterp, TopN: 3}
	for _, tc := range []struct {
		k        int
		share0   float64
		roots    bool
		dataTo0  bool  // process 0 receives decoder-to-owner data (it owns instances)
		streamTo bool  // process 0 receives a stream of events from the decoders (checked with roots)
		rounds   int64 // events per round (0: the default); small: many rounds, the decoder runs partAhead ahead of process 0's stream
	}{
		{2, 0.5, true, false, true, 0},
		{2, 0.5, true, false, true, 1000},
		{2, 1, true, false, true, 0},
		{3, 0, true, false, true, 1000},
		{2, 0.5, false, true, false, 0},
	} {
		t.Run(fmt.Sprintf("k%d-share%g-roots%v-rounds%d", tc.k, tc.share0, tc.roots, tc.rounds), func(t *testing.T) {
			defer func(n int64) { partRoundEvents = n }(partRoundEvents)
			if tc.rounds > 0 {
				partRoundEvents = tc.rounds
			}
			an1, p1, _, _ := partAnalyseWith(t, dir, 1, 0, opt, tc.roots)
			ank, pk, parted, recv0 := partAnalyseWith(t, dir, tc.k, tc.share0, opt, tc.roots)
			if !parted {
				t.Fatalf("the pass was not partitioned")
			}
			if !bytes.Equal(an1, ank) {
				t.Errorf("analysis differs from the serial one\n%s", firstDiff(an1, ank))
			}
			if !bytes.Equal(p1, pk) {
				t.Errorf("point-to-point/RMA/root-cause results differ from the serial ones\n%s", firstDiff(p1, pk))
			}
			if got := recv0[KindData] > 0; got != tc.dataTo0 {
				t.Errorf("process 0 received %d bytes of decoder-to-owner data; want some: %v", recv0[KindData], tc.dataTo0)
			}
			if got := recv0[KindStream] > 0; tc.roots && got != tc.streamTo {
				t.Errorf("process 0 received %d bytes of event stream; want some: %v", recv0[KindStream], tc.streamTo)
			}
			// The stream goes to process 0 in messages of up to
			// partChunkStream events, not partChunk: every message
			// costs the MPI thread's hand-offs and an ack window, and
			// partChunk-sized ones made a K=2 run with root causes 2×
			// slower. With rounds of 2^15 events a decoder's round
			// fills at least one message of partChunkStream. (The
			// events come in compact form, D83: counted in events, not
			// bytes; process 0 receives every event of the run.)
			if msgs := lastRecvMsgs0[KindStream]; tc.roots && tc.rounds == 0 && msgs > 0 {
				var sum struct {
					Events int64 `json:"events"`
				}
				if err := json.Unmarshal(an1, &sum); err != nil || sum.Events <= 0 {
					t.Fatalf("no event count in the analysis (%v)", err)
				}
				t.Logf("stream: %d messages, %d bytes, %d events", msgs, recv0[KindStream], sum.Events)
				if per := sum.Events / msgs; per < 2*partChunk {
					t.Errorf("process 0 received the stream in %d messages of %d events on average; want ≥ %d (messages of partChunkStream events)", msgs, per, 2*partChunk)
				}
			}
		})
	}
}
