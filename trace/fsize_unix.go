//go:build unix

package trace

import "syscall"

// fileSizeLimit returns the process's soft file size limit (RLIMIT_FSIZE)
// in bytes, or -1 when there is none. Read at every frame: the
// application may change it.
var fileSizeLimit = func() int64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &l); err != nil || l.Cur > 1<<62 { // RLIM_INFINITY is all ones
		return -1
	}
	return int64(l.Cur)
}
