//go:build !amd64

package merge

// prefetchEvent is a no-op where no prefetch instruction is wired up
// (prefetch_amd64.s).
func prefetchEvent(p uintptr) {}

// prefetchLines6 is a no-op here too.
func prefetchLines6(a, b, c, d, e, f uintptr) {}

// prefetchLines4 is a no-op here too.
func prefetchLines4(a, b, c uintptr) {}

// prefetchSpan is a no-op here too.
func prefetchSpan(p uintptr, lines int) {}
