//go:build !amd64

package merge

// prefetchEvent is a no-op where no prefetch instruction is wired up
// (prefetch_amd64.s).
func prefetchEvent(p uintptr) {}
