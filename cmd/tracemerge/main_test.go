package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/runinfo"
	"github.com/gclock/gclock/trace/synth"
	"github.com/gclock/gclock/viz/otf2"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// tracemergeBin builds the command once per test binary.
func tracemergeBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tracemerge-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tracemerge")
		args := []string{"build", "-o", binPath}
		if otf2.Available() { // built as this test binary was (make test: -tags otf2)
			args = append(args, "-tags", "otf2")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("building tracemerge: %v", buildErr)
	}
	return binPath
}

// runBin runs the built command and returns stdout, stderr and exit code.
func runBin(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(tracemergeBin(t), args...)
	cmd.Dir = dir
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running tracemerge: %v", err)
		}
		code = ee.ExitCode()
	}
	if strings.Contains(se.String(), "panic") || strings.Contains(se.String(), "goroutine ") {
		t.Fatalf("tracemerge panicked:\n%s", se.String())
	}
	return so.String(), se.String(), code
}

func gen(t *testing.T, dir string, cfg synth.Config) *synth.Truth {
	t.Helper()
	tr, err := synth.Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestCLI_EndToEndWritesEveryOutputWellFormed(t *testing.T) {
	tmp := t.TempDir()
	tr := gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 8, Steps: 1500, Seed: 5})
	stdout, stderr, code := runBin(t, tmp, "run", "-o", "out", "--instance", "world:3", "--top", "5")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "CLOCK ERROR WAS INJECTED") {
		t.Errorf("stderr lacks the injection warning:\n%s", stderr)
	}
	out := filepath.Join(tmp, "out")
	for _, f := range []string{"gantt.svg", "index.html", "imbalance.txt", "imbalance.json", "events.csv", "trace.pftrace", "instance-world-3.svg"} {
		st, err := os.Stat(filepath.Join(out, f))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(out, "imbalance.txt"))
	if len(txt) == 0 || stdout != string(txt) {
		t.Errorf("stdout (%d bytes) differs from imbalance.txt (%d bytes)", len(stdout), len(txt))
	}
	// JSON parses into the analysis and agrees with the truth.
	var an datamodel.Analysis
	b, _ := os.ReadFile(filepath.Join(out, "imbalance.json"))
	if err := json.Unmarshal(b, &an); err != nil {
		t.Fatalf("imbalance.json: %v", err)
	}
	if an.Events != tr.TotalEvents() || len(an.Ops) == 0 || len(an.Worst) != 5 {
		t.Errorf("imbalance.json: events %d (truth %d), %d ops, %d worst", an.Events, tr.TotalEvents(), len(an.Ops), len(an.Worst))
	}
	// CSV: header plus one row per event, required columns.
	f, err := os.Open(filepath.Join(out, "events.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(bufio.NewReader(f)).ReadAll()
	if err != nil {
		t.Fatalf("events.csv: %v", err)
	}
	want := []string{"rank", "op", "comm", "seq", "root", "bytes_sent", "bytes_recv", "local_enter_ns", "local_exit_ns", "global_enter_ns", "global_exit_ns", "callsite"}
	if len(rows) == 0 || strings.Join(rows[0][:len(want)], ",") != strings.Join(want, ",") {
		t.Errorf("events.csv header = %v", rows[0])
	}
	if len(rows)-1 != tr.TotalEvents() {
		t.Errorf("events.csv rows = %d, events %d", len(rows)-1, tr.TotalEvents())
	}
	if _, err := os.Stat(filepath.Join(out, "trace.json")); err == nil {
		t.Errorf("trace.json (legacy JSON) written without being asked for")
	}
	// The legacy JSON and the compressed CSV on request.
	if _, stderr, code := runBin(t, tmp, "run", "-o", "out", "-q", "--formats", "perfetto-json,csvgz"); code != exitOK {
		t.Fatalf("--formats perfetto-json,csvgz: exit %d, stderr:\n%s", code, stderr)
	}
	gzf, err := os.Open(filepath.Join(out, "events.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer gzf.Close()
	zr, err := gzip.NewReader(gzf)
	if err != nil {
		t.Fatalf("events.csv.gz: %v", err)
	}
	gzRows, err := csv.NewReader(zr).ReadAll()
	if err != nil || len(gzRows) != len(rows) {
		t.Errorf("events.csv.gz: %d rows (%v), events.csv has %d", len(gzRows), err, len(rows))
	}
	// Chrome trace JSON parses and holds one X event per MPI call.
	var ct struct {
		TraceEvents []struct {
			Ph string  `json:"ph"`
			Ts float64 `json:"ts"`
		} `json:"traceEvents"`
	}
	b, _ = os.ReadFile(filepath.Join(out, "trace.json"))
	if err := json.Unmarshal(b, &ct); err != nil {
		t.Fatalf("trace.json: %v", err)
	}
	nx := 0
	for _, e := range ct.TraceEvents {
		if e.Ph == "X" {
			nx++
		}
	}
	if nx != tr.TotalEvents() {
		t.Errorf("trace.json: %d X events, want %d", nx, tr.TotalEvents())
	}
	for _, f := range []string{"gantt.svg", "instance-world-3.svg"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		if !bytes.Contains(b, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(b), []byte("</svg>")) {
			t.Errorf("%s is not a complete SVG document", f)
		}
	}
	b, _ = os.ReadFile(filepath.Join(out, "index.html"))
	if !bytes.Contains(b, []byte("<html")) || bytes.Contains(b, []byte("<script src=")) || bytes.Contains(b, []byte("<link ")) {
		t.Errorf("index.html is not a self-contained HTML document")
	}
}

// TestCLI_PerEventExportsBoundedByDefault: beyond --per-event-limit the
// per-event exports are left out with a note naming how to get them, the
// summary outputs still cover every event, and exports named explicitly in
// --formats are written whatever the size.
func TestCLI_PerEventExportsBoundedByDefault(t *testing.T) {
	tmp := t.TempDir()
	tr := gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 4, Steps: 300, Seed: 8})
	limit := tr.TotalEvents() / 2
	_, stderr, code := runBin(t, tmp, "run", "-o", "out", "-q", "--per-event-limit", strconv.Itoa(limit))
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, f := range []string{"events.csv", "trace.pftrace"} {
		if _, err := os.Stat(filepath.Join(tmp, "out", f)); err == nil {
			t.Errorf("%s written although the run has %d events > limit %d", f, tr.TotalEvents(), limit)
		}
		if !strings.Contains(stderr, f) {
			t.Errorf("stderr does not name the left-out %s:\n%s", f, stderr)
		}
	}
	if !strings.Contains(stderr, "--formats csv,perfetto --per-event-limit 0") {
		t.Errorf("stderr does not say how to get them:\n%s", stderr)
	}
	var an datamodel.Analysis
	b, _ := os.ReadFile(filepath.Join(tmp, "out", "imbalance.json"))
	if err := json.Unmarshal(b, &an); err != nil || an.Events != tr.TotalEvents() {
		t.Errorf("imbalance.json: %v, %d events of %d", err, an.Events, tr.TotalEvents())
	}
	// Named explicitly: written in full.
	_, stderr, code = runBin(t, tmp, "run", "-o", "out2", "-q", "--formats", "csv,txt")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	f, err := os.Open(filepath.Join(tmp, "out2", "events.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows)-1 != tr.TotalEvents() {
		t.Errorf("explicit events.csv: %d rows (%v), want %d", len(rows)-1, err, tr.TotalEvents())
	}
	if _, _, code := runBin(t, tmp, "run", "-o", "out3", "--per-event-limit", "-5"); code != exitUsage {
		t.Errorf("--per-event-limit -5: exit %d, want %d", code, exitUsage)
	}
}

// TestCLI_OTF2ReadBackByOtf2Print: --formats otf2 writes an archive that
// the reference reader reads back whole: one Enter, Leave and collective
// begin/end per recorded call, with the corrected timestamps.
func TestCLI_OTF2ReadBackByOtf2Print(t *testing.T) {
	if !otf2.Available() {
		t.Fatalf("%v", otf2.ErrNotBuilt)
	}
	printer, err := exec.LookPath("otf2-print")
	if err != nil {
		t.Fatalf("otf2-print not found (Debian package otf2-tools; scripts/setup.sh installs it for make test): %v", err)
	}
	tmp := t.TempDir()
	tr := gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 4, Steps: 200, Seed: 9})
	if _, stderr, code := runBin(t, tmp, "run", "-o", "out", "-q", "--formats", "otf2,json"); code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	out, err := exec.Command(printer, filepath.Join(tmp, "out", "otf2", "traces.otf2")).Output()
	if err != nil {
		t.Fatalf("otf2-print: %v", err)
	}
	counts := map[string]int{}
	var lastTS = map[string]uint64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		ts, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue
		}
		counts[f[0]]++
		if ts < lastTS[f[1]] {
			t.Fatalf("location %s: timestamp %d after %d", f[1], ts, lastTS[f[1]])
		}
		lastTS[f[1]] = ts
	}
	n := tr.TotalEvents()
	for _, kind := range []string{"ENTER", "LEAVE", "MPI_COLLECTIVE_BEGIN", "MPI_COLLECTIVE_END"} {
		if counts[kind] != n {
			t.Errorf("%s: %d records, want one per recorded call (%d)", kind, counts[kind], n)
		}
	}
	if len(lastTS) != 4 {
		t.Errorf("%d locations, want 4", len(lastTS))
	}
}

