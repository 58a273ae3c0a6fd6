package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

func TestOwnerPartition(t *testing.T) {
	for _, tc := range []struct{ n, procs int }{
		{1, 1}, {8, 1}, {8, 2}, {8, 3}, {3, 8}, {1024, 2}, {1024, 5}, {1000, 17}, {7, 4},
	} {
		t.Run(fmt.Sprintf("n%d-k%d", tc.n, tc.procs), func(t *testing.T) {
			count := make([]int, tc.procs)
			prev := 0
			for i := 0; i < tc.n; i++ {
				o := Owner(i, tc.n, tc.procs)
				if o < 0 || o >= tc.procs {
					t.Fatalf("file %d: owner %d outside 0..%d", i, o, tc.procs-1)
				}
				if o < prev {
					t.Fatalf("file %d: owner %d after %d: blocks not contiguous", i, o, prev)
				}
				prev = o
				count[o]++
			}
			if tc.procs == 1 {
				if count[0] != tc.n {
					t.Fatalf("one process must own all %d files, owns %d", tc.n, count[0])
				}
				return
			}
			if count[0] != 0 {
				t.Fatalf("process 0 (the merger) owns %d files, want 0", count[0])
			}
			for _, share := range []float64{0.15, 0.5, 1} {
				got := make([]int, tc.procs)
				prev := 0
				for i := 0; i < tc.n; i++ {
					o := OwnerShare(i, tc.n, tc.procs, share)
					if o < prev || o >= tc.procs {
						t.Fatalf("share %g, file %d: owner %d after %d", share, i, o, prev)
					}
					prev = o
					got[o]++
				}
				for p := 0; p < tc.procs; p++ {
					lo, hi := ownedBlock(p, tc.n, tc.procs, share)
					if hi-lo != got[p] || (got[p] > 0 && OwnerShare(lo, tc.n, tc.procs, share) != p) {
						t.Fatalf("share %g: ownedBlock(%d) = [%d, %d), owns %d files", share, p, lo, hi, got[p])
					}
				}
				want := float64(tc.n) * share / (share + float64(tc.procs-1))
				if tc.n >= tc.procs && math.Abs(float64(got[0])-want) > 1 {
					t.Fatalf("share %g: process 0 owns %d files, want about %.1f", share, got[0], want)
				}
				for p, c := range got[1:] {
					if tc.n >= tc.procs && c == 0 {
						t.Fatalf("share %g: worker %d owns nothing: %v", share, p+1, got)
					}
				}
			}
			lo, hi := tc.n, 0
			for _, c := range count[1:] {
				lo, hi = min(lo, c), max(hi, c)
			}
			if hi-lo > 1 {
				t.Fatalf("unbalanced: workers own %v", count[1:])
			}
		})
	}
}

// chanTransport connects in-process "processes" by channels, one per
// ordered pair.
type chanTransport struct {
	me int
	ch [][]chan []byte // [from][to]
}

func newChanNet(k int) []*chanTransport {
	ch := make([][]chan []byte, k)
	for i := range ch {
		ch[i] = make([]chan []byte, k)
		for j := range ch[i] {
			ch[i][j] = make(chan []byte, 4)
		}
	}
	out := make([]*chanTransport, k)
	for i := range out {
		out[i] = &chanTransport{me: i, ch: ch}
	}
	return out
}

func (c *chanTransport) Send(dest, tag int, b []byte) error {
	c.ch[c.me][dest] <- append([]byte(nil), b...)
	return nil
}

func (c *chanTransport) Recv(src, tag int, b []byte) error {
	m := <-c.ch[src][c.me]
	if len(m) > len(b) {
		return fmt.Errorf("message of %d bytes into %d", len(m), len(b))
	}
	copy(b, m)
	return nil
}

// analyseJSON runs the analysis (and the point-to-point stream) of dir on
// k in-process "processes" and returns process 0's results as JSON.
func analyseJSON(t *testing.T, dir string, k int, opt Options) (an, p2p []byte) {
	t.Helper()
	return analyseJSONOpen(t, dir, k, opt, nil)
}

// testShare0 is process 0's share (Dist.Share0) in analyseJSON.
var testShare0 float64

