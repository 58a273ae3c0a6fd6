package trace

import (
	"bytes"
	"testing"
)

// TestNewReader_KeepsNoCommunicatorIndexAfterTheScan: the scan's index of
// the communicators (three maps a reader) is not kept once the file is
// open, as 16,384 readers open together held 10 MB of them; asking for a
// communicator afterwards builds it again and finds every one, the last
// definition of a Local or ID winning as during the scan.
func TestNewReader_KeepsNoCommunicatorIndexAfterTheScan(t *testing.T) {
	comms := []Comm{
		{ID: CommWorldID, Local: 0, Kind: "world", Members: []int32{0, 1, 2}},
		{ID: CommSelfID, Local: 1, Kind: "self", Members: []int32{1}},
		{ID: 40, Local: 2, Kind: "dup", Members: []int32{0, 1, 2}},
		{ID: 41, Local: 2, Kind: "split", Members: []int32{1, 2}}, // Local 2 again: the last wins
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Rank: 1, WorldSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range comms {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(Footer{Reason: "finalize"}); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "rank-00001.gct")
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if x := m.idx; x.byKey != nil || x.byLocal != nil || x.byID != nil {
		t.Fatalf("the reader keeps the scan's communicator index (%d, %d, %d entries)", len(x.byKey), len(x.byLocal), len(x.byID))
	}
	for _, tc := range []struct {
		local  uint32
		wantID uint64
	}{{0, CommWorldID}, {1, CommSelfID}, {2, 41}} {
		if c, ok := m.CommByLocal(tc.local); !ok || c.ID != tc.wantID {
			t.Errorf("CommByLocal(%d) = %+v, %v; want id %d", tc.local, c, ok, tc.wantID)
		}
	}
	for _, id := range []uint64{CommWorldID, CommSelfID, 40, 41} {
		if c, ok := m.CommByID(id); !ok || c.ID != id {
			t.Errorf("CommByID(%d) = %+v, %v", id, c, ok)
		}
	}
}
