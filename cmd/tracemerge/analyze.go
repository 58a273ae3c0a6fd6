package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/callsite"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/postmortem"
	"github.com/gclock/gclock/merge/rma"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
	"github.com/gclock/gclock/viz"
	"github.com/gclock/gclock/viz/otf2"
)

// allFormats are the output formats in the order they are listed.
var allFormats = []string{"svg", "html", "csv", "csvgz", "json", "perfetto", "perfetto-json", "otf2", "paraver", "txt"}

// defaultFormats are written without --formats; the per-event ones among
// them (csv, perfetto) only up to --per-event-limit events.
var defaultFormats = []string{"svg", "html", "csv", "json", "perfetto", "txt"}

type analyzeFlags struct {
	out        string
	clock      string
	from, to   string
	instances  multiFlag
	formats    string
	perEvent   int64
	ranks      string
	perLane    int
	top        int
	width      int
	rendezvous uint64
	debugDirs  multiFlag
	quiet      bool
	noRoot     bool
	help       bool
}

// multiFlag collects repeated (and comma-separated) flag values.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*m = append(*m, p)
		}
	}
	return nil
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("tracemerge DIR -o OUT" as well as "tracemerge -o OUT DIR").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" { // everything after -- is positional
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func usageErr(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "tracemerge: "+format+"\n", a...)
	fmt.Fprintln(stderr, "run 'tracemerge --help' for usage")
	return exitUsage
}

