package viz

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/gclock/gclock/merge"
)

// csvHeader is the column order of the CSV export.
var csvHeader = []string{
	"rank", "op", "comm", "seq", "root", "bytes_sent", "bytes_recv",
	"local_enter_ns", "local_exit_ns", "global_enter_ns", "global_exit_ns", "callsite",
}

// CSV writes one row per event (a merge.Sink). Columns:
// rank,op,comm,seq,root,bytes_sent,bytes_recv,local_enter_ns,local_exit_ns,
// global_enter_ns,global_exit_ns,callsite. Global times are written with
// the shortest decimal that round-trips the float64; the call site is the
// resolver's name, or the address as 0x... when resolve is nil or returns "".
type CSV struct {
	w       *csv.Writer
	resolve func(pc uint64) string
	names   map[uint64]string
	rec     []string
	header  bool
	rows    int64
}

// NewCSV returns a CSV sink writing to w. resolve may be nil. Call Flush at
// the end.
func NewCSV(w io.Writer, resolve func(pc uint64) string) *CSV {
	return &CSV{
		w:       csv.NewWriter(w),
		resolve: resolve,
		names:   make(map[uint64]string),
		rec:     make([]string, len(csvHeader)),
	}
}

// Add writes one event.
func (c *CSV) Add(ev *merge.GEvent) error {
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
	r[9] = strconv.FormatFloat(ev.Enter, 'f', -1, 64)
	r[10] = strconv.FormatFloat(ev.Exit, 'f', -1, 64)
	r[11] = c.callsite(ev.Callsite)
	if err := c.w.Write(r); err != nil {
		return fmt.Errorf("viz: csv row %d (rank %d %s seq %d): %w", c.rows+1, ev.Rank, ev.Op, ev.Seq, err)
	}
	c.rows++
	return nil
}

func (c *CSV) callsite(pc uint64) string {
	if s, ok := c.names[pc]; ok {
		return s
	}
	s := ""
	if c.resolve != nil {
		s = c.resolve(pc)
	}
	if s == "" {
		s = "0x" + strconv.FormatUint(pc, 16)
	}
	if len(c.names) < 1<<16 {
		c.names[pc] = s
	}
	return s
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
