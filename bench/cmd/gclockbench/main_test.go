package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestQuickRun_ProducesWellFormedTable runs the BENCH_QUICK smoke version end
// to end and checks the shape of what it records: every section present,
// every row complete, each value either a figure or an explicit "not
// available yet" reason, and the doc section replaced rather than appended
// on a second write. It asserts nothing about timings: the machine is
// shared and noisy, and speed goals live in the table itself.
func TestQuickRun_ProducesWellFormedTable(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := findRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(t.TempDir(), "benchmarks.md")
	c := &Config{
		Root: root, Quick: true, Doc: doc, Work: t.TempDir(),
		Lib:        filepath.Join(root, "build", "libgclock.so"),
		Tracemerge: filepath.Join(root, "build", "tracemerge"),
		Log:        testWriter{t},
	}
	rep, err := run(c)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		seen[r.Section] = true
		if r.Name == "" || strings.TrimSpace(r.Value) == "" {
			t.Errorf("row without name or value: %+v", r)
		}
		if !strings.HasPrefix(r.Value, notAvailablePrefix) && !strings.ContainsAny(r.Value, "0123456789") {
			t.Errorf("row %q: value %q is neither a figure nor a reason", r.Name, r.Value)
		}
	}
	for _, s := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		if !seen[s] {
			t.Errorf("section %s produced no row", s)
		}
	}
	checkMarkdown(t, doc, len(rep.Rows))

	// Writing again replaces this machine's section instead of adding one.
	m := probeMachine()
	if err := writeDoc(doc, m.Key(), rep.Section); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	if n := strings.Count(string(b), "## "+m.Key()+"\n"); n != 1 {
		t.Errorf("doc has %d sections for this machine after a second write, want 1", n)
	}
	checkMarkdown(t, doc, len(rep.Rows))
}

// checkMarkdown verifies the doc holds the intro, the machine facts and a
// table with wantRows rows of the header's column count.
func checkMarkdown(t *testing.T, path string, wantRows int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"# Benchmarks", "- date: ", "- machine: ", "- MPI: ", "- git revision: ", "| # | benchmark |"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc lacks %q", want)
		}
	}
	rows := 0
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		if cells := strings.Count(l, " | ") + 1; cells != len(tableHeader) {
			t.Errorf("table line has %d cells, want %d: %s", cells, len(tableHeader), l)
		}
		if !strings.HasPrefix(l, "| #") && !strings.HasPrefix(l, "| ---") {
			rows++
		}
	}
	if rows != wantRows {
		t.Errorf("doc table has %d rows, want %d", rows, wantRows)
	}
}

func TestWriteDoc_ReplacesOnlyThisMachinesSection(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "b.md")
	if err := writeDoc(doc, "CPU A, 2 cores", "## CPU A, 2 cores\n\nold A\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeDoc(doc, "CPU B, 8 cores", "## CPU B, 8 cores\n\nB\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeDoc(doc, "CPU A, 2 cores", "## CPU A, 2 cores\n\nnew A\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	s := string(b)
	if strings.Contains(s, "old A") || !strings.Contains(s, "new A") || !strings.Contains(s, "\nB\n") {
		t.Errorf("unexpected doc:\n%s", s)
	}
	if strings.Index(s, "CPU A") > strings.Index(s, "CPU B") {
		t.Errorf("section A moved behind B:\n%s", s)
	}
}

func TestMedianAndPairedDiff(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if got := pairedDiff([]float64{10, 20, 30}, []float64{11, 25, 33}); got != 3 {
		t.Errorf("pairedDiff = %v, want 3", got)
	}
	if got := pairedRatios([]float64{10, 0, 20, 4}, []float64{11, 5, 30}); !reflect.DeepEqual(got, []float64{1.1, 1.5}) {
		t.Errorf("pairedRatios = %v, want [1.1 1.5] (a zero baseline and an unpaired run left out)", got)
	}
}