func analyseJSONOpen(t *testing.T, dir string, k int, opt Options, open rundir.Opener) (an, p2p []byte) {
	t.Helper()
	net := newChanNet(k)
	var wg sync.WaitGroup
	errs := make([]error, k)
	for w := 1; w < k; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			run, err := rundir.Load(dir, open)
			if err != nil {
				errs[w] = err
				return
			}
			defer run.Close()
			pass, err := Prepare(run, opt)
			if err != nil {
				errs[w] = err
				return
			}
			errs[w] = pass.Serve(&Dist{Procs: k, Me: w, T: net[w]})
		}(w)
	}
	run, err := rundir.Load(dir, open)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	pass, err := Prepare(run, opt)
	if err != nil {
		t.Fatal(err)
	}
	d := &Dist{Procs: k, Me: 0, T: net[0], Share0: testShare0}
	pass.SetDist(d)
	ps := NewP2PStream(run, P2POptions{}, pass.SiteName())
	pass.AddStreamSink(ps)
	res, err := pass.Run()
	if cerr := d.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for w, e := range errs {
		if e != nil {
			t.Fatalf("process %d: %v", w, e)
		}
	}
	if an, err = json.Marshal(res.Analysis); err != nil {
		t.Fatal(err)
	}
	if p2p, err = json.Marshal(ps.Result()); err != nil {
		t.Fatal(err)
	}
	return an, p2p
}

// TestDistIdentical: the analysis split over 2, 3 and 5 in-process
// "processes" gives the serial analysis byte for byte, with collectives,
// point-to-point messages and every clock mode but refined.
func TestDistIdentical(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 12, Steps: 600, Seed: 5, ChunkEvents: 256, Halo: true}); err != nil {
		t.Fatal(err)
	}
	oldWindow := windowRanks
	defer func() { windowRanks = oldWindow }()
	for _, mode := range []correct.ClockMode{correct.ClockInterp, correct.ClockInit, correct.ClockRaw} {
		opt := Options{Clock: mode, Capture: []InstanceKey{{Comm: 0, Seq: 3}}}
		if mode == correct.ClockInit { // workers merge their share in groups
			distGroupMin = 2
		} else {
			distGroupMin = 128
		}
		windowRanks = oldWindow
		if mode == correct.ClockRaw { // workers (and the serial pass) merge in windows
			windowRanks = 2
		}
		an1, p1 := analyseJSON(t, dir, 1, opt)
		if !bytes.Contains(an1, []byte(`"events":`)) && len(an1) < 100 {
			t.Fatalf("serial analysis looks empty: %.200s", an1)
		}
		for _, tc := range []struct {
			k     int
			share float64
		}{{2, 0}, {3, 0}, {5, 0}, {2, 0.15}, {2, 1}, {3, 0.5}} {
			t.Run(fmt.Sprintf("%s-k%d-share%g", mode, tc.k, tc.share), func(t *testing.T) {
				testShare0 = tc.share
				defer func() { testShare0 = 0 }()
				ank, pk := analyseJSON(t, dir, tc.k, opt)
				if !bytes.Equal(an1, ank) {
					t.Errorf("analysis with %d processes (process 0's share %g) differs from the serial one (%d vs %d bytes)", tc.k, tc.share, len(ank), len(an1))
				}
				if !bytes.Equal(p1, pk) {
					t.Errorf("point-to-point result with %d processes (process 0's share %g) differs (%d vs %d bytes)", tc.k, tc.share, len(pk), len(p1))
				}
			})
		}
	}
	distGroupMin = 128
}

// wholeChunks hides a Source's PieceSource side: NextChunk only.
type wholeChunks struct{ rundir.Source }

// openWhole opens a rank file read in whole chunks only (wholeChunks).
func openWhole(path string) (rundir.Source, error) {
	s, err := rundir.OpenTrace(path)
	if err != nil {
		return nil, err
	}
	return wholeChunks{s}, nil
}

// TestPieces_SameAnalysisAsWholeChunks: rank files read in pieces (as
// with many ranks: PieceSource) give the analysis and point-to-point
// result of whole chunks byte for byte, pieces smaller than, equal to and
// larger than the chunks, serially and with 3 processes.
func TestPieces_SameAnalysisAsWholeChunks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 10, Steps: 400, Seed: 11, ChunkEvents: 256, Halo: true}); err != nil {
		t.Fatal(err)
	}
	whole := openWhole
	an1, p1 := analyseJSONOpen(t, dir, 1, Options{Clock: correct.ClockInterp}, whole)
	for _, piece := range []int{1, 37, 256, 1000} {
		for _, k := range []int{1, 3} {
			t.Run(fmt.Sprintf("piece%d-k%d", piece, k), func(t *testing.T) {
				testPiece = piece
				defer func() { testPiece = 0 }()
				an, p := analyseJSON(t, dir, k, Options{Clock: correct.ClockInterp})
				if !bytes.Equal(an1, an) || !bytes.Equal(p1, p) {
					t.Errorf("analysis in pieces of %d (%d processes) differs from whole chunks (%d/%d vs %d/%d bytes)", piece, k, len(an), len(p), len(an1), len(p1))
				}
			})
		}
	}
}

