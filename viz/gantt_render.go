// Rendering of the Gantt chart built in gantt.go: lanes, pixel columns of
// aggregated cells, individual bars, message lines and the busy/wait share
// of each lane, as one standalone SVG.

package viz

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/gclock/gclock/trace"
)

// column is the aggregate of one lane over one pixel column.
type column struct {
	busy, wait float64
	cand       trace.Op
	candW      float32
}

// WriteSVG flushes pending events and writes the chart as a standalone SVG
// document. Call it after the last Add: collectives still in flight are
// drawn with the waits known so far.
func (g *Gantt) WriteSVG(w io.Writer) error {
	g.resolve(math.Inf(1))
	g.limitBars(g.maxBars)
	bw := bufio.NewWriterSize(w, 256<<10)
	g.render(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("viz: gantt: writing SVG: %w", err)
	}
	return nil
}

type pathKey struct {
	op   trace.Op
	wait bool
}

func (g *Gantt) laneLabel(r int) string {
	if g.sel != nil && r < len(g.sel) {
		r = int(g.sel[r])
	}
	if g.k > 1 {
		lo, hi := r*g.k, r*g.k+g.k-1
		if g.opt.WorldSize > 0 {
			hi = min(hi, g.opt.WorldSize-1)
		}
		s := "ranks " + strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
		if hi < len(g.opt.Hosts) && g.opt.Hosts[lo] != "" && g.opt.Hosts[lo] == g.opt.Hosts[hi] {
			s += " (" + truncate(g.opt.Hosts[lo], 20) + ")"
		}
		return s
	}
	s := "rank " + strconv.Itoa(r)
	if r < len(g.opt.Hosts) && g.opt.Hosts[r] != "" {
		s += " (" + truncate(g.opt.Hosts[r], 28) + ")"
	}
	return s
}

// lanesNote describes the lane grouping for the chart's subtitle.
func (g *Gantt) lanesNote() string {
	if g.sel != nil {
		return fmt.Sprintf("%d of %d ranks (--ranks)", len(g.sel), g.opt.WorldSize)
	}
	if g.k == 1 {
		return fmt.Sprintf("%d ranks", len(g.lanes))
	}
	return fmt.Sprintf("%d ranks in %d lanes of %d (average per lane)", g.opt.WorldSize, len(g.lanes), g.k)
}

