package viz

import (
	"io"

	"github.com/gclock/gclock/merge"
)

// Gantt is a level-of-detail Gantt chart builder (see NewGantt).
type Gantt struct{ opt GanttOptions }

func newGantt(opt GanttOptions) *Gantt { return &Gantt{opt: opt} }

// Add consumes one event of the merged stream.
func (g *Gantt) Add(ev *merge.GEvent) error { return ErrNotImplemented }

// WriteSVG writes the chart as a standalone SVG document.
func (g *Gantt) WriteSVG(w io.Writer) error { return ErrNotImplemented }

func instanceSVG(w io.Writer, inst merge.Instance, raw *merge.Instance, title string) error {
	return ErrNotImplemented
}

// WriteHTML writes the self-contained HTML report.
func WriteHTML(w io.Writer, r Report) error { return ErrNotImplemented }

// WriteImbalanceText writes the terminal imbalance report.
func WriteImbalanceText(w io.Writer, a *merge.Analysis) error { return ErrNotImplemented }
