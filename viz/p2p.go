package viz

// Point-to-point messages in the exports (issue 7, docs/explanation/p2p.md): Perfetto
// flow events from each send to the call that completed its receive, and
// message lines in the Gantt chart when the window is short enough to show
// them.

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/gclock/gclock/merge/datamodel"
)

// AddMessages writes one flow (an arrow in ui.perfetto.dev) per message:
// a "s" event at the send's start on the sender, bound to its send call,
// and an "f" event on the receiver, bound to the call that completed the
// receive (its midpoint, so the binding is unambiguous). Call it before
// Close, after (or between) Add calls.
func (p *Perfetto) AddMessages(msgs []datamodel.Message) error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return fmt.Errorf("viz: perfetto: AddMessages after Close")
	}
	p.start()
	for i := range msgs {
		m := &msgs[i]
		id := int64(i + 1)
		b := p.buf[:0]
		if p.n > 0 {
			b = append(b, ',', '\n')
		}
		name := fmt.Sprintf("%s → %s tag %d, %d B", m.SendOp, m.RecvOp, m.Tag, m.Bytes)
		b = append(b, `{"ph":"s","cat":"msg","name":`...)
		b = appendJSONString(b, name)
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(m.Src), 10)
		b = append(b, `,"tid":0,"ts":`...)
		b = appendMicros(b, m.SendStart-p.origin)
		b = append(b, `},`+"\n"+`{"ph":"f","bp":"e","cat":"msg","name":`...)
		b = appendJSONString(b, name)
		b = append(b, `,"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(m.Dst), 10)
		b = append(b, `,"tid":0,"ts":`...)
		b = appendMicros(b, (m.RecvEnter+m.RecvExit)/2-p.origin)
		b = append(b, `}`...)
		p.buf = b
		if _, err := p.w.Write(b); err != nil {
			p.err = fmt.Errorf("viz: perfetto: writing message %d: %w", i, err)
			return p.err
		}
		p.n += 2
	}
	return nil
}

// DefaultMaxMessageLines is how many message lines a Gantt chart draws at
// most; with more messages in the window none are drawn (zoom in).
const DefaultMaxMessageLines = 2000

// SetMessages gives the chart the matched messages to draw as lines from
// the send's start on the sender's lane to the end of the receive's
// completing call on the receiver's lane. They are drawn only in the
// corrected (not raw) view and only when at most max (0: the default)
// fall into the window, i.e. when zoomed in.
func (g *Gantt) SetMessages(msgs []datamodel.Message, max int) {
	if max <= 0 {
		max = DefaultMaxMessageLines
	}
	g.msgs, g.maxMsgs = msgs, max
}

// renderMessages draws the message lines (called by render) and returns a
// note for the chart's footer.
func (g *Gantt) renderMessages(w *bufio.Writer, vlo, vhi, pw float64, x0, top, laneH, pitch int) string {
	if len(g.msgs) == 0 || g.opt.Raw {
		return ""
	}
	in := 0
	for i := range g.msgs {
		m := &g.msgs[i]
		if m.RecvExit >= vlo && m.SendStart <= vhi {
			in++
		}
	}
	if in == 0 {
		return ""
	}
	if g.k > 1 {
		return fmt.Sprintf(" %d messages in the window: not drawn on lanes that group %d ranks (draw ranks one per lane with --ranks).", in, g.k)
	}
	if in > g.maxMsgs {
		return fmt.Sprintf(" %d messages in the window: too many to draw as lines (at most %d; zoom in with --from/--to).", in, g.maxMsgs)
	}
	w.WriteString(`<g stroke="#222" stroke-opacity=".55" stroke-width=".8" fill="none">` + "\n")
	for i := range g.msgs {
		m := &g.msgs[i]
		ls, ld := g.laneFor(m.Src), g.laneFor(m.Dst)
		if m.RecvExit < vlo || m.SendStart > vhi || ls < 0 || ld < 0 {
			continue
		}
		x1 := float64(x0) + (m.SendStart-vlo)/pw
		x2 := float64(x0) + (m.RecvExit-vlo)/pw
		y1 := float64(top+ls*pitch) + float64(laneH)/2
		y2 := float64(top+ld*pitch) + float64(laneH)/2
		fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s"><title>%s rank %d → %s rank %d · tag %d · %d B · %s</title></line>`+"\n",
			f1(x1), f1(y1), f1(x2), f1(y2), m.SendOp, m.Src, m.RecvOp, m.Dst, m.Tag, m.Bytes, esc(fmtDur(m.RecvExit-m.SendStart)))
	}
	w.WriteString("</g>\n")
	return fmt.Sprintf(" Lines: %d point-to-point messages, from the send's start to the end of the call that completed the receive.", in)
}
