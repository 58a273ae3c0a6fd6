//go:build !unix

package trace

// fileSizeLimit: no file size limit is known on this system.
var fileSizeLimit = func() int64 { return -1 }
