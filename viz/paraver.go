package viz

// Paraver export (BSC's Paraver and Dimemas tools): three text files,
// <name>.prv (the trace), <name>.pcf (names of states and events) and
// <name>.row (names of the CPUs, nodes and threads). One application, one
// task per rank, one thread per task, one CPU per rank grouped by host.
//
// Records written (times in ns, the corrected global time relative to the
// run's first event, so the .prv starts at 0):
//
//	1:cpu:1:task:1:begin:end:state            state: running outside MPI,
//	                                          and one state per class of MPI call
//	2:cpu:1:task:1:time:type:value            MPI call entry (value = op) and exit (0)
//	3:cpu:1:task:1:lsend:psend:cpu:1:task:1:lrecv:precv:size:tag   a matched message
//
// Paraver needs the records in time order; the merged stream is ordered
// by entry only, and the running state before a call starts at the
// previous call's exit. So the lines go to a temporary file first and are
// put in order by an external merge sort at Close (sorted runs of
// prvRunLines lines, then a k-way merge): memory stays bounded whatever the
// run's length.

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// Paraver state values (the usual MPI state semantics of Paraver's
// configuration files).
const (
	prvIdle      = 0
	prvRunning   = 1
	prvWaitMsg   = 3 // blocking point-to-point / completion
	prvSync      = 5 // barrier
	prvTestProbe = 6
	prvSend      = 9  // send / start of a nonblocking operation
	prvGroupComm = 10 // collective
	prvOverhead  = 7  // gclock's own flushes
)

// Paraver event types for MPI calls (value: trace.Op, 0 at exit).
const (
	prvTypeP2P  = 50000001
	prvTypeColl = 50000002
	prvTypeMPI  = 50000003
)

// prvRecord is one line of the .prv body with its sort key.
type prvRecord struct {
	t    int64
	kind byte // '1' state, '2' event, '3' communication: at equal times in that order
	line string
}

func prvLess(a, b prvRecord) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.kind < b.kind
}

// prvRunLines is how many lines one sorted run holds in memory.
var prvRunLines = 1 << 19

// Paraver streams a run into a temporary body file; Close writes the
// three Paraver files.
type Paraver struct {
	dir, name string
	ranks     []RankMeta
	origin    float64 // relative global time of the first event (set at the first Add)
	started   bool
	body      *os.File
	w         *bufio.Writer
	cpu       map[int32]int   // Paraver CPU id per rank (ranks grouped by host)
	lastEnd   map[int32]int64 // end of the rank's last call (for running states)
	ops       map[trace.Op]bool
	end       int64
	msgs      []datamodel.Message
	n         int64
	err       error
}

// NewParaver prepares <dir>/<name>.prv, .pcf and .row. ranks lists every
// rank with its host.
func NewParaver(dir, name string, ranks []RankMeta) (*Paraver, error) {
	f, err := os.CreateTemp(dir, "."+name+".prv-body-*")
	if err != nil {
		return nil, fmt.Errorf("viz: paraver: %w", err)
	}
	p := &Paraver{dir: dir, name: name, ranks: ranks, body: f, w: bufio.NewWriterSize(f, 1<<20),
		cpu: map[int32]int{}, lastEnd: map[int32]int64{}, ops: map[trace.Op]bool{}}
	names, per := p.hosts()
	for _, h := range names {
		for _, r := range per[h] {
			p.cpu[r] = len(p.cpu) + 1
		}
	}
	return p, nil
}

func (p *Paraver) rel(t float64) int64 {
	v := math.Round(t - p.origin)
	if v < 0 {
		return 0
	}
	return int64(v)
}

// ids: Paraver numbers CPUs, tasks and threads from 1; CPUs in host
// order (as the .row lists them), tasks in rank order.
func (p *Paraver) ids(rank int32) (cpu, task int) {
	cpu = p.cpu[rank]
	if cpu == 0 { // a rank missing from the list: after the known ones
		cpu = len(p.cpu) + 1
		p.cpu[rank] = cpu
	}
	return cpu, int(rank) + 1
}

