package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestLibCFunctions_SumsOnlyTheLibrarysCCode(t *testing.T) {
	const annotate = `--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
24,659,859 (11.49%)  pmpi/../cshim/encode.c:gclock_encode_columns [/tmp/dbg/libgclock.so]
 9,840,117 ( 4.58%)  ???:gclock_track [/work/main/build/libgclock.so]
 1,927,000 ( 0.90%)  pmpi/../cshim/requests.h:gclock_copy_reqs.constprop.0 [/tmp/dbg/libgclock.so]
 6,601,000 ( 3.19%)  ???:ompi_request_default_wait_all [/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4]
 1,214,338 ( 2.10%)  /usr/local/go/src/hash/crc32/crc32_amd64.s:hash/crc32.castagnoliSSE42.abi0 [/tmp/dbg/libgclock.so]
    80,962 ( 0.14%)  ???:runtime.memmove [/work/main/build/libgclock.so]
 3,000,000 ( 0.38%)  ???:MPI_Allreduce'2 [/work/wt/rec/build/libgclock.so]
       100 ( 0.00%)  ???:MPI_Allreduce [/work/wt/rec/build/libgclock.so]
    41,223 ( 0.07%)  /_/GOROOT/src/runtime/cgo/gcc_sigaction.c:x_cgo_sigaction [/tmp/dbg/libgclock.so]
     9,000 ( 0.01%)  ???:_cgo_topofstack [/tmp/dbg/libgclock.so]
     1,000 ( 0.00%)  ???:crosscall2 [/tmp/dbg/libgclock.so]
       500 ( 0.00%)  ???:gclock_track [/other/libgclock.so.bak]
   120,000 ( 0.10%)  ./stdlib/./stdlib/msort.c:msort_with_tmp.part.0'2 [/usr/lib/x86_64-linux-gnu/libc.so.6]
`
	got := libCFunctions(annotate, "libgclock.so")
	want := map[string]float64{
		"gclock_encode_columns":        24659859,
		"gclock_track":                 9840117,
		"gclock_copy_reqs.constprop.0": 1927000,
		"MPI_Allreduce":                3000100, // callgrind's recursion mark 'N dropped
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 0 {
			t.Errorf("%s: got %v, want %v", k, got[k], v)
		}
	}
}

func TestCallgrindRow_PerEventAndPerIteration(t *testing.T) {
	for _, tc := range []struct {
		perIter float64
		value   string
	}{
		{4, "100 per event (400 per iteration)"},
		{1, "400 per event"},
	} {
		r := callgrindResult{perFunc: map[string]float64{"a": 300_000, "b": 100_000}, iters: 1000}
		row := r.row("10", "x", callgrindCase{perIter: tc.perIter, iterWord: "iteration"})
		if row.Value != tc.value {
			t.Errorf("perIter %v: value %q, want %q", tc.perIter, row.Value, tc.value)
		}
	}
}

func TestObjectTotal_SumsEveryFunctionOfTheObject(t *testing.T) {
	const annotate = `   148,561 ( 0.23%)  ???:0x000000000003a050 [/usr/lib/x86_64-linux-gnu/libzstd.so.1.5.4]
    68,168 ( 0.10%)  ???:0x000000000001c320 [/usr/lib/x86_64-linux-gnu/libzstd.so.1.5.4]
24,659,859 (11.49%)  pmpi/../cshim/encode.c:gclock_encode_columns [/tmp/dbg/libgclock.so]
     1,000 ( 0.00%)  ???:ZSTD_compressCCtx [/opt/zstd/libzstd.so.1]
`
	for _, tc := range []struct {
		prefix string
		want   float64
	}{{"libzstd.so", 217729}, {"libgclock.so", 24659859}, {"libmpi.so", 0}} {
		if got := objectTotal(annotate, tc.prefix); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

func TestHaloRow_PerStepPerEventAndLargestShares(t *testing.T) {
	per := map[string]float64{"gclock_encode_columns": 900, "MPI_Waitall": 630, "MPI_Isend": 450, "MPI_Irecv": 450, "MPI_Allreduce": 150, "crc_hw": 20, "tiny": 0.5}
	row := haloRow("10", "halo", per)
	if want := "2600 per step (289 per event)"; row.Value != want {
		t.Errorf("value %q, want %q", row.Value, want)
	}
	for _, want := range []string{"gclock_encode_columns 900 (34.6 %)", "MPI_Waitall 630 (24.2 %)", "crc_hw 20.0 (0.769 %)"} {
		if !strings.Contains(row.Notes, want) {
			t.Errorf("notes lack %q: %s", want, row.Notes)
		}
	}
	if strings.Contains(row.Notes, "tiny") {
		t.Errorf("notes list more than the six largest: %s", row.Notes)
	}
}

func TestBenchCallgrind_MPICHRowsSayHowToBuildTheMPICHLibrary(t *testing.T) {
	dir := t.TempDir()
	c := &Config{Root: dir, Work: dir, Lib: filepath.Join(dir, "build", "libgclock.so")}
	b := mpichCallgrindProgs(c)
	if b.err == nil || !strings.Contains(b.err.Error(), "build/mpich/libgclock.so not built (make MPI=mpich lib)") {
		t.Fatalf("error %v, want one naming build/mpich/libgclock.so and make MPI=mpich lib", b.err)
	}
}
