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

// TestOpen_KeepsAtMostTheLimitOpen: 40 readers read in turns, chunk by
// chunk, with room for 4 open files: every event comes back and no more
// than 4 descriptors are held at any time.
func TestOpen_KeepsAtMostTheLimitOpen(t *testing.T) {
	dir := t.TempDir()
	const n = 40
	want := make([][]Event, n)
	for i := range want {
		chunks := [][]Event{amgEvents(30+i, uint64(i+1)), amgEvents(20, uint64(i+1)), amgEvents(10+i, uint64(i+1))}
		data, _ := writeFile(t, chunks)
		if err := os.WriteFile(filepath.Join(dir, RankFileName(i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		want[i] = concat(chunks)
	}
	defer SetOpenFileLimit(SetOpenFileLimit(4))
	files.mu.Lock()
	files.peak = files.open
	files.mu.Unlock()
	base := openFDs(t)
	rs := make([]*Reader, n)
	got := make([][]Event, n)
	for i := range rs {
		r, err := Open(filepath.Join(dir, RankFileName(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs[i] = r
	}
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
	for i := range rs {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("reader %d: %d events, want %d", i, len(got[i]), len(want[i]))
		}
	}
	files.mu.Lock()
	peak := files.peak
	files.mu.Unlock()
	if peak > 4 {
		t.Errorf("the pool held %d files at once, want at most 4", peak)
	}
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
	dir := t.TempDir()
	const n = 12
	want := make([][]Event, n)
	for i := range want {
		chunks := [][]Event{amgEvents(40, uint64(i+1)), amgEvents(40+i, uint64(i+2))}
		data, _ := writeFile(t, chunks)
		if err := os.WriteFile(filepath.Join(dir, RankFileName(i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		want[i] = concat(chunks)
	}
	defer SetOpenFileLimit(SetOpenFileLimit(2))
	files.mu.Lock()
	files.peak = files.open
	files.mu.Unlock()
	duringRead = func() { time.Sleep(200 * time.Microsecond) } // reads overlap
	defer func() { duringRead = nil }()
	rs := make([]*Reader, n)
	for i := range rs {
		r, err := Open(filepath.Join(dir, RankFileName(i)))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs[i] = r
	}
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
	for i := range rs {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("reader %d: %d events, want %d", i, len(got[i]), len(want[i]))
		}
	}
	files.mu.Lock()
	peak := files.peak
	files.mu.Unlock()
	if peak > 2 {
		t.Errorf("the pool held %d files at once, want at most 2", peak)
	}
}
