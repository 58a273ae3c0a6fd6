package main

// Per-event exports (events.csv, events.csv.gz, trace.pftrace, trace.json)
// grow with the run, unlike the summary outputs. By default they are
// written only while the run (or the --from/--to window) holds at most
// --per-event-limit events, so that no default output outgrows what a
// person can open (docs/explanation/tracemerge.md, "Output sizes").

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/viz"
	"github.com/gclock/gclock/viz/otf2"
)

// defaultPerEventLimit bounds the per-event exports of a default run:
// about 65 MB of events.csv and 40 MB of trace.pftrace.
const defaultPerEventLimit = 500_000

// perEventFiles names the file each per-event format writes.
var perEventFiles = map[string]string{
	"csv":           "events.csv",
	"csvgz":         "events.csv.gz",
	"perfetto":      "trace.pftrace",
	"perfetto-json": "trace.json",
}

// limitSink forwards events to a per-event export until more than limit
// calls (continuation records do not count) have arrived; then it stops
// forwarding and the export is dropped (limit 0: no limit).
type limitSink struct {
	s     datamodel.Sink
	n     int64
	limit int64
	over  atomic.Bool // read by Wants too
}

// Wants implements merge.OpFilter: no event once the limit is passed.
// The exports now read the one copy of each event that every per-event
// output reads (merge.SharedAsync, which does not ask), so past the limit
// they cost the merge goroutine no copy of their own; Add drops the
// events. (An AsyncSink keeps its filter's answers from its start, so it
// would not have seen the limit pass either.)
func (l *limitSink) Wants(trace.Op) bool { return !l.over.Load() }

func (l *limitSink) Add(ev *datamodel.GEvent) error {
	if l.over.Load() {
		return nil
	}
	if !ev.Continuation() {
		l.n++
		if l.limit > 0 && l.n > l.limit {
			l.over.Store(true)
			return nil
		}
	}
	return l.s.Add(ev)
}

// runCalls returns the MPI calls of the run as its rank files' footers
// count them (trace.Footer.Calls), or -1 when that is not known: a rank
// file without footer (the rank ended abnormally) or from a recorder
// older than the count.
func runCalls(run *rundir.Run) int64 {
	var n int64
	for _, ri := range run.Ranks {
		f := ri.Meta.Footer
		if f == nil || f.Calls == 0 && f.Events > 0 {
			return -1
		}
		n += int64(f.Calls)
	}
	return n
}

// exports holds the open per-event exports of one analysis.
type exports struct {
	limit   int64
	skipped []string              // formats left out before the pass
	sinks   map[string]*limitSink // by format
	csv     *viz.CSV
	csvgz   *viz.CSV
	gz      *gzip.Writer
	pb      *viz.PerfettoProto
	js      *viz.Perfetto
	closed  bool
}

// openExports creates the per-event exports selected in formats. limit 0
// means no limit; calls is the number of MPI calls the pass will see when
// known (-1 otherwise). A run known to exceed the limit gets no per-event
// export at all: without that, each would encode its first limit calls
// (≈ 0.8 s of CPU time for CSV and Perfetto at the default limit,
// 2026-11-26) and then be thrown away. The returned sinks are to be fed
// the merged stream.
func openExports(out *outputs, formats map[string]bool, limit, calls int64, rmeta []viz.RankMeta, origin int64,
	pcName func(uint64) string, siteName func(int32, uint64) string, errBar viz.ErrorBarFunc) (*exports, error) {
	e := &exports{limit: limit, sinks: map[string]*limitSink{}}
	if limit > 0 && calls > limit {
		for _, f := range []string{"csv", "csvgz", "perfetto", "perfetto-json"} {
			if formats[f] {
				e.skipped = append(e.skipped, f)
			}
		}
		return e, nil
	}
	if formats["csv"] {
		w, err := out.create(perEventFiles["csv"])
		if err != nil {
			return nil, err
		}
		e.csv = viz.NewCSV(w, pcName)
		e.csv.SetOrigin(origin) // absolute ns in rank 0's timebase
		e.csv.SetRankResolve(siteName)
		e.csv.SetErrorBar(errBar)
		e.sinks["csv"] = &limitSink{s: e.csv, limit: limit}
	}
	if formats["csvgz"] {
		w, err := out.create(perEventFiles["csvgz"])
		if err != nil {
			return nil, err
		}
		gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("events.csv.gz: %w", err)
		}
		e.gz = gz
		e.csvgz = viz.NewCSV(gz, pcName)
		e.csvgz.SetOrigin(origin)
		e.csvgz.SetRankResolve(siteName)
		e.csvgz.SetErrorBar(errBar)
		e.sinks["csvgz"] = &limitSink{s: e.csvgz, limit: limit}
	}
	if formats["perfetto"] {
		w, err := out.create(perEventFiles["perfetto"])
		if err != nil {
			return nil, err
		}
		e.pb = viz.NewPerfettoProto(w, rmeta)
		e.pb.SetRunOrigin(origin)
		e.pb.SetRankResolve(siteName)
		e.pb.SetErrorBar(errBar)
		e.sinks["perfetto"] = &limitSink{s: e.pb, limit: limit}
	}
	if formats["perfetto-json"] {
		w, err := out.create(perEventFiles["perfetto-json"])
		if err != nil {
			return nil, err
		}
		// ts in µs relative to the run origin (rank 0's MPI_Init exit),
		// which is recorded in otherData.gclock_origin_ns.
		e.js = viz.NewPerfetto(w, rmeta, viz.PerfettoRankResolve(siteName), viz.PerfettoRunOrigin(origin), viz.PerfettoErrorBar(errBar))
		e.sinks["perfetto-json"] = &limitSink{s: e.js, limit: limit}
	}
	return e, nil
}

