package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/gclock/gclock/trace"
)

// rankFile is what the benchmarks need from one rank's trace file.
type rankFile struct {
	Path   string
	Bytes  int64
	Header trace.Header
	Epochs []trace.Epoch
	Footer *trace.Footer // nil when the file was not closed cleanly
	Events int           // events actually read
	// ChunkBytes is the compressed payload of the event chunks (frame
	// headers, file header, comms, epochs and footer excluded).
	ChunkBytes int64
	Chunks     int // intact event chunks (one per buffer flush)
	ByOp       map[trace.Op]int
}

// traceFiles lists the rank files (*.gct) under dir, in name order.
func traceFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && filepath.Ext(p) == ".gct" {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	sort.Strings(files)
	return files, err
}

// readTraceDir reads every rank file under dir.
func readTraceDir(dir string) ([]rankFile, error) {
	files, err := traceFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no *.gct rank files under " + dir)
	}
	out := make([]rankFile, 0, len(files))
	for _, p := range files {
		f, err := readRankFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// readRankFile reads one file's metadata and counts its events, streaming.
func readRankFile(path string) (rankFile, error) {
	r, err := trace.Open(path)
	if err != nil {
		return rankFile{}, err
	}
	defer r.Close()
	m := r.Meta()
	f := rankFile{Path: path, Bytes: m.Size, Header: m.Header, Epochs: m.Epochs, Footer: m.Footer}
	f.Chunks = len(m.Chunks)
	f.ByOp = map[trace.Op]int{}
	for _, ci := range m.Chunks {
		f.ChunkBytes += int64(ci.Bytes)
	}
	var chunk []trace.Event
	for {
		chunk, err = r.NextChunk(chunk)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return f, err
		}
		f.Events += len(chunk)
		for i := range chunk {
			f.ByOp[chunk[i].Op]++
		}
	}
	if len(m.Damage) > 0 {
		return f, fmt.Errorf("%s: %d damaged regions, first: %+v", path, len(m.Damage), m.Damage[0])
	}
	return f, nil
}

// trueError is the exact error, in ns, of rank f's model of epoch e at
// recorded local time r: the model's global time minus the time rank 0's
// (injected) clock showed at the same true instant. All ranks of one machine
// share one physical clock, so the injection parameters are the whole truth.
func trueError(f, ref *rankFile, e trace.Epoch, r int64) float64 {
	t := f.Header.Inject.TrueTime(r)
	refRecorded := t
	if in := ref.Header.Inject; in != nil {
		refRecorded = t*(1+in.DriftPPM*1e-6) + in.OffsetNS
	}
	return e.Model.Global(r) - refRecorded
}

// syncFigures summarises epoch idx of a run: the longest sync duration over
// ranks, the largest |self-check residual| rank 0 recorded, and the largest
// |true error| at each rank's sync end (NaN when no rank was injected).
type syncFigures struct {
	DurationNS, CheckMaxNS, TrueMaxNS float64
	Checks, Ranks                     int
	Algorithm                         string
}

func summariseEpoch(files []rankFile, idx int) (syncFigures, bool) {
	s := syncFigures{TrueMaxNS: math.NaN()}
	var ref *rankFile
	for i := range files {
		if files[i].Header.Rank == 0 {
			ref = &files[i]
		}
	}
	found := false
	for i := range files {
		f := &files[i]
		for _, e := range f.Epochs {
			if e.Index != idx {
				continue
			}
			found = true
			s.Ranks++
			s.Algorithm = e.Algorithm
			s.DurationNS = max(s.DurationNS, float64(e.EndNS-e.StartNS))
			for _, c := range e.Check {
				s.Checks++
				s.CheckMaxNS = max(s.CheckMaxNS, math.Abs(c.OffsetNS))
			}
			if ref != nil && f.Header.Inject != nil {
				te := math.Abs(trueError(f, ref, e, e.EndNS))
				if math.IsNaN(s.TrueMaxNS) || te > s.TrueMaxNS {
					s.TrueMaxNS = te
				}
			}
		}
	}
	return s, found
}

// extrapolatedError is the largest |true error| of each rank's epoch-0
// model evaluated at the start of its epoch 1 (MPI_Finalize): how far the
// init-only correction has drifted by the end of the run. It also returns
// the longest time between the two epochs, ns. ok is false without epoch 1
// or injection.
func extrapolatedError(files []rankFile) (errNS, afterNS float64, ok bool) {
	var ref *rankFile
	for i := range files {
		if files[i].Header.Rank == 0 {
			ref = &files[i]
		}
	}
	if ref == nil {
		return 0, 0, false
	}
	for i := range files {
		f := &files[i]
		var e0, e1 *trace.Epoch
		for j := range f.Epochs {
			switch f.Epochs[j].Index {
			case 0:
				e0 = &f.Epochs[j]
			case 1:
				e1 = &f.Epochs[j]
			}
		}
		if e0 == nil || e1 == nil || f.Header.Inject == nil {
			continue
		}
		ok = true
		errNS = max(errNS, math.Abs(trueError(f, ref, *e0, e1.StartNS)))
		afterNS = max(afterNS, float64(e1.StartNS-e0.EndNS))
	}
	return errNS, afterNS, ok
}
