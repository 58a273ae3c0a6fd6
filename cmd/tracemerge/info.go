package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/postmortem"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/merge/runinfo"
)

func cmdInfo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracemerge info", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	clock := fs.String("clock", "interp", "interp, refined, linear, init or raw")
	asJSON := fs.Bool("json", false, "print JSON")
	help := fs.Bool("h", false, "help")
	fs.BoolVar(help, "help", false, "help")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageErr(stderr, "info: %v", err)
	}
	if *help {
		fmt.Fprint(stdout, usageText)
		return exitOK
	}
	if len(pos) != 1 {
		return usageErr(stderr, "info: expected one run directory, got %d arguments", len(pos))
	}
	mode, err := correct.ParseClockMode(*clock)
	if err != nil {
		return usageErr(stderr, "info: --clock: %v", err)
	}
	run, err := rundir.Load(pos[0], nil)
	if err != nil {
		var le *rundir.LoadError
		if errors.As(err, &le) {
			fmt.Fprintf(stderr, "tracemerge: %s\n", le.Msg)
		} else {
			fmt.Fprintf(stderr, "tracemerge: %v\n", err)
		}
		return exitNoData
	}
	defer run.Close()
	info, err := runinfo.Summarize(run, mode)
	if err != nil {
		fmt.Fprintf(stderr, "tracemerge: %v\n", err)
		return exitNoData
	}
	info.PostMortem = postmortem.Of(run, mode, nil) // docs/guide/crash-hang.md
	if *asJSON {
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "tracemerge: %v\n", err)
			return exitOutput
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		writeInfo(stdout, info)
	}
	if len(info.Problems) > 0 {
		return exitPartial
	}
	return exitOK
}

// infoHosts is how many hosts writeInfo lists one per line (a run of
// 10,000 ranks has thousands).
const infoHosts = 32

func writeInfo(w io.Writer, in *runinfo.Summary) {
	ns := merge.FormatNS
	writePostMortem(w, in.PostMortem) // postmortem.go: first, when the run did not end cleanly
	fmt.Fprintf(w, "run:       %s (job %s)\n", oneLine(in.Dir), oneLine(in.JobID))
	fmt.Fprintf(w, "ranks:     %d of %d rank files", in.Found, in.WorldSize)
	if len(in.Missing) > 0 {
		fmt.Fprintf(w, ", MISSING %d: [%s]", len(in.Missing), rundir.RankRanges(in.Missing, " "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "hosts:     %d\n", len(in.Hosts))
	for i, h := range in.Hosts {
		if i == infoHosts && len(in.Hosts) > infoHosts+1 {
			fmt.Fprintf(w, "           ... and %d more hosts (--json lists them all)\n", len(in.Hosts)-i)
			break
		}
		fmt.Fprintf(w, "           %s: ranks %s\n", oneLine(h.Host), rundir.RankRanges(h.Ranks, ","))
	}
	fmt.Fprintf(w, "program:   %s %s\n", oneLine(in.Exe), oneLine(strings.Join(in.Args, " ")))
	fmt.Fprintf(w, "mpi:       %s\n", oneLine(in.MPILib))
	fmt.Fprintf(w, "timer:     %s\n", oneLine(in.Timer))
	if len(in.Inject) > 0 {
		fmt.Fprintf(w, "!!! CLOCK ERROR WAS INJECTED (GCLOCK_FAKE_CLOCK=%s): times are deliberately faked for testing\n", oneLine(strings.Join(in.Inject, " | ")))
	}
	fmt.Fprintf(w, "events:    %d\n", in.Events)
	fmt.Fprintf(w, "calls:     %d (records that continue a call left out: what --per-event-limit counts)\n", in.Calls)
	fmt.Fprintf(w, "span:      %s (clock %s, first enter to last exit)\n", ns(in.EndNS-in.StartNS), in.ClockMode)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\top\tevents\t")
	for _, o := range in.OpCounts {
		fmt.Fprintf(tw, "\t%s\t%d\t\n", o.Op, o.Events)
	}
	tw.Flush()
	fmt.Fprintf(w, "sync epochs:\n")
	if len(in.Epochs) == 0 {
		fmt.Fprintf(w, "  none: times cannot be corrected\n")
	}
	for _, e := range in.Epochs {
		fmt.Fprintf(w, "  epoch %d: %s, %d ranks, duration %s, fitpoints %d, pingpongs %d, max |slope| %.3g ppm, max |offset| %s\n",
			e.Index, oneLine(e.Algorithm), e.Ranks, ns(e.MaxDurNS), e.FitPoints, e.PingPongs, e.MaxSlopePPM, ns(e.MaxOffsetNS))
		if e.Checked > 0 {
			fmt.Fprintf(w, "           self-check residuals over %d ranks: median %s, max %s\n", e.Checked, ns(e.CheckMedNS), ns(e.CheckMaxNS))
		} else {
			fmt.Fprintf(w, "           no self-check recorded\n")
		}
	}
	dirty, stopped := 0, 0
	for _, r := range in.Ranks {
		switch {
		case r.Stopped:
			stopped++
		case !r.Clean:
			dirty++
		}
	}
	fmt.Fprintf(w, "files:     %d clean, %d with damage or without footer", len(in.Ranks)-dirty-stopped, dirty)
	if stopped > 0 {
		fmt.Fprintf(w, ", %d whose recording stopped early", stopped)
	}
	fmt.Fprintln(w)
	if len(in.Problems) > 0 {
		fmt.Fprintf(w, "problems:\n")
		for _, p := range in.Problems {
			fmt.Fprintf(w, "  - %s\n", oneLine(p))
		}
	} else {
		fmt.Fprintf(w, "problems:  none\n")
	}
}
