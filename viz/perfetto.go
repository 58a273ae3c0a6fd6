package viz

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/gclock/gclock/merge/datamodel"
)

// Perfetto streams a Chrome trace event JSON document (loadable in
// ui.perfetto.dev and chrome://tracing): one process per rank, named by a
// process_name metadata event, and one "X" (complete) event per MPI call
// with ts and dur in µs (three decimals, i.e. ns resolution) and args comm,
// seq, root, bytes_sent, bytes_recv and callsite. Events are written as they
// arrive; nothing but a call-site name cache is held.
type Perfetto struct {
	w     *bufio.Writer
	ranks []RankMeta
	siteNamer
	errBar  ErrorBarFunc
	origin  float64
	runOrig int64
	started bool
	closed  bool
	n       int64
	buf     []byte
	err     error
}

// PerfettoOption configures a Perfetto writer.
type PerfettoOption func(*Perfetto)

// PerfettoResolve names call sites in args.callsite (default: 0x address).
func PerfettoResolve(resolve func(pc uint64) string) PerfettoOption {
	return func(p *Perfetto) { p.resolve = resolve }
}

// PerfettoOrigin subtracts origin (global ns, in the events' timebase,
// i.e. relative to the run origin) from every timestamp (default 0: µs
// relative to the run origin, merge.Analysis.OriginNS).
func PerfettoOrigin(originNS float64) PerfettoOption {
	return func(p *Perfetto) { p.origin = originNS }
}

// PerfettoRankResolve names call sites per rank (merge.Pass.SiteName), so
// ranks that load an object at different bases (ASLR) get their own names;
// it takes precedence over PerfettoResolve.
func PerfettoRankResolve(fn func(rank int32, pc uint64) string) PerfettoOption {
	return func(p *Perfetto) { p.rankRes = fn }
}

// PerfettoRunOrigin records the run origin (merge.Analysis.OriginNS, ns in
// rank 0's timebase) in otherData.gclock_origin_ns, so that absolute times
// can be recovered: origin + ts·1000 (+ the PerfettoOrigin offset).
func PerfettoRunOrigin(originNS int64) PerfettoOption {
	return func(p *Perfetto) { p.runOrig = originNS }
}

// PerfettoErrorBar adds each call's estimated clock error
// (merge.Pass.ErrorBar) as args.enter_err_ns and args.exit_err_ns (ns, one
// decimal; left out where unknown).
func PerfettoErrorBar(fn ErrorBarFunc) PerfettoOption {
	return func(p *Perfetto) { p.errBar = fn }
}

// NewPerfetto returns a streaming Chrome trace writer. ranks names the
// processes (may be nil). Call Close at the end to finish the document.
func NewPerfetto(w io.Writer, ranks []RankMeta, opts ...PerfettoOption) *Perfetto {
	p := &Perfetto{w: bufio.NewWriterSize(w, 64<<10), ranks: ranks}
	for _, o := range opts {
		o(p)
	}
	return p
}

func (p *Perfetto) start() {
	if p.started {
		return
	}
	p.started = true
	p.w.WriteString(`{"displayTimeUnit":"ns","otherData":{"producer":"gclock","gclock_origin_ns":"` + strconv.FormatInt(p.runOrig, 10) +
		`","gclock_ts_offset_ns":"` + strconv.FormatFloat(p.origin, 'f', -1, 64) + `"},"traceEvents":[`)
	for i, r := range p.ranks {
		name := "rank " + strconv.Itoa(int(r.Rank))
		if r.Host != "" {
			name += " (" + r.Host + ")"
		}
		if r.PID != 0 {
			name += " pid " + strconv.Itoa(r.PID)
		}
		if i > 0 {
			p.w.WriteByte(',')
		}
		p.buf = p.buf[:0]
		p.buf = append(p.buf, `{"ph":"M","name":"process_name","pid":`...)
		p.buf = strconv.AppendInt(p.buf, int64(r.Rank), 10)
		p.buf = append(p.buf, `,"tid":0,"args":{"name":`...)
		p.buf = appendJSONString(p.buf, name)
		p.buf = append(p.buf, `}},{"ph":"M","name":"process_sort_index","pid":`...)
		p.buf = strconv.AppendInt(p.buf, int64(r.Rank), 10)
		p.buf = append(p.buf, `,"tid":0,"args":{"sort_index":`...)
		p.buf = strconv.AppendInt(p.buf, int64(r.Rank), 10)
		p.buf = append(p.buf, `}}`...)
		p.w.Write(p.buf)
		p.n++
	}
}

