package trace

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// TestReader_DropsTheCompressedPayloadOnceDecoded: after Open and after
// each zstd chunk the reader keeps no compressed bytes (a many-rank
// analysis holds every rank's reader for the whole pass), and reading
// chunk after chunk, whole or in pieces, still gives every event (s2
// chunks, whose tail columns alias the payload, keep it).
func TestReader_DropsTheCompressedPayloadOnceDecoded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codec Codec
		piece int // NextEvents' max; 0: NextChunk
	}{
		{"zstd/whole", CodecZstd, 0},
		{"zstd/pieces", CodecZstd, 37},
		{"s2/whole", CodecS2, 0},
		{"s2/pieces", CodecS2, 37},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, testHeader(), WithCodec(tc.codec))
			if err != nil {
				t.Fatal(err)
			}
			var want []Event
			for i := range 3 {
				evs := amgEvents(200, uint64(i+1))
				want = append(want, evs...)
				if err := w.WriteEvents(evs); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(Footer{}); err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "rank-00007.gct")
			if err != nil {
				t.Fatal(err)
			}
			if r.buf != nil {
				t.Fatalf("%d bytes of payload buffer kept after Open", cap(r.buf))
			}
			var got, dst []Event
			for {
				if tc.piece > 0 {
					dst, err = r.NextEvents(dst, tc.piece)
				} else {
					dst, err = r.NextChunk(dst)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if tc.codec == CodecZstd && r.buf != nil {
					t.Fatalf("zstd chunk decoded, %d bytes of compressed payload still held", cap(r.buf))
				}
				got = append(got, dst...)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read %d events, not the %d written", len(got), len(want))
			}
		})
	}
}
