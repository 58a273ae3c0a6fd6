package trace

import (
	"encoding/binary"
	"fmt"
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

// A version 3 sidecar with one thread region: half 0 written (generation
// 2), half 1 being filled (generation 3) with two complete records, then
// the record a call marks in flight (index 2), which holds a record of
// generation 1 (the fill before last) when the image starts.
const (
	v3Cap      = 8
	v3Gen      = 3
	v3Complete = 2
)

func liveFileV3() []byte {
	le := binary.LittleEndian
	b := make([]byte, livePage)
	copy(b, "GCKLIVE1")
	le.PutUint32(b[8:], 3)
	le.PutUint32(b[12:], liveRecordSize)
	size := liveRegionHdr2 + 2*v3Cap*liveRecordSize
	r := make([]byte, (size+livePage-1)/livePage*livePage)
	copy(r, "GCKTHRD1")
	le.PutUint32(r[8:], v3Cap)
	le.PutUint32(r[24:], v3Gen-1) // half 0: written
	le.PutUint32(r[28:], 3)
	le.PutUint32(r[40:], v3Gen) // half 1: being filled
	le.PutUint32(r[44:], liveFilling)
	for i := 0; i < v3Cap; i++ {
		e := r[liveRegionHdr2+(v3Cap+i)*liveRecordSize:]
		le.PutUint64(e[0:], uint64(1000+i))
		le.PutUint64(e[8:], uint64(1010+i))
		le.PutUint16(e[52:], uint16(OpBarrier))
		gen := uint32(v3Gen)
		if i >= v3Complete {
			gen = v3Gen - 2 // of the fill before last
			le.PutUint16(e[54:], liveFlfPeer|liveFlfPeer2|liveFlfCount|liveFlfSeq|liveFlfRoot)
		}
		le.PutUint32(e[68:], gen)
	}
	return append(b, r...)
}

// slotOff is the byte offset of the marked record in liveFileV3's image.
const slotOff = livePage + liveRegionHdr2 + (v3Cap+v3Complete)*liveRecordSize

// recStore is one store of a wrapper into the record: bytes at an offset.
type recStore struct {
	off int
	val []byte
}

func u32(off int, v uint32) recStore {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, v)
	return recStore{off, b}
}

func u64(off int, v uint64) recStore {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return recStore{off, b}
}

func u16(off int, v uint16) recStore {
	b := make([]byte, 2)
	binary.LittleEndian.PutUint16(b, v)
	return recStore{off, b}
}

func padStore(v uint32) recStore { return u32(68, v) }

// flightPath is what one kind of wrapper stores into its record, in the
// order the recorder's C code guarantees (cshim/hotpath.c gclock_fl_enter
// and gclock_record, cshim/requests.c gclock_put_same, gclock_fl_clear):
// entry (any order among themselves), the mark, then for each exit phase
// its stores (any order) followed by its ordered store of the pad.
type flightPath struct {
	name   string
	entry  []recStore
	exit   [][]recStore // phases: unordered stores; each phase ends with phaseEnd[i]
	phaseE []recStore   // the ordered pad store closing each phase
	want   InFlight     // the call in flight while marked
	final  *Event       // the returned call's record; nil: no record
}

