package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/trace/synth"
)

// vmFlagsOf returns the VmFlags line of the mapping of /proc/self/smaps
// that holds address p ("" when none does).
func vmFlagsOf(t *testing.T, p uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fl := strings.Fields(line); len(fl) > 0 && !strings.HasSuffix(fl[0], ":") {
			// a mapping's first line, as in /proc/self/maps
			a, b, ok := anonRW([]byte(line))
			in = ok && a <= p && p < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	return ""
}

// TestHugePages_TheHeapsLargeMappingsAreAskedForHugePages: after one
// round of hugePages, a fresh 32 MiB private anonymous mapping that had
// no advice has the kernel's "hg" flag (MADV_HUGEPAGE), and so has the
// mapping that holds a 64 MiB heap object (whether or not an earlier
// round marked it). The flag is set whatever the system's THP policy,
// on any kernel built with transparent huge pages.
func TestHugePages_TheHeapsLargeMappingsAreAskedForHugePages(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, 32<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	fresh := uintptr(unsafe.Pointer(&m[0]))
	big := make([]byte, 64<<20)
	heap := uintptr(unsafe.Pointer(&big[0]))
	before := vmFlagsOf(t, fresh)
	if before == "" {
		t.Fatalf("no private anonymous mapping holds the fresh mapping at %#x", fresh)
	}
	if strings.Contains(before, " hg") {
		t.Fatalf("the fresh mapping is marked before any advice: %s", before)
	}
	if err := hugePages(map[uintptr]uintptr{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    uintptr
	}{{"fresh mapping", fresh}, {"heap object", heap}} {
		if f := vmFlagsOf(t, c.p); !strings.Contains(f, " hg") {
			t.Errorf("%s at %#x: not marked for huge pages: %q", c.name, c.p, f)
		}
	}
	big[len(big)-1] = 1 // keep it alive through the round
}

// TestHugePages_RecordsTheLargeMappingsItAdvised: the record of what was
// advised (by start, the end asked for) holds a fresh 32 MiB mapping, at
// hugePagesMin bytes or more.
func TestHugePages_RecordsTheLargeMappingsItAdvised(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, 32<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	a := uintptr(unsafe.Pointer(&m[0]))
	done := map[uintptr]uintptr{}
	if err := hugePages(done); err != nil {
		t.Fatal(err)
	}
	found := false
	for lo, hi := range done {
		if lo <= a && a < hi {
			found = true
			if hi-lo < hugePagesMin {
				t.Errorf("advised %#x-%#x, smaller than %d bytes", lo, hi, hugePagesMin)
			}
		}
	}
	if !found {
		t.Fatalf("the 32 MiB mapping at %#x was not recorded as advised: %v", a, done)
	}
}

// TestAnonRW_OnlyPrivateAnonymousReadWriteMappings: the parse of a maps
// line takes a private anonymous read-write mapping and nothing else.
func TestAnonRW_OnlyPrivateAnonymousReadWriteMappings(t *testing.T) {
	for _, tc := range []struct {
		line   string
		ok     bool
		lo, hi uintptr
	}{
		{"1a047b800000-1a0480400000 rw-p 00000000 00:00 0 ", true, 0x1a047b800000, 0x1a0480400000},
		{"c000000000-c004000000 rw-p 00000000 00:00 0", true, 0xc000000000, 0xc004000000},
		{"306c3000-306e4000 rw-p 00000000 00:00 0                                  [heap]", false, 0, 0},
		{"7f0000000000-7f0004000000 ---p 00000000 00:00 0", false, 0, 0},
		{"7f0000000000-7f0004000000 rw-s 00000000 00:01 1234 /dev/shm/x", false, 0, 0},
		{"00400000-00800000 r-xp 00000000 08:01 99 /usr/bin/tracemerge", false, 0, 0},
		{"7f0004000000-7f0000000000 rw-p 00000000 00:00 0", false, 0, 0},
		{"zz-7f0004000000 rw-p 00000000 00:00 0", false, 0, 0},
	} {
		lo, hi, ok := anonRW([]byte(tc.line))
		if ok != tc.ok || lo != tc.lo || hi != tc.hi {
			t.Errorf("%q: %#x-%#x %v, want %#x-%#x %v", tc.line, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

// TestHugePagesWanted_ManyRanksUnlessSwitchedOff: huge pages are asked
// for above manyRanksHugePages ranks, never with GCLOCK_HUGEPAGES=0, at
// any number with GCLOCK_HUGEPAGES=1.
func TestHugePagesWanted_ManyRanksUnlessSwitchedOff(t *testing.T) {
	for _, tc := range []struct {
		ranks int
		env   string
		want  bool
	}{
		{8, "", false},
		{manyRanksHugePages, "", false},
		{manyRanksHugePages + 1, "", true},
		{16384, "", true},
		{16384, "0", false},
		{16384, "false", false},
		{8, "1", true},
	} {
		if got := hugePagesWanted(tc.ranks, tc.env); got != tc.want {
			t.Errorf("%d ranks, GCLOCK_HUGEPAGES=%q: %v, want %v", tc.ranks, tc.env, got, tc.want)
		}
	}
}

// TestHugePages_OnlyAOneProcessAnalysisAsks: a one-process analysis of
// a run of more than manyRanksHugePages ranks starts the loop; of fewer
// ranks, or with GCLOCK_HUGEPAGES=0, it does not, and a worker of a
// parallel analysis (serveOnce) never does.
func TestHugePages_OnlyAOneProcessAnalysisAsks(t *testing.T) {
	defer func(n int, f func()) { manyRanksHugePages, hugePagesStart = n, f }(manyRanksHugePages, hugePagesStart)
	defer func() { hugePagesOnce = sync.Once{} }()
	dir := filepath.Join(t.TempDir(), "run")
	gen(t, dir, synth.Config{Ranks: 4, Steps: 50, Seed: 3})
	started := 0
	hugePagesStart = func() { started++ }
	for _, tc := range []struct {
		name      string
		threshold int
		env       string
		worker    bool
		want      int
	}{
		{"serial, many ranks", 3, "", false, 1},
		{"serial, few ranks", 4, "", false, 0},
		{"serial, switched off", 3, "0", false, 0},
		{"serial, switched on", 64, "1", false, 1},
		{"worker, many ranks", 3, "", true, 0},
		{"worker, switched on", 3, "1", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manyRanksHugePages, started, hugePagesOnce = tc.threshold, 0, sync.Once{}
			t.Setenv("GCLOCK_HUGEPAGES", tc.env)
			if tc.worker {
				if err := serveOnce(dir, merge.Options{}, &merge.Dist{Procs: 2, Me: 1, T: failingTransport{}}); err == nil {
					t.Fatal("the worker served without a job")
				}
			} else {
				var so, se bytes.Buffer
				if code := run([]string{dir, "-o", filepath.Join(t.TempDir(), "out"), "--formats", "txt", "-q"}, &so, &se); code != exitOK {
					t.Fatalf("exit %d: %s", code, se.String())
				}
			}
			if started != tc.want {
				t.Errorf("loop started %d times, want %d", started, tc.want)
			}
		})
	}
}
