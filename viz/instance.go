package viz

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// instStats are the per-panel metrics of one instance, recomputed from
// Enter/Exit so that a raw instance needs no precomputed fields.
type instStats struct {
	firstEnter, lastEnter, firstExit, lastExit float64
	last                                       int // member index of the last arriver
	violations                                 int
	maxViolation                               float64
	valid                                      int
	need                                       []float64 // per member: the enter it depends on (-Inf none)
}

func computeInstStats(in *datamodel.Instance) instStats {
	s := instStats{
		firstEnter: math.Inf(1), lastEnter: math.Inf(-1),
		firstExit: math.Inf(1), lastExit: math.Inf(-1), last: -1,
	}
	n := min(len(in.Enter), len(in.Exit))
	for i := 0; i < n; i++ {
		e, x := in.Enter[i], in.Exit[i]
		if !finite(e) || !finite(x) {
			continue
		}
		s.valid++
		s.firstEnter = min(s.firstEnter, e)
		if e > s.lastEnter {
			s.lastEnter, s.last = e, i
		}
		s.firstExit = min(s.firstExit, x)
		s.lastExit = max(s.lastExit, x)
	}
	// Clock condition: nobody leaves before the member whose data it needs
	// entered (merge.CollectiveNeedsFlow: the last entrant for N×N ops, the
	// root for a broadcast, the last contributor for a reduce's root, each
	// only where data flows: count-0 members depend on nobody).
	s.need = make([]float64, n)
	for i := range s.need {
		s.need[i] = math.Inf(-1)
	}
	if s.valid == n && n >= 2 {
		root := -1
		for i := 0; i < n && i < len(in.Ranks); i++ {
			if in.RootRank >= 0 && in.Ranks[i] == in.RootRank {
				root = i
			}
		}
		cause := make([]int, n)
		merge.CollectiveNeedsFlow(merge.WaitClassOf(in.Op), root, in.Enter[:n], instFlow(in, n), s.need, cause)
	}
	for i := 0; i < n; i++ {
		x := in.Exit[i]
		if finite(x) && finite(in.Enter[i]) && x < s.need[i] {
			s.violations++
			s.maxViolation = max(s.maxViolation, s.need[i]-x)
		}
	}
	return s
}

// instFlow is the data flow of the first n members of in (unknown when its
// byte counts are missing: every member sends and receives).
func instFlow(in *datamodel.Instance, n int) merge.Flow {
	if len(in.Sent) < n || len(in.Recv) < n {
		return merge.Flow{}
	}
	return merge.FlowOf(in.Op, in.Sent[:n], in.Recv[:n])
}

