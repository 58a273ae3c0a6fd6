package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// timeFigure is a figure in ns, µs or ms: the unit of most measured
// costs and clock errors on the user pages.
var timeFigure = regexp.MustCompile(`\d[\d,.]*\s?(?:µs|ns|ms)\b`)

// measureWord marks a sentence that reports a measurement (a cost, a
// time taken, a figure of a run), not a setting or a threshold.
var measureWord = regexp.MustCompile(`(?i)\b(measured|measures|took|takes|cost|costs|gave|load|per event|an event|per call|a call|in (?:the|this|that|one|a) run)\b`)

// sentenceEnd splits prose into sentences.
var sentenceEnd = regexp.MustCompile(`[.;]\s+`)

// measuredFigure reports whether some sentence of prose states a time
// figure together with a word of measurement.
func measuredFigure(prose string) bool {
	for _, s := range sentenceEnd.Split(prose, -1) {
		if timeFigure.MatchString(s) && measureWord.MatchString(s) {
			return true
		}
	}
	return false
}

// commandWord is what makes text a command that reproduces a figure.
var commandWord = regexp.MustCompile(`go test|go run|make|tracemerge|clocksim|BENCH_ONLY|scripts/|mpirun|mpiexec|valgrind`)

var (
	fence      = regexp.MustCompile("(?s)```.*?```")
	codeSpan   = regexp.MustCompile("`[^`]+`")
	defaultFig = regexp.MustCompile(`(?i)default:?\s+` + "`?" + `\d[\d,.]*\s?(?:µs|ns|ms)\b`)
)

// figureAllowed lists paragraphs of user pages that may state a time
// figure without a command, by page and a substring of the paragraph.
// Keep it small and say why for each entry; it is empty now.
var figureAllowed = map[string][]string{}

// generatedPage lists the reference pages generated from the code's own
// tables (their -update tests write them): their figures are field
// meanings and defaults, not measurements.
var generatedPage = map[string]bool{
	"docs/reference/settings.md":       true,
	"docs/reference/tracemerge-cli.md": true,
	"docs/reference/outputs.md":        true,
}

// uncommandedFigures returns, for one page's markdown, the paragraphs
// (first line number, text) that state a measured time figure (a figure
// in ns, µs or ms in a sentence with a word of measurement) in a section
// without any command: no code span or fenced block naming a command
// and no "Reproduce" line from its heading to the next. Figures in code
// and defaults ("default 5 µs") are settings, not measurements.
func uncommandedFigures(md string) (lines []int, paras []string) {
	type sec struct {
		start int
		text  string
	}
	var secs []sec
	cur := sec{start: 1}
	var b strings.Builder
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "#") && !inFence(b.String()) {
			cur.text = b.String()
			secs = append(secs, cur)
			cur, b = sec{start: i + 1}, strings.Builder{}
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	cur.text = b.String()
	secs = append(secs, cur)
	for _, s := range secs {
		if sectionHasCommand(s.text) {
			continue
		}
		// Blank out fenced blocks, keeping their lines for the numbering.
		text := fence.ReplaceAllStringFunc(s.text, func(f string) string {
			return strings.Repeat("\n", strings.Count(f, "\n"))
		})
		line := s.start
		for _, p := range strings.Split(text, "\n\n") {
			prose := defaultFig.ReplaceAllString(codeSpan.ReplaceAllString(p, "`code`"), "default")
			if measuredFigure(prose) {
				lines = append(lines, line+leadingNewlines(p))
				paras = append(paras, strings.TrimSpace(p))
			}
			line += strings.Count(p, "\n") + 2
		}
	}
	return lines, paras
}

func inFence(s string) bool { return strings.Count(s, "```")%2 == 1 }

func leadingNewlines(s string) int { return len(s) - len(strings.TrimLeft(s, "\n")) }

