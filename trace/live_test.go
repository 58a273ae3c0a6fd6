package trace

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// liveFile builds a sidecar of version 1 with one thread region of cap
// events per half: half 0 written (state 3), half 1 being filled with n
// complete records (pad = gen 2) followed by one stale record of
// generation 1.
func liveFile(capN, n int) []byte { return liveFileV(1, capN, n) }

// liveFileV builds liveFile's sidecar in version v (2: 128-byte region
// headers; the caller fills the in-flight slot and the end record).
func liveFileV(v uint32, capN, n int) []byte {
	liveRegionHdr := liveRegionHdr1
	if v == 2 {
		liveRegionHdr = liveRegionHdr2
	}
	b := make([]byte, livePage)
	copy(b, "GCKLIVE1")
	binary.LittleEndian.PutUint32(b[8:], v)
	binary.LittleEndian.PutUint32(b[12:], liveRecordSize)
	size := liveRegionHdr + 2*capN*liveRecordSize
	r := make([]byte, (size+livePage-1)/livePage*livePage)
	copy(r, "GCKTHRD1")
	binary.LittleEndian.PutUint32(r[8:], uint32(capN))
	binary.LittleEndian.PutUint32(r[24:], 1) // half 0: gen 1, written
	binary.LittleEndian.PutUint32(r[28:], 3)
	binary.LittleEndian.PutUint32(r[40:], 2) // half 1: gen 2, filling
	binary.LittleEndian.PutUint32(r[44:], 1)
	for i := 0; i <= n && i < capN; i++ {
		e := r[liveRegionHdr+(capN+i)*liveRecordSize:]
		binary.LittleEndian.PutUint64(e[0:], uint64(1000+i))
		binary.LittleEndian.PutUint64(e[8:], uint64(1010+i))
		binary.LittleEndian.PutUint16(e[52:], uint16(OpBarrier))
		gen := uint32(2)
		if i == n {
			gen = 1 // a record of the previous fill: not this half's
		}
		binary.LittleEndian.PutUint32(e[68:], gen)
	}
	return append(b, r...)
}

func TestReadLive_RecoversCompleteRecordsAndNeverPanics(t *testing.T) {
	dir := t.TempDir()
	good := liveFile(16, 5)
	for _, tc := range []struct {
		name    string
		data    []byte
		events  int
		errPart string
	}{
		{"five complete records", good, 5, ""},
		{"truncated region", good[:livePage+100], 0, "do not fit"},
		{"not a sidecar", []byte("hello"), 0, "not a gclock live sidecar"},
		{"other version", func() []byte { b := append([]byte(nil), good...); b[8] = 9; return b }(), 0, "version 9"},
		{"header only", good[:livePage], 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+LiveSuffix)
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			rec, err := ReadLive(p)
			if tc.errPart == "" && err != nil || tc.errPart != "" && (err == nil || !strings.Contains(err.Error(), tc.errPart)) {
				t.Fatalf("error %v, want one containing %q", err, tc.errPart)
			}
			n := 0
			if rec != nil {
				n = len(rec.Events())
			}
			if n != tc.events {
				t.Errorf("%d events recovered, want %d", n, tc.events)
			}
			if n > 0 && (rec.Events()[4].EnterNS != 1004 || rec.LastNS != 1014 || rec.Halves[0].Handed) {
				t.Errorf("recovered %+v, last %d", rec.Events()[4], rec.LastNS)
			}
		})
	}
	if _, err := ReadLive(filepath.Join(dir, "absent"+LiveSuffix)); err != ErrNoLive {
		t.Errorf("a missing sidecar: %v, want ErrNoLive", err)
	}
}

func TestReadLive_Version2ReadsInFlightCallAndEnd(t *testing.T) {
	le := binary.LittleEndian
	b := liveFileV(2, 16, 3)
	r := b[livePage:]
	le.PutUint32(r[16:], 4242) // tid
	fl := r[64:128]
	le.PutUint64(fl[0:], 5000)
	le.PutUint64(fl[8:], 0x401234)
	le.PutUint32(fl[16:], 0)
	le.PutUint32(fl[20:], 7)
	le.PutUint32(fl[24:], 1)                  // peer
	le.PutUint32(fl[28:], 9)                  // tag
	le.PutUint32(fl[32:], uint32(0x80000000)) // root: none
	le.PutUint32(fl[36:], uint32(0x80000000))
	le.PutUint32(fl[40:], uint32(0x80000000))
	le.PutUint16(fl[48:], uint16(OpRecv))
	le.PutUint32(fl[60:], 1)
	end := b[64:128]
	le.PutUint32(end[0:], 2)
	le.PutUint32(end[4:], 2)
	le.PutUint64(end[8:], 6000)
	le.PutUint32(end[16:], 11)
	le.PutUint64(end[24:], 0x10)
	le.PutUint32(end[48:], 0)
	cases := []struct {
		name     string
		mark     uint32
		state    uint32
		inflight int
		partial  bool
	}{
		{"marked call and complete end", 1, 2, 1, false},
		{"mark cleared: no call in flight", 0, 2, 0, false},
		{"end being written when the process died", 1, 1, 1, true},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := append([]byte(nil), b...)
			le.PutUint32(d[livePage+64+60:], tc.mark)
			le.PutUint32(d[64:], tc.state)
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+LiveSuffix)
			if err := os.WriteFile(p, d, 0o644); err != nil {
				t.Fatal(err)
			}
			rec, err := ReadLive(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Events()) != 3 || rec.Version != 2 || rec.Tids[0] != 4242 {
				t.Fatalf("version %d, %d events, tids %v", rec.Version, len(rec.Events()), rec.Tids)
			}
			if len(rec.InFlight) != tc.inflight {
				t.Fatalf("%d calls in flight, want %d", len(rec.InFlight), tc.inflight)
			}
			if tc.inflight > 0 {
				f := rec.InFlight[0]
				if f.Op != OpRecv || f.EnterNS != 5000 || f.Peer != 1 || f.Tag != 9 || f.Root != NoArg || f.Seq != 7 || f.Comm != 0 {
					t.Errorf("in flight %+v", f)
				}
			}
			if rec.End == nil || rec.End.Kind != EndSignal || rec.End.Code != 11 || rec.End.Addr != 0x10 || rec.End.Partial != tc.partial {
				t.Errorf("end %+v", rec.End)
			}
			if rec.LastCall[0] == nil || rec.LastCall[0].EnterNS != 1002 {
				t.Errorf("last call %+v", rec.LastCall[0])
			}
		})
	}
}