func TestReadLive_Version3MarkedRecordIsNeverAReturnedCall(t *testing.T) {
	const fl = liveFlightMark
	paths := []flightPath{
		{
			name: "blocking collective (gclock_fl_enter coll, gclock_record)",
			entry: []recStore{u64(0, 5000), u64(32, 0x401000), u32(40, 0), u32(44, 41), u32(56, 0), u32(60, 0),
				u32(64, 0), u32(48, 2), u16(52, uint16(OpBcast)), u16(54, liveFlfSeq|liveFlfRoot)},
			exit:   [][]recStore{{u64(8, 5300), u64(16, 64), u64(24, 64)}},
			phaseE: []recStore{padStore(v3Gen)},
			want: InFlight{Op: OpBcast, EnterNS: 5000, Site: 0x401000, Comm: 0, Seq: 41, Root: 2, Peer: NoArg, Tag: NoArg,
				Peer2: NoArg, Tag2: NoArg, WorldPeers: true},
			final: &Event{EnterNS: 5000, ExitNS: 5300, Sent: 64, Recv: 64, Callsite: 0x401000, Comm: 0, Seq: 41, Root: 2, Op: OpBcast},
		},
		{
			name: "request start (GCK_SAME_LOC: stays marked while its exit goes in)",
			entry: []recStore{u64(0, 6000), u64(32, 0x402000), u32(40, 1), u32(56, 3), u32(60, 7),
				u32(48, 0xffffffff), u16(52, uint16(OpIsend)), u16(54, liveFlfPeer)},
			exit:   [][]recStore{{u64(8, 6040), u64(16, 800), u64(24, 0), u32(44, 0), u32(64, 4097)}},
			phaseE: []recStore{padStore(v3Gen)},
			want: InFlight{Op: OpIsend, EnterNS: 6000, Site: 0x402000, Comm: 1, Root: NoArg, Peer: 3, Tag: 7,
				Peer2: NoArg, Tag2: NoArg, WorldPeers: true},
			final: &Event{EnterNS: 6000, ExitNS: 6040, Sent: 800, Callsite: 0x402000, Comm: 1, Root: -1, Op: OpIsend,
				Peer: 3, Tag: 7, Req: 4097},
		},
		{
			name: "completion (unmarked before its exit fields)",
			entry: []recStore{u64(0, 7000), u64(32, 0x403000), u32(40, 0xffffffff), u32(64, 5),
				u32(48, 0xffffffff), u16(52, uint16(OpWaitall)), u16(54, liveFlfCount)},
			exit: [][]recStore{{}, {u32(40, 2), u32(48, 0xffffffff), u32(56, 1), u32(60, 9), u64(8, 7500),
				u64(16, 0), u64(24, 128), u32(44, 0), u32(64, 4098)}},
			phaseE: []recStore{padStore(0), padStore(v3Gen)},
			want: InFlight{Op: OpWaitall, EnterNS: 7000, Site: 0x403000, Comm: -1, Root: NoArg, Peer: NoArg, Tag: NoArg,
				Peer2: NoArg, Tag2: NoArg, Requests: 5, WorldPeers: true},
			final: &Event{EnterNS: 7000, ExitNS: 7500, Recv: 128, Callsite: 0x403000, Comm: 2, Root: -1, Op: OpWaitall,
				Peer: 1, Tag: 9, Req: 4098},
		},
		{
			name: "MPI_Sendrecv (both sides marked, unmarked before its exit)",
			entry: []recStore{u64(0, 8000), u64(32, 0x404000), u32(40, 0), u32(56, 1), u32(60, 7),
				u64(8, uint64(2)|uint64(8)<<32), u32(48, 0xffffffff), u16(52, uint16(OpSendrecv)),
				u16(54, liveFlfPeer|liveFlfPeer2)},
			exit: [][]recStore{{}, {u32(40, 0), u32(48, 0xffffffff), u32(56, 2), u32(60, 8), u64(8, 8100),
				u64(16, 16), u64(24, 0), u32(44, 0), u32(64, 0)}},
			phaseE: []recStore{padStore(0), padStore(v3Gen)},
			want: InFlight{Op: OpSendrecv, EnterNS: 8000, Site: 0x404000, Comm: 0, Root: NoArg, Peer: 1, Tag: 7,
				Peer2: 2, Tag2: 8, WorldPeers: true},
			final: &Event{EnterNS: 8000, ExitNS: 8100, Sent: 16, Callsite: 0x404000, Comm: 0, Root: -1, Op: OpSendrecv,
				Peer: 2, Tag: 8},
		},
		{
			name: "a call that made no record (a poll miss: gclock_fl_leave clears it)",
			entry: []recStore{u64(0, 9000), u64(32, 0x405000), u32(40, 0xffffffff), u32(64, 1),
				u32(48, 0xffffffff), u16(52, uint16(OpTest)), u16(54, liveFlfCount)},
			exit:   [][]recStore{{}},
			phaseE: []recStore{padStore(0)},
			want: InFlight{Op: OpTest, EnterNS: 9000, Site: 0x405000, Comm: -1, Root: NoArg, Peer: NoArg, Tag: NoArg,
				Peer2: NoArg, Tag2: NoArg, Requests: 1, WorldPeers: true},
		},
	}
	base := liveFileV3()
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			// check reads img and asserts what it must show: marked (the
			// call in flight, exactly as entered), returned (its record,
			// exactly), or neither.
			check := func(stage string, img []byte, marked, returned bool) {
				t.Helper()
				rec, err := parseLive("image", img)
				if err != nil {
					t.Fatalf("%s: %v", stage, err)
				}
				evs := rec.Events()
				wantN := v3Complete
				if returned {
					wantN++
				}
				if len(evs) != wantN {
					t.Fatalf("%s: %d events, want %d (a half-written record read as a returned call?)", stage, len(evs), wantN)
				}
				if returned && evs[wantN-1] != *p.final {
					t.Fatalf("%s: returned record %+v, want %+v", stage, evs[wantN-1], *p.final)
				}
				switch {
				case marked && len(rec.InFlight) != 1:
					t.Fatalf("%s: %d calls in flight, want the marked one", stage, len(rec.InFlight))
				case marked && rec.InFlight[0] != p.want:
					t.Fatalf("%s: in flight %+v, want %+v (torn)", stage, rec.InFlight[0], p.want)
				case !marked && len(rec.InFlight) != 0:
					t.Fatalf("%s: in flight %+v, want none", stage, rec.InFlight)
				}
			}
			apply := func(img []byte, ss []recStore) {
				for _, s := range ss {
					copy(img[slotOff+s.off:], s.val)
				}
			}
			// Entry: any subset of its stores, before the mark.
			for m := 0; m < 1<<len(p.entry); m++ {
				img := append([]byte(nil), base...)
				for i, s := range p.entry {
					if m&(1<<i) != 0 {
						apply(img, []recStore{s})
					}
				}
				check(fmt.Sprintf("entry stores %b of %d, not yet marked", m, len(p.entry)), img, false, false)
			}
			img := append([]byte(nil), base...)
			apply(img, p.entry)
			apply(img, []recStore{padStore(fl)})
			check("marked", img, true, false)
			marked := true
			for ph, ss := range p.exit {
				// any subset of the phase's stores, then its pad
				for m := 0; m < 1<<len(ss); m++ {
					d := append([]byte(nil), img...)
					for i, s := range ss {
						if m&(1<<i) != 0 {
							apply(d, []recStore{s})
						}
					}
					check(fmt.Sprintf("exit phase %d, stores %b of %d", ph, m, len(ss)), d, marked, false)
				}
				apply(img, ss)
				apply(img, []recStore{p.phaseE[ph]})
				marked = binary.LittleEndian.Uint32(p.phaseE[ph].val) == fl
			}
			check("published", img, false, p.final != nil)
		})
	}
}
