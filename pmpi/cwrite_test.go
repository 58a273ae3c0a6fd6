package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gclock/gclock/trace"
)

// cwEvents makes n events of the given shape: "loop" (a halo step's calls
// with rising times and request ids) or "random" (every field random,
// extremes included; times not in order).
func cwEvents(shape string, n int, rng *rand.Rand) []trace.Event {
	evs := make([]trace.Event, n)
	t := int64(1_000_000)
	for i := range evs {
		switch shape {
		case "loop":
			ops := []trace.Op{trace.OpIrecv, trace.OpIrecv, trace.OpIsend, trace.OpIsend, trace.OpWaitall, trace.OpAllreduce}
			k := i % len(ops)
			t += 800 + int64(rng.IntN(64))
			e := trace.Event{Op: ops[k], Comm: uint32(k / 5), Seq: uint32(i / len(ops)), Root: -1,
				EnterNS: t, ExitNS: t + 200 + int64(rng.IntN(300)), Callsite: 0x401000 + uint64(k)*16,
				Peer: int32(k % 2), Tag: 7, Req: uint32(i)}
			if ops[k] == trace.OpAllreduce {
				e.Sent, e.Recv, e.Peer, e.Tag, e.Req = 8, 8, 0, 0, 0
			}
			t = e.ExitNS
			evs[i] = e
		default:
			pick := func() int64 {
				if rng.IntN(4) == 0 {
					return []int64{math.MaxInt64, math.MinInt64, 0, -1}[rng.IntN(4)]
				}
				return rng.Int64()
			}
			evs[i] = trace.Event{Op: trace.Op(rng.IntN(400)), Comm: rng.Uint32(), Seq: rng.Uint32(),
				Root: rng.Int32() - 1<<30, Sent: rng.Uint64(), Recv: uint64(pick()), EnterNS: pick(), ExitNS: pick(),
				Callsite: rng.Uint64(), Peer: rng.Int32(), Tag: -rng.Int32(), Req: rng.Uint32()}
		}
	}
	return evs
}

// TestCWriter_ChunksReadBackWithGoFramesBetween writes halves with the C
// chunk writer (cshim/cwrite.c) into a file the Go writer shares, with Go's
// own frames (a communicator, a freed one, an epoch, a Go-written chunk)
// between them, and reads the file back: every event as given, in order,
// no damage, the footer's counts those of both writers, the SPAN frames
// numbering the chunks in file order, C's chunks zstd.
func TestCWriter_ChunksReadBackWithGoFramesBetween(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec trace.Codec // the Go writer's; the C writer's tail follows it
		shape string
	}{
		{"s2-tail-loop", trace.CodecS2, "loop"},
		{"s2-tail-random", trace.CodecS2, "random"},
		{"zstd-loop", trace.CodecZstd, "loop"},
		{"zstd-random", trace.CodecZstd, "random"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(tc.name))))
			path := filepath.Join(t.TempDir(), "rank-00000.gct")
			w, err := trace.Create(path, trace.Header{Rank: 0, WorldSize: 1}, trace.WithCodec(tc.codec))
			if err != nil {
				t.Fatal(err)
			}
			r := &recorder{w: w, path: path}
			cfg := config{CWrite: true, Codec: tc.codec}
			if why := r.armCWriter(cfg, 4096); why != "" {
				t.Fatalf("the C writer cannot be set up: %s", why)
			}
			var want []trace.Event
			var cChunks int
			flushC := func(evs []trace.Event) {
				recs, free := cRecords(evs)
				defer free()
				if !cWriterWrite(recs) {
					t.Fatalf("the C writer did not write a half of %d events", len(evs))
				}
				want = append(want, evs...)
				cChunks++
			}
			for part := 0; part < 6; part++ {
				flushC(cwEvents(tc.shape, 100+rng.IntN(4000), rng))
				switch part {
				case 1:
					if err := w.WriteComm(trace.Comm{ID: 77, Local: 3, Kind: "dup", Members: []int32{0}}); err != nil {
						t.Fatal(err)
					}
				case 2: // a freed communicator's frame waits for the next frame: Go writes that chunk
					if err := w.WriteComm(trace.Comm{ID: 77, Local: 3, Kind: "dup", Members: []int32{0}, FreedNS: 5}); err != nil {
						t.Fatal(err)
					}
					recs, free := cRecords(cwEvents(tc.shape, 50, rng))
					if cWriterWrite(recs) {
						t.Fatal("the C writer wrote a chunk while a Go frame waited for the next one")
					}
					free()
					evs := cwEvents(tc.shape, 300, rng)
					recs, free = cRecords(evs)
					r.flushLocked(recs)
					free()
					want = append(want, evs...)
				case 3:
					if err := w.WriteEpoch(trace.Epoch{Index: 0, Algorithm: "test"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Close(trace.Footer{Reason: "finalize"}); err != nil {
				t.Fatal(err)
			}
			recs, free := cRecords(want[:10])
			if cWriterWrite(recs) {
				t.Fatal("the C writer wrote into a closed file")
			}
			free()

			rd, err := trace.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			got, err := rd.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			m := rd.Meta()
			if len(m.Damage) != 0 {
				t.Fatalf("damage: %v", m.Damage)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d events, wrote %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("event %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			if m.Footer == nil || m.Footer.Events != uint64(len(want)) {
				t.Fatalf("footer %+v, want %d events", m.Footer, len(want))
			}
			zstd := 0
			for i, ci := range m.Chunks {
				if ci.Index != i {
					t.Errorf("chunk %d has index %d", i, ci.Index)
				}
				if ci.Codec == trace.CodecZstd {
					zstd++
				}
			}
			if len(m.Chunks) != cChunks+1 {
				t.Errorf("%d chunks, want %d", len(m.Chunks), cChunks+1)
			}
			if tc.codec == trace.CodecS2 && zstd != cChunks {
				t.Errorf("%d zstd chunks, want the C writer's %d", zstd, cChunks)
			}
			if len(m.Comms) != 1 || m.Comms[0].FreedNS != 5 || len(m.Epochs) != 1 {
				t.Errorf("comms %+v epochs %+v", m.Comms, m.Epochs)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
				t.Fatal(fmt.Sprint(fi, err))
			}
		})
	}
}