// TestDistDamagedRank: rank files with a damaged chunk (found while
// reading, so a worker must pass it on) and cut off, and one whose reader
// fails mid-stream, are reported the same way with 1 process as with 2
// and 3, whether a worker or process 0 itself decodes them.
func TestDistDamagedRank(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 6, Steps: 3000, Seed: 9, ChunkEvents: 256}); err != nil {
		t.Fatal(err)
	}
	// Ranks 1 and 4: garbage in the middle of a chunk (found only while
	// reading), and the end cut off. With process 0's share, rank 1 is
	// process 0's own, rank 4 a worker's.
	for _, name := range []string{"rank-00001.gct", "rank-00004.gct"} {
		f := filepath.Join(dir, name)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) / 2; i < len(b)/2+64; i++ {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(f, b[:len(b)*3/4], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// (processes, process 0's share): 3 workers' ranks only; 2 and 3 with
	// process 0 owning ranks 0-2 and 0-1.
	splits := []struct {
		k     int
		share float64
	}{{3, 0}, {2, 1}, {3, 1}}
	compare := func(an1, p1 []byte, open rundir.Opener, what string) {
		t.Helper()
		for _, sp := range splits {
			testShare0 = sp.share
			ank, pk := analyseJSONOpen(t, dir, sp.k, Options{}, open)
			testShare0 = 0
			if !bytes.Equal(an1, ank) || !bytes.Equal(p1, pk) {
				var a, b struct{ Problems []string }
				_ = json.Unmarshal(an1, &a)
				_ = json.Unmarshal(ank, &b)
				t.Errorf("%d processes (process 0's share %g) differ from 1 on %s; problems:\n1: %q\n%d: %q", sp.k, sp.share, what, a.Problems, sp.k, b.Problems)
			}
		}
	}
	an1, p1 := analyseJSON(t, dir, 1, Options{})
	var a struct{ Problems []string }
	if err := json.Unmarshal(an1, &a); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rank-00001.gct: chunk", "rank-00004.gct: chunk"} {
		if !strings.Contains(strings.Join(a.Problems, "\n"), name) {
			t.Fatalf("the serial analysis does not report the cut file %s: %q", name, a.Problems)
		}
	}
	compare(an1, p1, nil, "a damaged run")

	// A read error in the middle of rank 2's stream (found only while
	// reading: the worker must pass it on).
	failing := func(path string) (rundir.Source, error) {
		src, err := rundir.OpenTrace(path)
		if err != nil || !strings.HasSuffix(path, "rank-00002.gct") {
			return src, err
		}
		return &failAfter{Source: src, n: 3}, nil
	}
	an1, p1 = analyseJSONOpen(t, dir, 1, Options{}, failing)
	a.Problems = nil
	if err := json.Unmarshal(an1, &a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(a.Problems, "\n"), "rank-00002.gct: reading stopped early: injected") {
		t.Fatalf("the serial analysis does not report the read error: %q", a.Problems)
	}
	compare(an1, p1, failing, "a run with a read error")
}

// failAfter fails its source's NextChunk after n chunks.
type failAfter struct {
	rundir.Source
	n int
}

func (f *failAfter) NextChunk(dst []trace.Event) ([]trace.Event, error) {
	if f.n == 0 {
		return dst[:0], errors.New("injected read error")
	}
	f.n--
	return f.Source.NextChunk(dst)
}

// TestDistWorkerCannotRead: a worker that cannot read the run (another
// machine without the directory) makes process 0's analysis fail with its
// reason instead of silently lacking its ranks.
func TestDistWorkerCannotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, synth.Config{Ranks: 4, Steps: 200, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	net := newChanNet(2)
	werr := make(chan error, 1)
	go func() { werr <- ServeNothing(&Dist{Procs: 2, Me: 1, T: net[1]}, errors.New("no such directory")) }()
	_, pass := loadPass(t, dir)
	d := &Dist{Procs: 2, Me: 0, T: net[0]}
	pass.SetDist(d)
	_, err := pass.Run()
	if cerr := d.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if err := <-werr; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "process 1: no such directory") {
		t.Fatalf("analysis error %v, want process 1's reason", err)
	}
}
