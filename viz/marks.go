package viz

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/gclock/gclock/merge/datamodel"
	"google.golang.org/protobuf/encoding/protowire"
)

// SetMarks gives the chart what the root-cause analysis highlights
// (merge.RootCauseStream.Marks): the delays of the top root causes, drawn
// as orange bands on the delaying rank's lane, and the critical path,
// drawn as a red line through the lanes it visits. Only the corrected
// (not raw) view draws them.
func (g *Gantt) SetMarks(marks []datamodel.Mark) { g.marks = marks }

// cpColPx is the width of the columns in which the critical path shows
// only its dominant lane (where it changes rank faster than that).
const cpColPx = 3

// maxMarkRects bounds the root-cause bands drawn (adjacent ones within a
// pixel are merged first).
const maxMarkRects = 6000

// laneFor is the lane rank r is drawn in (grouped lanes too), -1 none.
func (g *Gantt) laneFor(r int32) int {
	if r < 0 {
		return -1
	}
	if g.sel != nil {
		if int(r) >= len(g.laneIdx) {
			return -1
		}
		return int(g.laneIdx[r])
	}
	li := int(r) / g.k
	if li >= len(g.lanes) {
		return -1
	}
	return li
}

// renderMarks draws the marks (called by render) and returns a note for
// the chart's footer.
func (g *Gantt) renderMarks(w *bufio.Writer, vlo, vhi, pw float64, x0, top, laneH, pitch int) string {
	if len(g.marks) == 0 || g.opt.Raw {
		return ""
	}
	x := func(t float64) float64 { return float64(x0) + (min(max(t, vlo), vhi)-vlo)/pw }
	// place is a mark's lane and x range; ok false when it is out of view
	// or its rank has no lane
	place := func(m datamodel.Mark) (l int, x1, x2 float64, ok bool) {
		if m.End < vlo || m.Start > vhi {
			return 0, 0, 0, false
		}
		if l = g.laneFor(m.Rank); l < 0 {
			return 0, 0, 0, false
		}
		return l, x(m.Start), x(m.End), true
	}
	// Root-cause bands, merged per lane within a pixel.
	type band struct {
		lane   int
		x1, x2 float64
		label  string
	}
	var bands []band
	last := map[int]int{} // lane -> index of its last band
	var path []datamodel.Mark
	for _, m := range g.marks {
		if m.Kind == datamodel.MarkCriticalPath {
			path = append(path, m)
			continue
		}
		l, x1, x2, ok := place(m)
		if !ok {
			continue
		}
		if i, ok := last[l]; ok && bands[i].label == m.Label && x1 <= bands[i].x2+1 {
			bands[i].x2 = max(bands[i].x2, x2)
			continue
		}
		last[l] = len(bands)
		bands = append(bands, band{l, x1, x2, m.Label})
	}
	note := ""
	if len(bands) > 0 {
		if len(bands) > maxMarkRects {
			note += fmt.Sprintf(" %d root-cause delays in the window, the first %d drawn.", len(bands), maxMarkRects)
			bands = bands[:maxMarkRects]
		}
		w.WriteString(`<g fill="#ff8c00" fill-opacity=".35" stroke="#e06000" stroke-width=".6" class="rootcause">` + "\n")
		for _, b := range bands {
			fmt.Fprintf(w, `<rect x="%s" y="%d" width="%s" height="%d"><title>%s</title></rect>`+"\n",
				f1(b.x1), top+b.lane*pitch, f1(max(1, b.x2-b.x1)), laneH, esc(b.label))
		}
		w.WriteString("</g>\n")
		note += " Orange bands: the delays of the top root causes (their regions on the delaying ranks, docs/explanation/rootcause.md)."
	}
	// Critical path: a horizontal run per stay, a vertical step between.
	// Where stays are narrower than cpColPx pixels, each column shows the
	// lane the path spent most of it on, so the line stays readable.
	type run struct {
		lane   int
		x1, x2 float64
	}
	var runs []run
	colW := float64(cpColPx)
	var colLane map[int]float64
	colStart := -1.0
	flush := func() {
		if colLane == nil {
			return
		}
		best, bt := -1, -1.0
		for l, t := range colLane {
			if t > bt || (t == bt && l < best) {
				best, bt = l, t
			}
		}
		x1 := colStart
		if n := len(runs); n > 0 && runs[n-1].lane == best && runs[n-1].x2 >= x1-0.01 {
			runs[n-1].x2 = x1 + colW
		} else {
			runs = append(runs, run{best, x1, x1 + colW})
		}
		colLane = nil
	}
	for _, m := range path {
		l, x1, x2, ok := place(m)
		if !ok {
			continue
		}
		if x2-x1 >= colW { // wide: its own run
			flush()
			if n := len(runs); n > 0 && runs[n-1].lane == l {
				runs[n-1].x2 = x2
			} else {
				runs = append(runs, run{l, x1, x2})
			}
			colStart = -1
			continue
		}
		for x1 < x2 || (x1 == x2 && colLane == nil) { // narrow: into its columns
			c := float64(x0) + colW*float64(int((x1-float64(x0))/colW))
			if c != colStart {
				flush()
				colStart, colLane = c, map[int]float64{}
			}
			end := min(x2, c+colW)
			colLane[l] += end - x1 + 1e-9
			if end <= x1 {
				break
			}
			x1 = end
		}
	}
	flush()
	var d strings.Builder
	for i, r := range runs {
		y := float64(top+r.lane*pitch) + float64(laneH)/2
		if i == 0 {
			fmt.Fprintf(&d, "M%s %s", f1(r.x1), f1(y))
		} else {
			fmt.Fprintf(&d, "V%s", f1(y))
		}
		fmt.Fprintf(&d, "H%s", f1(r.x2))
	}
	if d.Len() > 0 {
		fmt.Fprintf(w, `<path class="critpath" d="%s" fill="none" stroke="#d00" stroke-width="1.6" stroke-opacity=".85"><title>critical path</title></path>`+"\n", d.String())
		note += " Red line: the critical path."
	}
	return note
}