// Sinks returns the sinks to add to the pass, in a fixed order.
func (e *exports) Sinks() []datamodel.Sink {
	var out []datamodel.Sink
	for _, f := range []string{"csv", "csvgz", "perfetto", "perfetto-json"} {
		if s := e.sinks[f]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

// finish writes the messages into the Perfetto exports, flushes and closes
// every export, and removes those that went over the limit. It returns the
// formats whose files were removed.
// drawsMessages reports whether an export draws the matched messages
// (Perfetto flows).
func (e *exports) drawsMessages() bool { return e.pb != nil || e.js != nil }

func (e *exports) finish(out *outputs, msgs []datamodel.Message, marks []datamodel.Mark) (dropped []string, err error) {
	if e.closed {
		return nil, nil
	}
	e.closed = true
	fail := func(name string, err error) error { return fmt.Errorf("%s: %w", name, err) }
	if s := e.sinks["csv"]; s != nil && !s.over.Load() {
		if err := e.csv.Flush(); err != nil {
			return nil, fail(perEventFiles["csv"], err)
		}
	}
	if s := e.sinks["csvgz"]; s != nil {
		if !s.over.Load() {
			if err := e.csvgz.Flush(); err != nil {
				return nil, fail(perEventFiles["csvgz"], err)
			}
		}
		if err := e.gz.Close(); err != nil {
			return nil, fail(perEventFiles["csvgz"], err)
		}
	}
	if s := e.sinks["perfetto"]; s != nil && !s.over.Load() {
		if err := e.pb.AddMessages(msgs); err != nil {
			return nil, fail(perEventFiles["perfetto"], err)
		}
		if err := e.pb.AddMarks(marks); err != nil {
			return nil, fail(perEventFiles["perfetto"], err)
		}
		if err := e.pb.Close(); err != nil {
			return nil, fail(perEventFiles["perfetto"], err)
		}
	}
	if s := e.sinks["perfetto-json"]; s != nil && !s.over.Load() {
		if err := e.js.AddMessages(msgs); err != nil {
			return nil, fail(perEventFiles["perfetto-json"], err)
		}
		if err := e.js.Close(); err != nil {
			return nil, fail(perEventFiles["perfetto-json"], err)
		}
	}
	dropped = append(dropped, e.skipped...)
	for f, s := range e.sinks {
		if s.over.Load() {
			name := perEventFiles[f]
			if err := out.remove(name); err != nil {
				return nil, fail(name, err)
			}
			dropped = append(dropped, f)
		}
	}
	sort.Strings(dropped)
	return dropped, nil
}

// droppedNote prints the line that says which per-event exports were left
// out and how to get them; calls is the run's count when the footers gave
// it (-1: not known).
func droppedNote(w io.Writer, dropped []string, limit, calls int64) {
	if len(dropped) == 0 {
		return
	}
	var files []string
	for _, f := range dropped {
		files = append(files, perEventFiles[f])
	}
	size := fmt.Sprintf("more than %d MPI calls", limit)
	if calls > limit {
		size = fmt.Sprintf("%d MPI calls, more than %d", calls, limit)
	}
	fmt.Fprintf(w, "tracemerge: note: %s not written: the run has %s (--per-event-limit); "+
		"the summary outputs cover all of them. Write them anyway with --formats %s --per-event-limit 0, "+
		"or for a time window with --from/--to\n",
		strings.Join(files, ", "), size, strings.Join(dropped, ","))
}

// openOTF2 starts the OTF2 archive OUT/otf2/traces.otf2 (a directory
// written by libotf2; an old one is replaced) with the run's ranks, hosts
// and communicators.
func openOTF2(outDir string, run *rundir.Run, origin int64) (*otf2.Writer, error) {
	info := otf2.RunInfo{Origin: origin}
	seen := map[uint64]bool{}
	for _, ri := range run.Ranks {
		info.Ranks = append(info.Ranks, otf2.Rank{Rank: int32(ri.Rank), Host: ri.Meta.Header.Host})
		for _, c := range ri.Meta.Comms {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			info.Comms = append(info.Comms, otf2.Comm{ID: c.ID, Name: otf2CommName(c), Members: c.Members, Parent: c.Parent})
		}
	}
	sort.Slice(info.Comms, func(i, j int) bool { return info.Comms[i].ID < info.Comms[j].ID })
	dir := filepath.Join(outDir, "otf2")
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("otf2: removing the old archive: %w", err)
	}
	w, err := otf2.Create(dir, "traces", info)
	if err != nil {
		return nil, fmt.Errorf("otf2: %w", err)
	}
	return w, nil
}

// otf2CommName names a communicator as the reports do.
func otf2CommName(c trace.Comm) string {
	switch c.ID {
	case trace.CommWorldID:
		return "MPI_COMM_WORLD"
	case trace.CommSelfID:
		return "MPI_COMM_SELF"
	}
	return fmt.Sprintf("%s %#x", c.Kind, c.ID)
}

// parseRankList parses "0-63,100,200-203" into ranks (at most 4096, so a
// chart stays readable).
func parseRankList(s string) ([]int32, error) {
	var out []int32
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 32)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a rank or a range like 0-63", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 32); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range like 0-63", part)
			}
		}
		if int64(len(out))+b-a+1 > 4096 {
			return nil, fmt.Errorf("more than 4096 ranks selected; pick a smaller range")
		}
		for r := a; r <= b; r++ {
			out = append(out, int32(r))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no rank given")
	}
	return out, nil
}
