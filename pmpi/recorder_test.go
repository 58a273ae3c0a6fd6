package main

import (
	"bytes"
	"math/rand"
	"reflect"
	"testing"

	"github.com/gclock/gclock/trace"
)

// TestWriteComm_MemberSetsBounded: the lists a rank file names by
// reference (trace.Comm.Same) are remembered up to maxWrittenBytes; past
// it the memory starts over and a list is written in full again. A
// program that splits into new member sets every step grew it without
// bound. Every communicator reads back with its members either way.
func TestWriteComm_MemberSetsBounded(t *testing.T) {
	defer func(v int) { maxWrittenBytes = v }(maxWrittenBytes)
	maxWrittenBytes = 10_000 // two lists of 1,000 members
	rng := rand.New(rand.NewSource(1))
	set := func() []int32 { // no runs: written as a list
		m := make([]int32, 1000)
		for i := range m {
			m[i] = rng.Int31n(1 << 20)
		}
		return m
	}
	a, b, c := set(), set(), set()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Rank: 0, WorldSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{w: w, written: map[string]uint32{}}
	steps := []struct {
		members []int32
		same    bool // named by reference
	}{{a, false}, {b, false}, {a, true}, {c, false}, {c, true}, {a, false}, {a, true}}
	sizes := make([]int64, len(steps))
	for i, s := range steps {
		before := w.Offset()
		r.writeComm(trace.Comm{ID: uint64(10 + i), Local: uint32(2 + i), Kind: "split", Members: s.members})
		sizes[i] = w.Offset() - before
	}
	if r.writtenBytes > maxWrittenBytes || len(r.written) > 2 {
		t.Errorf("%d lists of %d bytes remembered, want at most %d bytes", len(r.written), r.writtenBytes, maxWrittenBytes)
	}
	rd, err := trace.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "rank-00000.gct")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		got, ok := rd.Meta().CommByLocal(uint32(2 + i))
		if !ok || !reflect.DeepEqual(got.Members, s.members) {
			t.Errorf("communicator %d: ok %v, %d members, not the written ones", i, ok, len(got.Members))
		}
		if full := sizes[i] > 4000; full == s.same {
			t.Errorf("communicator %d: frame of %d bytes; named by reference: want %v", i, sizes[i], s.same)
		}
	}
}