func (g *Gantt) render(w *bufio.Writer) {
	const idp = "gcg" // id/class prefix, shared by all Gantt charts (same definitions)
	nl := len(g.lanes)
	if nl == 0 {
		nl = 1
	}
	laneH := g.opt.LaneHeight
	if laneH <= 0 {
		laneH = 20
		if nl <= 8 {
			laneH = 32 // few ranks: lanes tall enough to read when the page scales the chart
		}
		if nl > 16 {
			laneH = int(max(3, min(20, 720/float64(nl))))
		}
	}
	gap := 3
	if laneH < 10 {
		gap = 1
	}
	if laneH < 5 {
		gap = 0
	}
	pitch := laneH + gap
	labelEvery := 1
	if pitch < 12 {
		labelEvery = int(math.Ceil(12 / float64(pitch)))
	}
	labelW := 60
	for r := 0; r < nl; r += labelEvery {
		if n := len([]rune(g.laneLabel(r)))*6 + 14; n > labelW {
			labelW = n
		}
	}
	const top, right = 46, 140
	plotW := g.width
	plotH := nl * pitch
	axisY := top + plotH + 4

	// Legend layout.
	var ops []trace.Op
	for o := range g.opsSeen {
		if g.opsSeen[o] {
			ops = append(ops, trace.Op(o))
		}
	}
	for o := range g.opsMore {
		ops = append(ops, o)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	type item struct {
		x, y  int
		op    trace.Op
		label string
		wait  bool
	}
	var items []item
	lx, ly := 0, axisY+48
	addItem := func(op trace.Op, label string, wait bool) {
		wd := 26 + len([]rune(label))*6 + 16
		if lx+wd > plotW+labelW && lx > 0 {
			lx, ly = 0, ly+18
		}
		items = append(items, item{x: labelW + lx, y: ly, op: op, label: label, wait: wait})
		lx += wd
	}
	for _, o := range ops {
		addItem(o, o.String(), false)
	}
	addItem(trace.OpUnknown, "hatched / light: waiting (N×N: for the last member; Bcast/Scatter: for the root; Reduce/Gather root: for the last contributor; Scan: for lower ranks)", true) // neutral grey swatch
	totalW := labelW + plotW + right
	totalH := ly + 40

	// Window.
	vlo, vhi := g.lo, g.hi
	if !g.fixed {
		vlo, vhi = g.dataLo, g.dataHi
	}
	empty := !(vhi > vlo) || g.dataHi < g.dataLo
	if empty && !g.fixed {
		vlo, vhi = 0, 1000
	}
	if !(vhi > vlo) {
		vhi = vlo + 1
	}
	pw := (vhi - vlo) / float64(plotW)

	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica,Arial,sans-serif" font-size="11">`+"\n",
		totalW, totalH, totalW, totalH)
	w.WriteString("<defs>" + hatchDefs(idp, trace.OpUnknown))
	for _, o := range ops {
		if o != trace.OpUnknown {
			w.WriteString(hatchDefs(idp, o))
		}
	}
	w.WriteString("</defs>\n<style>")
	for _, o := range ops {
		fmt.Fprintf(w, ".%s%d{fill:%s}", idp, o, opColor(o))
	}
	fmt.Fprintf(w, ".%sax{stroke:#444;stroke-width:1}.%sgr{stroke:#000;stroke-opacity:.08}</style>\n", idp, idp)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", totalW, totalH)
	title := g.opt.Title
	if title == "" {
		title = "MPI calls per rank"
	}
	clock := "global clock (rank 0 timebase, corrected)"
	if g.opt.Raw {
		clock = "RAW local clocks (uncorrected)"
	}
	fmt.Fprintf(w, `<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", labelW, esc(title))
	fmt.Fprintf(w, `<text x="%d" y="36" fill="#555">%s · %d events · %s · window %s</text>`+"\n",
		labelW, clock, g.events, esc(g.lanesNote()), esc(fmtDur(vhi-vlo)))

	// Lane backgrounds and labels.
	w.WriteString(`<g>`)
	for r := 0; r < nl; r++ {
		y := top + r*pitch
		if r%2 == 0 {
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f3f4f6"/>`, labelW, y, plotW, laneH)
		}
	}
	w.WriteString("</g>\n<g text-anchor=\"end\">")
	fs := 11
	if pitch < 11 {
		fs = int(max(7, float64(pitch*labelEvery)-2))
	}
	for r := 0; r < nl; r += labelEvery {
		y := float64(top+r*pitch) + float64(laneH)/2 + float64(fs)/2 - 1.5
		fmt.Fprintf(w, `<text x="%d" y="%s" font-size="%d">%s</text>`, labelW-6, f1(y), fs, esc(g.laneLabel(r)))
	}
	w.WriteString("</g>\n")

	// Grid and axis.
	ticks, unit := axisTicks(vhi-vlo, int(max(2, float64(plotW)/110)))
	w.WriteString(`<g>`)
	for _, t := range ticks {
		x := float64(labelW) + t.t/pw
		fmt.Fprintf(w, `<line class="%sgr" x1="%s" y1="%d" x2="%s" y2="%d"/>`, idp, f1(x), top, f1(x), top+plotH)
	}
	w.WriteString("</g>\n")

	colPx := 1
	msgNote := ""
	if !empty {
		colPx = g.renderColumns(w, idp, vlo, pw, labelW, top, laneH, pitch)
		g.renderBars(w, idp, vlo, pw, labelW, top, laneH, pitch)
		msgNote = g.renderMessages(w, vlo, vhi, pw, labelW, top, laneH, pitch)
		msgNote += g.renderMarks(w, vlo, vhi, pw, labelW, top, laneH, pitch)
		g.renderLaneShares(w, vlo, vhi, labelW+plotW+8, top, laneH, pitch, labelEvery, fs)
	} else {
		fmt.Fprintf(w, `<text x="%d" y="%d" fill="#888">no events in this window</text>`, labelW+10, top+14)
	}

	fmt.Fprintf(w, `<line class="%sax" x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", idp, labelW, axisY, labelW+plotW, axisY)
	w.WriteString(`<g text-anchor="middle">`)
	for _, t := range ticks {
		x := float64(labelW) + t.t/pw
		fmt.Fprintf(w, `<line class="%sax" x1="%s" y1="%d" x2="%s" y2="%d"/><text x="%s" y="%d">%s</text>`,
			idp, f1(x), axisY, f1(x), axisY+5, f1(x), axisY+17, esc(t.label))
	}
	w.WriteString("</g>\n")
	origin := "t = 0 at " + absSeconds(g.opt.Origin, vlo) + " s"
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" fill="#333">time [%s] — %s of the %s</text>`+"\n",
		labelW+plotW/2, axisY+32, unit.name, origin, map[bool]string{false: "global clock", true: "raw clocks"}[g.opt.Raw])

	// Legend.
	for _, it := range items {
		fill := "." + idp + strconv.Itoa(int(it.op))
		_ = fill
		if it.wait {
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="20" height="11" fill="url(#%sh%d)" stroke="#999" stroke-width=".5"/>`, it.x, it.y-9, idp, it.op)
		} else {
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="20" height="11" class="%s%d"/>`, it.x, it.y-9, idp, it.op)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", it.x+25, it.y, esc(it.label))
	}
	note := fmt.Sprintf("%d calls drawn as bars (≥ 1 px); narrower calls aggregated per %d-px column (%s): colour = dominant op, height = √(share of the column in MPI), light part = waiting. Right: share of the window in MPI and waiting per rank.",
		g.nbars, colPx, fmtDur(pw*float64(colPx)))
	note += msgNote
	if g.clipped > 0 {
		note += fmt.Sprintf(" %d events outside the window.", g.clipped)
	}
	if g.outOfOrder > 0 {
		note += fmt.Sprintf(" %d events arrived out of global order (wait shading approximate).", g.outOfOrder)
	}
	if g.invalid > 0 {
		note += fmt.Sprintf(" %d events with invalid times skipped.", g.invalid)
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" fill="#555" font-size="10">%s</text>`+"\n", labelW, ly+24, esc(note))
	w.WriteString("</svg>\n")
}

