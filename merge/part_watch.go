// The watchdog of a partitioned pass (part.go): a process that makes no
// progress for a long time says on stderr what it waits for, so that a
// hang is never silent. It only reports; it does not abort.

package merge

import (
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/gclock/gclock/merge/datamodel"
)

// Defaults of partNet's watchdog.
const (
	partWatchAfter = 2 * time.Minute  // a wait this long is reported (and again after as long)
	partWatchTick  = 10 * time.Second // how often the watchdog looks
)

// partTagName names the stream of a tag in the watchdog's lines.
func partTagName(tag int) string {
	switch tag {
	case tagData:
		return "collective events (decoder to owner)"
	case tagStream:
		return "stream events (decoder to process 0)"
	case tagRes:
		return "instance records (owner to process 0)"
	case tagP2PRes:
		return "point-to-point records (owner to process 0)"
	case tagAckOwn:
		return "an owner's acknowledgement"
	case tagAck0:
		return "process 0's acknowledgement"
	case tagEndDec:
		return "a decoder's end record"
	case tagEndOwn:
		return "an owner's end record"
	case tagWorstReq:
		return "process 0's request for the worst instances"
	case tagWorstRes:
		return "the worst instances (owner to process 0)"
	}
	return fmt.Sprintf("messages of tag %d", tag)
}

// partSending is a send to another process that has not returned yet.
type partSending struct {
	dest, tag int
	round     int32
	n         int
	since     time.Time
	said      time.Time
}

// watchState is what the watchdog reads besides the inboxes' waits: the
// pending sends.
type watchState struct {
	mu    sync.Mutex
	sends map[*partSending]struct{}
	stop  chan struct{}
	once  sync.Once
}

// startWatch starts the watchdog of n (reporting to w the waits of at
// least after, looking every tick); stopWatch ends it.
func (n *partNet) startWatch(w io.Writer, after, tick time.Duration) {
	n.watch.stop = make(chan struct{})
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-n.watch.stop:
				return
			case now := <-t.C:
				for _, l := range n.stalled(now, after) {
					fmt.Fprintln(w, l)
				}
			}
		}
	}()
}

func (n *partNet) stopWatch() {
	if n.watch.stop != nil {
		n.watch.once.Do(func() { close(n.watch.stop) })
	}
}

// sending registers a send to another process until done is called.
func (n *partNet) sending(dest, tag int, round int32, bytes int) (done func()) {
	s := &partSending{dest: dest, tag: tag, round: round, n: bytes, since: time.Now()}
	n.watch.mu.Lock()
	if n.watch.sends == nil {
		n.watch.sends = map[*partSending]struct{}{}
	}
	n.watch.sends[s] = struct{}{}
	n.watch.mu.Unlock()
	return func() {
		n.watch.mu.Lock()
		delete(n.watch.sends, s)
		n.watch.mu.Unlock()
	}
}

// stalled returns a line for every wait (an inbox's reader, a send) that
// has lasted at least after and was not reported within after.
func (n *partNet) stalled(now time.Time, after time.Duration) []string {
	var out []string
	due := func(since time.Time, said *time.Time) bool {
		if now.Sub(since) < after || now.Sub(*said) < after {
			return false
		}
		*said = now
		return true
	}
	n.mu.Lock()
	boxes := make([]*inbox, 0, len(n.boxes))
	for _, b := range n.boxes {
		boxes = append(boxes, b)
	}
	n.mu.Unlock()
	for _, b := range boxes {
		b.mu.Lock()
		if b.waiting && due(b.since, &b.said) {
			what := fmt.Sprintf("round %d", b.round)
			if b.round < 0 {
				what = "the end"
			}
			out = append(out, fmt.Sprintf("tracemerge: parallel analysis: process %d has waited %s for %s from process %d (%s); nothing received on that stream since",
				n.me, now.Sub(b.since).Round(time.Second), partTagName(b.tag), b.src, what))
		}
		b.mu.Unlock()
	}
	n.watch.mu.Lock()
	for s := range n.watch.sends {
		if due(s.since, &s.said) {
			out = append(out, fmt.Sprintf("tracemerge: parallel analysis: process %d has waited %s to send %s of round %d (%d bytes) to process %d, which has not taken them",
				n.me, now.Sub(s.since).Round(time.Second), partTagName(s.tag), s.round, s.n, s.dest))
		}
	}
	n.watch.mu.Unlock()
	sort.Strings(out)
	return out
}

// newPartNet returns the partitioned pass's messages over t for process
// me, its watchdog reporting to stderr.
func newPartNet(t Transport, me int) *partNet {
	n := &partNet{t: t, me: me, boxes: map[[2]int]*inbox{}, free: make(chan []datamodel.GEvent, partFree)}
	n.startWatch(os.Stderr, partWatchAfter, partWatchTick)
	return n
}
