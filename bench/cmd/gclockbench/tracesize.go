package main

// Section 3: trace size per event.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ---------------------------------------------------------------- 3

func benchTraceSize(c *Config, rep *Report) []Row {
	const sec = "3"
	var rows []Row
	raw := "24–48 B/event raw records of common tracers"
	name := "trace size, MPI_Barrier(SELF) microbenchmark"
	switch {
	case c.libErr() != nil:
		rows = append(rows, unavailable(sec, name, c.libErr()))
	case c.microTraceDir == "":
		rows = append(rows, unavailable(sec, name, errors.New("no traced microbenchmark run (section 1 did not run or failed)")))
	default:
		events, how := c.microEvents, "events = calls the program made"
		files, err := readTraceDir(c.microTraceDir)
		chunkNote := ""
		if err == nil {
			n, cb := 0, int64(0)
			for _, f := range files {
				n += f.Events
				cb += f.ChunkBytes
			}
			events, how = float64(n), "events read back from the trace"
			chunkNote = fmt.Sprintf("; event chunks alone %s B/event", num(float64(cb)/events))
		}
		rows = append(rows, Row{Section: sec, Name: name,
			Value: fmt.Sprintf("%s B/event", num(c.microBytes/events)), Baseline: raw,
			Ratio: ratio(c.microBytes/events, 24) + " of 24 B",
			Notes: fmt.Sprintf("%s bytes on disk for %s events (%s)%s; identical calls back to back, the best case", num(c.microBytes), num(events), how, chunkNote)})
		rows = append(rows, bufferRow(sec, files, err))
	}
	rows = append(rows, amgTraceSize(c, sec)...)
	return rows
}

func bufferRow(sec string, files []rankFile, err error) Row {
	name := "buffer memory per rank (per thread)"
	if err != nil {
		return unavailable(sec, name, fmt.Errorf("needs the footer: %w", err))
	}
	for _, f := range files {
		if f.Footer != nil && f.Footer.BufferBytes > 0 {
			// Each thread buffer is two halves of GCLOCK_BUFFER records of
			// 72 bytes (cshim/gclock.h, docs/explanation/recorder.md "Durability").
			const record = 72
			per := f.Footer.BufferBytes / (2 * record)
			how := "default"
			if _, set := f.Header.Config["GCLOCK_BUFFER"]; set {
				how = "set"
			}
			return Row{Section: sec, Name: name, Value: fmt.Sprintf("%s KiB", num(float64(f.Footer.BufferBytes)/1024)),
				Notes: fmt.Sprintf("Footer.BufferBytes of the microbenchmark trace: two halves of GCLOCK_BUFFER=%d events (%s) × %d B per in-memory record, per thread that calls MPI (file-backed: page cache of the rank's sidecar)",
					per, how, record)}
		}
	}
	return unavailable(sec, name, errors.New("footer lacks BufferBytes"))
}

// amgTraceSize builds and runs examples/amglike under the preload.
func amgTraceSize(c *Config, sec string) []Row {
	name := "trace size, AMG-like program (examples/amglike)"
	if err := c.libErr(); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	srcs, _ := filepath.Glob(filepath.Join(c.Root, "examples", "amglike", "*.c"))
	if len(srcs) == 0 {
		return []Row{unavailable(sec, name, errors.New("examples/amglike has no C sources"))}
	}
	bin := filepath.Join(c.Work, "bin", "amglike")
	args := append([]string{"-std=c11", "-O2", "-o", bin}, srcs...)
	if _, err := runCmd(time.Minute, c.Root, nil, append(append([]string{"mpicc"}, args...), "-lm")...); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	sz := c.sizes()
	dir := c.runDir("amglike")
	defer os.RemoveAll(dir)
	if _, err := runCmd(5*time.Minute, dir, nil, mpiRun(sz.amgRanks, c.preloadEnv(dir), bin, sz.amgArgs...)...); err != nil {
		return []Row{unavailable(sec, name, err)}
	}
	bytes, nfiles, _ := dirBytes(dir, "")
	files, err := readTraceDir(dir)
	if err != nil {
		return []Row{unavailable(sec, name, fmt.Errorf("%s bytes in %d files written, but events cannot be counted: %w", num(float64(bytes)), nfiles, err))}
	}
	events, chunk := 0, int64(0)
	for _, f := range files {
		events += f.Events
		chunk += f.ChunkBytes
	}
	if events == 0 {
		return []Row{unavailable(sec, name, errors.New("trace holds no events"))}
	}
	bpe := float64(bytes) / float64(events)
	cpe := float64(chunk) / float64(events)
	run := fmt.Sprintf("%d ranks, %s", sz.amgRanks, strings.Join(sz.amgArgs, " "))
	return []Row{{Section: sec, Name: fmt.Sprintf("%s, %s", name, run),
		Value: num(bpe) + " B/event", Baseline: "24–48 B/event raw records of common tracers",
		Ratio: ratio(bpe, 24) + " of 24 B", Goal: "≤ 6 B/event: " + metOrMissed(bpe <= 6),
		Notes: fmt.Sprintf("whole files (headers, comms, sync epochs, footer included): %s bytes for %d events in %d files; event chunks alone %s B/event; the rest, %s KB per file, does not grow with the run",
			num(float64(bytes)), events, len(files), num(cpe), num(float64(bytes-chunk)/float64(len(files))/1e3))}}
}
