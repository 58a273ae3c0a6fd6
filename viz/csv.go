package viz

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/gclock/gclock/merge/datamodel"
)

// csvHeader is the column order of the CSV export.
var csvHeader = []string{
	"rank", "op", "comm", "seq", "root", "bytes_sent", "bytes_recv",
	"local_enter_ns", "local_exit_ns", "global_enter_ns", "global_exit_ns", "callsite",
	"enter_err_ns", "exit_err_ns",
}

// CSV writes one row per event (a merge.Sink). Columns:
// rank,op,comm,seq,root,bytes_sent,bytes_recv,local_enter_ns,local_exit_ns,
// global_enter_ns,global_exit_ns,callsite,enter_err_ns,exit_err_ns. Global
// times are absolute ns in
// rank 0's timebase: the run origin (SetOrigin, an int64) plus the event's
// relative float64 time, written exactly as the integer sum followed by the
// relative time's fraction to the ps when it has one
// (1800000000000123456.25), so a CLOCK_REALTIME timebase loses nothing; the call site is the resolver's
// name, or the address as 0x... when resolve is nil or returns "". The
// last two columns are the estimated clock error of the two global times
// (ns, one decimal; SetErrorBar), empty where unknown.
type CSV struct {
	errBar ErrorBarFunc
	origin int64
	w      *csv.Writer
	siteNamer
	rec    []string
	header bool
	rows   int64
}

// NewCSV returns a CSV sink writing to w. resolve may be nil. Call Flush at
// the end.
func NewCSV(w io.Writer, resolve func(pc uint64) string) *CSV {
	return &CSV{
		w:         csv.NewWriter(w),
		siteNamer: siteNamer{resolve: resolve},
		rec:       make([]string, len(csvHeader)),
	}
}

// SetRankResolve names call sites per rank (merge.Pass.SiteName); it takes
// precedence over NewCSV's pc-only resolver.
func (c *CSV) SetRankResolve(fn func(rank int32, pc uint64) string) { c.rankRes = fn }

// SetErrorBar sets the clock error estimate of the err columns
// (merge.Pass.ErrorBar); without it they stay empty.
func (c *CSV) SetErrorBar(fn ErrorBarFunc) { c.errBar = fn }

// ErrorBarFunc gives the estimated clock error (ns) of the global time of
// a rank's local timestamp; negative: unknown (merge.Pass.ErrorBar).
type ErrorBarFunc func(rank int32, local int64) float64

// errCell formats an error bar for a CSV cell ("" when unknown).
func errCell(fn ErrorBarFunc, rank int32, local int64) string {
	if fn == nil {
		return ""
	}
	v := fn(rank, local)
	if !(v >= 0) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// SetOrigin sets the run origin added to the events' relative global
// times (merge.Analysis.OriginNS, merge.Pass.Origin); default 0.
func (c *CSV) SetOrigin(originNS int64) { c.origin = originNS }

// absTime formats origin + rel exactly to the picosecond: the integer ns
// of the sum, then rel's fraction rounded to 3 decimals with trailing
// zeros dropped ("1800000000000123456.25"). Runs longer than about 11
// days of relative time print whole ns.
func absTime(origin int64, rel float64) string {
	if math.IsNaN(rel) || math.IsInf(rel, 0) || math.Abs(rel) > 1<<62 {
		return strconv.FormatFloat(float64(origin)+rel, 'f', -1, 64)
	}
	if math.Abs(rel) >= 1e15 { // ps would overflow the float64 mantissa
		return strconv.FormatInt(origin+int64(math.Round(rel)), 10)
	}
	ps := int64(math.Round(rel * 1000))
	ns, frac := ps/1000, ps%1000
	if frac < 0 {
		ns, frac = ns-1, frac+1000
	}
	s := strconv.FormatInt(origin+ns, 10)
	if frac == 0 {
		return s
	}
	f := strconv.FormatInt(1000+frac, 10)[1:] // "250"
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return s + "." + f
}

// Add writes one event.
func (c *CSV) Add(ev *datamodel.GEvent) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(csvHeader); err != nil {
			return fmt.Errorf("viz: csv header: %w", err)
		}
	}
	r := c.rec
	r[0] = strconv.FormatInt(int64(ev.Rank), 10)
	r[1] = ev.Op.String()
	r[2] = strconv.FormatUint(ev.CommID, 10)
	r[3] = strconv.FormatUint(uint64(ev.Seq), 10)
	r[4] = strconv.FormatInt(int64(ev.Root), 10)
	r[5] = strconv.FormatUint(ev.Sent, 10)
	r[6] = strconv.FormatUint(ev.Recv, 10)
	r[7] = strconv.FormatInt(ev.LocalEnter, 10)
	r[8] = strconv.FormatInt(ev.LocalExit, 10)
	r[9] = absTime(c.origin, ev.Enter)
	r[10] = absTime(c.origin, ev.Exit)
	r[11] = c.callsite(ev.Rank, ev.Callsite)
	r[12] = errCell(c.errBar, ev.Rank, ev.LocalEnter)
	r[13] = errCell(c.errBar, ev.Rank, ev.LocalExit)
	if err := c.w.Write(r); err != nil {
		return fmt.Errorf("viz: csv row %d (rank %d %s seq %d): %w", c.rows+1, ev.Rank, ev.Op, ev.Seq, err)
	}
	c.rows++
	return nil
}

// Flush writes any buffered rows (and the header if no event was added).
func (c *CSV) Flush() error {
	if !c.header {
		c.header = true
		if err := c.w.Write(csvHeader); err != nil {
			return fmt.Errorf("viz: csv header: %w", err)
		}
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("viz: csv flush after %d rows: %w", c.rows, err)
	}
	return nil
}