func TestKeyValues_IgnoresNoise(t *testing.T) {
	m := keyValues("loop_ns_per_call 3.5\n[vm:1] some warning here\ncalls 1001000\n")
	if m["loop_ns_per_call"] != 3.5 || m["calls"] != 1001000 || len(m) != 2 {
		t.Errorf("keyValues = %v", m)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestRenderTable_EscapesPipesOnce(t *testing.T) {
	rows := []Row{unavailable("1", "x", errorString("a | b")), {Section: "2", Name: "max |r|", Value: "1 ns"}}
	out := renderTable(rows)
	if strings.Contains(out, `\\|`) || !strings.Contains(out, `a \| b`) || !strings.Contains(out, `max \|r\|`) {
		t.Errorf("bad escaping:\n%s", out)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestWriteDoc_RefreshesIntroKeepsSections(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "b.md")
	os.WriteFile(doc, []byte("# Benchmarks\n\nold intro\n\n## CPU A, 2 cores\n\nA\n"), 0o644)
	if err := writeDoc(doc, "CPU B, 8 cores", "## CPU B, 8 cores\n\nB\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	s := string(b)
	if strings.Contains(s, "old intro") || !strings.HasPrefix(s, docIntro[:20]) || !strings.Contains(s, "\nA\n") || !strings.Contains(s, "\nB\n") {
		t.Errorf("unexpected doc:\n%s", s)
	}
}

func TestParseGoBench_KeyLinePerFamilyAndFailedPackages(t *testing.T) {
	stdout := `goos: linux
pkg: github.com/gclock/gclock/trace
BenchmarkEncodeChunk/amg-4096-2    10  100 ns/op  3.6 B/event
BenchmarkEncodeChunk/amg-65536-2    5  900 ns/op  3.2 B/event
BenchmarkDecodeChunk/amg-4096-2    10   50 ns/op
ok  	github.com/gclock/gclock/trace	1.3s
FAIL	github.com/gclock/gclock/merge [build failed]
FAIL
`
	stderr := "# github.com/gclock/gclock/merge\nmerge/p2p.go:434:21: unknown field CommID\n"
	rows, keep := parseGoBench(stdout, stderr, "1s")
	if len(keep) != 4 {
		t.Errorf("kept %d lines, want pkg + 3 benchmarks: %q", len(keep), keep)
	}
	if len(rows) != 3 {
		t.Fatalf("rows = %+v, want 2 families + 1 failed package", rows)
	}
	if !strings.Contains(rows[0].Name, "amg-65536") || rows[0].Value != "900 ns/op 3.2 B/event" {
		t.Errorf("family row = %+v, want the last sub-benchmark", rows[0])
	}
	if !strings.Contains(rows[2].Name, "./merge") || !strings.Contains(rows[2].Value, "unknown field CommID") {
		t.Errorf("failed package row = %+v", rows[2])
	}
}

// TestManyRanksSection_RowsCarryFigures runs the many-ranks section in its
// quick form (1024 ranks) and wants its two rows with figures, not reasons.
func TestManyRanksSection_RowsCarryFigures(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := findRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{Root: root, Quick: true, Reps: 1, Work: t.TempDir(), Log: testWriter{t},
		Tracemerge: filepath.Join(root, "build", "tracemerge")}
	rows := benchTracemergeManyRanks(c, &Report{})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if strings.HasPrefix(r.Value, notAvailablePrefix) || !strings.Contains(r.Value, " s") && !strings.Contains(r.Value, "M events/s") {
			t.Errorf("row %q: value %q is not a figure", r.Name, r.Value)
		}
	}
	if rows[1].Ratio == "" {
		t.Errorf("ratio row without ratio: %+v", rows[1])
	}
}

// TestStepNote_MedianOfSameRoundDifferences: section 9's typical-step
// clause pairs each traced run with the untraced run of its round, skips
// rounds where either printed no step times, and is empty for a program
// that prints none.
func TestStepNote_MedianOfSameRoundDifferences(t *testing.T) {
	for _, c := range []struct {
		name          string
		plain, traced []float64
		want          string
	}{
		{"three rounds", []float64{9000, 10000, 9500}, []float64{9300, 10100, 9900}, "median of 3 rounds) +300 ns"},
		{"a round without step times is skipped", []float64{9000, 0, 9500}, []float64{9200, 10100, 9800}, "median of 2 rounds) +250 ns"},
		{"no step times", []float64{0, 0}, []float64{0, 0}, ""},
		{"none at all", nil, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := stepNote(c.plain, c.traced)
			if c.want == "" {
				if got != "" {
					t.Fatalf("stepNote = %q, want empty", got)
				}
				return
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("stepNote = %q, want it to contain %q", got, c.want)
			}
		})
	}
}

// TestWantRow_SelectsSection4RowsByPartsOfTheirNames: -rows takes parts of
// row names separated by |, so a part may hold commas; empty selects all.
func TestWantRow_SelectsSection4RowsByPartsOfTheirNames(t *testing.T) {
	sine4 := resyncScenarios[3].rowName(&Config{})
	walk2 := resyncScenarios[4].rowName(&Config{})
	for _, tc := range []struct {
		rows string
		name string
		want bool
	}{
		{"", sine4, true},
		{"period, 4 ranks", sine4, true},
		{"period, 4 ranks", walk2, false},
		{"period, 4 ranks|(seed 7), 2 ranks", walk2, true},
		{"resync epoch cost, 8 ranks", resyncCostName(8), true},
		{"resync epoch cost, 8 ranks", resyncCostName(2), false},
	} {
		if got := (&Config{Rows: tc.rows}).wantRow(tc.name); got != tc.want {
			t.Errorf("-rows %q, row %q: %v, want %v", tc.rows, tc.name, got, tc.want)
		}
	}
}

// TestTracedAppEnv_CarriesEnvSettingsAfterThePreload: section 9's traced
// runs get -env's settings (GCLOCK_BUFFER=2048 against the default with one
// library), after the preload and the trace directory; without -env only
// those two.
func TestTracedAppEnv_CarriesEnvSettingsAfterThePreload(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		want      []string
	}{
		{"no -env", "", []string{"LD_PRELOAD=/l.so", "GCLOCK_DIR=/d"}},
		{"one setting", "GCLOCK_BUFFER=2048", []string{"LD_PRELOAD=/l.so", "GCLOCK_DIR=/d", "GCLOCK_BUFFER=2048"}},
		{"two settings, extra spaces", "  GCLOCK_BUFFER=2048   GCLOCK_FLUSH_SYNC=0 ", []string{"LD_PRELOAD=/l.so", "GCLOCK_DIR=/d", "GCLOCK_BUFFER=2048", "GCLOCK_FLUSH_SYNC=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tracedAppEnv(&Config{Env: tc.env}, "/l.so", "/d")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("tracedAppEnv = %q, want %q", got, tc.want)
			}
		})
	}
}
