//go:build !otf2

package otf2

// Built without libotf2: Create fails with ErrNotBuilt.
func newBackend(dir, name string, ranks int) (backend, error) { return nil, ErrNotBuilt }

// Available reports whether this build can write OTF2.
func Available() bool { return false }
