package tests

// Communicators with a new member list at every step (progs/permsplit.c;
// docs/explanation/recorder.md "Communicators created in a loop").

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

var peersKept = regexp.MustCompile(`gclock: rank (\d+): member lists kept (\d+) bytes`)

// permSplit runs progs/permsplit.c for steps on np ranks of m (threads
// of them at once in each rank, MPI_THREAD_MULTIPLE, when above 1) without and
// with the preload (GCLOCK_TEST_FAULT=hook prints the member-list bytes
// each rank's shim keeps at the end) and checks that the output is
// unchanged (the program checks every source itself), that every rank
// keeps 1..bound bytes, and that tracemerge matches every message: the
// receives completed after their communicator's free, and after sweeps of
// the lists, still name the sender's world rank.
func permSplit(t *testing.T, m *mpiImpl, np, threads, steps int, hook string, bound int) {
	t.Helper()
	args := []string{strconv.Itoa(steps), strconv.Itoa(threads)}
	plain := mpirun(t, run{MPI: m, NP: np, Prog: "permsplit", Args: args})
	want := fmt.Sprintf("steps %d sum %d\n", steps, threads*steps*np*(np-1)/2)
	if plain.Code != 0 || plain.Stdout != want {
		t.Fatalf("permsplit without the preload: exit %d, stdout %q (want %q)\n%s", plain.Code, plain.Stdout, want, plain.Stderr)
	}
	dir := filepath.Join(t.TempDir(), "tr")
	env := []string{"GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1", "GCLOCK_TEST_FAULT=" + hook}
	// glibc fills freed memory with 0xa5 (without its per-thread cache,
	// whose frees it does not fill): a list freed while a request still
	// refers to it gives that request's completion a wrong peer. Not with
	// Open MPI's threads: Open MPI 4.1.4 itself dies of SIGSEGV under
	// MPI_THREAD_MULTIPLE with the fill, untraced (3 of 3 runs,
	// 2026-11-27).
	if threads == 1 || m != openMPI {
		env = append(env, "MALLOC_PERTURB_=165", "GLIBC_TUNABLES=glibc.malloc.tcache_count=0")
	}
	traced := mpirun(t, run{MPI: m, NP: np, Prog: "permsplit", Args: args, Preload: true, Env: env})
	if traced.Code != 0 || traced.Stdout != want {
		t.Fatalf("permsplit under the preload: exit %d, stdout %q (want %q)\n%s", traced.Code, traced.Stdout, want, traced.Stderr)
	}
	said := peersKept.FindAllStringSubmatch(traced.Stderr, -1)
	if len(said) != np {
		t.Fatalf("%d ranks said what they keep, want %d:\n%s", len(said), np, traced.Stderr)
	}
	for _, s := range said {
		if kept, _ := strconv.Atoi(s[2]); kept <= 0 || kept > bound {
			t.Errorf("rank %s keeps %d bytes of member lists after %d steps (want 1..%d)", s[1], kept, steps, bound)
		}
	}
	if p := p2pOfDir(t, dir); p.Messages != threads*np*steps || p.Uncompleted != 0 || p.UnmatchedSends != 0 || p.UnmatchedRecvs != 0 || p.Unresolved != 0 {
		t.Errorf("point-to-point: %d messages (want %d), %d never completed, unmatched %d/%d, %d wildcards unresolved",
			p.Messages, threads*np*steps, p.Uncompleted, p.UnmatchedSends, p.UnmatchedRecvs, p.Unresolved)
	}
}

// TestPermSplit_MemberListsOfFreedCommunicatorsFreed: 8 ranks split
// MPI_COMM_WORLD into a new order at every step (20,000 distinct lists),
// exchange a message around the new communicator received from
// MPI_ANY_SOURCE, and free the communicator before the requests complete
// (Open MPI: MPICH busy-waits, 90 ms a step at 8 ranks on 2 cores). The
// shim keeps at most 256 KiB of retired lists (GCK_PEERS_SWEEP) and the
// live ones: the library before 2026-11-27 evening kept every distinct
// list for the life of the process, 64 B a list here: 1,280,036 bytes at
// 20,000 steps (measured with the same print added to that library).
func TestPermSplit_MemberListsOfFreedCommunicatorsFreed(t *testing.T) {
	needSetup(t)
	permSplit(t, openMPI, 8, 1, 20000, "peers", 256<<10+4096)
}

// TestPermSplit_SweptAtEveryFree: the same program on 4 ranks (24 orders,
// each retired and held again many times) with a sweep at every release
// (GCLOCK_TEST_FAULT=peers-sweep), on both MPIs: only the lists of
// MPI_COMM_WORLD, MPI_COMM_SELF and the last step's communicator (its
// requests were live when it was freed) are left at the end (132 bytes;
// the library before kept all 24 orders: 1,188), and the completions
// after the sweeps name the right senders.
func TestPermSplit_SweptAtEveryFree(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			steps := 2000
			if m != openMPI {
				steps = 200 // MPICH busy-waits: 24 ms a step at 4 ranks on 2 cores
			}
			permSplit(t, m, 4, 1, steps, "peers-sweep", 512)
		})
	}
}

// TestPermSplit_SweptUnderThreadMultiple: the same with two threads per
// rank at once (MPI_THREAD_MULTIPLE), each on its own duplicate of
// MPI_COMM_WORLD, sweeping at every free while the other thread starts and
// completes requests: lists are freed (132 bytes kept at the end; 1,188
// with the sweep limited to single-threaded runs, as it first landed),
// and every completion names its sender.
func TestPermSplit_SweptUnderThreadMultiple(t *testing.T) {
	for _, m := range mpis(t) {
		t.Run(m.Name, func(t *testing.T) {
			steps := 200
			if m != openMPI {
				steps = 100 // MPICH: 74 ms a step of both threads (7.4 s for 100) at 4 ranks on 2 cores
			}
			permSplit(t, m, 4, 2, steps, "peers-sweep", 512)
		})
	}
}