// columnBudget bounds the bytes of the aggregate layer; beyond it columns
// are drawn coarser (2, 4, ... px) so that any input stays well under 5 MB.
const columnBudget = 2_000_000

// renderColumns draws the per-pixel aggregates of every lane, run-length
// encoded and grouped into one path per (op, solid|wait). It starts at one
// pixel per column and coarsens until the layer fits columnBudget.
func (g *Gantt) renderColumns(w *bufio.Writer, idp string, vlo, pw float64, x0, top, laneH, pitch int) int {
	colPx := 1
	for {
		paths, size := g.columnPaths(vlo, pw, x0, top, laneH, pitch, colPx)
		if size <= columnBudget || colPx*8 >= g.width {
			keys := make([]pathKey, 0, len(paths))
			for k := range paths {
				keys = append(keys, k)
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].op != keys[j].op {
					return keys[i].op < keys[j].op
				}
				return !keys[i].wait && keys[j].wait
			})
			for _, k := range keys {
				if k.wait {
					fmt.Fprintf(w, `<path class="%s%d" fill-opacity=".35" d="`, idp, k.op)
				} else {
					fmt.Fprintf(w, `<path class="%s%d" d="`, idp, k.op)
				}
				w.Write(paths[k].b)
				w.WriteString("\"/>\n")
			}
			return colPx
		}
		colPx *= 2
	}
}

