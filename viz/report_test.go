package viz

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
)

func htmlReport(t testing.TB, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteHTML_Properties(t *testing.T) {
	for _, c := range []struct {
		name                                string
		mutate                              func(*datamodel.Analysis)
		wantInjected, wantRaw, wantViolBann bool
	}{
		{"injected clock gets a loud banner", func(a *datamodel.Analysis) {}, true, false, true},
		{"raw mode gets a banner", func(a *datamodel.Analysis) { a.Clock.Injected = false; a.Clock.Mode = "raw" }, false, true, true},
		{"clean run has no banner", func(a *datamodel.Analysis) { a.Clock.Injected = false; a.Clock.Violations = 0 }, false, false, false},
		{"empty analysis still renders", func(a *datamodel.Analysis) { *a = datamodel.Analysis{} }, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := demoReport(t, true)
			c.mutate(r.Analysis)
			h := htmlReport(t, r)
			if got := strings.Contains(h, `id="banner-injected"`); got != c.wantInjected {
				t.Errorf("injected banner = %v, want %v", got, c.wantInjected)
			}
			if c.wantInjected && !strings.Contains(h, "nodes=4,offset=30us,drift=1e-5") {
				t.Error("injection spec not shown")
			}
			if got := strings.Contains(h, `id="banner-raw"`); got != c.wantRaw {
				t.Errorf("raw banner = %v, want %v", got, c.wantRaw)
			}
			if got := strings.Contains(h, `id="banner-violations"`); got != c.wantViolBann {
				t.Errorf("violation banner = %v, want %v", got, c.wantViolBann)
			}
			for _, sec := range []string{`id="clock"`, `id="gantt"`, `id="ops"`, `id="callsites"`, `id="ranks"`, `id="worst"`} {
				if !strings.Contains(h, sec) {
					t.Errorf("section %s missing", sec)
				}
			}
		})
	}
}

// TestWriteHTML_EscapesAndIsSelfContained: hostile strings from the trace
// never become markup, and nothing is fetched from the network.
func TestWriteHTML_EscapesAndIsSelfContained(t *testing.T) {
	h := htmlReport(t, demoReport(t, true))
	if n := strings.Count(h, "<script"); n != 1 { // our own sorting script only
		t.Errorf("%d <script elements, want exactly 1 (ours)", n)
	}
	if strings.Contains(h, `alert("x")`) || strings.Contains(h, "alert(&#34;x&#34;)</script>") && strings.Contains(h, "<script>alert") {
		t.Error("hostile string not escaped")
	}
	if !strings.Contains(h, "&lt;script&gt;alert(") {
		t.Error("escaped hostile string not found (was it dropped?)")
	}
	ext := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:|//)|@import|url\(\s*["']?(https?:|//)|<link|<iframe|<img`)
	if m := ext.FindString(h); m != "" {
		t.Errorf("external reference %q", m)
	}
	for _, want := range []string{"<svg", "MPI_Allreduce: exit skew per instance", "MPI_Allreduce: wait per rank and instance"} {
		if !strings.Contains(h, want) {
			t.Errorf("%q missing", want)
		}
	}
}

// TestWriteHTML_RendersInHeadlessChromium renders the report and checks the
// screenshot: the Gantt draws in the op colours and the injected-clock
// banner is red. Chromium is installed when missing (as root); the test
// fails with instructions otherwise, it never skips.
func TestWriteHTML_RendersInHeadlessChromium(t *testing.T) {
	out, err := exec.Command("sh", "testdata/ensure-chromium.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("chromium is required: %v\n%s", err, out)
	}
	bin := strings.TrimSpace(string(out[bytes.LastIndexByte(bytes.TrimSpace(out), '\n')+1:]))
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := os.WriteFile(page, []byte(htmlReport(t, demoReport(t, true))), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "out.png")
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1400,2000", "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 2000 {
		t.Fatalf("screenshot %v, want 1400x2000", b)
	}
	// The Gantt region: rows where the lanes' background (#f3f4f6, used
	// nowhere else) shows. Inside it the op colours must be drawn.
	b := img.Bounds()
	var ganttRows []int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		n := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl := rgb(img, x, y); r == 0xf3 && g == 0xf4 && bl == 0xf6 {
				n++
			}
		}
		if n > 100 {
			ganttRows = append(ganttRows, y)
		}
	}
	if len(ganttRows) < 40 {
		t.Fatalf("Gantt lanes not found in the screenshot (%d rows with lane background)", len(ganttRows))
	}
	targets := map[string][3]int{
		"MPI_Allreduce blue": {0x1f, 0x77, 0xb4}, "MPI_Bcast orange": {0xff, 0x7f, 0x0e}, "MPI_Barrier grey": {0x7f, 0x7f, 0x7f},
	}
	counts := map[string]int{}
	distinct := map[[3]uint8]bool{}
	for _, y := range ganttRows {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl := rgb(img, x, y)
			distinct[[3]uint8{uint8(r), uint8(g), uint8(bl)}] = true
			for name, c := range targets {
				if abs(r-c[0]) < 12 && abs(g-c[1]) < 12 && abs(bl-c[2]) < 12 {
					counts[name]++
				}
			}
		}
	}
	for name := range targets {
		if counts[name] < 100 {
			t.Errorf("Gantt region: only %d pixels of %s", counts[name], name)
		}
	}
	if len(distinct) < 20 {
		t.Errorf("Gantt region has only %d distinct colours", len(distinct))
	}
	// The injected-clock banner is red (#c62828 border and text).
	red := 0
	for y := b.Min.Y; y < b.Min.Y+400 && y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl := rgb(img, x, y); abs(r-0xc6) < 12 && abs(g-0x28) < 12 && abs(bl-0x28) < 12 {
				red++
			}
		}
	}
	if red < 500 {
		t.Errorf("injected-clock banner: only %d red pixels near the top", red)
	}
	t.Logf("Gantt region: %d rows, %d distinct colours, op pixels %v; banner red pixels %d", len(ganttRows), len(distinct), counts, red)
}

