package main

import (
	"io"
	"testing"

	"github.com/gclock/gclock/trace"
)

// BenchmarkCColumns measures the C column split per event on a loop-like
// p2p pattern (5 call sites, 3 communicators) and on identical events
// (MPI_Barrier(MPI_COMM_SELF) microbenchmark).
func BenchmarkCColumns(b *testing.B) {
	halo := func(n int) []trace.Event {
		evs := make([]trace.Event, n)
		t := int64(1_700_000_000_000_000_000)
		for i := range evs {
			evs[i] = trace.Event{Op: trace.OpIsend, Comm: 0, Root: -1, Sent: 512,
				EnterNS: t, ExitNS: t + 150 + int64(i%7), Callsite: 0x401000 + uint64(i%5)*0x40,
				Peer: int32(i % 2), Tag: int32(i % 3), Req: uint32(i/9*4 + 1)}
			t += 300 + int64(i%11)
		}
		return evs
	}
	barrier := func(n int) []trace.Event {
		evs := make([]trace.Event, n)
		for i := range evs {
			t := int64(1000 + 40*i)
			evs[i] = trace.Event{Op: trace.OpBarrier, Comm: 1, Seq: uint32(i), Root: -1, EnterNS: t, ExitNS: t + 8, Callsite: 0x401000}
		}
		return evs
	}
	for _, tc := range []struct {
		name string
		evs  []trace.Event
	}{{"halo-8192", halo(8192)}, {"barrier-8192", barrier(8192)}, {"halo-32768", halo(32768)}} {
		recs, free := cRecords(tc.evs)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := cColumns(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/event")
		})
		b.Run(tc.name+"-go", func(b *testing.B) {
			for b.Loop() {
				trace.EncodeColumns(tc.evs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/event")
		})
		free()
	}
}

// BenchmarkFlushPath measures a whole buffer half's way to the file
// writer: the C column split, then packing, S2 and the frame, into
// io.Discard (no system call).
func BenchmarkFlushPath(b *testing.B) {
	evs := make([]trace.Event, 8192)
	for i := range evs {
		t := int64(1000 + 40*i)
		evs[i] = trace.Event{Op: trace.OpBarrier, Comm: 1, Seq: uint32(i), Root: -1, EnterNS: t, ExitNS: t + 8 + int64(i%3), Callsite: 0x401000}
	}
	recs, free := cRecords(evs)
	defer free()
	w, err := trace.NewWriter(io.Discard, trace.Header{WorldSize: 1}, trace.WithCodec(trace.CodecS2))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cols, err := cColumns(recs)
		if err == nil {
			err = w.WriteColumns(&cols)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/event")
}
