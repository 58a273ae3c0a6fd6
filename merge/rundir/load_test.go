package rundir

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/trace/synth"
)

// TestLoad_ErrorsNameTheFiles: a directory of two runs, or of none, is a
// LoadError of its kind whose message names the files.
func TestLoad_ErrorsNameTheFiles(t *testing.T) {
	dir := genSynth(t, synth.Config{Ranks: 3, Steps: 100, ForeignRanks: []int{2}})
	_, err := Load(dir, nil)
	le, ok := err.(*LoadError)
	if !ok || le.Kind != ErrMixedRuns || !strings.Contains(le.Msg, "rank-00002.gct") || !strings.Contains(le.Msg, "rank-00000.gct") {
		t.Errorf("err = %v", err)
	}
	_, err = Load(t.TempDir(), nil)
	if le, ok := err.(*LoadError); !ok || le.Kind != ErrNoData {
		t.Errorf("empty dir: %v", err)
	}
}

// TestMetaProblems_FooterStates: what a rank file's footer says (a clean
// end, a recording stopped early, dropped events, no footer) is one
// problem naming the file and the rank, or none.
func TestMetaProblems_FooterStates(t *testing.T) {
	ep := []trace.Epoch{{Index: 0}}
	cases := []struct {
		name   string
		footer *trace.Footer
		want   []string // substrings of the one problem; nil: no problem
	}{
		{"finalize", &trace.Footer{Reason: "finalize", EndNS: 9e9}, nil},
		{"stopped", &trace.Footer{Reason: "error", EndNS: 3_500_000_000, Stopped: "trace: rank-00003.gct: the file size limit"},
			[]string{"rank-00003.gct: rank 3's recording stopped early, 2.500 s after its MPI_Init", "later calls are not in the trace", ": trace: rank-00003.gct: the file size limit"}},
		{"dropped", &trace.Footer{Reason: "exit", Dropped: 7}, []string{"dropped 7 events"}},
		{"no footer", nil, []string{"no footer: rank 3 did not finish cleanly"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ri := &RankInput{Path: "/x/rank-00003.gct", Rank: 3, Meta: &RankMeta{
				Header: trace.Header{StartNS: 1e9}, Epochs: ep, Footer: c.footer}}
			p := metaProblems(ri)
			if c.want == nil {
				if len(p) != 0 {
					t.Fatalf("problems %q, want none", p)
				}
				return
			}
			if len(p) != 1 {
				t.Fatalf("problems %q, want one", p)
			}
			for _, w := range c.want {
				if !strings.Contains(p[0], w) {
					t.Errorf("problem %q lacks %q", p[0], w)
				}
			}
		})
	}
}

// TestLoad_RanksWithEqualSettingsShareOneConfigMap: the ranks of one run
// record the same settings; Load keeps one map for them, not one a rank,
// and so do the rank files' readers.
func TestLoad_RanksWithEqualSettingsShareOneConfigMap(t *testing.T) {
	run := loadSynth(t, synth.Config{Ranks: 6, Steps: 3, Seed: 5})
	first := run.Ranks[0].Meta.Header.Config
	if len(first) == 0 {
		t.Fatal("the synthetic run's rank 0 records no settings: nothing to share")
	}
	for _, ri := range run.Ranks[1:] {
		c := ri.Meta.Header.Config
		if !maps.Equal(c, first) {
			t.Fatalf("rank %d's settings differ from rank 0's: %v against %v", ri.Rank, c, first)
		}
		if reflect.ValueOf(c).UnsafePointer() != reflect.ValueOf(first).UnsafePointer() {
			t.Fatalf("rank %d has its own copy of the settings map", ri.Rank)
		}
	}
	// nor does the rank file's reader keep its own copy
	for _, ri := range run.Ranks {
		ts, ok := ri.Src.(*traceSource)
		if !ok {
			t.Fatalf("rank %d's source is a %T, not a rank file's", ri.Rank, ri.Src)
		}
		rh := ts.r.Meta().Header
		if reflect.ValueOf(rh.Config).UnsafePointer() != reflect.ValueOf(first).UnsafePointer() ||
			unsafe.StringData(rh.JobID) != unsafe.StringData(run.Ranks[0].Meta.Header.JobID) {
			t.Errorf("rank %d's reader keeps its own settings map or job id", ri.Rank)
		}
	}
}

// TestLoad_RanksWithEqualEpochParametersShareTheirMaps: the sync epochs
// of a run's ranks record the same parameters; Load keeps one map per
// epoch for them, not one a rank.
func TestLoad_RanksWithEqualEpochParametersShareTheirMaps(t *testing.T) {
	run := loadSynth(t, synth.Config{Ranks: 6, Steps: 3, Seed: 5})
	first := run.Ranks[0].Meta.Epochs
	if len(first) == 0 || len(first[0].Params) == 0 {
		t.Fatal("the synthetic run's rank 0 records no epoch parameters: nothing to share")
	}
	for _, ri := range run.Ranks[1:] {
		for i, e := range ri.Meta.Epochs {
			if i >= len(first) || !maps.Equal(e.Params, first[i].Params) {
				t.Fatalf("rank %d's epoch %d parameters differ from rank 0's", ri.Rank, i)
			}
			if reflect.ValueOf(e.Params).UnsafePointer() != reflect.ValueOf(first[i].Params).UnsafePointer() {
				t.Errorf("rank %d has its own copy of epoch %d's parameters", ri.Rank, i)
			}
		}
	}
}

