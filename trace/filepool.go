package trace

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Open keeps a run's files open only while they are read: tracemerge
// opens one Reader per rank and reads them all together, and a 10,000-rank
// run under a common open-file limit of 4,096 lost 5,913 ranks to "too
// many open files". Readers made by Open share a pool that keeps at most
// OpenFileLimit descriptors open; a Reader whose file was closed to make
// room opens it again at its next read (one open per chunk at worst) and
// checks that it is still the same file.

// pooledFile is an io.ReaderAt over a file of the pool.
type pooledFile struct {
	path  string
	id    poolID   // identity at the first open (file_unix.go: device and inode)
	f     *os.File // nil while closed to make room
	users int      // reads in progress
	idle  *list.Element
	done  bool // Close was called
}

type filePool struct {
	mu    sync.Mutex
	open  int        // descriptors held
	peak  int        // most held at once (tests)
	opens int        // files opened (tests)
	idle  *list.List // *pooledFile open with no reader, most recent at the front
	limit int        // 0: from RLIMIT_NOFILE
	soft  int        // the limit from RLIMIT_NOFILE (0: not read yet)
	freed *sync.Cond // a file became idle or was closed (cond)
}

var files = &filePool{idle: list.New()}

// duringRead, when set (tests), runs inside every read of a pooled file,
// as a slow file system would take its time there.
var duringRead func()

// SetOpenFileLimit sets how many trace files Open's readers keep open at
// once (n <= 0: from the process's open-file limit, the default, read
// again at the next open) and returns the previous setting.
func SetOpenFileLimit(n int) int {
	files.mu.Lock()
	defer files.mu.Unlock()
	prev := files.limit
	files.limit = max(n, 0)
	files.soft = 0 // the open-file limit is read again
	return prev
}

// OpenFileLimit reports how many trace files Open's readers keep open at
// once: the setting, or half of the soft RLIMIT_NOFILE less 64 for the
// rest of the process (at least 16), the limit as it was at the first
// open (or SetOpenFileLimit) since.
func OpenFileLimit() int {
	files.mu.Lock()
	defer files.mu.Unlock()
	return files.max()
}

func (p *filePool) max() int {
	if p.limit > 0 {
		return p.limit
	}
	if p.soft == 0 {
		// read once: it was a getrlimit call at every open
		n, ok := openFileSoftLimit()
		p.soft = 1 << 14
		if ok {
			p.soft = max(16, (n-64)/2)
		}
	}
	return p.soft
}

// openPooled opens path and registers it with the pool.
func openPooled(path string) (*pooledFile, int64, error) {
	pf := &pooledFile{path: path}
	files.mu.Lock()
	defer files.mu.Unlock()
	f, err := files.reopen(pf)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		files.drop(pf)
		return nil, 0, err
	}
	pf.id = poolIDOf(st)
	files.makeIdle(pf)
	return pf, st.Size(), nil
}

// reopen opens pf's file, first closing idle files while the pool is at
// its limit, or waiting for one to become idle when every file held is
// being read (decoders reading many files at once on a slow file system
// would otherwise open past the limit); with p.mu held.
func (p *filePool) reopen(pf *pooledFile) (*os.File, error) {
	for lim := p.max(); p.open >= lim; {
		if p.idle.Len() == 0 {
			p.cond().Wait()
			continue
		}
		// the file read most recently makes room: the ranks' files are
		// read in turn, so the least recent one is the next to be read
		// again (closing it, every read of a run of more ranks than the
		// limit opened its file again: 16,384 ranks, two opens a file);
		// this way the files read first stay open and only the ranks
		// beyond the limit open theirs again
		old := p.idle.Remove(p.idle.Front()).(*pooledFile)
		old.idle = nil
		p.drop(old)
	}
	// without the network poller (openFile): os.Open's registration,
	// which fails for a regular file, and the flags it sets were five
	// system calls of nine an open (two opens a file at 16,384 ranks)
	f, err := openFile(pf.path, os.O_RDONLY, 0)
	if errors.Is(err, syscall.EMFILE) && p.idle.Len() > 0 {
		// the rest of the process holds more than the limit leaves it
		for p.idle.Len() > 0 {
			old := p.idle.Remove(p.idle.Back()).(*pooledFile)
			old.idle = nil
			p.drop(old)
		}
		f, err = openFile(pf.path, os.O_RDONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	pf.f = f
	p.open++
	p.opens++
	p.peak = max(p.peak, p.open)
	return f, nil
}

// drop closes pf's descriptor; with p.mu held.
func (p *filePool) drop(pf *pooledFile) {
	if pf.f != nil {
		pf.f.Close()
		pf.f = nil
		p.open--
		p.cond().Signal()
	}
}

func (p *filePool) makeIdle(pf *pooledFile) {
	if pf.f != nil && pf.idle == nil {
		pf.idle = p.idle.PushFront(pf)
		p.cond().Signal()
	}
}

// cond is signalled when a file becomes idle or is closed; with p.mu held.
func (p *filePool) cond() *sync.Cond {
	if p.freed == nil {
		p.freed = sync.NewCond(&p.mu)
	}
	return p.freed
}

// ReadAt implements io.ReaderAt, opening the file again if the pool
// closed it.
func (pf *pooledFile) ReadAt(b []byte, off int64) (int, error) {
	p := files
	p.mu.Lock()
	if pf.done {
		p.mu.Unlock()
		return 0, os.ErrClosed
	}
	if pf.idle != nil {
		p.idle.Remove(pf.idle)
		pf.idle = nil
	}
	f := pf.f
	if f == nil {
		var err error
		if f, err = p.reopen(pf); err != nil {
			p.mu.Unlock()
			return 0, fmt.Errorf("opening it again: %w", err)
		}
		if st, err := f.Stat(); err != nil || !pf.id.is(st) {
			p.drop(pf)
			p.mu.Unlock()
			return 0, fmt.Errorf("%s was replaced by another file while being read", pf.path)
		}
	}
	pf.users++
	p.mu.Unlock()
	if duringRead != nil {
		duringRead()
	}
	n, err := f.ReadAt(b, off)
	p.mu.Lock()
	if pf.users--; pf.users == 0 {
		if pf.done { // closed during the read
			p.drop(pf)
		} else {
			p.makeIdle(pf)
		}
	}
	p.mu.Unlock()
	return n, err
}

// Close closes the file for good.
func (pf *pooledFile) Close() error {
	p := files
	p.mu.Lock()
	defer p.mu.Unlock()
	if pf.done {
		return nil
	}
	pf.done = true
	if pf.idle != nil {
		p.idle.Remove(pf.idle)
		pf.idle = nil
	}
	if pf.users == 0 {
		p.drop(pf)
	}
	return nil
}
