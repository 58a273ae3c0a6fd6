//go:build unix

package trace

import (
	"io"
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

// openFile is os.OpenFile without Go's network poller: os.OpenFile
// registers every file it opens with the poller, whose first use creates an
// epoll instance and an eventfd, and the runtime ends the process when it
// cannot (EMFILE: "fatal error: runtime: netpollinit failed"). The
// recorder runs inside the user's application, which may have used its
// descriptors up to its limit; then opening a trace file must fail with an
// error, not kill it. A file made by os.NewFile from a blocking descriptor
// never touches the poller.
func openFile(path string, flag int, perm uint32) (*os.File, error) {
	fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadSmallFile reads a small file (under 64 KiB, such as one in /proc)
// without Go's network poller (see openFile).
func ReadSmallFile(path string) ([]byte, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n := 0
	for n < len(b) {
		k, err := f.Read(b[n:])
		n += k
		if err == io.EOF || k == 0 {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return b[:n], nil
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

// poolID is a pooled file's identity (filepool.go), what os.SameFile
// compares: its device and inode. The os.FileInfo it is taken from
// (≈ 200 bytes with its name) was kept for every rank file a run opens,
// 3.2 MB at 16,384 ranks.
type poolID struct{ dev, ino uint64 }

func poolIDOf(st os.FileInfo) poolID {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return poolID{dev: uint64(sys.Dev), ino: sys.Ino}
	}
	return poolID{}
}

// is says whether st is the file id was taken from.
func (id poolID) is(st os.FileInfo) bool { return poolIDOf(st) == id }

// same says whether the descriptor still refers to the file it was opened
// on: an application that closed it and opened a file of its own got the
// same number.
func (id fileID) same() bool {
	var st syscall.Stat_t
	return syscall.Fstat(id.fd, &st) == nil && uint64(st.Dev) == id.dev && st.Ino == id.ino
}

// openFileSoftLimit returns the soft RLIMIT_NOFILE (Go raises it to the
// hard limit at start-up); false when there is none to speak of.
func openFileSoftLimit() (int, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0, false
	}
	return int(l.Cur), true
}
