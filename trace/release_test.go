package trace

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// TestReader_ReleaseThenRewindReadsTheSameEvents: a reader whose buffers
// were dropped at the end (Release) reads the file again, in pieces and
// whole, with exactly the events of the first read.
func TestReader_ReleaseThenRewindReadsTheSameEvents(t *testing.T) {
	chunks := smallChunks()
	data, _ := writeFile(t, chunks)
	r, err := NewReader(bytes.NewReader(data), int64(len(data)), "rank-00003.gct")
	if err != nil {
		t.Fatal(err)
	}
	want := concat(chunks)
	for round := 0; round < 3; round++ {
		var got, buf []Event
		for {
			buf, err = r.NextEvents(buf, 5)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, buf...)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: %d events, want %d (or they differ)", round, len(got), len(want))
		}
		r.Release()
		if r.buf != nil || r.dec.raw != nil || r.dec.tm != nil {
			t.Fatalf("round %d: Release kept buffers", round)
		}
		r.Rewind()
	}
	all, err := r.ReadAll()
	if err != nil || !reflect.DeepEqual(all, want) {
		t.Errorf("ReadAll after Release: %d events, err %v", len(all), err)
	}
}