// withWaits fills in.Wait (merge's per-class wait semantics) when the
// caller did not: an Instance built by hand or from raw times.
func withWaits(in *datamodel.Instance) {
	n := min(len(in.Enter), len(in.Exit))
	if len(in.Wait) == n && len(in.WaitCause) == n {
		return
	}
	c := *in
	c.Enter, c.Exit = in.Enter[:n], in.Exit[:n]
	if len(c.Sent) < n || len(c.Recv) < n {
		c.Sent, c.Recv = nil, nil
	} else {
		c.Sent, c.Recv = c.Sent[:n], c.Recv[:n]
	}
	if len(c.Ranks) < n {
		c.Ranks = make([]int32, n)
		for i := range c.Ranks {
			c.Ranks[i] = int32(i)
		}
	}
	merge.ComputeInstanceMetrics(&c)
	in.Wait, in.WaitCause = c.Wait, c.WaitCause
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// MaxInstanceRows is how many members an instance view draws one per row;
// a larger instance is drawn by representatives (reduceMembers).
const MaxInstanceRows = 512

// reduceMembers keeps an instance of more than MaxInstanceRows members
// readable and small: per group of consecutive comm ranks (about
// MaxInstanceRows/2 groups) the member that entered last (whom the others
// wait for), plus the root and up to 64 members that violate the clock
// condition, in comm-rank order. Waits were computed on the whole
// instance before; raw (if any) keeps the same members so rows align. The
// note says what is shown.
func reduceMembers(inst, raw *datamodel.Instance) (*datamodel.Instance, *datamodel.Instance, string) {
	n := min(len(inst.Enter), len(inst.Exit))
	if n <= MaxInstanceRows {
		return inst, raw, ""
	}
	full := computeInstStats(inst)
	k := (n + MaxInstanceRows/2 - 1) / (MaxInstanceRows / 2)
	keep := make([]bool, n)
	for g := 0; g < n; g += k {
		best := g
		for i := g; i < min(g+k, n); i++ {
			if in := inst.Enter[i]; finite(in) && (!finite(inst.Enter[best]) || in > inst.Enter[best]) {
				best = i
			}
		}
		keep[best] = true
	}
	extra := 0
	for i := 0; i < n; i++ {
		if i < len(inst.Ranks) && inst.RootRank >= 0 && inst.Ranks[i] == inst.RootRank {
			keep[i] = true
		}
		if extra < 64 && !keep[i] && finite(inst.Exit[i]) && inst.Exit[i] < full.need[i] {
			keep[i] = true
			extra++
		}
	}
	var idx []int
	for i, k := range keep {
		if k {
			idx = append(idx, i)
		}
	}
	note := fmt.Sprintf(" · %d of %d members shown: per %d consecutive comm ranks the last to enter, the root and violators;"+
		" whole instance: entry skew %s, exit skew %s, %d clock-condition violations",
		len(idx), n, k, fmtDur(full.lastEnter-full.firstEnter), fmtDur(inst.ExitSkew), full.violations)
	r := subsetMembers(inst, idx)
	var rr *datamodel.Instance
	if raw != nil {
		rr = subsetMembers(raw, idx)
	}
	return r, rr, note
}

// subsetMembers copies in with only the members idx (its per-member
// arrays are parallel, in comm-rank order).
func subsetMembers(in *datamodel.Instance, idx []int) *datamodel.Instance {
	c := *in
	c.Ranks, c.Enter, c.Exit = pick(in.Ranks, idx), pick(in.Enter, idx), pick(in.Exit, idx)
	c.Wait, c.WaitCause = pick(in.Wait, idx), pick(in.WaitCause, idx)
	c.Sent, c.Recv = pick(in.Sent, idx), pick(in.Recv, idx)
	return &c
}

// pick returns a[i] for i in idx (nil or empty a stays as it is).
func pick[T any](a []T, idx []int) []T {
	if len(a) == 0 {
		return a
	}
	out := make([]T, 0, len(idx))
	for _, i := range idx {
		if i < len(a) {
			out = append(out, a[i])
		}
	}
	return out
}

// panelSpec is one time panel of the instance view.
type panelSpec struct {
	in     *datamodel.Instance
	st     instStats
	title  string
	raw    bool
	x0, y0 int     // top-left of the plot area
	plotW  int     // px
	nsPx   float64 // ns per px (shared by raw and corrected panels)
	origin float64 // ns at plot x = 0
}

func instanceSVG(w io.Writer, inst datamodel.Instance, raw *datamodel.Instance, title string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := renderInstance(bw, &inst, raw, title); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("viz: instance %s comm %d seq %d: writing SVG: %w", inst.OpName, inst.CommID, inst.Seq, err)
	}
	return nil
}

func opOf(in *datamodel.Instance) trace.Op {
	if in.Op == trace.OpUnknown && in.OpName != "" {
		if o, ok := trace.OpByName(in.OpName); ok {
			return o
		}
	}
	return in.Op
}

