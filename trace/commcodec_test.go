package trace

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// TestAppendComm_DecodesLikeTheReflectionEncoder: the hand-written COMM
// encoding decodes to the same Comm as the msgpack reflection encoder's,
// at the edges of every integer width and list length.
func TestAppendComm_DecodesLikeTheReflectionEncoder(t *testing.T) {
	long := make([]int32, 70000)
	for i := range long {
		long[i] = int32(i*7919) - 1<<20
	}
	for _, c := range []Comm{
		{},
		{ID: CommWorldID, Kind: "world", Members: []int32{0, 1}, CreatedNS: 5},
		{ID: math.MaxUint64, Local: math.MaxUint32, Parent: 1 << 40, Kind: strings.Repeat("k", 31), Members: []int32{}, CreatedNS: -1},
		{ID: 255, Local: 256, Parent: 65535, Kind: strings.Repeat("x", 32), Members: []int32{127, 128, 255, 256, 65535, 65536, math.MaxInt32}, CreatedNS: math.MinInt64, FreedNS: math.MaxInt64},
		{ID: 65536, Local: 1 << 31, Kind: strings.Repeat("y", 256), Members: []int32{-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32}, CreatedNS: -33, FreedNS: -129},
		{ID: 12, Local: 3, Kind: "dup", Same: 1, CreatedNS: 1e18, FreedNS: 2e18},
		{ID: 13, Local: 4, Kind: "split", Runs: []int32{0, 5000, 1, 7, 100, 64}, Same: 70000, CreatedNS: 4294967296},
		{ID: 14, Local: 5, Kind: strings.Repeat("z", 70000), Members: long},
		{ID: 15, Local: 6, Kind: "sixteen", Members: make([]int32, 16)},
	} {
		var ref Comm
		rb, err := marshalAppend(nil, &c)
		if err != nil {
			t.Fatal(err)
		}
		if err := msgpack.Unmarshal(rb, &ref); err != nil {
			t.Fatal(err)
		}
		var got Comm
		if err := msgpack.Unmarshal(appendComm(nil, &c), &got); err != nil {
			t.Fatalf("comm %d (%s...): %v", c.ID, c.Kind[:min(len(c.Kind), 8)], err)
		}
		if !reflect.DeepEqual(got, ref) || !reflect.DeepEqual(got, c) {
			t.Errorf("comm %d (%s...): decoded %+v, reflection's decodes to %+v", c.ID, c.Kind[:min(len(c.Kind), 8)], got.Members[:min(len(got.Members), 4)], ref.Members[:min(len(ref.Members), 4)])
		}
	}
}

// BenchmarkWriteComm_Small: one COMM frame of a duplicated communicator
// of two ranks (what a program that creates and frees a communicator per
// step writes twice a step), into io.Discard.
func BenchmarkWriteComm_Small(b *testing.B) {
	w, err := NewWriter(io.Discard, testHeader())
	if err != nil {
		b.Fatal(err)
	}
	c := Comm{ID: 0x1234567890, Local: 7, Parent: 1, Kind: "dup", Members: []int32{0, 1}, CreatedNS: 123456789}
	b.ReportAllocs()
	for b.Loop() {
		c.Local++
		if err := w.WriteComm(c); err != nil {
			b.Fatal(err)
		}
	}
}

// countingWriter counts the writes it gets.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

// TestWriteComm_FreedFramesRideWithTheNext: a freed communicator's frame
// waits for the next frame and goes out in its write (one write per
// create/free step instead of two); Close writes what still waits, Abort
// drops it, and the reader sees every communicator as written.
func TestWriteComm_FreedFramesRideWithTheNext(t *testing.T) {
	members := []int32{0, 1}
	for _, end := range []string{"close", "abort", "sync"} {
		t.Run(end, func(t *testing.T) {
			var cw countingWriter
			w, err := NewWriter(&cw, testHeader())
			if err != nil {
				t.Fatal(err)
			}
			for step := range uint32(3) {
				before := cw.writes
				if err := w.WriteComm(Comm{ID: uint64(10 + step), Local: 2 + step, Kind: "dup", Members: members, CreatedNS: 100}); err != nil {
					t.Fatal(err)
				}
				if err := w.WriteComm(Comm{ID: uint64(10 + step), Local: 2 + step, Kind: "dup", Members: members, CreatedNS: 100, FreedNS: 200}); err != nil {
					t.Fatal(err)
				}
				if n := cw.writes - before; n != 1 {
					t.Errorf("step %d: %d writes, want 1", step, n)
				}
			}
			switch end {
			case "close":
				err = w.Close(Footer{Reason: "finalize"})
			case "abort":
				err = w.Abort()
			case "sync":
				err = w.Sync()
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bytes.NewReader(cw.Bytes()), int64(cw.Len()), "rank-00007.gct")
			if err != nil {
				t.Fatal(err)
			}
			for step := range uint32(3) {
				c, ok := r.Meta().CommByLocal(2 + step)
				want := int64(200)
				if end == "abort" && step == 2 {
					want = 0 // freed last, dropped by Abort
				}
				if !ok || c.FreedNS != want || !reflect.DeepEqual(c.Members, members) {
					t.Errorf("communicator %d: %+v, %v; want freed at %d", step, c, ok, want)
				}
			}
		})
	}
}