func rgb(img image.Image, x, y int) (int, int, int) {
	r, g, b, _ := img.At(x, y).RGBA()
	return int(r >> 8), int(g >> 8), int(b >> 8)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestWriteImbalanceText_Properties(t *testing.T) {
	a := demoAnalysis(true)
	a.Ranks[2].Host = "evil\x1b[2J\x07host"
	var b bytes.Buffer
	if err := WriteImbalanceText(&b, a); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.ContainsAny(s, "\x1b\x07") {
		t.Error("terminal control characters passed through")
	}
	for _, want := range []string{"CLOCK ERROR WAS INJECTED", "nodes=4,offset=30us", "3 clock-condition violations",
		"Per operation", "Call sites", "Who waits", "Who makes others wait", "Worst instances"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q missing", want)
		}
	}
	// Rank 5 is the late arriver: first in "who makes others wait".
	i := strings.Index(s, "Who makes others wait")
	rows := strings.Split(s[i:], "\n")
	if len(rows) < 3 || !strings.HasPrefix(strings.TrimSpace(rows[2]), "5 ") {
		t.Errorf("first row of who-makes-others-wait is %q, want rank 5", rows[2])
	}
	// Per-op table sorted by total wait: Allreduce (11 ms) before Barrier (9 ms) before Bcast (5 ms).
	ia, ib, ic := strings.Index(s, "MPI_Allreduce"), strings.Index(s, "MPI_Barrier"), strings.Index(s, "MPI_Bcast")
	if !(ia < ib && ib < ic) {
		t.Errorf("ops not sorted by total wait: %d %d %d", ia, ib, ic)
	}
	a.Clock = datamodel.ClockQuality{Mode: "raw"}
	b.Reset()
	WriteImbalanceText(&b, a)
	if !strings.Contains(b.String(), "RAW CLOCKS") || strings.Contains(b.String(), "INJECTED") {
		t.Error("raw banner wrong")
	}
	if err := WriteImbalanceText(&b, nil); err == nil {
		t.Error("nil analysis accepted")
	}
}

// TestWriteImbalanceText_HostsCounted: the header counts hosts in words
// that fit the number ("on 1 host", "on 2 hosts").
func TestWriteImbalanceText_HostsCounted(t *testing.T) {
	for _, c := range []struct {
		hosts []string
		want  string
	}{
		{[]string{"a"}, " on 1 host, "},
		{[]string{"a", "b"}, " on 2 hosts, "},
	} {
		a := demoAnalysis(false)
		for i := range a.Ranks {
			a.Ranks[i].Host = c.hosts[i%len(c.hosts)]
		}
		var b bytes.Buffer
		if err := WriteImbalanceText(&b, a); err != nil {
			t.Fatal(err)
		}
		if head, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(head, c.want) {
			t.Errorf("%d hosts: header %q, want it to contain %q", len(c.hosts), head, c.want)
		}
	}
}

func TestHistogramSVG_Properties(t *testing.T) {
	for _, c := range []struct {
		name     string
		h        datamodel.Histogram
		bars     int
		labels   []string
		noSample bool
	}{
		{"decade labels", datamodel.Histogram{Edges: []float64{100, 1e3, 1e4, 1e5}, Counts: []int{3, 0, 7}}, 2, []string{"100 ns", "1 µs", "10 µs", "100 µs"}, false},
		{"log spaced quarter decades", logHist(5000, 100), -1, []string{"100 ns", "10 µs", "1 ms"}, false},
		{"empty", datamodel.Histogram{Edges: []float64{1, 10}, Counts: []int{0}}, 0, nil, true},
		{"no bins", datamodel.Histogram{}, 0, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			svg := []byte(HistogramSVG(c.h, "MPI_Allreduce "+hostile, "#1f77b4"))
			_, text := wellFormed(t, svg)
			if bytes.Contains(svg, []byte("<script")) {
				t.Error("title not escaped")
			}
			nb := bytes.Count(svg, []byte(`fill="#1f77b4"`))
			want := c.bars
			if want < 0 {
				want = 0
				for _, n := range c.h.Counts {
					if n > 0 {
						want++
					}
				}
			}
			if nb != want {
				t.Errorf("%d bars, want %d", nb, want)
			}
			for _, l := range c.labels {
				if !strings.Contains(text, l+"\n") {
					t.Errorf("edge label %q missing", l)
				}
			}
			if got := strings.Contains(text, "no samples"); got != c.noSample {
				t.Errorf("no-samples note = %v, want %v", got, c.noSample)
			}
		})
	}
}