func renderInstance(w *bufio.Writer, inst, raw *datamodel.Instance, title string) error {
	const idp = "gci"
	if inst.Op == trace.OpUnknown {
		inst.Op = opOf(inst)
	}
	if raw != nil {
		r := *raw
		r.Op = inst.Op
		if r.RootRank == 0 && inst.RootRank != 0 {
			r.RootRank = inst.RootRank
		}
		raw = &r
	}
	withWaits(inst)
	if raw != nil {
		withWaits(raw)
	}
	inst, raw, shownNote := reduceMembers(inst, raw)
	n := min(len(inst.Enter), len(inst.Exit))
	if n == 0 {
		return fmt.Errorf("viz: instance %s comm %d seq %d: no members", inst.OpName, inst.CommID, inst.Seq)
	}
	rowH := int(max(4, min(22, 560/float64(n))))
	rowGap := 4
	if rowH < 12 {
		rowGap = 1
	}
	pitch := rowH + rowGap
	labelEvery := 1
	if pitch < 13 {
		labelEvery = int(math.Ceil(13 / float64(pitch)))
	}
	const labelW, top, panelGap, right = 64, 64, 36, 30
	rowsH := n * pitch
	panelH := 46 + rowsH + 70 // header, rows, exit-skew bracket + axis

	corr := panelSpec{in: inst, st: computeInstStats(inst), title: "global clock (corrected)"}
	panels := []*panelSpec{&corr}
	plotW := 1000
	if raw != nil {
		plotW = 560
		rp := &panelSpec{in: raw, st: computeInstStats(raw), title: "raw local clocks (uncorrected)", raw: true}
		panels = []*panelSpec{rp, &corr}
	}
	// Same scale for every panel: the widest span decides.
	span := 0.0
	for _, p := range panels {
		if p.st.valid > 0 {
			span = max(span, p.st.lastExit-p.st.firstEnter)
		}
	}
	if !(span > 0) {
		span = 1000
	}
	nsPx := span * 1.12 / float64(plotW)
	for i, p := range panels {
		p.plotW = plotW
		p.nsPx = nsPx
		p.x0 = labelW + i*(labelW+plotW+panelGap)
		p.y0 = top
		p.origin = p.st.firstEnter - span*0.04
	}
	// A zoomed corrected panel when the shared scale squeezes it.
	var zoom *panelSpec
	if raw != nil && corr.st.valid > 0 {
		cs := corr.st.lastExit - corr.st.firstEnter
		if cs > 0 && span/cs > 8 {
			zs := cs * 1.12 / float64(2*plotW+labelW+panelGap)
			zoom = &panelSpec{in: inst, st: corr.st, title: fmt.Sprintf("global clock (corrected), zoomed ×%.0f", nsPx/zs),
				plotW: 2*plotW + labelW + panelGap, nsPx: zs, x0: labelW, y0: top + panelH + 30,
				origin: corr.st.firstEnter - cs*0.04}
		}
	}
	totalW := labelW + len(panels)*(plotW+labelW+panelGap) - panelGap + right - labelW
	totalW = max(totalW, labelW+plotW+right)
	totalH := top + panelH + 40
	if zoom != nil {
		totalH += panelH + 30
	}

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica,Arial,sans-serif" font-size="11">`+"\n",
		totalW, totalH, totalW, totalH)
	w.WriteString("<defs>" + hatchDefs(idp, inst.Op) + "</defs>\n")
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", totalW, totalH)
	if title == "" {
		title = inst.Op.String()
	}
	fmt.Fprintf(w, `<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", labelW, esc(title))
	sub := fmt.Sprintf("%s · comm %d · instance %d · %d members", inst.Op, inst.CommID, inst.Seq, n)
	if !inst.Complete {
		sub += " · INCOMPLETE (not every member's event was found)"
	}
	if raw != nil {
		sub += " · both panels share one time scale"
	}
	sub += shownNote
	fmt.Fprintf(w, `<text x="%d" y="38" fill="#444">%s</text>`+"\n", labelW, esc(sub))

	for _, p := range panels {
		renderInstPanel(w, idp, p, rowH, pitch, labelEvery, labelW)
	}
	if zoom != nil {
		renderInstPanel(w, idp, zoom, rowH, pitch, labelEvery, labelW)
	}
	// Legend, laid out left to right (about 6 px per character at 11 px).
	ly := totalH - 14
	lx := labelW
	item := func(swatch, label, color string) {
		fmt.Fprintf(w, swatch, lx, ly-9)
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="%s">%s</text>`, lx+25, ly, color, esc(label))
		lx += 25 + 6*len([]rune(label)) + 24
	}
	item(`<rect x="%d" y="%d" width="20" height="11" fill="`+opColor(inst.Op)+`"/>`, "in "+inst.Op.String(), "#000")
	cls := merge.WaitClassOf(inst.Op)
	item(`<rect x="%d" y="%d" width="20" height="11" fill="url(#`+idp+`h`+strconv.Itoa(int(inst.Op))+`)"/>`, cls.WaitingFor()+" ("+cls.String()+")", "#000")
	item(`<rect x="%d" y="%d" width="20" height="11" fill="none" stroke="#000" stroke-width="1.5"/>`, "◀ last: last arriver", "#000")
	if cls == merge.WaitLateBroadcast || cls == merge.WaitEarlyReduce {
		item(`<rect x="%d" y="%d" width="20" height="11" fill="none" stroke="#000" stroke-dasharray="3 2"/>`, "root", "#000")
	}
	anyViolation := false
	for _, p := range panels {
		anyViolation = anyViolation || p.st.violations > 0
	}
	if anyViolation {
		item(`<rect x="%d" y="%d" width="20" height="11" fill="`+violationColor+`" fill-opacity=".35" stroke="`+violationColor+`"/>`,
			"clock-condition violation: left before the member it needs entered", violationColor)
	}
	w.WriteString("\n</svg>\n")
	return nil
}

