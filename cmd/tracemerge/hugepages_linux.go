package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// madvCollapse is MADV_COLLAPSE (Linux 6.1): back a populated range by
// huge pages now (syscall has no name for it). Older kernels refuse it
// with EINVAL, and MADV_HUGEPAGE alone still serves the pages touched
// from then on.
const madvCollapse = 25

// hugePagesMin is the smallest mapping hugePagesLoop asks huge pages
// for: the heap's arenas are reserved and mapped in 64 MiB pieces; the
// threads' stacks (8 MiB) and small mappings are left alone.
const hugePagesMin = 16 << 20

// hugePagesEvery is how often hugePagesLoop looks for new mappings: the
// heap grows while the rank files are opened and through the pass's
// first windows, and a mapping is asked for once.
const hugePagesEvery = time.Second

// hugePagesLoop asks for huge pages for the process's large private
// mappings (hugePages), now and then every hugePagesEvery as the heap
// grows. It stops when the kernel has no transparent huge pages.
func hugePagesLoop() {
	if !thpAvailable() {
		return
	}
	done := map[uintptr]uintptr{}
	for {
		if err := hugePages(done); err != nil {
			return
		}
		time.Sleep(hugePagesEvery)
	}
}

// thpAvailable says whether the kernel lets a program ask for
// transparent huge pages ("always" or "madvise"; not "never", and not a
// kernel without them).
func thpAvailable() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !bytes.Contains(b, []byte("[never]"))
}

// hugePages reads /proc/self/maps and asks for huge pages
// (MADV_HUGEPAGE, then MADV_COLLAPSE for what is already populated) for
// every private anonymous read-write mapping of at least hugePagesMin
// bytes, the part of it not asked for before: done maps a mapping's
// start to the end asked for up to now (a mapping asked for merges with
// the next arena once that is asked for too, and keeps its start). The
// advice is a hint: the kernel's refusals are ignored.
func hugePages(done map[uintptr]uintptr) error {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := anonRW(sc.Bytes())
		if !ok || b-a < hugePagesMin {
			continue
		}
		from := a
		if e, seen := done[a]; seen {
			if e >= b {
				continue
			}
			from = e
		}
		done[a] = b
		syscall.Syscall(syscall.SYS_MADVISE, from, b-from, syscall.MADV_HUGEPAGE)
		syscall.Syscall(syscall.SYS_MADVISE, from, b-from, madvCollapse)
	}
	return sc.Err()
}

// anonRW parses one line of /proc/self/maps ("start-end perms offset
// dev inode [path]") and returns the range of a private anonymous
// read-write mapping (no path, inode 0); ok is false for any other.
func anonRW(line []byte) (a, b uintptr, ok bool) {
	f := bytes.Fields(line)
	if len(f) != 5 || string(f[1]) != "rw-p" || string(f[4]) != "0" {
		return 0, 0, false
	}
	lo, hi, found := bytes.Cut(f[0], []byte("-"))
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(string(lo), 16, 64)
	y, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || y <= x {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
