package merge

// prefetchEvent asks the CPU to bring the 128-byte GEvent at p (both
// cache lines) into the cache without waiting for it (PREFETCHT0; Go has
// no prefetch a package can call). A plain load of the second line at the
// same place measured no gain (docs/explanation/tracemerge.md). With the
// prefetch in the k-way merge, `--formats json,txt` of a 10^7-event
// synthetic run, interleaved rounds (2026-11-26, Intel VM): 1024 ranks
// 5.70 → 5.00 s, 256 ranks 3.75 → 3.01 s, 64 ranks 2.67 → 2.25 s; the
// 64-rank halo run unchanged.
//
//go:noescape
func prefetchEvent(p uintptr)

// prefetchLines6 prefetches, in one call, two events (a and d, both their
// lines) and one line at each of b, c, e and f (kway.go's prefetchNext).
//
//go:noescape
func prefetchLines6(a, b, c, d, e, f uintptr)

// prefetchLines4 prefetches an event at a (both its lines) and one line
// at each of b and c (the windowed merge: an event due soon and its
// rank's running sums, kway_window.go).
//
//go:noescape
func prefetchLines4(a, b, c uintptr)

// prefetchSpan prefetches lines cache lines from p on (the point-to-point
// stream's state of a rank an event due soon touches: p2p_stream.go's
// Prefetch).
//
//go:noescape
func prefetchSpan(p uintptr, lines int)