func cmdAnalyze(args []string, stdout, stderr io.Writer) int {
	var f analyzeFlags
	fs := flag.NewFlagSet("tracemerge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.out, "o", "tracemerge-out", "output directory")
	fs.StringVar(&f.out, "out", "tracemerge-out", "output directory")
	fs.StringVar(&f.clock, "clock", "interp", "interp, refined, linear, init or raw")
	fs.StringVar(&f.from, "from", "", "window start after run start")
	fs.StringVar(&f.to, "to", "", "window end after run start")
	fs.Var(&f.instances, "instance", "COMM:SEQ to zoom into")
	fs.StringVar(&f.formats, "formats", strings.Join(defaultFormats, ","), "output formats")
	fs.Int64Var(&f.perEvent, "per-event-limit", -1, "write per-event exports only up to this many MPI calls (0: no limit)")
	fs.StringVar(&f.ranks, "ranks", "", "Gantt: draw only these ranks, one per lane (e.g. 0-63,100)")
	fs.IntVar(&f.perLane, "ranks-per-lane", 0, "Gantt: ranks grouped per lane (0: automatic)")
	fs.IntVar(&f.top, "top", 10, "worst instances to list")
	fs.IntVar(&f.width, "width", 1200, "Gantt width in pixels")
	fs.Uint64Var(&f.rendezvous, "rendezvous-bytes", merge.DefaultRendezvousBytes, "standard sends this large count for Late Receiver (0: only synchronous sends)")
	fs.Var(&f.debugDirs, "debug-dir", "extra directory for call-site resolution")
	fs.BoolVar(&f.noRoot, "no-root-causes", false, "skip the delay and critical-path analysis")
	fs.BoolVar(&f.quiet, "q", false, "quiet")
	fs.BoolVar(&f.quiet, "quiet", false, "quiet")
	fs.BoolVar(&f.help, "h", false, "help")
	fs.BoolVar(&f.help, "help", false, "help")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageErr(stderr, "%v", err)
	}
	if f.help {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	if len(pos) != 1 {
		if len(pos) == 0 {
			fmt.Fprint(stderr, usageText)
			return exitUsage
		}
		return usageErr(stderr, "expected one run directory, got %d arguments: %s", len(pos), strings.Join(pos, " "))
	}
	dir := pos[0]
	mode, err := correct.ParseClockMode(f.clock)
	if err != nil {
		return usageErr(stderr, "--clock: %v", err)
	}
	opt := merge.Options{Clock: mode, TopN: f.top}
	if f.top <= 0 {
		return usageErr(stderr, "--top must be positive, got %d", f.top)
	}
	if f.width < 200 || f.width > 100000 {
		return usageErr(stderr, "--width must be between 200 and 100000 pixels, got %d", f.width)
	}
	if f.from != "" {
		if opt.From, err = parseDuration(f.from); err != nil {
			return usageErr(stderr, "--from: %v", err)
		}
	}
	if f.to != "" {
		if opt.To, err = parseDuration(f.to); err != nil {
			return usageErr(stderr, "--to: %v", err)
		}
		opt.HasTo = true
		if opt.To <= opt.From {
			return usageErr(stderr, "--to (%s) must lie after --from (%s)", f.to, orDefault(f.from, "0"))
		}
	}
	formats := map[string]bool{}
	for _, p := range strings.Split(f.formats, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if p == "all" {
			for _, a := range allFormats {
				formats[a] = true
			}
			continue
		}
		if !contains(allFormats, p) {
			return usageErr(stderr, "--formats: unknown format %q (want %s)", p, strings.Join(allFormats, ","))
		}
		formats[p] = true
	}
	if len(formats) == 0 {
		return usageErr(stderr, "--formats: no format selected")
	}
	// Per-event exports named in --formats are written whatever the run's
	// size unless --per-event-limit says otherwise; the defaults are bounded.
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	limit := f.perEvent
	if limit < 0 {
		if set["per-event-limit"] {
			return usageErr(stderr, "--per-event-limit must be >= 0 (0: no limit), got %d", f.perEvent)
		}
		limit = defaultPerEventLimit
		if set["formats"] {
			limit = 0
		}
	}
	if f.perLane < 0 {
		return usageErr(stderr, "--ranks-per-lane must be >= 0 (0: automatic), got %d", f.perLane)
	}
	var ganttRanks []int32
	if f.ranks != "" {
		if ganttRanks, err = parseRankList(f.ranks); err != nil {
			return usageErr(stderr, "--ranks: %v", err)
		}
	}
	type zoomReq struct {
		key  merge.InstanceKey
		name string
	}
	var zooms []zoomReq
	for _, s := range f.instances {
		k, name, err := parseInstance(s)
		if err != nil {
			return usageErr(stderr, "--instance %s: %v", s, err)
		}
		zooms = append(zooms, zoomReq{k, name})
		opt.Capture = append(opt.Capture, k)
	}
	res := callsite.NewResolver()
	res.Search = f.debugDirs
	opt.Resolve = res

	// Under mpirun with K > 1 processes: workers serve and return here.
	// Without per-event output the analysis itself may be partitioned
	// (merge/part.go); per-event outputs need every event on process 0.
	partition := len(zooms) == 0
	for _, p := range []string{"svg", "html", "csv", "csvgz", "perfetto", "perfetto-json", "otf2", "paraver"} {
		partition = partition && !formats[p]
	}
	par, code, finished := startParallel(dir, opt, mode, partition, f.quiet, stderr)
	if finished {
		return code
	}
	defer par.close()
	if par == nil {
		// one process analyses every rank: the heap is the whole run's
		// (a parallel analysis's processes keep theirs small, D100)
		if n, err := rankFiles(dir); err == nil {
			hugePagesForRanks(n)
		}
	}

	// --clock refined: a first pass with interpolation finds the
	// happened-before facts and the moves they call for (merge/refine.go),
	// then repair passes list the violations left and their controlled-
	// logical-clock repair (merge/clc.go).
	if mode == correct.ClockRefined {
		plan, err := merge.PlanRefined(func() (*rundir.Run, error) { return rundir.Load(dir, nil) }, opt,
			p2pOptions(mode, res, f.top, 0, 0, f.rendezvous))
		if err != nil {
			fmt.Fprintf(stderr, "tracemerge: %v\n", err)
			return exitNoData
		}
		opt = plan.Options
	}

	// Load (again when a partitioned pass met damaged input).
load:
	run, err := loadRun(dir, nil)
	if err != nil {
		var le *rundir.LoadError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "tracemerge: %s\n", le.Msg)
			return exitNoData
		}
		fmt.Fprintf(stderr, "tracemerge: %v\n", err)
		return exitNoData
	}
	defer run.Close()
	for _, p := range run.Problems {
		fmt.Fprintf(stderr, "tracemerge: warning: %s\n", p)
	}
	pass, err := merge.Prepare(run, opt)
	if err != nil {
		fmt.Fprintf(stderr, "tracemerge: %v\n", err)
		return exitNoData
	}
	if par != nil {
		pass.SetDist(par.dist)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "tracemerge: cannot create output directory: %v\n", err)
		return exitOutput
	}
	out := &outputs{dir: f.out}

	// Sinks.
	start, end, known := pass.Window()
	hosts := make([]string, run.WorldSize)
	var rmeta []viz.RankMeta
	for _, ri := range run.Ranks {
		hosts[ri.Rank] = ri.Meta.Header.Host
		rmeta = append(rmeta, viz.RankMeta{Rank: int32(ri.Rank), Host: ri.Meta.Header.Host, PID: ri.Meta.Header.PID})
	}
	pcName := pass.PCName()     // pc only: the HTML's unresolved call-site names
	siteName := pass.SiteName() // per rank (ASLR): the CSV and Perfetto exports
	// Each output runs in its own goroutine, overlapping with the merge.
	// The per-event outputs, and the root-cause stream when there are
	// any, read one copy of each event (merge.SharedAsync); the
	// point-to-point and one-sided streams take a few ops only and copy
	// those into batches of their own.
	shared := merge.NewSharedAsync()
	var asyncs []*merge.AsyncSink
	addSink := func(s datamodel.Sink) { shared.AddWindow(s) }
	closeAsyncs := func() error {
		first := shared.Close()
		for _, as := range asyncs {
			if err := as.Close(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	var gantt *viz.Gantt
	if formats["svg"] || formats["html"] {
		gopt := viz.GanttOptions{Width: f.width, WorldSize: run.WorldSize, Hosts: hosts, Origin: pass.Origin(),
			Ranks: ganttRanks, RanksPerLane: f.perLane,
			Title: fmt.Sprintf("gclock run %s: %d ranks, clock %s", run.JobID, run.WorldSize, mode)}
		if known && !math.IsInf(end, 0) && end > start {
			gopt.Start, gopt.End = start, end
		}
		if mode == correct.ClockRaw {
			gopt.Title += " (UNCORRECTED)"
		}
		gantt = viz.NewGantt(gopt)
		addSink(gantt)
	}
	calls := runCalls(run)
	if f.from != "" || f.to != "" {
		calls = -1 // the window's calls are not counted in advance
	}
	exp, err := openExports(out, formats, limit, calls, rmeta, pass.Origin(), pcName, siteName, pass.ErrorBar())
	if err != nil {
		return out.fail(stderr, err)
	}
	for _, s := range exp.Sinks() {
		addSink(s)
	}
	var otf *otf2.Writer
	if formats["otf2"] {
		if otf, err = openOTF2(f.out, run, pass.Origin()); err != nil {
			return out.fail(stderr, err)
		}
		addSink(otf)
	}
	var prv *viz.Paraver
	if formats["paraver"] {
		if prv, err = viz.NewParaver(f.out, "trace", rmeta); err != nil {
			return out.fail(stderr, err)
		}
		addSink(prv)
	}
	// Point-to-point analysis (docs/explanation/p2p.md): a stream over every event of
	// the main pass, in its own goroutine; the messages kept for drawing
	// are those whose send starts in the window.
	var msgFrom, msgTo float64
	if known {
		msgFrom = start
		if !math.IsInf(end, 0) {
			msgTo = end
		}
	}
	// Messages are kept only for the outputs that draw them (Perfetto
	// flows, Paraver communications, Gantt lines): without those the
	// list costs a heap operation per message and, in a partitioned pass,
	// every owner's list to process 0.
	draw := gantt != nil || prv != nil || exp.drawsMessages()
	popt := p2pOptions(mode, res, f.top, msgFrom, msgTo, f.rendezvous)
	ropt := rmaOptions(msgFrom, msgTo)
	if !draw {
		popt.KeepMessages, ropt.KeepTransfers = 0, 0
	}
	p2pStream := merge.NewP2PStream(run, popt, siteName)
	// Root causes of waiting (docs/explanation/rootcause.md): delays and the critical
	// path, a stream over every event with its own matching.
	// It feeds the point-to-point stream itself (one matching of the
	// messages, on one goroutine); without it that stream is a sink of
	// its own, which a partitioned pass can spread over the processes.
	var rcStream *merge.RootCauseStream
	if !f.noRoot {
		rcStream = merge.NewRootCauseStream(run, merge.RootCauseOptions{TopN: max(f.top, 10), Stream: p2pStream}, siteName)
		if shared.Windows() > 0 {
			// it takes every event, like the per-event outputs: the
			// same copy (such a pass is not partitioned anyway)
			shared.AddStream(rcStream)
		} else {
			// alone: a partitioned pass must see the stream itself
			rcAsync := merge.NewAsyncSink(rcStream)
			asyncs = append(asyncs, rcAsync)
			pass.AddStreamSink(rcAsync)
		}
	} else {
		p2pAsync := merge.NewAsyncSink(p2pStream)
		asyncs = append(asyncs, p2pAsync)
		pass.AddStreamSink(p2pAsync)
	}
	shared.Attach(pass)
	// One-sided analysis (docs/explanation/rma.md), likewise a stream.
	rmaStream := rma.NewStream(run, ropt)
	rmaAsync := merge.NewAsyncSink(rmaStream)
	asyncs = append(asyncs, rmaAsync)
	pass.AddStreamSink(rmaAsync)
	var bar *progressBar
	if !f.quiet && isTerminal(os.Stderr) && stderr == io.Writer(os.Stderr) {
		bar = newProgressBar(os.Stderr)
		pass.SetProgress(bar.update)
	}

	t0 := time.Now()
	result, err := pass.Run()
	if bar != nil {
		bar.done()
	}
	if cerr := closeAsyncs(); err == nil && cerr != nil {
		err = fmt.Errorf("writing output: %w", cerr)
	}
	if errors.Is(err, merge.ErrPartitionRerun) {
		// Damaged input: the same analysis with the events shipped to
		// process 0, which the workers now serve.
		if !f.quiet {
			fmt.Fprintf(stderr, "tracemerge: note: %v\n", err)
		}
		out.closeAll()
		run.Close()
		par.dist.Partition = false
		goto load
	}
	if err != nil {
		out.closeAll()
		fmt.Fprintf(stderr, "tracemerge: %v\n", err)
		code := exitOutput
		if errors.Is(err, merge.ErrDistInput) {
			code = exitNoData
		}
		par.abort(code) // a partitioned pass: the others wait for process 0
		return code
	}
	elapsed := time.Since(t0)
	an := result.Analysis
	// How the run ended when it did not end cleanly (docs/guide/crash-hang.md):
	// from the rank files' metadata, the same under every partitioning.
	an.PostMortem = postmortem.Of(run, opt.Clock, opt.Resolve)
	p2p := p2pStream.Result()
	if w := p2pClockWarning(p2p); w != "" {
		an.Clock.Warnings = append(an.Clock.Warnings, w)
	}
	rma := rmaStream.Result()
	var marks []datamodel.Mark
	if rcStream != nil {
		rcStream.SetClockBound(an.Clock.SyncBoundNS)
		an.RootCauses = rcStream.Result()
		marks = rcStream.Marks(an.RootCauses, markCauses)
	}
	var msgs []datamodel.Message
	if p2p != nil {
		msgs = p2p.List
	}
	// One-sided transfers are drawn like messages (Perfetto arrows, Gantt
	// lines) from the rank whose data moves to the one that receives it.
	if rma != nil && len(rma.List) > 0 {
		msgs = append(append([]datamodel.Message(nil), msgs...), rma.List...)
	}
	dropped, err := exp.finish(out, msgs, marks)
	if err != nil {
		return out.fail(stderr, err)
	}
	if otf != nil {
		if err := otf.Close(); err != nil {
			return out.fail(stderr, fmt.Errorf("otf2/traces.otf2: %w", err))
		}
		if n := otf.Skipped(); n > 0 {
			fmt.Fprintf(stderr, "tracemerge: note: otf2: %d message records left out (communicator or peer unknown); their calls are still there as regions\n", n)
		}
	}

	if prv != nil {
		prv.AddMessages(msgs)
		if err := prv.Close(); err != nil {
			return out.fail(stderr, fmt.Errorf("trace.prv: %w", err))
		}
	}

	// Gantt.
	var ganttSVG []byte
	if gantt != nil {
		if len(msgs) > 0 {
			gantt.SetMessages(msgs, 0)
		}
		gantt.SetMarks(marks)
		var buf bytes.Buffer
		if err := gantt.WriteSVG(&buf); err != nil {
			fmt.Fprintf(stderr, "tracemerge: warning: Gantt chart: %v\n", err)
		} else {
			ganttSVG = buf.Bytes()
			if formats["svg"] {
				if err := out.writeFile("gantt.svg", ganttSVG); err != nil {
					return out.fail(stderr, err)
				}
			}
		}
	}
	// Instance zooms.
	var named []viz.NamedSVG
	for i, z := range result.Zooms {
		zr := zooms[i]
		if !z.Found {
			fmt.Fprintf(stderr, "tracemerge: warning: --instance %s: no such instance in this run (comm %s has no collective with seq %d)\n",
				zr.name, commName(zr.key.Comm), zr.key.Seq)
			continue
		}
		title := fmt.Sprintf("%s on comm %s, seq %d", z.Inst.OpName, commName(z.Key.Comm), z.Key.Seq)
		raw := z.Raw
		var buf bytes.Buffer
		if err := viz.InstanceSVG(&buf, z.Inst, &raw, title); err != nil {
			fmt.Fprintf(stderr, "tracemerge: warning: instance view %s: %v\n", zr.name, err)
			continue
		}
		named = append(named, viz.NamedSVG{Name: title, SVG: buf.Bytes()})
		if formats["svg"] {
			name := fmt.Sprintf("instance-%s-%d.svg", fileToken(commName(z.Key.Comm)), z.Key.Seq)
			if err := out.writeFile(name, buf.Bytes()); err != nil {
				return out.fail(stderr, err)
			}
		}
	}
	if formats["html"] {
		for i, w := range an.Worst {
			if i >= 3 {
				break
			}
			title := fmt.Sprintf("worst #%d: %s on comm %s, seq %d (entry skew %s)", i+1, w.OpName, commName(w.CommID), w.Seq, merge.FormatNS(w.EntrySkew))
			var raw *datamodel.Instance
			if i < len(result.WorstRaw) {
				raw = &result.WorstRaw[i]
			}
			var buf bytes.Buffer
			if err := viz.InstanceSVG(&buf, w, raw, title); err == nil {
				named = append(named, viz.NamedSVG{Name: title, SVG: buf.Bytes()})
			}
		}
	}
	// JSON.
	if formats["json"] {
		if err := out.writeJSON("imbalance.json", an); err != nil {
			return out.fail(stderr, err)
		}
		if p2p != nil {
			if err := out.writeJSON("p2p.json", p2p); err != nil {
				return out.fail(stderr, err)
			}
		}
		if rma != nil && rma.Calls > 0 {
			if err := out.writeJSON("rma.json", rma); err != nil {
				return out.fail(stderr, err)
			}
		}
	}
	// Text.
	var text bytes.Buffer
	if err := viz.WriteImbalanceText(&text, an); err != nil {
		text.Reset()
		writeText(&text, an, f.top)
	}
	writeP2PText(&text, p2p, f.top, &an.Clock)
	writeRMAText(&text, rma, f.top)
	if formats["txt"] {
		if err := out.writeFile("imbalance.txt", text.Bytes()); err != nil {
			return out.fail(stderr, err)
		}
	}
	if !f.quiet { // the answer goes to stdout whatever files were chosen
		_, _ = stdout.Write(text.Bytes())
	}
	// HTML.
	if formats["html"] {
		var buf bytes.Buffer
		rep := viz.Report{Analysis: an, GanttSVG: ganttSVG, Instances: named, Resolve: pcName, Generated: time.Now().UTC(), Version: "tracemerge", P2P: p2p, RMA: rma}
		if err := viz.WriteHTML(&buf, rep); err != nil {
			buf.Reset()
			writeFallbackHTML(&buf, an, ganttSVG, named, text.Bytes())
		}
		if err := out.writeFile("index.html", buf.Bytes()); err != nil {
			return out.fail(stderr, err)
		}
	}
	if err := out.closeAll(); err != nil {
		return out.fail(stderr, err)
	}

	// Loud clock warnings and the problems found while reading.
	for _, w := range an.Clock.Warnings {
		fmt.Fprintf(stderr, "tracemerge: WARNING: %s\n", w)
	}
	newProblems := an.Problems[len(run.Problems):]
	for _, p := range newProblems {
		fmt.Fprintf(stderr, "tracemerge: warning: %s\n", p)
	}
	droppedNote(stderr, dropped, limit, calls)
	if !f.quiet {
		rate := float64(an.Events) / math.Max(elapsed.Seconds(), 1e-9)
		fmt.Fprintf(stderr, "tracemerge: %d events, %d instances in %.2fs (%.1f M events/s); outputs in %s\n",
			an.Events, an.Instances, elapsed.Seconds(), rate/1e6, f.out)
	}
	if an.Events == 0 {
		if f.from != "" || f.to != "" {
			fmt.Fprintf(stderr, "tracemerge: %s: no events in the window --from %s --to %s (check the run's span with 'tracemerge info %s')\n",
				dir, orDefault(f.from, "0"), orDefault(f.to, "end"), dir)
		} else {
			fmt.Fprintf(stderr, "tracemerge: %s: no events: %d rank files read, but they hold no MPI calls that survived\n", dir, len(run.Ranks))
		}
		return exitNoData
	}
	if len(an.Problems) > 0 {
		return exitPartial
	}
	return exitOK
}

// parseDuration parses "1.5s", "200ms", "50us", "50µs", "100ns", "2m" into ns.
// A bare "0" is accepted; other numbers need a unit.
func parseDuration(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return 0, fmt.Errorf("%q has no unit (write e.g. %ss or %sms)", s, s, s)
		}
		return 0, fmt.Errorf("%q is not a duration like 1.5s, 200ms, 50us", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: times are relative to the run start", s)
	}
	return float64(d.Nanoseconds()), nil
}

// parseInstance parses COMM:SEQ; COMM is "world", "self" is refused,
// decimal or 0x-hex comm id.
func parseInstance(s string) (merge.InstanceKey, string, error) {
	c, q, ok := strings.Cut(s, ":")
	if !ok {
		return merge.InstanceKey{}, "", errors.New("want COMM:SEQ, e.g. world:42 or 0x8f3a2b:7")
	}
	var k merge.InstanceKey
	switch strings.ToLower(c) {
	case "world", "w":
		k.Comm = trace.CommWorldID
	case "self":
		return k, "", errors.New("MPI_COMM_SELF instances are per rank and not matched")
	default:
		v, err := strconv.ParseUint(c, 0, 64)
		if err != nil {
			return k, "", fmt.Errorf("comm %q is not world, a decimal or a 0x-hex id", c)
		}
		k.Comm = v
	}
	seq, err := strconv.ParseUint(q, 10, 32)
	if err != nil {
		return k, "", fmt.Errorf("seq %q is not a non-negative integer", q)
	}
	k.Seq = uint32(seq)
	return k, s, nil
}

// commName prints a comm id the way --instance accepts it.
func commName(id uint64) string {
	if id == trace.CommWorldID {
		return "world"
	}
	return fmt.Sprintf("%#x", id)
}

var nonToken = regexp.MustCompile(`[^A-Za-z0-9]+`)

func fileToken(s string) string { return nonToken.ReplaceAllString(s, "_") }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// outputs tracks the files being written into the output directory.
type outputs struct {
	dir   string
	files []*os.File
	bufs  []*bufio.Writer
}

func (o *outputs) create(name string) (io.Writer, error) {
	f, err := os.Create(filepath.Join(o.dir, name))
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	o.files = append(o.files, f)
	o.bufs = append(o.bufs, bw)
	return bw, nil
}

// remove closes and deletes a file opened with create.
func (o *outputs) remove(name string) error {
	path := filepath.Join(o.dir, name)
	for i, f := range o.files {
		if f.Name() != path {
			continue
		}
		f.Close()
		o.files = append(o.files[:i], o.files[i+1:]...)
		o.bufs = append(o.bufs[:i], o.bufs[i+1:]...)
		return os.Remove(path)
	}
	return os.Remove(path)
}

func (o *outputs) writeFile(name string, b []byte) error {
	return os.WriteFile(filepath.Join(o.dir, name), b, 0o644)
}

func (o *outputs) closeAll() error {
	var first error
	for i, f := range o.files {
		if err := o.bufs[i].Flush(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", f.Name(), err)
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	o.files, o.bufs = nil, nil
	return first
}

func (o *outputs) fail(stderr io.Writer, err error) int {
	o.closeAll()
	fmt.Fprintf(stderr, "tracemerge: cannot write outputs: %v\n", err)
	return exitOutput
}

// markCauses is how many root causes the Gantt chart and Perfetto mark
// (docs/explanation/rootcause.md).
const markCauses = 2
