package trace

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// liveFile builds a sidecar with one thread region of cap events per half:
// half 0 written (state 3), half 1 being filled with n complete records
// (pad = gen 2) followed by one stale record of generation 1.
func liveFile(capN, n int) []byte {
	b := make([]byte, livePage)
	copy(b, "GCKLIVE1")
	binary.LittleEndian.PutUint32(b[8:], 1)
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