// Add writes one event.
func (p *Perfetto) Add(ev *datamodel.GEvent) error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return fmt.Errorf("viz: perfetto: Add after Close")
	}
	if ev.Continuation() {
		// A later record of one point-to-point call (MPI_Waitall completing
		// several requests): the call is already one slice.
		return nil
	}
	p.start()
	b := p.buf[:0]
	if p.n > 0 {
		b = append(b, ',', '\n')
	}
	b = append(b, `{"ph":"X","cat":"mpi","name":`...)
	b = appendJSONString(b, ev.Op.String())
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(ev.Rank), 10)
	b = append(b, `,"tid":0,"ts":`...)
	b = appendMicros(b, ev.Enter-p.origin)
	b = append(b, `,"dur":`...)
	d := ev.Exit - ev.Enter
	if d < 0 {
		d = 0
	}
	b = appendMicros(b, d)
	b = append(b, `,"args":{"comm":`...)
	b = strconv.AppendUint(b, ev.CommID, 10)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, uint64(ev.Seq), 10)
	if ev.Root >= 0 {
		b = append(b, `,"root":`...)
		b = strconv.AppendInt(b, int64(ev.Root), 10)
	}
	if ev.Op.IsRMA() && ev.Peer >= 0 { // one-sided: the target's world rank
		b = append(b, `,"target":`...)
		b = strconv.AppendInt(b, int64(ev.Peer), 10)
	}
	b = append(b, `,"bytes_sent":`...)
	b = strconv.AppendUint(b, ev.Sent, 10)
	b = append(b, `,"bytes_recv":`...)
	b = strconv.AppendUint(b, ev.Recv, 10)
	b = append(b, `,"callsite":`...)
	b = appendJSONString(b, p.callsite(ev.Rank, ev.Callsite))
	if c := errCell(p.errBar, ev.Rank, ev.LocalEnter); c != "" {
		b = append(b, `,"enter_err_ns":`...)
		b = append(b, c...)
	}
	if c := errCell(p.errBar, ev.Rank, ev.LocalExit); c != "" {
		b = append(b, `,"exit_err_ns":`...)
		b = append(b, c...)
	}
	b = append(b, `}}`...)
	p.buf = b
	if _, err := p.w.Write(b); err != nil {
		p.err = fmt.Errorf("viz: perfetto: writing event %d: %w", p.n, err)
		return p.err
	}
	p.n++
	return nil
}

// Close finishes the JSON document and flushes it. It does not close the
// underlying writer.
func (p *Perfetto) Close() error {
	if p.err != nil {
		return p.err
	}
	if p.closed {
		return nil
	}
	p.start()
	p.closed = true
	p.w.WriteString("]}\n")
	if err := p.w.Flush(); err != nil {
		p.err = fmt.Errorf("viz: perfetto: flushing after %d events: %w", p.n, err)
		return p.err
	}
	return nil
}

// appendMicros appends ns as µs with three decimals (exact to the ns).
func appendMicros(b []byte, ns float64) []byte {
	return strconv.AppendFloat(b, ns/1000, 'f', 3, 64)
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // only for invalid UTF-8, which Marshal repairs anyway
		return strconv.AppendQuote(b, s)
	}
	return append(b, q...)
}
