package trace

import (
	"fmt"
	"testing"
	"unsafe"
)

// Benchmarks report: MB/s of in-memory Event structs (b.SetBytes), events/s,
// on-disk bytes per event, and MB/s of compressed (on-disk) bytes.

func BenchmarkEncodeChunk(b *testing.B) {
	for _, n := range []int{4096, 65536} {
		b.Run(fmt.Sprintf("amg-%d", n), func(b *testing.B) {
			evs := amgEvents(n, 1)
			enc, err := sharedEncoder(DefaultCompressionLevel)
			if err != nil {
				b.Fatal(err)
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
		})
	}
}

func BenchmarkDecodeChunk(b *testing.B) {
	for _, n := range []int{4096, 65536} {
		b.Run(fmt.Sprintf("amg-%d", n), func(b *testing.B) {
			evs := amgEvents(n, 1)
			enc, err := sharedEncoder(DefaultCompressionLevel)
			if err != nil {
				b.Fatal(err)
			}
			var ce chunkEncoder
			payload, err := ce.encode(nil, evs, enc)
			if err != nil {
				b.Fatal(err)
			}
			var cd chunkDecoder
			var dst []Event
			b.SetBytes(int64(n) * int64(unsafe.Sizeof(Event{})))
			b.ReportAllocs()
			for b.Loop() {
				dst, err = cd.decode(dst, payload)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(payload))
		})
	}
}

func report(b *testing.B, n, encoded int) {
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(encoded+frameHeaderSize)/float64(n), "B/event")
	if sec > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/sec, "events/s")
		b.ReportMetric(float64(encoded)*float64(b.N)/sec/1e6, "diskMB/s")
	}
}