func renderInstPanel(w *bufio.Writer, idp string, p *panelSpec, rowH, pitch, labelEvery, labelW int) {
	in, st := p.in, p.st
	n := min(len(in.Enter), len(in.Exit))
	X := func(t float64) float64 { return float64(p.x0) + (t-p.origin)/p.nsPx }
	clampX := func(x float64) float64 {
		return max(float64(p.x0), min(float64(p.x0+p.plotW), x))
	}
	rowsTop := p.y0 + 46
	rowsH := n * pitch
	head := p.title
	hc := "#222"
	if st.violations > 0 {
		hc = violationColor
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" font-size="13" font-weight="bold" fill="%s">%s</text>`+"\n", p.x0, p.y0, hc, esc(head))
	var facts []string
	if st.valid > 0 {
		facts = append(facts, "entry skew "+fmtDur(st.lastEnter-st.firstEnter), "exit skew "+fmtDur(st.lastExit-st.firstExit))
		if merge.WaitClassOf(in.Op).HasLatency() {
			facts = append(facts, "latency "+fmtDur(st.firstExit-st.lastEnter))
		} else {
			facts = append(facts, merge.WaitClassOf(in.Op).String()+" (no latency for rooted ops and scans)")
		}
	}
	if st.violations > 0 {
		facts = append(facts, fmt.Sprintf("%d clock-condition violations (up to %s)", st.violations, fmtDur(st.maxViolation)))
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" fill="%s">%s</text>`+"\n", p.x0, p.y0+15, hc, esc(strings.Join(facts, " · ")))
	// Plot frame and rows.
	fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#ccc"/>`+"\n", p.x0, rowsTop-6, p.plotW, rowsH+12)
	// Axis with ticks in the panel's own origin.
	ticks, unit := axisTicks(float64(p.plotW)*p.nsPx, max(2, p.plotW/110))
	axisY := rowsTop + rowsH + 34
	fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, p.x0, axisY, p.x0+p.plotW, axisY)
	for _, t := range ticks {
		x := float64(p.x0) + t.t/p.nsPx
		fmt.Fprintf(w, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#000" stroke-opacity=".08"/><line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#444"/><text x="%s" y="%d" text-anchor="middle">%s</text>`,
			f1(x), rowsTop-6, f1(x), rowsTop+rowsH+6, f1(x), axisY, f1(x), axisY+4, f1(x), axisY+16, esc(t.label))
	}
	clock := "global"
	if p.raw {
		clock = "raw"
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" fill="#333">time [%s] since %s (%s clock)</text>`+"\n",
		p.x0+p.plotW/2, axisY+30, unit.name, "panel origin", clock)
	if st.valid == 0 {
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="#888">no valid times</text>`, p.x0+8, rowsTop+12)
		return
	}
	lastX := X(st.lastEnter)
	for i := 0; i < n; i++ {
		y := rowsTop + i*pitch
		rank := strconv.Itoa(i)
		if i < len(in.Ranks) {
			rank = strconv.Itoa(int(in.Ranks[i]))
		}
		if i%labelEvery == 0 {
			fmt.Fprintf(w, `<text x="%d" y="%s" text-anchor="end">rank %s</text>`, p.x0-6, f1(float64(y)+float64(rowH)/2+4), rank)
		}
		e, x := in.Enter[i], in.Exit[i]
		if !finite(e) || !finite(x) {
			fmt.Fprintf(w, `<text x="%d" y="%d" fill="#888">missing</text>`+"\n", p.x0+4, y+rowH-3)
			continue
		}
		wt := 0.0
		if i < len(in.Wait) {
			wt = max(0, in.Wait[i])
		}
		we := min(e+wt, x)
		xa, xw, xe := clampX(X(e)), clampX(X(we)), clampX(X(max(x, e)))
		cause := ""
		if i < len(in.WaitCause) && in.WaitCause[i] >= 0 && wt > 0 {
			cause = fmt.Sprintf(" for rank %d", in.WaitCause[i])
		}
		isRoot := in.RootRank >= 0 && i < len(in.Ranks) && in.Ranks[i] == in.RootRank && merge.WaitClassOf(in.Op) != merge.WaitNxN && merge.WaitClassOf(in.Op) != merge.WaitPrefix
		rootNote := ""
		if isRoot {
			rootNote = " (root)"
		}
		fmt.Fprintf(w, `<g><title>rank %s%s · enter %s · exit %s · in call %s · waited %s%s</title>`, rank, rootNote,
			fmtDur(e-st.firstEnter), fmtDur(x-st.firstEnter), fmtDur(x-e), fmtDur(max(0, we-e)), cause)
		if xw > xa {
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d" fill="url(#%sh%d)"/>`, f1(xa), y, f1(xw-xa), rowH, idp, in.Op)
		}
		if xe > xw {
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d" fill="%s"/>`, f1(xw), y, f1(max(0.6, xe-xw)), rowH, opColor(in.Op))
		} else if xe <= xa+0.5 {
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="1" height="%d" fill="%s"/>`, f1(xa), y, rowH, opColor(in.Op))
		}
		viol := i < len(st.need) && x < st.need[i]
		if viol {
			// The impossible interval: left at x, but the member it needs only entered later.
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d" fill="%s" fill-opacity=".3" stroke="%s"/>`,
				f1(xe), y, f1(max(1, clampX(X(st.need[i]))-xe)), rowH, violationColor, violationColor)
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d" fill="none" stroke="%s" stroke-width="1.5"/>`,
				f1(xa), y, f1(max(1, xe-xa)), rowH, violationColor)
		}
		if isRoot {
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d" fill="none" stroke="#000" stroke-dasharray="3 2"/>`, f1(xa-2), y-1, f1(max(1, xe-xa)+4), rowH+2)
			if i != st.last {
				fmt.Fprintf(w, `<text x="%s" y="%s">root</text>`, f1(xe+4), f1(float64(y)+float64(rowH)/2+4))
			}
		}
		if i == st.last {
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d" fill="none" stroke="#000" stroke-width="1.5"/>`, f1(xa), y, f1(max(1, xe-xa)), rowH)
			fmt.Fprintf(w, `<text x="%s" y="%s" font-weight="bold">◀ last</text>`, f1(xe+4), f1(float64(y)+float64(rowH)/2+4))
		}
		w.WriteString("</g>\n")
	}
	// Last-enter and first-exit guides.
	fmt.Fprintf(w, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#000" stroke-dasharray="4 3"/>`, f1(clampX(lastX)), rowsTop-10, f1(clampX(lastX)), rowsTop+rowsH+6)
	// Entry skew bracket above the rows.
	bracket(w, clampX(X(st.firstEnter)), clampX(lastX), float64(rowsTop-12), -1, "entry skew "+fmtDur(st.lastEnter-st.firstEnter), "#000")
	// Exit skew bracket below the rows.
	bracket(w, clampX(X(st.firstExit)), clampX(X(st.lastExit)), float64(rowsTop+rowsH+10), 1, "exit skew "+fmtDur(st.lastExit-st.firstExit), "#000")
}

// bracket draws a horizontal span marker from x1 to x2 at y with ticks
// pointing towards the rows (dir -1: rows below, 1: rows above) and a label.
func bracket(w *bufio.Writer, x1, x2, y float64, dir int, label, color string) {
	t := 4.0 * float64(-dir)
	fmt.Fprintf(w, `<path d="M%s %sV%sH%sV%s" fill="none" stroke="%s"/>`,
		f1(x1), f1(y+t), f1(y), f1(x2), f1(y+t), color)
	ty := y - 3
	if dir > 0 {
		ty = y + 12
	}
	fmt.Fprintf(w, `<text x="%s" y="%s" font-size="10" fill="%s">%s</text>`+"\n", f1(x2+4), f1(ty), color, esc(label))
}
