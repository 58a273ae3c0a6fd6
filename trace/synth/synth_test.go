package synth

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gclock/gclock/trace"
)

func readRank(t *testing.T, path string) (*trace.Meta, []trace.Event) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return r.Meta(), evs
}

func smallConfig() Config {
	return Config{Ranks: 6, NodeSize: 2, Steps: 700, ChunkEvents: 128, Seed: 9, SplitGroups: 2, KeepTimes: true}
}

func TestGenerate_FilesAgreeWithTruth(t *testing.T) {
	dir := t.TempDir()
	tr, err := Generate(dir, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	commByID := map[uint64][]int32{}
	seqs := map[uint64]map[uint32]bool{}
	for r := 0; r < tr.Config.Ranks; r++ {
		m, evs := readRank(t, filepath.Join(dir, trace.RankFileName(r)))
		if !m.Complete() || m.Header.JobID != "synth-9" || m.Header.Rank != r || m.Header.WorldSize != 6 {
			t.Fatalf("rank %d: complete=%v header %+v", r, m.Complete(), m.Header)
		}
		if !reflect.DeepEqual(m.Header.Inject, tr.Inject[r]) || m.Header.NodeID != r/2 {
			t.Errorf("rank %d: inject %+v want %+v", r, m.Header.Inject, tr.Inject[r])
		}
		if len(evs) != tr.Events[r] || int(m.Footer.Events) != len(evs) {
			t.Errorf("rank %d: %d events, truth %d, footer %d", r, len(evs), tr.Events[r], m.Footer.Events)
		}
		for _, c := range m.Comms {
			if c.ID == trace.CommSelfID {
				continue
			}
			if prev, ok := commByID[c.ID]; ok && !slices.Equal(prev, c.Members) {
				t.Errorf("comm %x: members differ across ranks: %v vs %v", c.ID, prev, c.Members)
			}
			commByID[c.ID] = c.Members
			if !slices.Contains(c.Members, int32(r)) {
				t.Errorf("rank %d is not a member of its comm %x", r, c.ID)
			}
		}
		next := map[uint32]uint32{}
		for i, e := range evs {
			c, ok := m.CommByLocal(e.Comm)
			if !ok {
				t.Fatalf("rank %d event %d: comm %d undefined", r, i, e.Comm)
			}
			if e.Seq != next[e.Comm] {
				t.Fatalf("rank %d event %d: seq %d, want %d", r, i, e.Seq, next[e.Comm])
			}
			next[e.Comm]++
			if seqs[c.ID] == nil {
				seqs[c.ID] = map[uint32]bool{}
			}
			seqs[c.ID][e.Seq] = true
			// The written epoch model (exact here) maps local to truth.
			for idx := 0; idx < 2; idx++ {
				ep, ok := m.Epoch(idx)
				if !ok {
					t.Fatalf("rank %d: epoch %d missing", r, idx)
				}
				if d := math.Abs(ep.Model.Global(e.EnterNS) - tr.Global(r, e.EnterNS)); d > 1e-3 {
					t.Fatalf("rank %d event %d epoch %d: model global off truth by %g ns", r, i, idx, d)
				}
			}
			if tr.Enter[r][i] != tr.Global(r, e.EnterNS) || tr.Exit[r][i] != tr.Global(r, e.ExitNS) {
				t.Fatalf("rank %d event %d: kept times disagree with Global", r, i)
			}
		}
	}
	for id, s := range seqs {
		if len(s) != tr.Instances[id] {
			t.Errorf("comm %x: %d distinct instances in files, truth %d", id, len(s), tr.Instances[id])
		}
	}
	if len(commByID) != 3 { // world + 2 split blocks
		t.Errorf("%d distinct shared comms, want 3", len(commByID))
	}
}

func TestGenerate_TrueTimelineKeepsClockCondition(t *testing.T) {
	dir := t.TempDir()
	tr, err := Generate(dir, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Group true times by (comm, seq) and check no member of a
	// synchronising collective leaves before the last one entered.
	type key struct {
		id  uint64
		seq uint32
	}
	lastEnter := map[key]float64{}
	firstExit := map[key]float64{}
	var injected int
	for r := 0; r < tr.Config.Ranks; r++ {
		m, evs := readRank(t, tr.Files[r])
		for i, e := range evs {
			if !e.Op.Synchronizing() {
				continue
			}
			c, _ := m.CommByLocal(e.Comm)
			k := key{c.ID, e.Seq}
			if v, ok := lastEnter[k]; !ok || tr.Enter[r][i] > v {
				lastEnter[k] = tr.Enter[r][i]
			}
			if v, ok := firstExit[k]; !ok || tr.Exit[r][i] < v {
				firstExit[k] = tr.Exit[r][i]
			}
			if e.ExitNS < e.EnterNS {
				t.Fatalf("rank %d event %d: exit before enter", r, i)
			}
		}
		if tr.Inject[r].OffsetNS != 0 {
			injected++
		}
	}
	for k, le := range lastEnter {
		if firstExit[k] < le {
			t.Fatalf("instance %v: first exit %.1f before last enter %.1f in the truth", k, firstExit[k], le)
		}
	}
	if injected == 0 {
		t.Error("no rank has an injected offset")
	}
}

func TestGenerate_IsDeterministic(t *testing.T) {
	cfg := smallConfig()
	a, b := t.TempDir(), t.TempDir()
	if _, err := Generate(a, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(b, cfg); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < cfg.Ranks; r++ {
		x, _ := os.ReadFile(filepath.Join(a, trace.RankFileName(r)))
		y, _ := os.ReadFile(filepath.Join(b, trace.RankFileName(r)))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Fatalf("rank %d: files differ between runs with the same seed", r)
		}
	}
}

func TestGenerate_ImbalanceMakesRanksWaitDifferently(t *testing.T) {
	total := func(cfg Config) []float64 {
		tr, err := Generate(t.TempDir(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Time each rank spends inside collectives (true durations).
		out := make([]float64, cfg.Ranks)
		for r := range out {
			for i := range tr.Enter[r] {
				out[r] += tr.Exit[r][i] - tr.Enter[r][i]
			}
		}
		return out
	}
	spread := func(v []float64) float64 { return slices.Max(v) - slices.Min(v) }
	cfg := smallConfig()
	cfg.Imbalance = 0.5
	imb := total(cfg)
	cfg.NoImbalance = true
	flat := total(cfg)
	if spread(imb) < 5*spread(flat) {
		t.Errorf("wait spread with imbalance %.0f ns, without %.0f ns; want a clear difference", spread(imb), spread(flat))
	}
}

func TestGenerate_NoisyModelsDeviateByAboutTheNoise(t *testing.T) {
	cfg := smallConfig()
	cfg.Ranks, cfg.ModelNoiseNS = 32, 1000
	tr, err := Generate(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ss float64
	for r := 0; r < cfg.Ranks; r++ {
		d := tr.Epochs[r][0].Model.Intercept - tr.Models[r][0].Intercept
		ss += d * d
	}
	if rms := math.Sqrt(ss / float64(cfg.Ranks)); rms < 500 || rms > 2000 {
		t.Errorf("rms intercept noise %.0f ns, want about 1000", rms)
	}
}

func TestGenerate_BadInputOptions(t *testing.T) {
	cfg := smallConfig()
	cfg.MissingRanks = []int{5}
	cfg.ForeignRanks = []int{4}
	cfg.CrashedRanks = []int{3}
	cfg.Truncate = []Truncation{{Rank: 2, KeepFraction: 0.5}}
	cfg.CorruptChunks = []ChunkRef{{Rank: 1, Chunk: 2}}
	dir := t.TempDir()
	tr, err := Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, trace.RankFileName(5))); !os.IsNotExist(err) || tr.Files[5] != "" {
		t.Errorf("missing rank 5: stat err %v, file %q", err, tr.Files[5])
	}
	m4, _ := readRank(t, tr.Files[4])
	if m4.Header.JobID != "synth-9-other" {
		t.Errorf("foreign rank job id %q", m4.Header.JobID)
	}
	m3, ev3 := readRank(t, tr.Files[3])
	if _, ok := m3.Epoch(1); m3.Footer != nil || ok || len(m3.Damage) != 0 || len(ev3) != tr.Events[3] {
		t.Errorf("crashed rank: footer %v, epoch1 %v, damage %v, events %d/%d", m3.Footer, ok, m3.Damage, len(ev3), tr.Events[3])
	}
	m2, ev2 := readRank(t, tr.Files[2])
	if m2.Footer != nil || len(ev2) >= tr.Events[2] || len(ev2) == 0 {
		t.Errorf("truncated rank: footer %v, %d of %d events", m2.Footer, len(ev2), tr.Events[2])
	}
	m1, ev1 := readRank(t, tr.Files[1])
	if len(m1.Damage) != 1 || m1.Damage[0].Chunk != 2 || len(ev1) != tr.Events[1]-cfg.ChunkEvents ||
		!strings.Contains(m1.Damage[0].Err, "chunk 2 at byte") {
		t.Errorf("corrupt chunk: damage %v, %d of %d events", m1.Damage, len(ev1), tr.Events[1])
	}
	if !reflect.DeepEqual(tr.Damaged, cfg.CorruptChunks) {
		t.Errorf("Truth.Damaged = %v", tr.Damaged)
	}
}

func TestGenerate_RejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative ranks", Config{Ranks: -1}, "Ranks"},
		{"too many split groups", Config{Ranks: 2, SplitGroups: 3}, "SplitGroups"},
		{"node list of wrong length", Config{Ranks: 8, NodeSize: 4, Nodes: []NodeClock{{}}}, "Nodes"},
		{"corrupt missing chunk", Config{Ranks: 2, Steps: 10, CorruptChunks: []ChunkRef{{0, 5}}}, "no chunk 5"},
		{"truncate missing rank", Config{Ranks: 2, Truncate: []Truncation{{Rank: 7}}}, "rank 7"},
		{"missing rank out of range", Config{Ranks: 2, MissingRanks: []int{2}}, "MissingRanks: rank 2"},
		{"zero slowdown", Config{Ranks: 2, Slowdown: map[int]float64{1: 0}}, "Slowdown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(t.TempDir(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want mention of %q", err, tc.want)
			}
		})
	}
}

