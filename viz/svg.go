package viz

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gclock/gclock/trace"
)

// opColors gives each op a fixed colour (index = trace.Op). Red is kept
// free for clock-condition violations.
var opColors = [...]string{
	trace.OpUnknown:            "#555555",
	trace.OpBarrier:            "#7f7f7f",
	trace.OpBcast:              "#ff7f0e",
	trace.OpReduce:             "#2ca02c",
	trace.OpAllreduce:          "#1f77b4",
	trace.OpGather:             "#9467bd",
	trace.OpGatherv:            "#b39ddb",
	trace.OpScatter:            "#8c564b",
	trace.OpScatterv:           "#c49c94",
	trace.OpAllgather:          "#e377c2",
	trace.OpAllgatherv:         "#f4a6d7",
	trace.OpAlltoall:           "#bcbd22",
	trace.OpAlltoallv:          "#dbdb8d",
	trace.OpAlltoallw:          "#17becf",
	trace.OpReduceScatter:      "#98df8a",
	trace.OpReduceScatterBlock: "#6b8e23",
	trace.OpScan:               "#ffbb78",
	trace.OpExscan:             "#9edae5",
	// Point-to-point: greens for sends, magentas for receives, dark slate
	// for completion calls (where point-to-point waiting shows), so none
	// is mistaken for a collective's colour (MPI_Waitall used to get the
	// hashed olive of MPI_Alltoall).
	trace.OpSend:     "#228b22",
	trace.OpSsend:    "#2e8b57",
	trace.OpIsend:    "#3cb371",
	trace.OpIssend:   "#66cdaa",
	trace.OpRecv:     "#c71585",
	trace.OpIrecv:    "#db7093",
	trace.OpMrecv:    "#a0126e",
	trace.OpImrecv:   "#e8a0b8",
	trace.OpMprobe:   "#8b6508",
	trace.OpImprobe:  "#eec060",
	trace.OpSendrecv: "#008080",
	trace.OpWait:     "#2f4f4f",
	trace.OpWaitall:  "#3e5f6f",
	trace.OpWaitany:  "#4f6f7f",
	trace.OpWaitsome: "#5f7f8f",
	trace.OpTest:     "#8fa8b8",
	trace.OpTestall:  "#8fa8b8",
	trace.OpTestany:  "#8fa8b8",
	trace.OpTestsome: "#8fa8b8",
	trace.OpProbe:    "#b8860b",
	trace.OpIprobe:   "#daa520",
	trace.OpPolls:    "#a9a9a9",
	// One-sided: oranges/browns for transfers, purples for window
	// synchronisation (fence, locks, post/start/complete/wait).
	trace.OpPut:              "#e6550d",
	trace.OpRput:             "#fd8d3c",
	trace.OpAccumulate:       "#a63603",
	trace.OpRaccumulate:      "#d94801",
	trace.OpGet:              "#8c6d31",
	trace.OpRget:             "#bd9e39",
	trace.OpGetAccumulate:    "#e7ba52",
	trace.OpRgetAccumulate:   "#e7cb94",
	trace.OpFetchAndOp:       "#ad494a",
	trace.OpCompareAndSwap:   "#d6616b",
	trace.OpWinFence:         "#54278f",
	trace.OpWinLock:          "#756bb1",
	trace.OpWinUnlock:        "#9e9ac8",
	trace.OpWinLockAll:       "#6a51a3",
	trace.OpWinUnlockAll:     "#807dba",
	trace.OpWinFlush:         "#bcbddc",
	trace.OpWinFlushAll:      "#a8a6cf",
	trace.OpWinFlushLocal:    "#dadaeb",
	trace.OpWinFlushLocalAll: "#c7c3e0",
	trace.OpWinPost:          "#3f007d",
	trace.OpWinStart:         "#4a1486",
	trace.OpWinComplete:      "#5e3c99",
	trace.OpWinWait:          "#2d004b",
}

// violationColor marks clock-condition violations.
const violationColor = "#d62728"

// opColor returns the colour of op.
func opColor(o trace.Op) string {
	if int(o) < len(opColors) && opColors[o] != "" {
		return opColors[o]
	}
	// Ops added to trace later get a stable colour from their code.
	h := (int(o) * 47) % 360
	return fmt.Sprintf("hsl(%d,55%%,50%%)", h)
}