// AddMarks writes the root-cause analysis' marks (merge.RootCauseStream
// .Marks) as slices on two extra tracks of each rank that has some:
// "root causes" (the delays of the top root causes, named by cause) and
// "critical path" (the path's stays on the rank). Call it before Close.
func (p *PerfettoProto) AddMarks(marks []datamodel.Mark) error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return fmt.Errorf("viz: perfetto: AddMarks after Close")
	}
	p.start()
	declared := map[uint64]bool{}
	for _, m := range marks {
		p.ensureRank(m.Rank)
		track := uint64(pfMarkUUIDOffset) + uint64(m.Kind)<<32 + uint64(uint32(m.Rank))
		if !declared[track] {
			declared[track] = true
			name := "root causes"
			if m.Kind == datamodel.MarkCriticalPath {
				name = "critical path"
			}
			var d []byte
			d = protowire.AppendTag(d, pfTDUUID, protowire.VarintType)
			d = protowire.AppendVarint(d, track)
			d = protowire.AppendTag(d, pfTDParent, protowire.VarintType)
			d = protowire.AppendVarint(d, processUUID(m.Rank))
			d = protowire.AppendTag(d, pfTDName, protowire.BytesType)
			d = protowire.AppendString(d, name)
			p.writeDescriptor(d)
		}
		for end := 0; end < 2; end++ {
			te := p.te[:0]
			te = protowire.AppendTag(te, pfTEType, protowire.VarintType)
			ts := m.Start
			if end == 0 {
				te = protowire.AppendVarint(te, pfTypeSliceBegin)
			} else {
				te = protowire.AppendVarint(te, pfTypeSliceEnd)
				ts = max(m.End, m.Start)
			}
			te = protowire.AppendTag(te, pfTETrackUUID, protowire.VarintType)
			te = protowire.AppendVarint(te, track)
			if end == 0 {
				te = protowire.AppendTag(te, pfTECategoryIIDs, protowire.VarintType)
				te = protowire.AppendVarint(te, pfCatAnalysis)
				te = protowire.AppendTag(te, pfTENameIID, protowire.VarintType)
				te = protowire.AppendVarint(te, p.nameIID(m.Label))
			}
			p.te = te
			p.trackEvent(p.absNS(ts), te)
		}
		if p.err != nil {
			return p.err
		}
	}
	return nil
}