func (p *Paraver) put(t int64, line string) {
	if t > p.end {
		p.end = t
	}
	if _, err := p.w.WriteString(line); err != nil && p.err == nil {
		p.err = fmt.Errorf("viz: paraver: %w", err)
	}
	p.n++
}

// stateOf classifies an MPI call for the state records.
func stateOf(op trace.Op) int {
	switch {
	case op == trace.OpBarrier || op == trace.OpIbarrier:
		return prvSync
	case op.IsCollective():
		return prvGroupComm
	case op.IsRecorder():
		return prvOverhead
	case op == trace.OpIprobe || op == trace.OpImprobe || op == trace.OpPolls || op >= trace.OpTest && op <= trace.OpTestsome:
		return prvTestProbe
	case op.IsSend() || op.IsRequestStart() || op.IsNonblockingCollective() || op.IsPersistentInit():
		return prvSend
	}
	return prvWaitMsg
}

func typeOf(op trace.Op) int {
	switch {
	case op.IsCollective() || op.IsNonblockingCollective():
		return prvTypeColl
	case op.IsPointToPoint():
		return prvTypeP2P
	}
	return prvTypeMPI
}

// Add writes one MPI call (continuation records of one call are skipped).
func (p *Paraver) Add(ev *datamodel.GEvent) error {
	if p.err != nil {
		return p.err
	}
	if ev.Continuation() {
		return nil
	}
	if !p.started {
		p.started = true
		p.origin = ev.Enter // the stream is ordered by entry
	}
	enter, exit := p.rel(ev.Enter), p.rel(ev.Exit)
	if exit < enter {
		exit = enter
	}
	cpu, task := p.ids(ev.Rank)
	last, ok := p.lastEnd[ev.Rank]
	if !ok {
		last = 0
	}
	if enter > last {
		p.put(last, fmt.Sprintf("1:%d:1:%d:1:%d:%d:%d\n", cpu, task, last, enter, prvRunning))
	}
	p.lastEnd[ev.Rank] = max(last, exit)
	p.ops[ev.Op] = true
	if exit > enter {
		p.put(enter, fmt.Sprintf("1:%d:1:%d:1:%d:%d:%d\n", cpu, task, enter, exit, stateOf(ev.Op)))
	}
	ty := typeOf(ev.Op)
	p.put(enter, fmt.Sprintf("2:%d:1:%d:1:%d:%d:%d\n", cpu, task, enter, ty, int(ev.Op)))
	p.put(exit, fmt.Sprintf("2:%d:1:%d:1:%d:%d:0\n", cpu, task, exit, ty))
	return p.err
}

// AddMessages records matched messages as communication records (logical
// send = the send call's entry, physical send = its exit; logical receive
// = entry of the call that completed the receive, physical = its exit).
func (p *Paraver) AddMessages(msgs []datamodel.Message) { p.msgs = append(p.msgs, msgs...) }

// Close writes <name>.prv (header, then every record in time order),
// <name>.pcf and <name>.row, and removes the temporary files.
func (p *Paraver) Close() error {
	defer os.Remove(p.body.Name())
	defer p.body.Close()
	if p.err != nil {
		return p.err
	}
	for _, m := range p.msgs {
		scpu, stask := p.ids(m.Src)
		rcpu, rtask := p.ids(m.Dst)
		ls, ps, lr, pr := p.rel(m.SendStart), p.rel(m.SendExit), p.rel(m.RecvEnter), p.rel(m.RecvExit)
		p.end = max(p.end, pr) // the trace ends after the last receive
		p.put(ls, fmt.Sprintf("3:%d:1:%d:1:%d:%d:%d:1:%d:1:%d:%d:%d:%d\n", scpu, stask, ls, ps, rcpu, rtask, lr, pr, m.Bytes, m.Tag))
	}
	if p.err != nil {
		return p.err
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("viz: paraver: %w", err)
	}
	runs, err := p.sortedRuns()
	defer func() {
		for _, r := range runs {
			r.Close()
			os.Remove(r.Name())
		}
	}()
	if err != nil {
		return err
	}
	prv, err := os.Create(p.path(".prv"))
	if err != nil {
		return fmt.Errorf("viz: paraver: %w", err)
	}
	defer prv.Close()
	out := bufio.NewWriterSize(prv, 1<<20)
	if err := p.writeHeader(out); err != nil {
		return err
	}
	if err := mergeRuns(out, runs); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("viz: paraver: %s: %w", p.path(".prv"), err)
	}
	if err := os.WriteFile(p.path(".pcf"), []byte(p.pcf()), 0o644); err != nil {
		return fmt.Errorf("viz: paraver: %w", err)
	}
	if err := os.WriteFile(p.path(".row"), []byte(p.row()), 0o644); err != nil {
		return fmt.Errorf("viz: paraver: %w", err)
	}
	return nil
}

