//go:build unix

package trace

import (
	"os"
	"syscall"
)

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

// fileID identifies an open file: its descriptor and the device and inode
// it referred to when opened.
type fileID struct {
	fd       int
	dev, ino uint64
}

// identify returns f's fileID; ok is false when it cannot be known.
func identify(f *os.File) (id fileID, ok bool) {
	sc, err := f.SyscallConn()
	if err != nil {
		return id, false
	}
	id.fd = -1
	if sc.Control(func(fd uintptr) { id.fd = int(fd) }) != nil || id.fd < 0 {
		return id, false
	}
	var st syscall.Stat_t
	if syscall.Fstat(id.fd, &st) != nil {
		return id, false
	}
	id.dev, id.ino = uint64(st.Dev), st.Ino
	return id, true
}

// same says whether the descriptor still refers to the file it was opened
// on: an application that closed it and opened a file of its own got the
// same number.
func (id fileID) same() bool {
	var st syscall.Stat_t
	return syscall.Fstat(id.fd, &st) == nil && uint64(st.Dev) == id.dev && st.Ino == id.ino
}