// pathBuf accumulates one path's subpaths with relative moves: after "z"
// the current point is the subpath's start, so each run costs about a
// dozen bytes.
type pathBuf struct {
	b      []byte
	lx, ly int
}

func (p *pathBuf) rect(x, y, wd, h int) {
	if len(p.b) == 0 {
		p.b = append(p.b, 'M')
		p.b = strconv.AppendInt(p.b, int64(x), 10)
		p.b = append(p.b, ' ')
		p.b = strconv.AppendInt(p.b, int64(y), 10)
	} else {
		p.b = append(p.b, 'm')
		p.b = strconv.AppendInt(p.b, int64(x-p.lx), 10)
		p.b = append(p.b, ' ')
		p.b = strconv.AppendInt(p.b, int64(y-p.ly), 10)
	}
	p.b = append(p.b, 'h')
	p.b = strconv.AppendInt(p.b, int64(wd), 10)
	p.b = append(p.b, 'v')
	p.b = strconv.AppendInt(p.b, int64(h), 10)
	p.b = append(p.b, 'h', '-')
	p.b = strconv.AppendInt(p.b, int64(wd), 10)
	p.b = append(p.b, 'z')
	p.lx, p.ly = x, y
}

func (g *Gantt) columnPaths(vlo, pw float64, x0, top, laneH, pitch, colPx int) (map[pathKey]*pathBuf, int) {
	paths := map[pathKey]*pathBuf{}
	bw := (g.hi - g.lo) / float64(g.nb)
	size := 0
	emit := func(k pathKey, x, y, wd, h int) {
		if h <= 0 || wd <= 0 {
			return
		}
		p := paths[k]
		if p == nil {
			p = &pathBuf{}
			paths[k] = p
		}
		n := len(p.b)
		p.rect(x, y, wd, h)
		size += len(p.b) - n
	}
	type runKey struct {
		op          trace.Op
		solid, wait int
	}
	cw := pw * float64(colPx)
	for r := range g.lanes {
		cells := g.lanes[r].cells
		if cells == nil {
			continue
		}
		bottom := top + r*pitch + laneH
		var run runKey
		runStart := -1
		flush := func(end int) {
			if runStart < 0 || run.solid+run.wait == 0 {
				return
			}
			emit(pathKey{run.op, false}, x0+runStart, bottom-run.solid, end-runStart, run.solid)
			emit(pathKey{run.op, true}, x0+runStart, bottom-run.solid-run.wait, end-runStart, run.wait)
		}
		for x := 0; x < g.width; x += colPx {
			t0 := vlo + float64(x)*pw
			t1 := t0 + cw
			var col column
			i0 := g.cellIndex(t0, bw)
			i1 := g.cellIndex(t1, bw)
			for i := i0; i <= i1; i++ {
				c := cells[i]
				if c.busy == 0 {
					continue
				}
				clo := g.lo + float64(i)*bw
				f := (min(t1, clo+bw) - max(t0, clo)) / bw
				if f <= 0 {
					continue
				}
				if f > 1 {
					f = 1
				}
				col.busy += float64(c.busy) * f
				col.wait += float64(c.wait) * f
				sketchAdd(&col.cand, &col.candW, c.cand, c.candW*float32(f)+1e-30)
			}
			var k runKey
			if col.busy > 0 {
				// Height ∝ √(share in MPI) so that the typical 5-30 % stay
				// readable; the waiting part keeps its linear share of it.
				tot := int(math.Round(math.Sqrt(min(1, col.busy/cw)) * float64(laneH)))
				if tot < 1 {
					tot = 1
				}
				wt := int(math.Round(float64(tot) * min(1, col.wait/col.busy)))
				k = runKey{op: col.cand, solid: tot - wt, wait: wt}
			}
			if k != run || runStart < 0 {
				flush(x)
				run, runStart = k, x
			}
		}
		flush(g.width)
	}
	return paths, size
}

