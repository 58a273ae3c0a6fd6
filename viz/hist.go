package viz

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
)

// HistogramSVG draws h as an inline SVG bar chart: one bar per bin, the
// bins' lower edges labelled in time units under the bars (log-spaced
// edges are drawn as equal-width bars), counts on a linear axis.
func HistogramSVG(h datamodel.Histogram, title, color string) string {
	const W, H, left, right, top, bottom = 460, 180, 46, 28, 24, 42
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica,Arial,sans-serif" font-size="10">`, W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><text x="%d" y="14" font-size="12" font-weight="bold">%s</text>`, W, H, left, esc(title))
	n := len(h.Counts)
	total, maxC := 0, 0
	for _, c := range h.Counts {
		total += c
		maxC = max(maxC, c)
	}
	plotW, plotH := W-left-right, H-top-bottom
	if n == 0 || total == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#888">no samples</text></svg>`, left+10, top+plotH/2)
		return b.String()
	}
	bw := float64(plotW) / float64(n)
	// y axis: nice count ticks.
	step := niceStep(float64(maxC), 4)
	step = max(1, math.Round(step))
	ymax := math.Ceil(float64(maxC)/step) * step
	for v := 0.0; v <= ymax+1e-9; v += step {
		y := float64(top+plotH) - v/ymax*float64(plotH)
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#000" stroke-opacity=".1"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
			left, f1(y), left+plotW, f1(y), left-4, f1(y+3), strconv.FormatFloat(v, 'f', -1, 64))
	}
	for i, c := range h.Counts {
		if c == 0 {
			continue
		}
		hgt := float64(c) / ymax * float64(plotH)
		if hgt < 1 {
			hgt = 1
		}
		x := float64(left) + float64(i)*bw
		lo, hi := "", ""
		if i < len(h.Edges) {
			lo = fmtDur(h.Edges[i])
		}
		if i+1 < len(h.Edges) {
			hi = fmtDur(h.Edges[i+1])
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s – %s: %d (%s)</title></rect>`,
			f1(x+0.5), f1(float64(top+plotH)-hgt), f1(max(0.5, bw-1)), f1(hgt), esc(color), esc(lo), esc(hi), c,
			pct(float64(c), float64(total)))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, left, top+plotH, left+plotW, top+plotH)
	// x labels at about 5 edges.
	for _, i := range edgeLabels(h.Edges, 6) {
		x := float64(left) + float64(i)*bw
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#444"/><text x="%s" y="%d" text-anchor="middle">%s</text>`,
			f1(x), top+plotH, f1(x), top+plotH+4, f1(x), top+plotH+15, esc(fmtDurCompact(h.Edges[i])))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">%d samples · first and last bins include under/overflow</text></svg>`,
		left+plotW/2, H-6, total)
	return b.String()
}

// edgeLabels picks at most max edges to label: the decades (powers of ten)
// when at least two edges are decades, else evenly spaced edges.
func edgeLabels(edges []float64, maxN int) []int {
	var dec []int
	for i, e := range edges {
		if e > 0 {
			l := math.Log10(e)
			if math.Abs(l-math.Round(l)) < 0.005 {
				dec = append(dec, i)
			}
		}
	}
	pick := dec
	if len(dec) < 2 {
		pick = pick[:0]
		for i := range edges {
			pick = append(pick, i)
		}
	}
	every := max(1, int(math.Ceil(float64(len(pick))/float64(maxN))))
	var out []int
	for k := 0; k < len(pick); k += every {
		out = append(out, pick[k])
	}
	return out
}
