package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// peakHeap keeps the heap profile taken when the live heap (as of the
// last garbage collection) was largest: GCLOCK_MEMPROFILE's FILE.peak.
// The end-of-run profile says what was allocated; what a process held at
// its peak (per-rank tables, message buffers) is only in this one.
type peakHeap struct {
	mu   sync.Mutex
	max  uint64
	prof bytes.Buffer
	stop chan struct{}
	done chan struct{}
}

// startPeakHeap polls the live heap every 10 ms and takes a heap profile
// whenever it has grown by more than 1/16 since the last one.
func startPeakHeap() *peakHeap {
	p := &peakHeap{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.sample()
			}
		}
	}()
	return p
}

// sample takes a heap profile if the live heap has grown by more than
// 1/16 since the last one (or none was taken yet).
func (p *peakHeap) sample() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var live uint64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prof.Len() == 0 || live > p.max+p.max/16 {
		p.max = live
		p.prof.Reset()
		_ = pprof.Lookup("heap").WriteTo(&p.prof, 0)
	}
}

// write stops the polling and writes the kept profile into path.
func (p *peakHeap) write(path string) error {
	close(p.stop)
	<-p.done
	p.sample() // a run shorter than one poll
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prof.Len() == 0 {
		return fmt.Errorf("%s: no live heap sampled", path)
	}
	if err := os.WriteFile(path, p.prof.Bytes(), 0o644); err != nil {
		return fmt.Errorf("heap profile at the peak: %w", err)
	}
	return nil
}