// TestLoad_RanksShareTheStringsTheirFilesRepeat: the job id, executable,
// MPI library, timer name, the sync algorithms and the communicators'
// kinds are the same in every rank's file; Load keeps one copy of each
// (equal strings at one address), and the run's size is the sum of its
// files' sizes though Load no longer asks the file system for them.
func TestLoad_RanksShareTheStringsTheirFilesRepeat(t *testing.T) {
	run := loadSynth(t, synth.Config{Ranks: 6, Steps: 3, Seed: 5})
	strs := func(m *RankMeta) map[string]string {
		h := m.Header
		out := map[string]string{"job": h.JobID, "exe": h.Exe, "mpi": h.MPILib, "timer": h.Timer.Name}
		for i, e := range m.Epochs {
			out[fmt.Sprintf("epoch %d algorithm", i)] = e.Algorithm
		}
		for i, c := range m.Comms {
			out[fmt.Sprintf("comm %d kind", i)] = c.Kind
		}
		return out
	}
	first := strs(run.Ranks[0].Meta)
	shared := 0
	for _, ri := range run.Ranks[1:] {
		for k, v := range strs(ri.Meta) {
			f, ok := first[k]
			if !ok || f != v || v == "" {
				continue
			}
			shared++
			if unsafe.StringData(f) != unsafe.StringData(v) {
				t.Errorf("rank %d has its own copy of the %s %q", ri.Rank, k, v)
			}
		}
	}
	if shared < 5*len(run.Ranks[1:]) {
		t.Fatalf("only %d equal strings across the ranks: the synthetic run repeats too little to test", shared)
	}
	var size int64
	for _, ri := range run.Ranks {
		st, err := os.Stat(ri.Path)
		if err != nil {
			t.Fatal(err)
		}
		size += st.Size()
	}
	if run.TotalBytes != size {
		t.Errorf("TotalBytes %d, the files hold %d", run.TotalBytes, size)
	}
}

// TestDropReader_KeepsTheMetadataOfATraceFileOnly: a rank file's source
// gives back its metadata (the same RankMeta) and lets go of its reader
// and sidecar; a source of another kind is left alone.
func TestDropReader_KeepsTheMetadataOfATraceFileOnly(t *testing.T) {
	dir := genSynth(t, synth.Config{Ranks: 2, Steps: 20, Seed: 1})
	src, err := OpenTrace(filepath.Join(dir, "rank-00001.gct"))
	if err != nil {
		t.Fatal(err)
	}
	before := src.Meta()
	m, ok := DropReader(src)
	if !ok || m != before || m.Header.Rank != 1 {
		t.Fatalf("DropReader = %p, %v; want the source's own metadata (%p) of rank 1", m, ok, before)
	}
	if ts := src.(*traceSource); ts.r != nil || ts.live != nil || ts.firsts != nil {
		t.Errorf("the source still holds its reader or sidecar: %+v", ts)
	}
	mem := &MemSource{Events: []trace.Event{{EnterNS: 1, ExitNS: 2}}}
	if m, ok := DropReader(mem); ok || m != nil {
		t.Errorf("DropReader(MemSource) = %v, %v; want nil, false", m, ok)
	}
	if ev, err := mem.NextChunk(nil); err != nil || len(ev) != 1 {
		t.Errorf("the MemSource no longer reads: %v, %v", ev, err)
	}
}

// genSynth writes a synthetic run into a new directory and returns it.
func genSynth(t *testing.T, cfg synth.Config) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Generate(dir, cfg); err != nil {
		t.Fatal(err)
	}
	return dir
}

// loadSynth loads a synthetic run, closed when the test ends.
func loadSynth(t *testing.T, cfg synth.Config) *Run {
	t.Helper()
	run, err := Load(genSynth(t, cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run
}

// TestFirstStart_IsTheLowestRankThatRecordedItsStart: ranks without a
// recorded MPI_Init exit are passed over; none, or no run, is nil.
func TestFirstStart_IsTheLowestRankThatRecordedItsStart(t *testing.T) {
	in := func(rank int, start int64) *RankInput {
		return &RankInput{Rank: rank, Meta: &RankMeta{Header: trace.Header{Rank: rank, StartNS: start}}}
	}
	for _, tc := range []struct {
		name string
		run  *Run
		want int // rank; -1 nil
	}{
		{"rank 0 recorded it", &Run{Ranks: []*RankInput{in(0, 7), in(1, 9)}}, 0},
		{"rank 0 did not", &Run{Ranks: []*RankInput{in(0, 0), in(2, 9), in(3, 8)}}, 2},
		{"no rank did", &Run{Ranks: []*RankInput{in(0, 0), in(1, 0)}}, -1},
		{"no run", nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.run.FirstStart()
			switch {
			case tc.want < 0 && got != nil:
				t.Errorf("FirstStart = rank %d, want nil", got.Rank)
			case tc.want >= 0 && (got == nil || got.Rank != tc.want):
				t.Errorf("FirstStart = %v, want rank %d", got, tc.want)
			}
		})
	}
}
