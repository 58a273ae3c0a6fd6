package merge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// feedShared feeds n events (Seq = index) to g's sinks as
// analyzer.consume does: the window sink first when inWin(i), then the
// stream sink. It returns the expected sequences of a window and a
// stream member.
func feedShared(t *testing.T, g *SharedAsync, n int, inWin func(int) bool) (win, all []uint32) {
	t.Helper()
	wsink, ssink := g.sinks()
	for i := 0; i < n; i++ {
		ev := &datamodel.GEvent{Seq: uint32(i), Rank: int32(i % 7)}
		if inWin(i) {
			win = append(win, uint32(i))
			if wsink != nil {
				if err := wsink.Add(ev); err != nil {
					t.Fatal(err)
				}
			}
		}
		all = append(all, uint32(i))
		if ssink != nil {
			if err := ssink.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	return win, all
}

func sameSeqs(got, want []uint32) error {
	if len(got) != len(want) {
		return fmt.Errorf("saw %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("event %d has seq %d, want %d", i, got[i], want[i])
		}
	}
	return nil
}

// TestSharedAsync_MembersSeeTheirEventsInOrder: every window member
// receives exactly the events in the window and every stream member all
// events, in order, whatever the window's shape across batches.
func TestSharedAsync_MembersSeeTheirEventsInOrder(t *testing.T) {
	const n = 3*asyncBatch + 17
	windows := []struct {
		name string
		in   func(int) bool
	}{
		{"all", func(int) bool { return true }},
		{"none", func(int) bool { return false }},
		{"middle across batches", func(i int) bool { return i >= asyncBatch-5 && i < 2*asyncBatch+9 }},
		{"ends at a batch end", func(i int) bool { return i >= 10 && i < asyncBatch }},
		{"starts at a batch start", func(i int) bool { return i >= asyncBatch }},
		{"alternating", func(i int) bool { return i%3 != 1 }},
	}
	members := []struct {
		name      string
		win, strm int
	}{
		{"window only", 2, 0},
		{"stream only", 0, 2},
		{"both", 2, 1},
	}
	for _, w := range windows {
		for _, mb := range members {
			t.Run(w.name+"/"+mb.name, func(t *testing.T) {
				g := NewSharedAsync()
				var ws, ss []*orderSink
				for i := 0; i < mb.win; i++ {
					ws = append(ws, &orderSink{})
					g.AddWindow(ws[i])
				}
				for i := 0; i < mb.strm; i++ {
					ss = append(ss, &orderSink{})
					g.AddStream(ss[i])
				}
				win, all := feedShared(t, g, n, w.in)
				if err := g.Close(); err != nil {
					t.Fatal(err)
				}
				for i, o := range ws {
					if err := sameSeqs(o.seen, win); err != nil {
						t.Errorf("window member %d: %v", i, err)
					}
				}
				for i, o := range ss {
					if err := sameSeqs(o.seen, all); err != nil {
						t.Errorf("stream member %d: %v", i, err)
					}
				}
			})
		}
	}
}

// gateSink holds its first event until gate is closed, then records.
type gateSink struct {
	orderSink
	gate <-chan struct{}
}

func (s *gateSink) Add(ev *datamodel.GEvent) error {
	if len(s.seen) == 0 {
		<-s.gate
	}
	return s.orderSink.Add(ev)
}

// countSink records and closes reached once it has seen n events.
type countSink struct {
	orderSink
	n       int
	reached chan struct{}
}

func (s *countSink) Add(ev *datamodel.GEvent) error {
	if err := s.orderSink.Add(ev); err != nil {
		return err
	}
	if len(s.seen) == s.n {
		close(s.reached)
	}
	return nil
}

// TestSharedAsync_BatchReusedOnlyAfterEveryMember: a member that holds
// its first batch while another runs several batches ahead still reads
// its batches unchanged: a batch goes back for reuse only when its last
// reader is done.
func TestSharedAsync_BatchReusedOnlyAfterEveryMember(t *testing.T) {
	const n = 8*asyncBatch + 3
	fast := &countSink{n: 3 * asyncBatch, reached: make(chan struct{})}
	slow := &gateSink{gate: fast.reached}
	g := NewSharedAsync()
	g.AddStream(slow)
	g.AddStream(fast)
	_, all := feedShared(t, g, n, func(int) bool { return false })
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sameSeqs(slow.seen, all); err != nil {
		t.Errorf("held member: %v", err)
	}
	if err := sameSeqs(fast.seen, all); err != nil {
		t.Errorf("other member: %v", err)
	}
}

// panicSink panics at its first event.
type panicSink struct{}

func (panicSink) Add(*datamodel.GEvent) error { panic("broken writer") }

// TestSharedAsync_ReportsAMembersErrorOrPanic: a member's error or panic
// comes back from Close (and stops the pass's Add), and Close returns
// after the other members are done, never blocking the merge.
func TestSharedAsync_ReportsAMembersErrorOrPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  datamodel.Sink
		want string
	}{
		{"error", &orderSink{failAt: 10}, "disk full"},
		{"panic", panicSink{}, "output writer failed: broken writer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewSharedAsync()
			g.AddWindow(&orderSink{})
			g.AddWindow(tc.bad)
			g.AddStream(&orderSink{})
			wsink, ssink := g.sinks()
			var addErr error
			for i := 0; i < 20*asyncBatch && addErr == nil; i++ {
				ev := &datamodel.GEvent{Seq: uint32(i)}
				if addErr = wsink.Add(ev); addErr == nil {
					addErr = ssink.Add(ev)
				}
			}
			if addErr == nil || !strings.Contains(addErr.Error(), tc.want) {
				t.Errorf("Add = %v, want the member's error %q", addErr, tc.want)
			}
			if err := g.Close(); err == nil || err.Error() != tc.want {
				t.Errorf("Close = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSharedAsync_PassGivesMembersWhatPlainSinksGet: attached to a pass
// with a window, a window member gets the events a plain window sink
// gets and a stream member those of a plain stream sink, in the same
// order (this rests on analyzer.consume calling the window sinks before
// the stream sinks).
func TestSharedAsync_PassGivesMembersWhatPlainSinksGet(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 4, Steps: 3000, Seed: 51})
	all, _ := analyzeDir(t, dir, Options{})
	span := all.Analysis.EndNS - all.RunStartNS
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"whole run", Options{}},
		{"window", Options{From: span / 4, To: span / 2, HasTo: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := rundir.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			pass, err := Prepare(run, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			plainWin, plainStr := &collect{}, &collect{}
			sharedWin, sharedStr := &collect{}, &collect{}
			pass.AddSink(plainWin)
			pass.AddStreamSink(plainStr)
			g := NewSharedAsync()
			g.AddWindow(sharedWin)
			g.AddStream(sharedStr)
			g.Attach(pass)
			_, err = pass.Run()
			if cerr := g.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(plainWin.ev) == 0 || tc.opt.HasTo && len(plainWin.ev) == len(plainStr.ev) {
				t.Fatalf("window %d events of %d: the test needs a window that leaves some out", len(plainWin.ev), len(plainStr.ev))
			}
			for _, c := range []struct {
				name        string
				plain, shrd []datamodel.GEvent
			}{{"window", plainWin.ev, sharedWin.ev}, {"stream", plainStr.ev, sharedStr.ev}} {
				if len(c.shrd) != len(c.plain) {
					t.Errorf("%s member: %d events, plain sink %d", c.name, len(c.shrd), len(c.plain))
					continue
				}
				for i := range c.plain {
					if c.shrd[i] != c.plain[i] {
						t.Errorf("%s member: event %d = %+v, plain sink %+v", c.name, i, c.shrd[i], c.plain[i])
						break
					}
				}
			}
		})
	}
}
