package viz

import (
	"io"

	"github.com/gclock/gclock/merge"
)

func instanceSVG(w io.Writer, inst merge.Instance, raw *merge.Instance, title string) error {
	return ErrNotImplemented
}

// WriteHTML writes the self-contained HTML report.
func WriteHTML(w io.Writer, r Report) error { return ErrNotImplemented }

// WriteImbalanceText writes the terminal imbalance report.
func WriteImbalanceText(w io.Writer, a *merge.Analysis) error { return ErrNotImplemented }