// sectionHasCommand: a code span or fenced block naming a command, or a
// line starting with "Reproduce".
func sectionHasCommand(s string) bool {
	for _, f := range fence.FindAllString(s, -1) {
		if commandWord.MatchString(f) {
			return true
		}
	}
	for _, c := range codeSpan.FindAllString(fence.ReplaceAllString(s, ""), -1) {
		if commandWord.MatchString(c) {
			return true
		}
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " -*>"), "Reproduce") {
			return true
		}
	}
	return false
}

// TestDocs_UserPageFiguresHaveCommands: every section of a user page that
// states a figure in ns, µs or ms names the command that reproduces it
// (a `go test ... -v`, `BENCH_ONLY=N make bench`, `go run ./cmd/clocksim`,
// `tracemerge ...` in a code span or block, or a "Reproduce" line).
// Figures that no current command reproduces belong in docs/history.md.
func TestDocs_UserPageFiguresHaveCommands(t *testing.T) {
	pages := 0
	for _, f := range mdFiles(t) {
		if !userPage(f) || generatedPage[f] {
			continue
		}
		pages++
		b, err := os.ReadFile(filepath.Join(root(), f))
		if err != nil {
			t.Fatal(err)
		}
		lines, paras := uncommandedFigures(string(b))
	paras:
		for i, p := range paras {
			for _, ok := range figureAllowed[f] {
				if strings.Contains(p, ok) {
					continue paras
				}
			}
			t.Errorf("%s:%d: a figure in ns/µs/ms in a section that names no command (add the `go test -run TestX -v ./pkg`, `BENCH_ONLY=N make bench` or `tracemerge ...` line that reproduces it, or move it to docs/history.md): %.120s", f, lines[i], p)
		}
	}
	if pages < 10 {
		t.Fatalf("found %d user pages; the page list (git ls-files) looks wrong", pages)
	}
}

// TestDocs_FigureRule: the rule above flags a measured figure without a
// command and lets through one with a command in its section, a default,
// a figure in code, and a page without figures.
func TestDocs_FigureRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		md   string
		want int
	}{
		{"figure without command", "# A\n\nThe merge takes 414 ns an event.\n", 1},
		{"a threshold is no measurement", "# A\n\nA knot is loose above 1 µs and 4× the median bound.\n", 0},
		{"measurement word in another sentence", "# A\n\nIt was measured. The bound is 1 µs.\n", 0},
		{"figure, command in the paragraph", "# A\n\nThe merge takes 414 ns an event (`go test -run XXX -bench KWayMerge ./merge`).\n", 0},
		{"figure, command elsewhere in the section", "# A\n\nIt takes 2.04 ms.\n\nRun `BENCH_ONLY=4 make bench`.\n", 0},
		{"figure, command in another section", "# A\n\nIt takes 2.04 ms.\n\n# B\n\nRun `BENCH_ONLY=4 make bench`.\n", 1},
		{"figure, command in a fenced block", "# A\n\nPeak 845 MiB, 82.7 s, 413 ns an event:\n\n```\ntracemerge R2K -o OUT\n```\n", 0},
		{"figure, output in a fenced block only", "# A\n\nIt takes 23.9 ns:\n\n```\nclock: 23.9 ns\n```\n", 1},
		{"figure, Reproduce line", "# A\n\nIt takes 50 µs.\n\nReproduce: the test above.\n", 0},
		{"a default", "# A\n\n`GCLOCK_SYNC_RETRY_US` (default 5 µs) retries the sync.\n", 0},
		{"a figure in code", "# A\n\n`--from 300ms` starts there.\n", 0},
		{"two sections, two figures", "# A\n\nIt takes 1 ms.\n\n## B\n\nAnd it costs 2 µs.\n", 2},
		{"no figure", "# A\n\nFour ranks on two cores.\n", 0},
		{"heading inside a fence is no section", "# A\n\nIt takes 1 ms.\n\n```\n# not a heading\n```\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, paras := uncommandedFigures(tc.md)
			if len(paras) != tc.want {
				t.Errorf("flagged %d paragraphs %q (lines %v), want %d", len(paras), paras, lines, tc.want)
			}
		})
	}
}
