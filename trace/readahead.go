package trace

import "io"

// scanAhead is the size of the reads the scan at Open makes: it reads
// every frame of a file (two reads a frame, its header and its payload,
// to check the payload's checksum), and a rank file of a many-rank run
// is a few frames of a few kB. Read a frame at a time, a 16,384-rank
// run's Open made 21 reads a file (344,129 pread calls, ≈ 2.6 s of
// system time under strace); read ahead, one or two.
const scanAhead = 64 << 10

// readAhead is an io.ReaderAt over r that serves reads of less than half
// of scanAhead from a buffer of the scanAhead bytes from the first byte
// read on (fewer at the end of the file), read again when a read falls
// outside it. Only the scan at Open uses it: reads there go forward
// through the file, and every byte of it is read anyway.
type readAhead struct {
	r    io.ReaderAt
	size int64  // the file's size: no read ahead past it
	mem  []byte // the buffer (from the pool, given back by release)
	buf  []byte // mem's bytes that hold the file from off on
	off  int64
}

// ReadAt implements io.ReaderAt.
func (a *readAhead) ReadAt(p []byte, off int64) (int, error) {
	if off >= a.off && off+int64(len(p)) <= a.off+int64(len(a.buf)) {
		return copy(p, a.buf[off-a.off:]), nil
	}
	if len(p) > scanAhead/2 || off < 0 || off >= a.size {
		return a.r.ReadAt(p, off)
	}
	n := int(min(int64(scanAhead), a.size-off))
	n = max(n, len(p)) // a file shorter than its size: as a direct read
	if a.mem == nil {
		a.mem = getBuf(scanAhead)
	}
	k, err := a.r.ReadAt(a.mem[:n], off)
	a.buf, a.off = a.mem[:k], off
	c := copy(p, a.buf)
	if c == len(p) {
		return c, nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return c, err
}

// release gives the buffer back to the pool; a to read with no more.
func (a *readAhead) release() {
	if a.mem != nil {
		putBuf(a.mem)
	}
	a.mem, a.buf = nil, nil
}