func TestGenerate_MillionEventsStreams(t *testing.T) {
	cfg := Config{Ranks: 16, Steps: 1 << 16, Seed: 3}
	t0 := time.Now()
	tr, err := Generate(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range tr.Files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += st.Size()
	}
	el := time.Since(t0)
	n := tr.TotalEvents()
	t.Logf("%d events over %d ranks in %v (%.1f M events/s), %.2f bytes/event on disk",
		n, cfg.Ranks, el.Round(time.Millisecond), float64(n)/el.Seconds()/1e6, float64(size)/float64(n))
}

func BenchmarkGenerate(b *testing.B) {
	cfg := Config{Ranks: 64, Steps: 1 << 14, Seed: 3}
	b.ReportAllocs()
	for b.Loop() {
		tr, err := Generate(b.TempDir(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(tr.TotalEvents())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	}
}

func TestGenerate_ReferenceExactMakesGlobalTheRawTime(t *testing.T) {
	cfg := smallConfig()
	cfg.ReferenceExact = true
	tr, err := Generate(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Nodes[0] != (NodeClock{}) || tr.Nodes[1] == (NodeClock{}) {
		t.Fatalf("nodes %+v: want node 0 exact, others not", tr.Nodes)
	}
	for _, local := range []int64{1e12, 2e12 + 12345} {
		if g, raw := tr.Global(3, local), tr.RawTime(3, local); g != raw {
			t.Errorf("Global %f != raw %f", g, raw)
		}
	}
}

func TestGenerate_SlowRankArrivesLast(t *testing.T) {
	cfg := smallConfig()
	cfg.NoImbalance = true
	cfg.Slowdown = map[int]float64{4: 1.5}
	tr, err := Generate(t.TempDir(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Rank 4 is in the second split block with ranks 3 and 5; on world
	// collectives it must arrive last nearly always (after warm-up).
	metas := make([]*trace.Meta, cfg.Ranks)
	evs := make([][]trace.Event, cfg.Ranks)
	for r := range metas {
		metas[r], evs[r] = readRank(t, tr.Files[r])
	}
	last, world := 0, 0
	for i := range evs[0] {
		if evs[0][i].Comm != 0 {
			continue
		}
		world++
		who := 0
		for r := range evs {
			if tr.Enter[r][i] > tr.Enter[who][i] {
				who = r
			}
		}
		if who == 4 {
			last++
		}
	}
	if world == 0 || float64(last) < 0.9*float64(world) {
		t.Errorf("rank 4 arrived last at %d of %d world collectives", last, world)
	}
}

func TestGenerate_GarbageFilesAreNotTraces(t *testing.T) {
	cfg := smallConfig()
	cfg.GarbageFiles = []string{"rank-00099.gct"}
	dir := t.TempDir()
	if _, err := Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	_, err := trace.Open(filepath.Join(dir, "rank-00099.gct"))
	var fe *trace.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not a gclock trace") {
		t.Errorf("garbage file: %v", err)
	}
	cfg.GarbageFiles = []string{"../escape"}
	if _, err := Generate(t.TempDir(), cfg); err == nil {
		t.Error("GarbageFiles with a path was accepted")
	}
}
