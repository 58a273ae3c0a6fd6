package trace

import (
	"bytes"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func iota32(first, n, stride int32) []int32 {
	m := make([]int32, n)
	for i := range m {
		m[i] = first + int32(i)*stride
	}
	return m
}

// worldWriter writes a test header with the given world size into buf.
func worldWriter(t testing.TB, buf *bytes.Buffer, worldSize int) *Writer {
	t.Helper()
	h := testHeader()
	h.WorldSize = worldSize
	w, err := NewWriter(buf, h)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestPackMembers_RunsWhereShorter: the usual communicators pack into one
// run or a few, a list without structure is left as it is, and every
// packing expands back to the list.
func TestPackMembers_RunsWhereShorter(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	random := make([]int32, 1000)
	for i := range random {
		random[i] = rng.Int31n(1 << 20)
	}
	for _, c := range []struct {
		name    string
		members []int32
		runs    int // triples expected; 0: left as a list
	}{
		{"world of 100,000", iota32(0, 100000, 1), 1},
		{"a split's block", iota32(4096, 4096, 1), 1},
		{"a grid's column", iota32(3, 128, 64), 1},
		{"reversed", iota32(99, 100, -1), 1},
		{"two blocks", append(iota32(0, 50, 1), iota32(100, 50, 1)...), 2},
		{"a node of 4 (short lists stay lists)", iota32(8, 3, 1), 0},
		{"random", random, 0},
		{"the widest strides", []int32{0, math.MaxInt32, 0, math.MaxInt32, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 3},
		{"a negative value (no world rank: left as a list)", []int32{-32766, 0, 1, 2, 3, 4, 5}, 0},
		{"nil", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := PackMembers(c.members)
			if len(runs) != 3*c.runs {
				t.Fatalf("PackMembers gave %d values (%v...), want %d runs", len(runs), runs[:min(len(runs), 9)], c.runs)
			}
			if runs == nil {
				return
			}
			got, err := UnpackMembers(runs, len(c.members))
			if err != nil || !reflect.DeepEqual(got, c.members) {
				t.Fatalf("UnpackMembers(%v) = %d members, %v; want the %d packed", runs, len(got), err, len(c.members))
			}
		})
	}
}

// TestUnpackMembers_RefusesBadRuns: what a damaged or hostile frame may
// hold is an error naming it, never a panic or an allocation past limit.
func TestUnpackMembers_RefusesBadRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		runs []int32
		want string
	}{
		{"not triples", []int32{0, 4}, "want triples"},
		{"empty run", []int32{0, 0, 1}, "has 0 members"},
		{"negative count", []int32{0, -5, 1}, "has -5 members"},
		{"negative rank", []int32{-1, 2, 1}, "leaves the world ranks"},
		{"runs below 0", []int32{5, 10, -1}, "leaves the world ranks"},
		{"runs past 2^31", []int32{math.MaxInt32 - 1, 4, 1}, "leaves the world ranks"},
		{"more than the limit", []int32{0, math.MaxInt32, 0}, "more than 1000 members"},
		{"more than the limit in sum", []int32{0, 600, 1, 0, 600, 1}, "more than 1000 members"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := UnpackMembers(c.runs, 1000)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("UnpackMembers(%v) = %d members, %v; want an error with %q", c.runs, len(got), err, c.want)
			}
		})
	}
}

// TestReader_MemberRuns: a world of 100,000 ranks costs its COMM frame a
// few bytes and reads back whole; a frame with bad runs or with both a
// list and runs is reported as damage and the rest of the file is read.
func TestReader_MemberRuns(t *testing.T) {
	var buf bytes.Buffer
	w := worldWriter(t, &buf, 100000)
	world := iota32(0, 100000, 1)
	before := w.Offset()
	if err := w.WriteComm(Comm{ID: CommWorldID, Local: 0, Kind: "world", Members: world}); err != nil {
		t.Fatal(err)
	}
	if n := w.Offset() - before; n > 128 {
		t.Errorf("world of 100,000 ranks: COMM frame of %d bytes, want at most 128 (the list: 500 kB)", n)
	}
	for _, c := range []Comm{
		{ID: 20, Local: 2, Kind: "split", Runs: []int32{0, 200000, 1}},                    // more than the world
		{ID: 21, Local: 3, Kind: "split", Members: []int32{1, 2}, Runs: []int32{1, 2, 1}}, // both
		{ID: 22, Local: 4, Kind: "split", Members: iota32(10, 500, 2)},
	} {
		if err := w.WriteComm(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(Footer{Reason: "finalize"}); err != nil {
		t.Fatal(err)
	}
	r, _, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if c, ok := m.CommByLocal(0); !ok || !reflect.DeepEqual(c.Members, world) || c.Runs != nil {
		t.Errorf("world read back: ok %v, %d members, runs %v; want the 100,000 and no runs", ok, len(c.Members), c.Runs)
	}
	if c, ok := m.CommByLocal(4); !ok || !reflect.DeepEqual(c.Members, iota32(10, 500, 2)) {
		t.Errorf("strided split read back: ok %v, %d members", ok, len(c.Members))
	}
	r2, _, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if c2, _ := r2.Meta().CommByLocal(0); len(c2.Members) != len(world) || &c2.Members[0] != &m.Comms[0].Members[0] {
		t.Errorf("a second reader of the same world runs: %d members, not the first reader's list", len(c2.Members))
	}
	var errs []string
	for _, d := range m.Damage {
		errs = append(errs, d.Err)
	}
	all := strings.Join(errs, "\n")
	if len(errs) != 2 || !strings.Contains(all, "communicator 0x14: member runs: more than 100000 members") ||
		!strings.Contains(all, "communicator 0x15 gives both a member list and member runs") {
		t.Errorf("damage:\n%s\nwant the two bad frames named", all)
	}
}

// BenchmarkReader_WorldOfManyRanks opens a rank file of a 10,000-rank run
// (its world and two splits' member lists), what tracemerge does 10,000
// times for such a run.
func BenchmarkReader_WorldOfManyRanks(b *testing.B) {
	var buf bytes.Buffer
	w := worldWriter(b, &buf, 10000)
	for _, c := range []Comm{
		{ID: CommWorldID, Local: 0, Kind: "world", Members: iota32(0, 10000, 1)},
		{ID: 30, Local: 2, Kind: "split", Members: iota32(0, 5000, 1)},
		{ID: 31, Local: 3, Kind: "split", Members: iota32(7, 100, 100)},
	} {
		if err := w.WriteComm(c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "file-bytes")
	benchOpen(b, buf.Bytes(), func(m *Meta) int { return len(m.Comms) }, 3)
}
