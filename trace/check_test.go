package trace

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// TestStart_CheckFindsWhatDecodeFinds: start's check of a chunk to be
// handed out in pieces (check2, which reads the columns without writing
// events) refuses exactly the chunks decode refuses, with decode's
// message, and a chunk it accepts comes out in pieces as decode's events.
// Both ways are covered: checkFast, which passes a well-formed chunk of
// layout 3 or 4 by its columns' lengths, and check2, which reads the
// columns value by value where checkFast does not pass the chunk.
// The chunks are a halo exchange's in layouts 2, 3 and 4, each column
// damaged in turn by seeded edits: a byte changed, a byte cut from the
// end or the middle, a byte appended, a template index past the end.
func TestStart_CheckFindsWhatDecodeFinds(t *testing.T) {
	evs := haloCallEvents(40)
	enc, err := sharedEncoder(DefaultCompressionLevel)
	if err != nil {
		t.Fatal(err)
	}
	column := []struct {
		name string
		at   func(p *chunkPayload) *[]byte
	}{
		{"tmpl", func(p *chunkPayload) *[]byte { return &p.Tmpl }},
		{"seq", func(p *chunkPayload) *[]byte { return &p.Seq }},
		{"enter", func(p *chunkPayload) *[]byte { return &p.Enter }},
		{"dur", func(p *chunkPayload) *[]byte { return &p.Dur }},
		{"req", func(p *chunkPayload) *[]byte { return &p.Req }},
		{"tw", func(p *chunkPayload) *[]byte { return &p.TW }},
	}
	edits := []struct {
		name string
		edit func(b []byte, rng *rand.Rand) []byte
	}{
		{"byte changed", func(b []byte, rng *rand.Rand) []byte {
			if len(b) > 0 {
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			}
			return b
		}},
		{"last byte cut", func(b []byte, _ *rand.Rand) []byte { return b[:max(len(b)-1, 0)] }},
		{"middle byte cut", func(b []byte, rng *rand.Rand) []byte {
			if len(b) == 0 {
				return b
			}
			i := rng.IntN(len(b))
			return append(b[:i:i], b[i+1:]...)
		}},
		{"byte appended", func(b []byte, rng *rand.Rand) []byte { return append(b, byte(rng.Uint32())) }},
		{"high bit set", func(b []byte, rng *rand.Rand) []byte {
			if len(b) > 0 {
				b[rng.IntN(len(b))] |= 0x80
			}
			return b
		}},
	}
	refused, accepted := 0, 0
	for _, layout := range []uint8{oldChunkLayout, layout3, chunkLayout} {
		ce := chunkEncoder{layout: layout}
		cols := ce.columns(evs)
		fresh := func() chunkPayload {
			p := chunkPayload{Layout: layout, N: cols.N, Sites: cols.Sites, Templates: cols.Templates,
				Tmpl: bytes.Clone(cols.Tmpl), Seq: bytes.Clone(cols.Seq), Enter: bytes.Clone(cols.Enter),
				Dur: bytes.Clone(cols.Dur), Req: bytes.Clone(cols.Req)}
			if layout >= layout3 {
				p.TW = bytes.Clone(cols.TW)
			}
			return p
		}
		check := func(t *testing.T, p *chunkPayload) {
			t.Helper()
			raw, err := marshalAppend(nil, p)
			if err != nil {
				t.Fatal(err)
			}
			payload := enc.EncodeAll(raw, nil)
			var whole, pieces chunkDecoder
			want, werr := whole.decode(nil, payload, flagZstd)
			serr := pieces.start(payload, flagZstd)
			if (werr == nil) != (serr == nil) || werr != nil && werr.Error() != serr.Error() {
				t.Fatalf("start: err = %v, decode: err = %v; want the same", serr, werr)
			}
			if werr != nil {
				refused++
				return
			}
			accepted++
			var got []Event
			for {
				out, err := pieces.more(nil, 7)
				if err != nil {
					t.Fatalf("more: %v (start accepted the chunk)", err)
				}
				if len(out) == 0 {
					break
				}
				got = append(got, out...)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pieces: %d events differ from decode's %d", len(got), len(want))
			}
		}
		for _, c := range column {
			if c.name == "tw" && layout < layout3 {
				continue
			}
			for _, e := range edits {
				t.Run("layout"+strconv.Itoa(int(layout))+"/"+c.name+"/"+e.name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(layout), uint64(len(c.name)*31+len(e.name))))
					for range 40 {
						p := fresh()
						b := c.at(&p)
						*b = e.edit(*b, rng)
						check(t, &p)
					}
				})
			}
		}
		t.Run("layout"+strconv.Itoa(int(layout))+"/template index past the end", func(t *testing.T) {
			p := fresh()
			p.Tmpl[len(p.Tmpl)/2] = 0x7f
			check(t, &p)
		})
		t.Run("layout"+strconv.Itoa(int(layout))+"/intact", func(t *testing.T) {
			p := fresh()
			check(t, &p)
			// an intact chunk of layout 3 or 4 is checked by checkFast
			var cd chunkDecoder
			cd.p = p
			if err := cd.prep2(); err != nil {
				t.Fatal(err)
			}
			if fast := cd.checkFast(); fast != (layout >= layout3) {
				t.Errorf("checkFast = %v on an intact chunk of layout %d", fast, layout)
			}
		})
	}
	// the edits must exercise both outcomes, or the test proves nothing
	if refused < 100 || accepted < 50 {
		t.Errorf("%d damaged chunks refused, %d accepted; want both many", refused, accepted)
	}
}