// TestCLI_ParaverOneStateAndTwoEventsPerCall: --formats paraver writes
// the three files, one MPI state and an entry and exit event per call.
func TestCLI_ParaverOneStateAndTwoEventsPerCall(t *testing.T) {
	tmp := t.TempDir()
	tr := gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 4, Steps: 150, Seed: 10})
	if _, stderr, code := runBin(t, tmp, "run", "-o", "out", "-q", "--formats", "paraver"); code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(tmp, "out", "trace.prv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "#Paraver (") || !strings.Contains(lines[0], ":1:4(") {
		t.Errorf("header %q", lines[0])
	}
	events, mpiStates := 0, 0
	for _, l := range lines[1:] {
		f := strings.Split(l, ":")
		switch {
		case f[0] == "2":
			events++
		case f[0] == "1" && f[7] != "1":
			mpiStates++
		}
	}
	if n := tr.TotalEvents(); events != 2*n || mpiStates > n || mpiStates < n*9/10 {
		t.Errorf("%d events and %d MPI states for %d calls (want 2 events per call, a state per call of non-zero length)", events, mpiStates, n)
	}
	for _, f := range []string{"trace.pcf", "trace.row"} {
		if st, err := os.Stat(filepath.Join(tmp, "out", f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestCLI_GanttLaneSelection: --ranks draws the named ranks one per lane,
// --ranks-per-lane groups ranks, bad values are usage errors.
func TestCLI_GanttLaneSelection(t *testing.T) {
	tmp := t.TempDir()
	gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 8, Steps: 100, Seed: 11})
	for _, c := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--ranks", "1,5-6"}, []string{">rank 1 (", ">rank 5 (", ">rank 6 (", "3 of 8 ranks (--ranks)"}, []string{">rank 0 (", ">rank 2 ("}},
		{[]string{"--ranks-per-lane", "4"}, []string{">ranks 0–3", ">ranks 4–7", "8 ranks in 2 lanes of 4"}, []string{">rank 0 ("}},
	} {
		out := filepath.Join(tmp, "out-"+strings.Join(c.args, ""))
		if _, stderr, code := runBin(t, tmp, append([]string{"run", "-o", out, "-q", "--formats", "svg"}, c.args...)...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", c.args, code, stderr)
		}
		b, _ := os.ReadFile(filepath.Join(out, "gantt.svg"))
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%v: gantt.svg lacks %q", c.args, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(string(b), w) {
				t.Errorf("%v: gantt.svg has %q", c.args, w)
			}
		}
	}
	for _, bad := range [][]string{{"--ranks", "5-2"}, {"--ranks", "x"}, {"--ranks-per-lane", "-1"}} {
		if _, _, code := runBin(t, tmp, append([]string{"run", "-o", filepath.Join(tmp, "bad"), "-q"}, bad...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

func TestCLI_InfoSummarisesRun(t *testing.T) {
	tmp := t.TempDir()
	gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 4, Steps: 500, Seed: 6})
	stdout, stderr, code := runBin(t, tmp, "info", "run")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ranks:     4 of 4", "events:    2000", "MPI_Allreduce", "epoch 0:", "epoch 1:", "CLOCK ERROR WAS INJECTED", "problems:  none"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = runBin(t, tmp, "info", "--json", "run")
	var ri runinfo.Summary
	if err := json.Unmarshal([]byte(stdout), &ri); err != nil || code != 0 || ri.Events != 2000 {
		t.Errorf("info --json: code %d, err %v, events %d", code, err, ri.Events)
	}
}

func TestCLI_BadInputGivesClearMessageAndExitCode(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, cfg synth.Config) string {
		d := filepath.Join(tmp, name)
		gen(t, d, cfg)
		return name
	}
	ok := mk("ok", synth.Config{Ranks: 4, Steps: 400, Seed: 8})
	missing := mk("missing", synth.Config{Ranks: 8, Steps: 400, Seed: 8, MissingRanks: []int{5}})
	foreign := mk("foreign", synth.Config{Ranks: 4, Steps: 400, Seed: 8, ForeignRanks: []int{3}})
	crashed := mk("crashed", synth.Config{Ranks: 4, Steps: 400, Seed: 8, CrashedRanks: []int{2}})
	trunc := mk("trunc", synth.Config{Ranks: 4, Steps: 20000, Seed: 8, Truncate: []synth.Truncation{{Rank: 3, KeepFraction: 0.5}}})
	corrupt := mk("corrupt", synth.Config{Ranks: 4, Steps: 20000, Seed: 8, CorruptChunks: []synth.ChunkRef{{Rank: 2, Chunk: 1}}})
	os.MkdirAll(filepath.Join(tmp, "empty"), 0o755)
	os.MkdirAll(filepath.Join(tmp, "notrace"), 0o755)
	os.WriteFile(filepath.Join(tmp, "notrace", "rank-00000.gct"), []byte("hello world\n"), 0o644)
	os.MkdirAll(filepath.Join(tmp, "wrongver"), 0o755)
	b, _ := os.ReadFile(filepath.Join(tmp, ok, "rank-00000.gct"))
	b[8] = 9 // major version
	os.WriteFile(filepath.Join(tmp, "wrongver", "rank-00000.gct"), b, 0o644)

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // substrings of stderr
	}{
		{"no arguments prints usage", nil, exitUsage, []string{"Usage:"}},
		{"unknown flag", []string{ok, "--bogus"}, exitUsage, []string{"flag provided but not defined: -bogus"}},
		{"bad clock mode", []string{ok, "--clock=wrong"}, exitUsage, []string{`unknown clock mode "wrong"`}},
		{"time without unit", []string{ok, "--from", "5"}, exitUsage, []string{`"5" has no unit`}},
		{"to before from", []string{ok, "--from", "2s", "--to", "1s"}, exitUsage, []string{"must lie after --from"}},
		{"bad instance", []string{ok, "--instance", "world"}, exitUsage, []string{"want COMM:SEQ"}},
		{"bad format", []string{ok, "--formats", "svg,pdf"}, exitUsage, []string{`unknown format "pdf"`}},
		{"two directories", []string{ok, missing}, exitUsage, []string{"expected one run directory"}},
		{"nonexistent dir", []string{"nope"}, exitNoData, []string{"cannot read run directory", "nope"}},
		{"empty dir", []string{"empty"}, exitNoData, []string{"empty: no trace files (rank-*.gct) found"}},
		{"parent of runs", []string{"."}, exitNoData, []string{"run directories", "pass one of them"}},
		{"not a trace", []string{"notrace"}, exitNoData, []string{"rank-00000.gct: at byte 0: not a gclock trace"}},
		{"wrong version", []string{"wrongver"}, exitNoData, []string{"rank-00000.gct: at byte 8: unsupported format version 9"}},
		{"mixed runs", []string{foreign}, exitNoData, []string{"mixes runs", "rank-00000.gct has job id \"synth-8\"", "rank-00003.gct has job id \"synth-8-other\""}},
		{"missing rank", []string{missing}, exitPartial, []string{"1 of 8 ranks missing: rank 5 (no usable rank-00005.gct)"}},
		{"crashed rank", []string{crashed}, exitPartial, []string{"rank-00002.gct: no footer", "rank 2: only epoch 0 present"}},
		{"truncated file", []string{trunc}, exitPartial, []string{"rank-00003.gct: chunk", "truncated", "no footer"}},
		{"corrupted chunk", []string{corrupt}, exitPartial, []string{"rank-00002.gct: chunk 1 at byte", "checksum mismatch", "instances are incomplete"}},
		{"intact run", []string{ok}, exitOK, []string{"CLOCK ERROR WAS INJECTED"}},
		{"window after the end", []string{ok, "--from", "100s"}, exitNoData, []string{"no events in the window --from 100s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{}, tc.args...)
			if len(args) > 0 && !strings.HasPrefix(tc.name, "unknown") {
				args = append(args, "-o", filepath.Join(t.TempDir(), "out"), "-q")
			}
			_, stderr, code := runBin(t, tmp, args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestCLI_RawModeWarnsLoudly(t *testing.T) {
	tmp := t.TempDir()
	gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 4, NodeSize: 2, Steps: 500, Seed: 9})
	stdout, stderr, code := runBin(t, tmp, "run", "-o", "out", "--clock=raw", "--formats", "txt,json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"CLOCK MODE RAW", "clock-condition violations"} {
		if !strings.Contains(stderr, want) || !strings.Contains(stdout, want) {
			t.Errorf("%q missing from stderr or report", want)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "out", "gantt.svg")); err == nil {
		t.Errorf("gantt.svg written although --formats excluded svg")
	}
}

func TestParseDuration_AcceptsUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  bool
	}{
		{"1.5s", 1.5e9, false}, {"200ms", 2e8, false}, {"50us", 5e4, false}, {"50µs", 5e4, false},
		{"100ns", 100, false}, {"2m", 120e9, false}, {"0", 0, false}, {"5", 0, true}, {"-1s", 0, true}, {"abc", 0, true},
	} {
		got, err := parseDuration(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseInstance_AcceptsWorldDecimalAndHex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		comm uint64
		seq  uint32
		err  bool
	}{
		{"world:42", 1, 42, false}, {"0x1f:3", 31, 3, false}, {"77:0", 77, 0, false},
		{"self:1", 0, 0, true}, {"world", 0, 0, true}, {"world:-1", 0, 0, true}, {"zz:1", 0, 0, true},
	} {
		k, _, err := parseInstance(tc.in)
		if (err != nil) != tc.err || (!tc.err && (k.Comm != tc.comm || k.Seq != tc.seq)) {
			t.Errorf("parseInstance(%q) = %+v, %v", tc.in, k, err)
		}
	}
}

// TestRun_InProcessAllFormats runs the command in-process (so `go test
// -race` covers the concurrent outputs) and checks the exit code.
func TestRun_InProcessAllFormats(t *testing.T) {
	tmp := t.TempDir()
	gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 4, NodeSize: 2, Steps: 3000, Seed: 10})
	var so, se bytes.Buffer
	code := run([]string{filepath.Join(tmp, "run"), "-o", filepath.Join(tmp, "out"), "--instance", "world:5", "--from", "1ms"}, &so, &se)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	if so.Len() == 0 {
		t.Errorf("no report on stdout")
	}
	code = run([]string{"info", filepath.Join(tmp, "run")}, &so, &se)
	if code != exitOK {
		t.Errorf("info exit %d: %s", code, se.String())
	}
}

func TestCLI_OutputAndInfoExitCodes(t *testing.T) {
	tmp := t.TempDir()
	gen(t, filepath.Join(tmp, "ok"), synth.Config{Ranks: 2, Steps: 200, Seed: 12})
	gen(t, filepath.Join(tmp, "bad"), synth.Config{Ranks: 4, Steps: 200, Seed: 12, MissingRanks: []int{1}})
	os.WriteFile(filepath.Join(tmp, "afile"), []byte("x"), 0o644)
	_, stderr, code := runBin(t, tmp, "ok", "-o", "afile/out", "-q")
	if code != exitOutput || !strings.Contains(stderr, "cannot create output directory") {
		t.Errorf("unwritable output: exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code := runBin(t, tmp, "info", "bad")
	if code != exitPartial || !strings.Contains(stdout, "MISSING 1: [1]") || !strings.Contains(stdout, "1 of 4 ranks missing") {
		t.Errorf("info on a run with a missing rank: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// a wide run: missing ranks as ranges, hosts past the 32nd summed up
	gen(t, filepath.Join(tmp, "wide"), synth.Config{Ranks: 200, NodeSize: 4, Steps: 20, Seed: 12, MissingRanks: []int{5, 6, 7, 8, 20}})
	stdout, stderr, code = runBin(t, tmp, "info", "wide")
	if code != exitPartial || !strings.Contains(stdout, "MISSING 5: [5-8 20]\n") || !strings.Contains(stdout, "... and 18 more hosts (--json lists them all)") ||
		strings.Count(stdout, "synth-node") != 32 {
		t.Errorf("info on a wide run: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	_, stderr, code = runBin(t, tmp, "info", "nothere")
	if code != exitNoData || !strings.Contains(stderr, "cannot read run directory") {
		t.Errorf("info on a missing dir: exit %d, %q", code, stderr)
	}
}

func TestWriteText_FallbackReportNamesEverything(t *testing.T) {
	an := &datamodel.Analysis{JobID: "j\x1b[31m", WorldSize: 2, Events: 4, Instances: 2,
		Clock:     datamodel.ClockQuality{Mode: "raw", Warnings: []string{"CLOCK MODE RAW: ..."}},
		Ops:       []datamodel.OpSummary{{Op: "MPI_Barrier", Count: 2, Calls: 4}},
		Ranks:     []datamodel.RankSummary{{Rank: 1, Host: "h", LastCount: 2, TotalLateness: 300, MadeWait: []datamodel.RankAmount{{Rank: 0, NS: 300}}}},
		Callsites: []datamodel.CallsiteSummary{{Function: "solve", File: "amg.c", Line: 120, Op: "MPI_Barrier", Calls: 4}},
		Worst:     []datamodel.Instance{{CommID: 1, Seq: 7, OpName: "MPI_Barrier", LastRank: 1, Complete: true}},
		Problems:  []string{"rank-00003.gct: chunk 2 at byte 9: checksum mismatch"},
	}
	var b bytes.Buffer
	writeText(&b, an, 10)
	out := b.String()
	for _, want := range []string{"CLOCK MODE RAW", "MPI_Barrier", "solve (amg.c:120)", "world:7", "rank 0 300 ns", "checksum mismatch"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("control characters from the trace reached the report")
	}
}

// TestCLI_RefinedRepairsAndReports: epoch models off by tens of µs leave
// clock-condition violations that --clock refined repairs; the text and
// JSON say what the repair did, and interp keeps showing the violations.
func TestCLI_RefinedRepairsAndReports(t *testing.T) {
	tmp := t.TempDir()
	gen(t, filepath.Join(tmp, "run"), synth.Config{Ranks: 8, NodeSize: 1, Steps: 2000, Seed: 11, Halo: true, ModelNoiseNS: 40e3, ComputeNS: 5000})
	read := func(out string) datamodel.Analysis {
		var an datamodel.Analysis
		b, err := os.ReadFile(filepath.Join(tmp, out, "imbalance.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &an); err != nil {
			t.Fatalf("%s/imbalance.json: %v", out, err)
		}
		return an
	}
	if _, stderr, code := runBin(t, tmp, "run", "-o", "interp", "--formats", "json"); code != exitOK {
		t.Fatalf("interp: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runBin(t, tmp, "run", "-o", "refined", "--clock", "refined", "--formats", "json,txt")
	if code != exitOK {
		t.Fatalf("refined: exit %d: %s", code, stderr)
	}
	in, re := read("interp"), read("refined")
	if in.Clock.Violations == 0 {
		t.Fatalf("interp shows no violation: the test proves nothing")
	}
	c := re.Clock
	if c.Violations != 0 || c.CLCRepairs == 0 || c.CLCRanks == 0 || c.CLCBefore == 0 || !(c.CLCMaxNS > 0) {
		t.Errorf("refined: %d violations left, repair %d on %d ranks (max %.0f ns), %d before", c.Violations, c.CLCRepairs, c.CLCRanks, c.CLCMaxNS, c.CLCBefore)
	}
	if !strings.Contains(stdout, "clock repair (controlled logical clock)") {
		t.Errorf("text lacks the clock repair line:\n%s", stdout)
	}
	if strings.Contains(stdout, "point-to-point clock-condition violations") {
		t.Errorf("refined text still reports point-to-point violations:\n%s", stdout)
	}
}

func TestOneLine_KeepsTextOnOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"MPICH Version:\t4.0.2", "MPICH Version: 4.0.2"}, // MPICH's library version
		{"a\nb\rc", "a?b?c"},
		{"bell\x07del\x7f", "bell?del?"},
		{"Open MPI v4.1.4, package: Debian", "Open MPI v4.1.4, package: Debian"},
	} {
		if got := oneLine(c.in); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
