package trace

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestReader_ReleasedBuffersArePoisonedAndNoEventChanges: readers that
// share the chunk-buffer pool, each buffer given back filled with a poison
// pattern, read their files in pieces (NextEvents) and whole (NextChunk),
// interleaved, and get exactly the events and metadata of a fresh reader
// that does not share: nothing a reader hands out, nor anything it still
// reads from, points into a buffer it gave back.
func TestReader_ReleasedBuffersArePoisonedAndNoEventChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	mk := func(seed uint64) [][]Event {
		all := append(amgEvents(3000, seed), randomEvents(rng, 900)...)
		return [][]Event{all[:700], all[700:1500], all[1500:1501], all[1501:3100], all[3100:]}
	}
	type file struct {
		name   string
		data   []byte
		want   []Event
		meta   Meta
		reader *Reader
	}
	var files []*file
	for i, codec := range []Codec{CodecZstd, CodecS2, CodecZstd, CodecS2} { // S2 chunks keep columns in the payload (flagTail)
		chunks := mk(uint64(i + 1))
		data, _ := writeFile(t, chunks, WithCodec(codec))
		f := &file{name: codec.String(), data: data, want: concat(chunks)}
		fresh, got, err := readBytes(t, data)
		if err != nil || !reflect.DeepEqual(got, f.want) {
			t.Fatalf("file %d (%s): fresh read: %d events, err %v", i, f.name, len(got), err)
		}
		f.meta = *fresh.Meta()
		files = append(files, f)
	}
	poisonReleased = true
	defer func() { poisonReleased = false }()
	for _, f := range files {
		r, err := NewReader(bytes.NewReader(f.data), int64(len(f.data)), "rank-00007.gct")
		if err != nil {
			t.Fatal(err)
		}
		f.reader = r
	}
	for round, piece := range []int{7, 512, 0, 3} {
		got := make([][]Event, len(files))
		bufs := make([][]Event, len(files))
		done := make([]bool, len(files))
		for left := len(files); left > 0; {
			for i, f := range files {
				if done[i] {
					continue
				}
				var err error
				bufs[i], err = f.reader.NextEvents(bufs[i], piece)
				if errors.Is(err, io.EOF) {
					done[i] = true
					left--
					f.reader.Release() // its buffers go to the pool, poisoned, while the others read on
					continue
				}
				if err != nil {
					t.Fatalf("round %d (pieces of %d), file %d (%s): %v", round, piece, i, f.name, err)
				}
				got[i] = append(got[i], bufs[i]...)
			}
		}
		for i, f := range files {
			if !reflect.DeepEqual(got[i], f.want) {
				t.Errorf("round %d (pieces of %d), file %d (%s): %d events differ from a fresh read's %d", round, piece, i, f.name, len(got[i]), len(f.want))
			}
			m := f.reader.Meta()
			if !reflect.DeepEqual(m.Comms, f.meta.Comms) || !reflect.DeepEqual(m.Epochs, f.meta.Epochs) || !reflect.DeepEqual(m.Footer, f.meta.Footer) || len(m.Damage) != 0 {
				t.Errorf("round %d, file %d (%s): metadata differ from a fresh read's (damage %v)", round, i, f.name, m.Damage)
			}
			f.reader.Rewind()
		}
	}
}

// TestBufClasses_AGetBufferHoldsWhatWasAskedAndAPutOneServesItsClass: a
// pooled buffer is at least as large as asked and at most 1/8 larger, and
// a buffer given back is filed under a class it can serve.
func TestBufClasses_AGetBufferHoldsWhatWasAskedAndAPutOneServesItsClass(t *testing.T) {
	for _, n := range []int{1, 512, 513, 600, 4095, 4096, 4097, 8100, 65536, 1 << 20, 3<<20 + 1} {
		b := getBuf(n)
		if len(b) != n || cap(b) < n {
			t.Fatalf("getBuf(%d): len %d cap %d", n, len(b), cap(b))
		}
		if n > 1<<minBufClassBits && cap(b) > n+n/8+1 {
			t.Errorf("getBuf(%d): cap %d, more than 1/8 over", n, cap(b))
		}
		if c := classDown(cap(b)); c >= 0 && classSize(c) > cap(b) {
			t.Errorf("cap %d filed under class %d of %d bytes", cap(b), c, classSize(c))
		}
		if c := classUp(n); c >= 0 && classDown(classSize(c)) != c {
			t.Errorf("n %d: class %d (%d bytes) filed back under %d", n, c, classSize(c), classDown(classSize(c)))
		}
	}
}
