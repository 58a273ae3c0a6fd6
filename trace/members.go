package trace

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// A communicator's member list is written as runs where that is shorter
// (format version 4): Comm.Runs holds (first, count, stride) triples, each
// the world ranks first, first+stride, ..., first+(count-1)*stride.
// MPI_COMM_WORLD, a block of a split, a row or a column of a process grid
// and a reversed order are one run each, so a rank file at 10,000 ranks
// holds 12 bytes for its world instead of 40 kB, and tracemerge reads
// 10,000 such files without 10^8 member entries.

// MaxRunMembers bounds the members one COMM frame's runs may expand to
// when the file's header gives no world size (a damaged or hostile count
// must not allocate without bound).
const MaxRunMembers = 1 << 24

// PackMembers returns members as runs when the runs are shorter than the
// list, else nil (the list is then written as it is; so is a list holding
// a negative value, which is no world rank).
func PackMembers(members []int32) []int32 {
	n := len(members)
	if n < 4 {
		return nil
	}
	for _, w := range members {
		if w < 0 { // not a world rank: written as it is, for the reader to see
			return nil
		}
	}
	var runs []int32
	for i := 0; i < n; {
		j := i + 1
		var stride int32 // fits: both ranks are in 0..2^31-1
		if j < n {
			stride = members[j] - members[i]
			for j < n && members[j]-members[j-1] == stride {
				j++
			}
		}
		runs = append(runs, members[i], int32(j-i), stride)
		if len(runs) >= n {
			return nil
		}
		i = j
	}
	return runs
}

// UnpackMembers expands runs (PackMembers) into the member list; an error
// names what is wrong (a length not a multiple of 3, a run of no members,
// a rank outside 0..2^31-1, more than limit members).
func UnpackMembers(runs []int32, limit int) ([]int32, error) {
	if len(runs)%3 != 0 {
		return nil, fmt.Errorf("member runs: %d values, want triples (first, count, stride)", len(runs))
	}
	total := 0
	for i := 0; i < len(runs); i += 3 {
		first, count, stride := int64(runs[i]), int64(runs[i+1]), int64(runs[i+2])
		if count < 1 {
			return nil, fmt.Errorf("member runs: run %d has %d members", i/3, count)
		}
		if last := first + (count-1)*stride; first < 0 || last < 0 || last > math.MaxInt32 {
			return nil, fmt.Errorf("member runs: run %d (first %d, count %d, stride %d) leaves the world ranks 0..%d", i/3, first, count, stride, math.MaxInt32)
		}
		if total += int(count); total > limit {
			return nil, fmt.Errorf("member runs: more than %d members", limit)
		}
	}
	out := make([]int32, 0, total)
	for i := 0; i < len(runs); i += 3 {
		w, count, stride := runs[i], runs[i+1], runs[i+2]
		for k := int32(0); k < count; k++ {
			out = append(out, w)
			w += stride
		}
	}
	return out, nil
}

// expanded keeps recent expansions of long runs, so that the readers of a
// run's files, which all hold the same runs for MPI_COMM_WORLD and the
// other communicators their ranks share, get one list instead of one each
// (10,000 files of a 10,000-rank run: 1.5·10^8 member entries written and
// compared otherwise). Bounded: cleared when it holds more than
// expandedMax members.
var expanded struct {
	sync.Mutex
	m       map[string][]int32
	members int
}

const (
	expandedMin = 64      // shorter lists are not worth sharing
	expandedMax = 1 << 24 // members held at most (64 MB)
)

// unpackShared is UnpackMembers through the expanded cache: the list may
// be shared with other readers (Comm.Members is read-only).
func unpackShared(runs []int32, limit int) ([]int32, error) {
	key := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(runs))), len(runs)*4)
	expanded.Lock()
	m, ok := expanded.m[key]
	expanded.Unlock()
	if ok && len(m) <= limit {
		return m, nil
	}
	m, err := UnpackMembers(runs, limit)
	if err != nil || len(m) < expandedMin {
		return m, err
	}
	expanded.Lock()
	if expanded.members+len(m) > expandedMax {
		expanded.m, expanded.members = nil, 0
	}
	if expanded.m == nil {
		expanded.m = map[string][]int32{}
	}
	expanded.m[string([]byte(key))] = m
	expanded.members += len(m)
	expanded.Unlock()
	return m, nil
}
