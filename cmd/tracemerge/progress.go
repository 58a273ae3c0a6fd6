package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws a one-line progress bar on a terminal, at most ten
// times a second.
type progressBar struct {
	w     io.Writer
	start time.Time
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, start: time.Now()}
}

func (p *progressBar) update(done, total int64) {
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	rate := float64(done) / now.Sub(p.start).Seconds() / 1e6
	if total > 0 {
		frac := float64(done) / float64(total)
		if frac > 1 {
			frac = 1
		}
		n := int(frac * 30)
		fmt.Fprintf(p.w, "\r[%s%s] %3.0f%%  %d/%d events  %.1f M/s ", strings.Repeat("#", n), strings.Repeat(".", 30-n), frac*100, done, total, rate)
	} else {
		fmt.Fprintf(p.w, "\r%d events  %.1f M/s ", done, rate)
	}
	p.drawn = true
}

func (p *progressBar) done() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 79))
	}
}
