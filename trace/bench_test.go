package trace

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// Benchmarks report: MB/s of in-memory Event structs (b.SetBytes), events/s,
// on-disk bytes per event, and MB/s of compressed (on-disk) bytes.

// BenchmarkEncodeChunk measures the zstd level the writer uses with
// CodecZstd (DefaultCompressionLevel mapped by EncoderLevelFromZstd, as
// Create does) and S2 (CodecS2, the recorder's default; level 0 here).
func BenchmarkEncodeChunk(b *testing.B) {
	for _, lc := range []struct {
		name  string
		level int
	}{{"-zstd", DefaultCompressionLevel}, {"-s2", 0}} {
		for _, n := range []int{4096, 65536} {
			b.Run(fmt.Sprintf("amg-%d%s", n, lc.name), func(b *testing.B) {
				benchEncode(b, n, lc.level)
			})
		}
	}
}

// benchEncode encodes n AMG-like events at zstd level level; 0 means S2.
func benchEncode(b *testing.B, n int, level int) {
	{
		{
			evs := amgEvents(n, 1)
			var enc *zstd.Encoder // nil: S2
			var err error
			if level != 0 {
				if enc, err = sharedEncoder(zstd.EncoderLevelFromZstd(level)); err != nil {
					b.Fatal(err)
				}
			}
			var ce chunkEncoder
			var out []byte
			b.SetBytes(int64(n) * int64(unsafe.Sizeof(Event{})))
			b.ReportAllocs()
			for b.Loop() {
				out, err = ce.encode(out[:0], evs, enc)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(out))
		}
	}
}

func BenchmarkDecodeChunk(b *testing.B) {
	for _, n := range []int{4096, 65536} {
		b.Run(fmt.Sprintf("amg-%d", n), func(b *testing.B) {
			payload := encodedChunk(b, amgEvents(n, 1))
			var cd chunkDecoder
			var dst []Event
			var err error
			b.SetBytes(int64(n) * int64(unsafe.Sizeof(Event{})))
			b.ReportAllocs()
			for b.Loop() {
				dst, err = cd.decode(dst, payload, flagZstd)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(payload))
		})
	}
}

// encodedChunk is evs encoded as one zstd chunk payload at the default level.
func encodedChunk(b *testing.B, evs []Event) []byte {
	b.Helper()
	enc, err := sharedEncoder(zstd.EncoderLevelFromZstd(DefaultCompressionLevel))
	if err != nil {
		b.Fatal(err)
	}
	var ce chunkEncoder
	payload, err := ce.encode(nil, evs, enc)
	if err != nil {
		b.Fatal(err)
	}
	return payload
}

func report(b *testing.B, n, encoded int) {
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(encoded+frameHeaderSize)/float64(n), "B/event")
	if sec > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/sec, "events/s")
		b.ReportMetric(float64(encoded)*float64(b.N)/sec/1e6, "diskMB/s")
	}
}

// BenchmarkDecodeChunk_InPieces measures a chunk of a many-rank run's rank
// (1,000 halo-exchange events, layout 4) handed out as Reader.NextEvents
// does at 16,384 ranks: start (which checks the chunk whole), then pieces
// of 32 events; "whole" is decode for comparison. ns/event per chunk.
func BenchmarkDecodeChunk_InPieces(b *testing.B) {
	evs := haloCallEvents(111)
	payload := encodedChunk(b, evs)
	for _, piece := range []int{0, 32} {
		name := fmt.Sprintf("halo-%d-pieces-%d", len(evs), piece)
		if piece == 0 {
			name = fmt.Sprintf("halo-%d-whole", len(evs))
		}
		b.Run(name, func(b *testing.B) {
			var cd chunkDecoder
			dst := make([]Event, 0, len(evs))
			for b.Loop() {
				if piece == 0 {
					var err error
					if dst, err = cd.decode(dst, payload, flagZstd); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if err := cd.start(payload, flagZstd); err != nil {
					b.Fatal(err)
				}
				for {
					out, err := cd.more(dst[:0], piece)
					if err != nil {
						b.Fatal(err)
					}
					if len(out) == 0 {
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
		})
	}
}
