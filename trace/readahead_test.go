package trace

import (
	"bytes"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
)

// countingReaderAt counts the reads made of r.
type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestNewReader_ScanReadsAheadInFewReads: the scan at Open reads a file
// of a few frames (a many-rank run's rank file) in one read, and a large
// one in about one read per scanAhead bytes, where it made two reads a
// frame; the events read afterwards are the written ones.
func TestNewReader_ScanReadsAheadInFewReads(t *testing.T) {
	big := amgEvents(60000, 3)
	for _, tc := range []struct {
		name   string
		chunks [][]Event
	}{
		{"four small chunks", smallChunks()},
		{"one chunk", [][]Event{amgEvents(1000, 2)}},
		{"many chunks, larger than the read-ahead", [][]Event{big[:15000], big[15000:30000], big[30000:45000], big[45000:]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, _ := writeFile(t, tc.chunks)
			cr := &countingReaderAt{r: bytes.NewReader(data)}
			r, err := NewReader(cr, int64(len(data)), "rank-00007.gct")
			if err != nil {
				t.Fatal(err)
			}
			frames := 0
			for pos := int64(preambleSize); pos < int64(len(data)); frames++ {
				fh, ok := parseFrameHeader(data[pos : pos+frameHeaderSize])
				if !ok {
					t.Fatalf("frame %d at byte %d: bad header", frames, pos)
				}
				pos += frameHeaderSize + int64(fh.length)
			}
			want := int(int64(len(data))/scanAhead) + 1
			for _, c := range r.Meta().Chunks {
				if c.Bytes+frameHeaderSize > scanAhead/2 {
					want++ // read directly, not through the buffer
				}
			}
			t.Logf("%d bytes, %d frames: %d reads at Open (a frame at a time: %d)", len(data), frames, cr.reads, 2*frames+1)
			if cr.reads > want {
				t.Errorf("Open made %d reads of a %d-byte file of %d frames, want at most %d", cr.reads, len(data), frames, want)
			}
			got, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, concat(tc.chunks)) {
				t.Errorf("read %d events back, not the %d written", len(got), len(concat(tc.chunks)))
			}
		})
	}
}

// TestReadAhead_GivesWhatADirectReadGives: random reads through the
// read-ahead buffer return the bytes, counts and end-of-file errors that
// reads of the file itself return, for a file whose size is right and
// for one shorter than the size the reader was given (cut while read).
func TestReadAhead_GivesWhatADirectReadGives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*scanAhead+777)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name string
		have int // bytes the file holds
	}{
		{"size as given", len(data)},
		{"file shorter than its size", len(data) - scanAhead - 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := bytes.NewReader(data[:tc.have])
			a := &readAhead{r: file, size: int64(len(data))}
			defer a.release()
			off := int64(0)
			for i := 0; i < 3000; i++ {
				n := 1 + rng.IntN(scanAhead)
				if rng.IntN(4) > 0 {
					n = 1 + rng.IntN(64)
				}
				switch rng.IntN(5) {
				case 0:
					off = rng.Int64N(int64(len(data)) + 10)
				default:
					off += int64(rng.IntN(200)) // mostly forward, as the scan reads
				}
				got, want := make([]byte, n), make([]byte, n)
				gn, gerr := a.ReadAt(got, off)
				wn, werr := file.ReadAt(want, off)
				if gn != wn || (gerr != nil) != (werr != nil) || !bytes.Equal(got[:gn], want[:wn]) {
					t.Fatalf("read %d: %d bytes at %d: got %d bytes, err %v; the file gives %d bytes, err %v", i, n, off, gn, gerr, wn, werr)
				}
				if off > int64(len(data)) {
					off = 0
				}
			}
		})
	}
}