// xmlEscaper escapes text for XML/HTML element content and quoted
// attribute values alike.
var xmlEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;",
)

// esc escapes s for SVG/HTML text and attributes, dropping characters that
// XML 1.0 cannot carry at all (control characters, invalid UTF-8).
func esc(s string) string {
	clean := true
	for _, r := range s {
		if !xmlChar(r) {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if xmlChar(r) {
				return r
			}
			return '\uFFFD'
		}, s)
	}
	return xmlEscaper.Replace(s)
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF && r != utf8RuneError) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

const utf8RuneError = '\uFFFD'

// truncate shortens s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if n <= 1 {
		return s
	}
	i := 0
	for p := range s {
		if i == n-1 {
			rest := s[p:]
			if len([]rune(rest)) <= 1 {
				return s
			}
			return s[:p] + "…"
		}
		i++
	}
	return s
}

// timeUnit is a display unit for durations.
type timeUnit struct {
	name string
	ns   float64
}

var timeUnits = []timeUnit{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}

// unitFor picks the unit in which span reads as 1..1000.
func unitFor(span float64) timeUnit {
	span = math.Abs(span)
	u := timeUnits[0]
	for _, c := range timeUnits {
		if span >= c.ns {
			u = c
		}
	}
	return u
}

// fmtDur formats a duration in ns with a fitting unit and 3 significant
// digits, e.g. "12.3 µs", "850 ns", "1.20 s".
func fmtDur(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "n/a"
	}
	if ns == 0 {
		return "0"
	}
	u := unitFor(ns)
	v := ns / u.ns
	return sig3(v) + " " + u.name
}

// sig3 formats v with three significant digits (no exponent for the
// ranges a unit leaves, 0.001..999).
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// niceStep returns a 1-2-5 step such that span/step is about target ticks.
func niceStep(span float64, target int) float64 {
	if span <= 0 || target <= 0 {
		return 1
	}
	raw := span / float64(target)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// tick is one labelled axis position.
type tick struct {
	t     float64 // ns relative to the axis origin
	label string
}

// axisTicks returns ticks for [0, span] ns in a unit fitting the step, with
// labels like "0", "250 µs", "1.5 ms".
func axisTicks(span float64, target int) ([]tick, timeUnit) {
	step := niceStep(span, target)
	u := unitFor(span)
	if step < u.ns/100 { // more than two decimals: step down a unit
		for i := len(timeUnits) - 1; i >= 0; i-- {
			if timeUnits[i].ns <= step {
				u = timeUnits[i]
				break
			}
		}
	}
	// Decimals needed to show the step in unit u.
	dec := 0
	for s := step / u.ns; dec < 6 && math.Abs(s-math.Round(s)) > 1e-9*max(1, s); s *= 10 {
		dec++
	}
	var ts []tick
	for i := 0; ; i++ {
		t := float64(i) * step
		if t > span*(1+1e-9) {
			break
		}
		lab := strconv.FormatFloat(t/u.ns, 'f', dec, 64)
		if i == 0 {
			lab = "0"
		} else {
			lab += " " + u.name
		}
		ts = append(ts, tick{t: t, label: lab})
		if i > 10000 {
			break
		}
	}
	return ts, u
}

// f1 formats a coordinate with at most one decimal.
func f1(v float64) string {
	r := math.Round(v*10) / 10
	if r == math.Trunc(r) {
		return strconv.FormatInt(int64(r), 10)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// hatchDefs returns an SVG pattern definition for the wait shading of op
// o: a light tint of the op colour with diagonal stripes.
func hatchDefs(prefix string, o trace.Op) string {
	c := opColor(o)
	return `<pattern id="` + prefix + `h` + strconv.Itoa(int(o)) +
		`" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="` + c + `" fill-opacity="0.25"/>` +
		`<rect width="2.5" height="6" fill="` + c + `" fill-opacity="0.8"/></pattern>`
}

// fmtDurCompact is fmtDur without trailing zeros ("10 µs", "1 ms",
// "2.5 ms"), for axis labels at round values.
func fmtDurCompact(ns float64) string {
	s := fmtDur(ns)
	num, unit, ok := strings.Cut(s, " ")
	if !ok || !strings.Contains(num, ".") {
		return s
	}
	num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	return num + " " + unit
}
