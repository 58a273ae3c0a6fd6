package merge

import (
	"testing"

	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace/synth"
)

// TestReleaseOthers_AProcessKeepsNoReaderForRanksItDoesNotDecode: after
// releaseOthers a process of a partitioned pass holds, for the rank
// files outside its block, only their metadata (the same RankMeta, no
// trace reader, no call-site cache); its own block keeps readers and
// caches, and reads all its events.
func TestReleaseOthers_AProcessKeepsNoReaderForRanksItDoesNotDecode(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 8, Steps: 200, Seed: 3, ChunkEvents: 64, Halo: true})
	for _, tc := range []struct {
		name   string
		lo, hi int
	}{
		{"a middle block", 3, 6},
		{"the first block", 0, 2},
		{"nothing (process 0 with share 0)", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, pass := loadPass(t, dir)
			a := pass.a
			metas := make([]*rundir.RankMeta, len(run.Ranks))
			for i, ri := range run.Ranks {
				metas[i] = ri.Meta
			}
			a.releaseOthers(tc.lo, tc.hi)
			for i, ri := range run.Ranks {
				rs := a.ranks[ri.Rank]
				mine := i >= tc.lo && i < tc.hi
				_, released := ri.Src.(metaSource)
				switch {
				case mine && (released || rs.pcCache == nil):
					t.Errorf("rank %d (decoded here): source %T, call-site cache %d slots; want its reader and cache", ri.Rank, ri.Src, len(rs.pcCache))
				case !mine && (!released || rs.pcCache != nil):
					t.Errorf("rank %d (not decoded here): source %T, call-site cache %d slots; want its metadata only", ri.Rank, ri.Src, len(rs.pcCache))
				}
				if ri.Src.Meta() != metas[i] || ri.Meta != metas[i] {
					t.Errorf("rank %d: metadata changed", ri.Rank)
				}
				if !mine {
					if _, err := ri.Src.NextChunk(nil); err == nil {
						t.Errorf("rank %d: reading a released rank file gave no error", ri.Rank)
					}
					continue
				}
				n := 0
				for {
					ev, err := ri.Src.NextChunk(nil)
					n += len(ev)
					if err != nil {
						break
					}
				}
				if f := ri.Meta.Footer; f == nil || uint64(n) != f.Events {
					t.Errorf("rank %d (decoded here): read %d events, footer %+v", ri.Rank, n, f)
				}
			}
		})
	}
}

// TestReleaseModels_AWorkerKeepsTheClockModelsOfItsOwnRanksOnly: after
// releaseModels a worker holds the correction and the sync epochs of the
// ranks it decodes and of no other; the partitioned identity tests run the workers so.
func TestReleaseModels_AWorkerKeepsTheClockModelsOfItsOwnRanksOnly(t *testing.T) {
	dir, _ := genRun(t, synth.Config{Ranks: 8, Steps: 100, Seed: 3, ChunkEvents: 64, Halo: true})
	for _, tc := range []struct{ lo, hi int }{{3, 6}, {0, 2}, {0, 0}, {0, 8}} {
		_, pass := loadPass(t, dir)
		a := pass.a
		a.releaseModels(tc.lo, tc.hi)
		for i, ri := range a.rn.Ranks {
			mine := i >= tc.lo && i < tc.hi
			if has := a.ranks[ri.Rank].corr != nil; has != mine {
				t.Errorf("block [%d, %d): rank %d keeps its clock model: %v, want %v", tc.lo, tc.hi, ri.Rank, has, mine)
			}
			if has := len(ri.Meta.Epochs) > 0; has != mine {
				t.Errorf("block [%d, %d): rank %d keeps its sync epochs: %v, want %v", tc.lo, tc.hi, ri.Rank, has, mine)
			}
		}
	}
}
