package viz

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// ExitDelaySVG draws one exit-delay profile (merge.ExitDelay) as a column
// chart: per member of the communicator (comm-rank order) its mean exit
// time behind the first member to leave the same instance, with the 95%
// confidence interval as a whisker. This is the per-process exit imbalance
// of a synchronizing collective (the H2HCA paper's Figure 8: a barrier
// that releases some ranks tens of µs after others).
func ExitDelaySVG(e datamodel.ExitDelay, title string) string {
	const W, H, left, right, top, bottom = 620, 210, 56, 20, 26, 44
	var b strings.Builder
	op, _ := trace.OpByName(e.Op)
	color := opColor(op)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica,Arial,sans-serif" font-size="10">`, W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><text x="%d" y="14" font-size="12" font-weight="bold">%s</text>`, W, H, left, esc(title))
	n := min(len(e.MeanNS), len(e.Ranks))
	plotW, plotH := W-left-right, H-top-bottom
	if n == 0 || e.Instances == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#888">no complete instances</text></svg>`, left+10, top+plotH/2)
		return b.String()
	}
	ymax := 0.0
	for i := 0; i < n; i++ {
		ci := 0.0
		if i < len(e.CI95NS) {
			ci = e.CI95NS[i]
		}
		if v := e.MeanNS[i] + ci; finite(v) {
			ymax = max(ymax, v)
		}
	}
	if !(ymax > 0) {
		ymax = 1
	}
	ticks, unit := axisTicks(ymax*1.05, 4)
	if len(ticks) > 0 {
		ymax = max(ymax*1.05, ticks[len(ticks)-1].t)
	}
	Y := func(v float64) float64 { return float64(top+plotH) - v/ymax*float64(plotH) }
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#000" stroke-opacity=".1"/><text x="%d" y="%s" text-anchor="end">%s</text>`,
			left, f1(Y(t.t)), left+plotW, f1(Y(t.t)), left-4, f1(Y(t.t)+3), esc(t.label))
	}
	fmt.Fprintf(&b, `<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">exit delay [%s]</text>`, top+plotH/2, top+plotH/2, unit.name)
	bw := float64(plotW) / float64(n)
	labelEvery := max(1, int(math.Ceil(28/bw)))
	worst, worstV := 0, math.Inf(-1)
	for i := 0; i < n; i++ {
		m := e.MeanNS[i]
		if !finite(m) {
			continue
		}
		if m > worstV {
			worst, worstV = i, m
		}
		ci := 0.0
		if i < len(e.CI95NS) && finite(e.CI95NS[i]) {
			ci = e.CI95NS[i]
		}
		x := float64(left) + float64(i)*bw
		hgt := max(0.5, float64(top+plotH)-Y(max(0, m)))
		fmt.Fprintf(&b, `<g><title>rank %d (comm rank %d): leaves %s ± %s after the first (95%% CI, %d instances)</title><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`,
			e.Ranks[i], i, fmtDur(m), fmtDur(ci), e.Instances, f1(x+0.15*bw), f1(float64(top+plotH)-hgt), f1(max(0.5, 0.7*bw)), f1(hgt), esc(color))
		if ci > 0 && bw >= 3 {
			cx := x + bw/2
			fmt.Fprintf(&b, `<path d="M%s %sV%sM%s %sH%sM%s %sH%s" stroke="#000" stroke-width="1" fill="none"/>`,
				f1(cx), f1(Y(max(0, m-ci))), f1(Y(m+ci)),
				f1(cx-bw*0.2), f1(Y(max(0, m-ci))), f1(cx+bw*0.2), f1(cx-bw*0.2), f1(Y(m+ci)), f1(cx+bw*0.2))
		}
		b.WriteString("</g>")
		if i%labelEvery == 0 {
			fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`, f1(x+bw/2), top+plotH+13, strconv.Itoa(int(e.Ranks[i])))
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#333">world rank · mean exit delay behind the first exit ± 95%% CI · latest: rank %d, %s</text>`,
		left+plotW/2, top+plotH+32, e.Ranks[worst], esc(fmtDur(worstV)))
	b.WriteString(`</svg>`)
	return b.String()
}
