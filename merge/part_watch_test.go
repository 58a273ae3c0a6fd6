package merge

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitingOn starts a reader of net's inbox (src, tag) waiting for round
// and returns once it waits; the returned function ends the wait.
func waitingOn(t *testing.T, net *partNet, src, tag int, round int32) func() {
	t.Helper()
	b := net.box(src, tag)
	done := make(chan struct{})
	go func() {
		b.get(round)
		close(done)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		b.mu.Lock()
		w := b.waiting
		b.mu.Unlock()
		if w {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader did not start waiting within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	return func() {
		b.put(partMsg{})
		<-done
	}
}

func TestPartWatch_NamesTheRoundAndPeerOfAWaitWithoutProgress(t *testing.T) {
	const after = time.Minute
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, net *partNet) func()
		later time.Duration // when the watchdog looks, after the wait began
		want  []string      // substrings of the one line expected; nil: no line
	}{
		{"owner waiting for a decoder's round", func(t *testing.T, net *partNet) func() {
			return waitingOn(t, net, 3, tagData, 5)
		}, after, []string{"process 2 has waited", "collective events (decoder to owner) from process 3 (round 5)"}},
		{"decoder waiting for process 0's acknowledgement", func(t *testing.T, net *partNet) func() {
			return waitingOn(t, net, 0, tagAck0, 12)
		}, 3 * after, []string{"process 2 has waited 3m1s", "process 0's acknowledgement from process 0 (round 12)"}},
		{"process 0 waiting for an end record", func(t *testing.T, net *partNet) func() {
			return waitingOn(t, net, 4, tagEndOwn, -1)
		}, after, []string{"an owner's end record from process 4 (the end)"}},
		{"a send the receiver does not take", func(t *testing.T, net *partNet) func() {
			return net.sending(3, tagData, 7, 4080)
		}, after, []string{"process 2 has waited", "to send collective events (decoder to owner) of round 7 (4080 bytes) to process 3"}},
		{"a short wait is not reported", func(t *testing.T, net *partNet) func() {
			return waitingOn(t, net, 3, tagData, 5)
		}, after - time.Second, nil},
		{"a short send is not reported", func(t *testing.T, net *partNet) func() {
			return net.sending(3, tagData, 7, 4080)
		}, after / 2, nil},
		{"a message queued is no wait", func(t *testing.T, net *partNet) func() {
			net.box(3, tagData).put(partMsg{})
			return func() {}
		}, 10 * after, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net := &partNet{me: 2, boxes: map[[2]int]*inbox{}}
			begin := time.Now()
			end := tc.setup(t, net)
			defer end()
			got := net.stalled(begin.Add(tc.later+time.Second), after)
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("reported %q, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("reported %q, want one line", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("line %q lacks %q", got[0], w)
				}
			}
			// Said once per period, then again.
			if again := net.stalled(begin.Add(tc.later+2*time.Second), after); len(again) != 0 {
				t.Errorf("reported again at once: %q", again)
			}
			if again := net.stalled(begin.Add(tc.later+after+2*time.Second), after); len(again) != 1 {
				t.Errorf("not reported again a period later: %q", again)
			}
		})
	}
}

// syncBuf is a bytes.Buffer safe for the watchdog's goroutine.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPartWatch_WritesAStalledWaitToItsWriterAndStops(t *testing.T) {
	net := &partNet{me: 1, boxes: map[[2]int]*inbox{}}
	var out syncBuf
	net.startWatch(&out, 20*time.Millisecond, 5*time.Millisecond)
	end := waitingOn(t, net, 6, tagAckOwn, 9)
	want := "process 1 has waited"
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no watchdog line within 10 s; got %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "an owner's acknowledgement from process 6 (round 9)") {
		t.Errorf("line %q does not name the peer and round", out.String())
	}
	end()
	net.stopWatch()
	net.stopWatch() // twice is harmless
}
