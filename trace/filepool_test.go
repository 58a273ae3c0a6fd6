package trace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// openFDs counts this process's open descriptors (Linux).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting open files: %v", err)
	}
	return len(ents)
}

// writeRankFiles writes n rank files of the given chunks into a new
// directory and returns it and each file's events.
func writeRankFiles(t *testing.T, n int, chunks func(i int) [][]Event) (string, [][]Event) {
	t.Helper()
	dir := t.TempDir()
	want := make([][]Event, n)
	for i := range want {
		c := chunks(i)
		data, _ := writeFile(t, c)
		if err := os.WriteFile(filepath.Join(dir, RankFileName(i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		want[i] = concat(c)
	}
	return dir, want
}

// checkPoolRead checks that every reader gave its file's events and the
// pool never held more than limit files.
func checkPoolRead(t *testing.T, got, want [][]Event, limit int) {
	t.Helper()
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("reader %d: %d events, want %d", i, len(got[i]), len(want[i]))
		}
	}
	files.mu.Lock()
	peak := files.peak
	files.mu.Unlock()
	if peak > limit {
		t.Errorf("the pool held %d files at once, want at most %d", peak, limit)
	}
}

// openRankFiles opens the n rank files of dir (closed when the test ends).
func openRankFiles(t *testing.T, dir string, n int) []*Reader {
	t.Helper()
	rs := make([]*Reader, n)
	for i := range rs {
		r, err := Open(filepath.Join(dir, RankFileName(i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		rs[i] = r
	}
	return rs
}

// poolLimit sets the pool's limit for the test and starts counting its
// peak anew.
func poolLimit(t *testing.T, n int) {
	prev := SetOpenFileLimit(n)
	t.Cleanup(func() { SetOpenFileLimit(prev) })
	files.mu.Lock()
	files.peak = files.open
	files.mu.Unlock()
}

// TestOpen_KeepsAtMostTheLimitOpen: 40 readers read in turns, chunk by
// chunk, with room for 4 open files: every event comes back and no more
// than 4 descriptors are held at any time.
func TestOpen_KeepsAtMostTheLimitOpen(t *testing.T) {
	const n = 40
	dir, want := writeRankFiles(t, n, func(i int) [][]Event {
		return [][]Event{amgEvents(30+i, uint64(i+1)), amgEvents(20, uint64(i+1)), amgEvents(10+i, uint64(i+1))}
	})
	poolLimit(t, 4)
	base := openFDs(t)
	rs := openRankFiles(t, dir, n)
	got := make([][]Event, n)
	for live := n; live > 0; {
		live = 0
		for i, r := range rs {
			evs, err := r.NextChunk(nil)
			if err == io.EOF {
				continue
			}
			if err != nil {
				t.Fatalf("reader %d: %v", i, err)
			}
			got[i] = append(got[i], evs...)
			live++
		}
		if fds := openFDs(t); fds > base+4 {
			t.Fatalf("%d descriptors open, %d before the readers: want at most 4 more", fds, base)
		}
	}
	checkPoolRead(t, got, want, 4)
	for _, r := range rs {
		r.Close()
	}
	if fds := openFDs(t); fds != base {
		t.Errorf("%d descriptors open after Close, %d before", fds, base)
	}
}

// TestOpen_ReplacedWhileClosedToMakeRoom: a file replaced (renamed over)
// while its reader's descriptor was closed for another is not read as if
// it were the same file.
func TestOpen_ReplacedWhileClosedToMakeRoom(t *testing.T) {
	dir := t.TempDir()
	data, _ := writeFile(t, [][]Event{amgEvents(10, 1)})
	a, b := filepath.Join(dir, "a.gct"), filepath.Join(dir, "b.gct")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer SetOpenFileLimit(SetOpenFileLimit(1))
	ra, err := Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	rb, err := Open(b) // closes a's descriptor
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	tmp := filepath.Join(dir, "new")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	_, err = ra.NextChunk(nil)
	if err == nil || !strings.Contains(err.Error(), "a.gct was replaced by another file while being read") {
		t.Errorf("reading the replaced file: %v; want it named as replaced", err)
	}
	if _, err := rb.NextChunk(nil); err != nil {
		t.Errorf("the other file: %v", err)
	}
	ra.Close()
	if _, err := ra.r.ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadAt after Close: %v, want os.ErrClosed", err)
	}
}

// TestOpen_ConcurrentReadsWaitForRoom: 12 readers read at once from their
// own goroutines with room for 2 open files: reads wait for a file to be
// free instead of opening past the limit, and all events come back.
func TestOpen_ConcurrentReadsWaitForRoom(t *testing.T) {
	const n = 12
	dir, want := writeRankFiles(t, n, func(i int) [][]Event {
		return [][]Event{amgEvents(40, uint64(i+1)), amgEvents(40+i, uint64(i+2))}
	})
	poolLimit(t, 2)
	duringRead = func() { time.Sleep(200 * time.Microsecond) } // reads overlap
	defer func() { duringRead = nil }()
	rs := openRankFiles(t, dir, n)
	got := make([][]Event, n)
	errs := make(chan error, n)
	for i, r := range rs {
		go func() {
			for round := 0; round < 20; round++ {
				r.Rewind()
				evs, err := r.ReadAll()
				if err != nil {
					errs <- err
					return
				}
				got[i] = evs
			}
			errs <- nil
		}()
	}
	for range rs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkPoolRead(t, got, want, 2)
}

// TestOpen_ReadsInTurnReopenOnlyTheFilesBeyondTheLimit: n files read in
// turn, chunk after chunk (as tracemerge reads a run's ranks), with room
// for fewer: the files read first stay open, so each round opens again
// only the files beyond the limit, not every file (closing the least
// recently read file, every read opened its file again).
func TestOpen_ReadsInTurnReopenOnlyTheFilesBeyondTheLimit(t *testing.T) {
	const n, limit, chunks = 40, 8, 3
	dir, want := writeRankFiles(t, n, func(i int) [][]Event {
		return [][]Event{amgEvents(30+i, uint64(i+1)), amgEvents(20, uint64(i+1)), amgEvents(10+i, uint64(i+1))}
	})
	poolLimit(t, limit)
	files.mu.Lock()
	before := files.opens
	files.mu.Unlock()
	rs := openRankFiles(t, dir, n)
	got := make([][]Event, n)
	for round := 0; round < chunks; round++ {
		for i, r := range rs {
			evs, err := r.NextChunk(nil)
			if err != nil {
				t.Fatalf("reader %d, chunk %d: %v", i, round, err)
			}
			got[i] = append(got[i], evs...)
		}
	}
	checkPoolRead(t, got, want, limit)
	files.mu.Lock()
	opens := files.opens - before
	files.mu.Unlock()
	// n at Open, then per round the n-limit+1 files not kept open
	if most := n + chunks*(n-limit+1); opens > most {
		t.Errorf("%d files opened for %d files of %d chunks read in turn with room for %d, want at most %d (every read opening its file: %d)",
			opens, n, chunks, limit, most, n+n*chunks)
	}
}
