package rundir

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gclock/gclock/trace"
)

var errEOF = io.EOF

// ErrKind classifies a load failure so the command can choose its exit code.
type ErrKind int

// Load failure kinds.
const (
	// ErrNoData: nothing usable (empty directory, no readable rank file).
	ErrNoData ErrKind = iota + 1
	// ErrMixedRuns: the directory holds files of more than one run.
	ErrMixedRuns
)

// LoadError is returned by Load when no analysis is possible. Msg is a
// complete, user-facing sentence naming the files involved.
type LoadError struct {
	Kind ErrKind
	Msg  string
	// Problems lists per-file problems found on the way (may be empty).
	Problems []string
}

func (e *LoadError) Error() string { return e.Msg }

// MaxWorldSize bounds the world size and ranks the analysis believes a header
// about (headers are untrusted input).
const MaxWorldSize = 1 << 20

// RankInput is one usable rank file of a run.
type RankInput struct {
	Path string // as found in the run directory
	Rank int
	Meta *RankMeta
	Src  Source
	// knownDamage is len(Meta.Damage) when the file was opened.
	knownDamage int
}

// Run is a loaded run directory: every usable rank file of one job,
// checked for consistency. Problems that do not prevent analysis (missing
// ranks, damaged chunks, unreadable files) are listed in Problems.
type Run struct {
	Dir       string
	JobID     string
	WorldSize int
	Ranks     []*RankInput // sorted by rank
	Missing   []int        // world ranks without a usable file
	Problems  []string
	// TotalBytes is the summed size of the usable rank files.
	TotalBytes int64
}