func parseRecord(line string) prvRecord {
	return prvRecord{t: prvTime(line), kind: line[0], line: line}
}

// sortedRuns reads the body back in runs of prvRunLines lines, sorts each
// and writes it to a temporary file.
func (p *Paraver) sortedRuns() ([]*os.File, error) {
	if _, err := p.body.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("viz: paraver: %w", err)
	}
	in := bufio.NewReaderSize(p.body, 1<<20)
	var runs []*os.File
	buf := make([]prvRecord, 0, min(prvRunLines, int(p.n)+1))
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		sort.SliceStable(buf, func(i, j int) bool { return prvLess(buf[i], buf[j]) })
		f, err := os.CreateTemp(p.dir, "."+p.name+".prv-run-*")
		if err != nil {
			return fmt.Errorf("viz: paraver: %w", err)
		}
		runs = append(runs, f)
		w := bufio.NewWriterSize(f, 1<<20)
		for _, r := range buf {
			w.WriteString(r.line)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("viz: paraver: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("viz: paraver: %w", err)
		}
		buf = buf[:0]
		return nil
	}
	for {
		line, err := in.ReadString('\n')
		if line != "" {
			buf = append(buf, parseRecord(line))
			if len(buf) == prvRunLines {
				if ferr := flush(); ferr != nil {
					return runs, ferr
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return runs, fmt.Errorf("viz: paraver: reading the body back: %w", err)
		}
	}
	return runs, flush()
}

// prvMerge is the k-way merge heap over sorted runs.
type prvMerge struct {
	recs []prvRecord
	src  []*bufio.Reader
}

func (h *prvMerge) Len() int           { return len(h.recs) }
func (h *prvMerge) Less(i, j int) bool { return prvLess(h.recs[i], h.recs[j]) }
func (h *prvMerge) Swap(i, j int) {
	h.recs[i], h.recs[j] = h.recs[j], h.recs[i]
	h.src[i], h.src[j] = h.src[j], h.src[i]
}
func (h *prvMerge) Push(x any) {} // unused: runs enter through heap.Init
func (h *prvMerge) Pop() any {
	n := len(h.recs) - 1
	h.recs, h.src = h.recs[:n], h.src[:n]
	return nil
}

func mergeRuns(out *bufio.Writer, runs []*os.File) error {
	h := &prvMerge{}
	for _, f := range runs {
		r := bufio.NewReaderSize(f, 256<<10)
		if line, err := r.ReadString('\n'); line != "" {
			h.recs, h.src = append(h.recs, parseRecord(line)), append(h.src, r)
		} else if err != nil && err != io.EOF {
			return fmt.Errorf("viz: paraver: %w", err)
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		out.WriteString(h.recs[0].line)
		line, err := h.src[0].ReadString('\n')
		if line != "" {
			h.recs[0] = parseRecord(line)
			heap.Fix(h, 0)
			continue
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("viz: paraver: %w", err)
		}
		heap.Pop(h)
	}
	return nil
}

func (p *Paraver) path(ext string) string { return p.dir + string(os.PathSeparator) + p.name + ext }

// prvTime is the time field of a body line (field 6 of states and events).
func prvTime(line string) int64 {
	f := strings.SplitN(line, ":", 7)
	if len(f) < 7 {
		return 0
	}
	t, _ := strconv.ParseInt(f[5], 10, 64)
	return t
}

// hosts groups ranks per host in first-seen order.
func (p *Paraver) hosts() (names []string, per map[string][]int32) {
	per = map[string][]int32{}
	for _, r := range p.ranks {
		h := r.Host
		if h == "" {
			h = "node"
		}
		if _, ok := per[h]; !ok {
			names = append(names, h)
		}
		per[h] = append(per[h], r.Rank)
	}
	return names, per
}

// writeHeader writes "#Paraver (dd/mm/yy at hh:mm):ftime_ns:nodes(cpus,...):1:ntasks(1:node,...)".
func (p *Paraver) writeHeader(w io.Writer) error {
	names, per := p.hosts()
	node := map[int32]int{}
	var cpus []string
	for i, h := range names {
		cpus = append(cpus, strconv.Itoa(len(per[h])))
		for _, r := range per[h] {
			node[r] = i + 1
		}
	}
	var tasks []string
	for _, r := range p.ranks {
		tasks = append(tasks, fmt.Sprintf("1:%d", node[r.Rank]))
	}
	_, err := fmt.Fprintf(w, "#Paraver (%s):%d_ns:%d(%s):1:%d(%s)\n", time.Now().UTC().Format("02/01/06 at 15:04"),
		p.end, len(names), strings.Join(cpus, ","), len(p.ranks), strings.Join(tasks, ","))
	if err != nil {
		return fmt.Errorf("viz: paraver: %w", err)
	}
	return nil
}

func (p *Paraver) pcf() string {
	var b strings.Builder
	b.WriteString("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\nLOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\nNUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n")
	b.WriteString("DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\n")
	b.WriteString("STATES\n")
	for _, s := range []struct {
		v    int
		name string
	}{{prvIdle, "Idle"}, {prvRunning, "Running"}, {prvWaitMsg, "Waiting a message"}, {prvSync, "Synchronization"},
		{prvTestProbe, "Test/Probe"}, {prvOverhead, "Tracing overhead (gclock flush)"}, {prvSend, "Immediate send / start"}, {prvGroupComm, "Group Communication"}} {
		fmt.Fprintf(&b, "%-4d %s\n", s.v, s.name)
	}
	b.WriteString("\n\nSTATES_COLOR\n0    {117,195,255}\n1    {0,0,255}\n3    {255,0,0}\n5    {255,0,174}\n6    {179,0,0}\n7    {139,121,177}\n9    {0,255,0}\n10   {255,144,26}\n\n\n")
	ops := make([]trace.Op, 0, len(p.ops))
	for op := range p.ops {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	for _, ty := range []struct {
		t    int
		name string
	}{{prvTypeP2P, "MPI Point-to-point"}, {prvTypeColl, "MPI Collective Comm"}, {prvTypeMPI, "MPI Other"}} {
		fmt.Fprintf(&b, "EVENT_TYPE\n0    %d    %s\nVALUES\n0      End\n", ty.t, ty.name)
		for _, op := range ops {
			if typeOf(op) == ty.t {
				fmt.Fprintf(&b, "%-6d %s\n", int(op), op.String())
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

func (p *Paraver) row() string {
	names, per := p.hosts()
	var b strings.Builder
	fmt.Fprintf(&b, "LEVEL CPU SIZE %d\n", len(p.ranks))
	for _, h := range names {
		for i := range per[h] {
			fmt.Fprintf(&b, "%d.%s\n", i+1, h)
		}
	}
	fmt.Fprintf(&b, "\nLEVEL NODE SIZE %d\n", len(names))
	for _, h := range names {
		b.WriteString(h + "\n")
	}
	fmt.Fprintf(&b, "\nLEVEL THREAD SIZE %d\n", len(p.ranks))
	for _, r := range p.ranks {
		fmt.Fprintf(&b, "THREAD 1.%d.1 (rank %d)\n", r.Rank+1, r.Rank)
	}
	return b.String()
}
