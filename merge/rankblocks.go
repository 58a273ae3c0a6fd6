package merge

import "unsafe"

// rankBlockShift gives the ranks of one block of a rankBlocks: 64.
const rankBlockShift = 6

// rankBlockLen is the number of consecutive ranks whose states a
// rankBlocks allocates together.
const rankBlockLen = 1 << rankBlockShift

// rankBlocks holds a pass's per-rank states (T) by world rank, in blocks
// of rankBlockLen consecutive ranks, each block made when its first rank
// gets a state (make). A state never moves once made: a pointer to it
// stays valid as later ranks get theirs. One object a rank, found
// through a table of a pointer a rank, cost at 16,384 ranks a cache miss
// in that 128 kB table per event and an object per rank for the
// collector to find and mark; the table of blocks and the bits of the
// ranks made are 2 kB each there, and neighbours' states (a halo
// exchange's partners) are neighbours in memory (D101).
type rankBlocks[T any] struct {
	blocks []*[rankBlockLen]T
	made   []uint64 // bit r%64 of word r/64: rank r has a state
	n      int      // 1 + the largest rank with a state (0: none)
}

// len is 1 + the largest rank with a state: the ranks at can return a
// state for lie below it.
func (t *rankBlocks[T]) len() int { return t.n }

// at returns rank r's state, nil if r has none (a negative r included).
func (t *rankBlocks[T]) at(r int32) *T {
	if uint32(r) >= uint32(t.n) || t.made[r>>6]&(1<<(r&63)) == 0 {
		return nil
	}
	return &t.blocks[r>>rankBlockShift][r&(rankBlockLen-1)]
}

// slot is the address of the table entry of r's block, for a prefetch
// (0 when r is out of the table).
func (t *rankBlocks[T]) slot(r int32) uintptr {
	b := uint(uint32(r) >> rankBlockShift)
	if b >= uint(len(t.blocks)) {
		return 0
	}
	return uintptr(unsafe.Pointer(&t.blocks[b]))
}

// reserve makes len at least n (the ranks below it without a state
// until made), so that a pass sized by its run's world counts the
// ranks without a file too.
func (t *rankBlocks[T]) reserve(n int) {
	if n > 0 {
		t.grow((n - 1) >> rankBlockShift)
		t.n = max(t.n, n)
	}
}

// grow makes the table hold block b.
func (t *rankBlocks[T]) grow(b int) {
	if b >= len(t.blocks) {
		t.blocks = append(t.blocks, make([]*[rankBlockLen]T, b+1-len(t.blocks))...)
		t.made = append(t.made, make([]uint64, len(t.blocks)*rankBlockLen/64-len(t.made))...)
	}
}

// make gives rank r ≥ 0, which has no state, a new zero state (its block
// made if needed) and returns it.
func (t *rankBlocks[T]) make(r int32) *T {
	b := int(r >> rankBlockShift)
	t.grow(b)
	if t.blocks[b] == nil {
		t.blocks[b] = new([rankBlockLen]T)
	}
	t.made[r>>6] |= 1 << (r & 63)
	t.n = max(t.n, int(r)+1)
	return &t.blocks[b][r&(rankBlockLen-1)]
}