// Close closes every source that has a Close method.
func (r *Run) Close() error {
	var first error
	for _, ri := range r.Ranks {
		if c, ok := ri.Src.(io.Closer); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// FirstStart returns the input of the lowest rank that recorded its
// MPI_Init exit (Header.StartNS), whose start is the run's reference
// start (merge.RunOrigin); nil when no rank recorded one, or r is nil.
func (r *Run) FirstStart() *RankInput {
	if r == nil {
		return nil
	}
	for _, ri := range r.Ranks {
		if ri.Meta.Header.StartNS != 0 {
			return ri
		}
	}
	return nil
}

// Rank returns the input of world rank r, or nil.
func (r *Run) Rank(rank int) *RankInput {
	i := sort.Search(len(r.Ranks), func(i int) bool { return r.Ranks[i].Rank >= rank })
	if i < len(r.Ranks) && r.Ranks[i].Rank == rank {
		return r.Ranks[i]
	}
	return nil
}

// Load opens every *.gct file in dir with open (OpenTrace when nil) and
// checks that they form one run. Unreadable files, missing ranks and damaged
// chunks are recorded as problems; a *LoadError is returned when no file is
// usable or when files of different runs are mixed.
func Load(dir string, open Opener) (*Run, error) {
	if open == nil {
		open = OpenTrace
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &LoadError{Kind: ErrNoData, Msg: fmt.Sprintf("cannot read run directory: %v", err)}
	}
	var files []string
	var subRuns []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			if m, _ := filepath.Glob(filepath.Join(dir, name, "*.gct")); len(m) > 0 {
				subRuns = append(subRuns, name)
			}
			continue
		}
		if strings.HasSuffix(name, ".gct") {
			files = append(files, name)
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		msg := fmt.Sprintf("%s: no trace files (rank-*.gct) found", dir)
		if len(subRuns) > 0 {
			msg += fmt.Sprintf("; it holds %d run director%s (%s): pass one of them",
				len(subRuns), plural(len(subRuns), "y", "ies"), strings.Join(FirstN(subRuns, 5), ", "))
		}
		return nil, &LoadError{Kind: ErrNoData, Msg: msg}
	}

	run := &Run{Dir: dir}
	byRank := map[int]*RankInput{}
	jobFile := map[string]string{} // job id -> first file with it
	var jobOrder []string
	shared := map[uint64][]int32{}
	var lastConfig map[string]string
	var lastParams []map[string]string // by epoch, the previous file's
	strs := interner{}
	for _, name := range files {
		path := filepath.Join(dir, name)
		src, err := openSafe(open, path)
		if err != nil {
			run.Problems = append(run.Problems, fmt.Sprintf("%s: %v; file skipped", name, err))
			continue
		}
		m := src.Meta()
		if m == nil {
			CloseSource(src)
			run.Problems = append(run.Problems, fmt.Sprintf("%s: no metadata; file skipped", name))
			continue
		}
		h := &m.Header
		if h.Rank < 0 || h.Rank >= MaxWorldSize || (h.WorldSize > 0 && h.Rank >= h.WorldSize) {
			CloseSource(src)
			run.Problems = append(run.Problems, fmt.Sprintf("%s: rank %d outside world size %d; file skipped", name, h.Rank, h.WorldSize))
			continue
		}
		if _, ok := jobFile[h.JobID]; !ok {
			jobFile[h.JobID] = name
			jobOrder = append(jobOrder, h.JobID)
		}
		if prev, dup := byRank[h.Rank]; dup {
			CloseSource(src)
			run.Problems = append(run.Problems, fmt.Sprintf("%s: rank %d already read from %s; file skipped", name, h.Rank, filepath.Base(prev.Path)))
			continue
		}
		shareMembers(m, shared)
		// Ranks of one run record the same settings: one map for all of
		// them, not one a rank (≈ 1.3 kB a rank, 20 MB at 16,384 ranks).
		// Read-only from here on, like the shared member lists.
		if len(h.Config) > 0 && maps.Equal(h.Config, lastConfig) {
			h.Config = lastConfig
		} else {
			lastConfig = h.Config
		}
		// So do their sync epochs' parameters (≈ 0.3 kB an epoch).
		for i := range m.Epochs {
			if e := &m.Epochs[i]; i < len(lastParams) && len(e.Params) > 0 && maps.Equal(e.Params, lastParams[i]) {
				e.Params = lastParams[i]
			}
		}
		lastParams = lastParams[:0]
		for _, e := range m.Epochs {
			lastParams = append(lastParams, e.Params)
		}
		strs.meta(m)
		if ts, ok := src.(*traceSource); ok {
			ts.shareHeader()
		}
		ri := &RankInput{Path: path, Rank: h.Rank, Meta: m, Src: src, knownDamage: len(m.Damage)}
		byRank[h.Rank] = ri
		if size, ok := src.(sizer); ok {
			run.TotalBytes += size.fileSize()
		} else if st, err := os.Stat(path); err == nil {
			run.TotalBytes += st.Size()
		}
	}
	if len(jobOrder) > 1 {
		for _, ri := range byRank {
			CloseSource(ri.Src)
		}
		a, b := jobOrder[0], jobOrder[1]
		return nil, &LoadError{Kind: ErrMixedRuns, Msg: fmt.Sprintf(
			"%s mixes runs: %s has job id %q but %s has job id %q; point tracemerge at one run directory",
			dir, jobFile[a], a, jobFile[b], b), Problems: run.Problems}
	}
	if len(byRank) == 0 {
		msg := fmt.Sprintf("%s: no usable trace file", dir)
		if len(run.Problems) > 0 {
			msg += ": " + strings.Join(FirstN(run.Problems, 5), "; ")
		}
		return nil, &LoadError{Kind: ErrNoData, Msg: msg, Problems: run.Problems}
	}
	run.JobID = jobOrder[0]
	for _, ri := range byRank {
		run.Ranks = append(run.Ranks, ri)
		if ri.Meta.Header.WorldSize > run.WorldSize {
			run.WorldSize = ri.Meta.Header.WorldSize
		}
	}
	sort.Slice(run.Ranks, func(i, j int) bool { return run.Ranks[i].Rank < run.Ranks[j].Rank })
	for _, ri := range run.Ranks {
		if ws := ri.Meta.Header.WorldSize; ws != run.WorldSize {
			run.Problems = append(run.Problems, fmt.Sprintf("%s: world size %d, other files say %d", filepath.Base(ri.Path), ws, run.WorldSize))
		}
	}
	if run.WorldSize > MaxWorldSize {
		run.Problems = append(run.Problems, fmt.Sprintf("implausible world size %d in the headers: using the highest rank found", run.WorldSize))
		run.WorldSize = 0
	}
	if run.WorldSize < len(run.Ranks) || run.WorldSize <= run.Ranks[len(run.Ranks)-1].Rank {
		run.WorldSize = run.Ranks[len(run.Ranks)-1].Rank + 1
	}
	for r := 0; r < run.WorldSize; r++ {
		if byRank[r] == nil {
			run.Missing = append(run.Missing, r)
		}
	}
	if len(run.Missing) > 0 {
		run.Problems = append(run.Problems, fmt.Sprintf("%d of %d ranks missing: %s %s (no usable %s%s); instances on their communicators lack them",
			len(run.Missing), run.WorldSize, plural(len(run.Missing), "rank", "ranks"), RankRanges(run.Missing, ", "),
			trace.RankFileName(run.Missing[0]), plural(len(run.Missing), "", ", ...")))
	}
	var notes []RankNote
	for _, ri := range run.Ranks {
		notes = append(notes, metaNotes(ri)...)
	}
	run.Problems = append(run.Problems, noteLines(notes)...)
	return run, nil
}

// shareMembers makes the member lists of m's communicators the ones an
// earlier file of the run gave for the same communicator (by id), where
// they are equal: every member's file holds the list, so a run of P ranks
// would otherwise keep P copies of MPI_COMM_WORLD's P members (10,000
// ranks: 400 MB for the world alone). The lists are read-only.
func shareMembers(m *RankMeta, shared map[uint64][]int32) {
	for i := range m.Comms {
		c := &m.Comms[i]
		if len(c.Members) < 2 || c.ID == trace.CommSelfID {
			continue
		}
		s, ok := shared[c.ID]
		switch {
		case !ok:
			shared[c.ID] = c.Members
		case SameMembers(s, c.Members):
			c.Members = s
		}
	}
}

// sizer is a Source that knows its file's size (a trace file's reader:
// the size it found when it opened the file), so that Load need not ask
// the file system again (a system call a rank).
type sizer interface{ fileSize() int64 }

// interner keeps one copy of each string the ranks' metadata repeat: the
// job id, host, executable, arguments, MPI library, timer, objects' paths,
// the sync algorithm and the communicators' kinds are the same in most
// ranks' files, and each file's copy was ≈ 200 bytes a rank (3.2 MB at
// 16,384 ranks). Strings are immutable, so sharing them changes nothing
// a reader of the metadata can see.
type interner map[string]string

func (in interner) of(s string) string {
	if s == "" {
		return s
	}
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

// meta makes m's repeated strings the interner's copies.
func (in interner) meta(m *RankMeta) {
	h := &m.Header
	h.JobID, h.Host, h.Exe, h.MPILib = in.of(h.JobID), in.of(h.Host), in.of(h.Exe), in.of(h.MPILib)
	h.Timer.Name = in.of(h.Timer.Name)
	for i := range h.Args {
		h.Args[i] = in.of(h.Args[i])
	}
	for i := range h.Objects {
		o := &h.Objects[i]
		o.Path, o.BuildID = in.of(o.Path), in.of(o.BuildID)
	}
	if h.Inject != nil {
		h.Inject.Spec = in.of(h.Inject.Spec)
	}
	for i := range m.Epochs {
		m.Epochs[i].Algorithm = in.of(m.Epochs[i].Algorithm)
	}
	for i := range m.Comms {
		m.Comms[i].Kind = in.of(m.Comms[i].Kind)
	}
}

// metaProblems lists what the metadata of one rank says is wrong.
func metaProblems(ri *RankInput) []string { return noteLines(metaNotes(ri)) }

// metaNotes lists what the metadata of one rank says is wrong, as notes
// that noteLines says once for all the ranks they concern.
func metaNotes(ri *RankInput) []RankNote {
	var p []RankNote
	name := filepath.Base(ri.Path)
	m := ri.Meta
	text := func(s string) { p = append(p, RankNote{Rank: ri.Rank, Text: s}) }
	for _, d := range m.Damage {
		text(damageString(ri.Path, d))
	}
	if m.Footer == nil {
		switch l := m.Live; {
		case l == nil:
			p = append(p, RankNote{kind: noteNoFooter, Rank: ri.Rank,
				Text: fmt.Sprintf("%s: no footer: rank %d did not finish cleanly (no live sidecar: events after its last flush are lost)", name, ri.Rank)})
		default:
			s := fmt.Sprintf("%s: rank %d ended abnormally (no footer): %d events recovered from %s", name, ri.Rank, l.Events, filepath.Base(l.Path))
			last := math.NaN()
			if l.Events > 0 && m.Header.StartNS != 0 {
				last = float64(l.LastNS-m.Header.StartNS) / 1e9
				s += fmt.Sprintf(", the last recorded call ending %.3f s after its MPI_Init", last)
			}
			if l.Err != "" {
				text(s + "; " + l.Err)
				break
			}
			p = append(p, RankNote{kind: noteAbnormal, Rank: ri.Rank, Text: s, n: int64(l.Events), last: last})
		}
	} else if m.Footer.Reason == "error" {
		s := fmt.Sprintf("%s: rank %d's recording stopped early", name, ri.Rank)
		if m.Footer.EndNS != 0 && m.Header.StartNS != 0 {
			s += fmt.Sprintf(", %.3f s after its MPI_Init", float64(m.Footer.EndNS-m.Header.StartNS)/1e9)
		}
		s += " (the application went on; its later calls are not in the trace)"
		if m.Footer.Stopped != "" {
			s += ": " + m.Footer.Stopped
		}
		text(s)
	}
	if m.Footer != nil && m.Footer.Dropped > 0 {
		p = append(p, RankNote{kind: noteDropped, Rank: ri.Rank, n: int64(m.Footer.Dropped),
			Text: fmt.Sprintf("%s: the recorder dropped %d events (buffer exhaustion)", name, m.Footer.Dropped)})
	}
	if len(m.Epochs) == 0 {
		p = append(p, RankNote{kind: noteNoEpoch, Rank: ri.Rank,
			Text: fmt.Sprintf("%s: no sync epoch: rank %d's times are not corrected (raw)", name, ri.Rank)})
	}
	return p
}

// damageString words one damaged region; path is the file as opened (the
// reader's message may start with it), the message names the base name.
func damageString(path string, d trace.Damage) string {
	file := filepath.Base(path)
	msg := d.Err
	if msg == "" {
		msg = fmt.Sprintf("chunk %d at byte %d: damaged", d.Chunk, d.Offset)
	}
	msg = strings.TrimPrefix(msg, path+": ")
	msg = strings.TrimPrefix(msg, file+": ")
	msg = file + ": " + msg
	if d.Chunk >= 0 {
		return msg + "; its events are lost, the rest of the file is used"
	}
	return msg + "; region skipped"
}

// openSafe opens a file, turning a panic in the reader into an error so a
// hostile file can never crash the command.
func openSafe(open Opener, path string) (src Source, err error) {
	defer func() {
		if r := recover(); r != nil {
			src, err = nil, fmt.Errorf("reader failed: %v", r)
		}
	}()
	src, err = open(path)
	if err != nil {
		var fe *trace.FormatError
		if errors.As(err, &fe) { // the caller names the file; keep the rest
			msg := fmt.Sprintf("at byte %d: %s", fe.Offset, fe.Msg)
			if fe.Err != nil {
				msg += ": " + fe.Err.Error()
			}
			return nil, errors.New(msg)
		}
		return nil, err
	}
	if src == nil {
		return nil, errors.New("reader returned nothing")
	}
	return src, nil
}

// rankFileName is the file name the recorder gives world rank r
// (trace.RankFileName).
func rankFileName(r int) string { return fmt.Sprintf("rank-%05d.gct", r) }

func CloseSource(s Source) {
	if c, ok := s.(io.Closer); ok {
		_ = c.Close()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func FirstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	out := append([]string(nil), s[:n]...)
	return append(out, fmt.Sprintf("... (%d more)", len(s)-n))
}

// RankRanges formats ranks compactly, runs of consecutive ranks as
// ranges joined by sep: RankRanges([]int{3, 5, 6, 7, 12}, ", ") is
// "3, 5-7, 12".
func RankRanges[T ~int | ~int32](r []T, sep string) string {
	var b strings.Builder
	for i := 0; i < len(r); {
		j := i
		for j+1 < len(r) && r[j+1] == r[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", r[i], r[j])
		} else {
			fmt.Fprintf(&b, "%d", r[i])
		}
		i = j + 1
	}
	return b.String()
}

// SameMembers reports whether two communicators' member lists are equal
// (Load makes equal lists of one communicator share their storage:
// shareMembers).
func SameMembers(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] { // shared by Load (shareMembers)
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