// renderBars draws the calls at least one pixel wide, each with a tooltip,
// the wait part hatched.
func (g *Gantt) renderBars(w *bufio.Writer, idp string, vlo, pw float64, x0, top, laneH, pitch int) {
	w.WriteString("<g>\n")
	for r := range g.lanes {
		bars := g.lanes[r].bars
		y := top + r*pitch
		for _, b := range bars {
			xa := float64(x0) + (b.enter-vlo)/pw
			xw := float64(x0) + (b.enter+b.wait-vlo)/pw
			xe := float64(x0) + (b.exit-vlo)/pw
			fmt.Fprintf(w, `<g><title>rank %d · %s · comm %d seq %d · at %s · %s`, r, b.op, b.comm, b.seq, fmtDur(b.enter-vlo), fmtDur(b.exit-b.enter))
			if b.wait > 0 {
				fmt.Fprintf(w, ` (waiting %s)`, fmtDur(b.wait))
			}
			if b.sent > 0 || b.recv > 0 {
				fmt.Fprintf(w, ` · %d B sent, %d B received`, b.sent, b.recv)
			}
			w.WriteString(`</title>`)
			if xe-xw > 0.05 {
				fmt.Fprintf(w, `<rect class="%s%d" x="%s" y="%d" width="%s" height="%d"/>`, idp, b.op, f1(xw), y, f1(max(0.1, xe-xw)), laneH)
			}
			if xw-xa > 0.05 {
				fmt.Fprintf(w, `<rect fill="url(#%sh%d)" x="%s" y="%d" width="%s" height="%d"/>`, idp, b.op, f1(xa), y, f1(max(0.1, xw-xa)), laneH)
			}
			w.WriteString("</g>\n")
		}
	}
	w.WriteString("</g>\n")
}

// laneShare is the time a lane spends in MPI and waiting inside [lo, hi].
func (g *Gantt) laneShare(l *lane, lo, hi float64) (busy, wait float64) {
	bw := (g.hi - g.lo) / float64(g.nb)
	for i, c := range l.cells {
		if c.busy == 0 {
			continue
		}
		clo := g.lo + float64(i)*bw
		f := (min(hi, clo+bw) - max(lo, clo)) / bw
		if f <= 0 {
			continue
		}
		f = min(f, 1)
		busy += float64(c.busy) * f
		wait += float64(c.wait) * f
	}
	for _, b := range l.bars {
		busy += max(0, min(hi, b.exit)-max(lo, b.enter))
		wait += max(0, min(hi, b.enter+b.wait)-max(lo, b.enter))
	}
	return busy, wait
}

// renderLaneShares prints each lane's share of the window spent in MPI and
// waiting, right of the plot.
func (g *Gantt) renderLaneShares(w *bufio.Writer, vlo, vhi float64, x, top, laneH, pitch, every, fs int) {
	span := vhi - vlo
	if span <= 0 {
		return
	}
	fmt.Fprintf(w, `<g font-size="%d" fill="#444">`, min(fs, 10))
	fmt.Fprintf(w, `<text x="%d" y="%d">in MPI · waiting</text>`, x, top-4)
	for r := 0; r < len(g.lanes); r += every {
		busy, wait := g.laneShare(&g.lanes[r], vlo, vhi)
		y := float64(top+r*pitch) + float64(laneH)/2 + float64(min(fs, 10))/2 - 1.5
		fmt.Fprintf(w, `<text x="%d" y="%s">%s · %s</text>`, x, f1(y), pct(busy, span), pct(wait, span))
	}
	w.WriteString("</g>\n")
}

// absSeconds prints origin + rel ns as seconds with 9 decimals, exactly
// (integer arithmetic; a float64 of a CLOCK_REALTIME value would not be).
func absSeconds(origin int64, rel float64) string {
	if !finite(rel) || math.Abs(rel) > 1<<62 {
		return strconv.FormatFloat((float64(origin)+rel)/1e9, 'f', 9, 64)
	}
	ns := origin + int64(math.Round(rel))
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d", sign, ns/1e9, ns%1e9)
}
