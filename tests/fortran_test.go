package tests

// Fortran programs (issue 11): Open MPI's Fortran bindings call PMPI_*
// directly, so only the Fortran wrappers (cshim/fortran_gen.c, generated
// from the same table rows as the C ones) see them. Each binding (mpif.h,
// `use mpi`, `use mpi_f08`) runs the same calls; the trace must hold exactly
// those calls, with receives resolved, call sites in the .f90 source, all
// messages matched and no clock-condition violation.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gclock/gclock/merge"
	"github.com/gclock/gclock/merge/correct"
	"github.com/gclock/gclock/merge/rundir"
	"github.com/gclock/gclock/trace"
)

// fortranMPI is one MPI installation to run the Fortran tests on.
type fortranMPI struct {
	Name    string                     // "openmpi", "mpich"
	Mpifort string                     // Fortran compiler wrapper
	Mpirun  []string                   // launcher and its fixed options
	Lib     string                     // the libgclock.so built for it
	Export  func(kv []string) []string // launcher options passing kv to the ranks
	Progs   []fortranProg              // the bindings it covers
}

func openMPIFortran() fortranMPI {
	return fortranMPI{
		Name: "openmpi", Mpifort: "mpifort", Mpirun: []string{"mpirun"}, Lib: libPath,
		Export: func(kv []string) []string {
			var o []string
			for _, e := range kv {
				k, _, _ := strings.Cut(e, "=")
				o = append(o, "-x", k)
			}
			return o
		},
		Progs: fortranProgs,
	}
}

// mpichFortran: MPICH's mpif.h and `use mpi` bindings (libmpichfort) call
// the C MPI_* functions; the Fortran wrappers record them (call site in the
// program) and the guard keeps the inner C calls from being recorded again.
// Its `use mpi_f08` binding calls PMPI_* (mpi_x_f08_, and mpi_x_f08ts_ with
// array descriptors for choice buffers).
func mpichFortran(t *testing.T) fortranMPI {
	t.Helper()
	for _, tool := range []string{"mpiexec.mpich", "mpifort.mpich"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found on PATH: the MPICH Fortran test needs MPICH; run `make setup MPI=mpich` as root (installs mpich libmpich-dev)", tool)
		}
	}
	if out, err := exec.Command("make", "-C", repoRoot, "MPI=mpich", "lib").CombinedOutput(); err != nil {
		t.Fatalf("`make MPI=mpich lib` failed: %v\n%s", err, out)
	}
	return fortranMPI{
		Name: "mpich", Mpifort: "mpifort.mpich", Mpirun: []string{"mpiexec.mpich"},
		Lib: filepath.Join(repoRoot, "build", "mpich", "libgclock.so"),
		Export: func(kv []string) []string {
			var o []string
			for _, e := range kv {
				k, v, _ := strings.Cut(e, "=")
				o = append(o, "-genv", k, v)
			}
			return o
		},
		Progs: fortranProgs,
	}
}

// fortranProg is one binding's test program.
type fortranProg struct {
	Name  string // binary name
	Src   string // tests/progs source
	Flags []string
	// InPlace: the MPI library recognises the program's MPI_IN_PLACE. Both
	// libraries here are built for gfortran's default mangling: with
	// -fno-underscoring or -fsecond-underscore the program's sentinel
	// common blocks have other names, which neither library (nor the
	// recorder) takes for MPI_IN_PLACE (the program's results differ too).
	InPlace bool
}

var fortranProgs = []fortranProg{
	{"fortran_mpif", "fortran_legacy.F90", []string{"-DMPIF"}, true},
	// The other manglings: mpi_allreduce (IBM XL, -fno-underscoring) and
	// mpi_allreduce__ (g77, -fsecond-underscore).
	{"fortran_mpif_nounderscore", "fortran_legacy.F90", []string{"-DMPIF", "-fno-underscoring"}, false},
	{"fortran_mpif_second_underscore", "fortran_legacy.F90", []string{"-DMPIF", "-fsecond-underscore"}, false},
	{"fortran_usempi", "fortran_legacy.F90", nil, true},
	{"fortran_f08", "fortran_f08.f90", nil, true},
}

// The calls per rank of tests/progs/fortran_{legacy,f08} (n = 5 loop trips):
// Allreduce n + in-place + one on the split and one on the Cartesian
// communicator; Waitall
// completes two requests per call, one event each; the last trip's Barrier
// runs paused between MPI_Pcontrol(0) and MPI_Pcontrol(1) (two events).
const fortranN = 5

var fortranWant = map[trace.Op]int{
	trace.OpAllreduce: fortranN + 3, trace.OpBcast: fortranN, trace.OpBarrier: fortranN + 2, trace.OpPcontrol: 2,
	trace.OpWait: 1,
	trace.OpSend: fortranN, trace.OpRecv: fortranN, trace.OpIsend: fortranN,
	trace.OpIrecv: fortranN, trace.OpWaitall: 2 * fortranN, trace.OpAllgather: 1, trace.OpNeighborAlltoallw: 1,
}

func TestFortran_OpenMPIBindingsRecordedLikeC(t *testing.T) {
	needSetup(t)
	testFortran(t, openMPIFortran())
}

func TestFortran_MPICHBindingsRecordedLikeC(t *testing.T) {
	needSetup(t)
	testFortran(t, mpichFortran(t))
}

// testFortran runs every binding's program on m (3 ranks) without and with
// the recorder and checks the traces.
func testFortran(t *testing.T, m fortranMPI) {
	if _, err := exec.LookPath(m.Mpifort); err != nil {
		t.Fatalf("%s not found on PATH: the Fortran tests compile Fortran MPI programs; run `make setup` as root (installs gfortran)", m.Mpifort)
	}
	for _, p := range m.Progs {
		p := p
		t.Run(m.Name+"/"+p.Name, func(t *testing.T) {
			bin := filepath.Join(binDir, m.Name+"_"+p.Name)
			args := append([]string{"-g", "-O1", "-o", bin}, p.Flags...)
			if err := compile(m.Mpifort, append(args, filepath.Join(repoRoot, "tests", "progs", p.Src))...); err != nil {
				t.Fatal(err)
			}
			checkFortranRun(t, m, bin, p)
		})
	}
}

func checkFortranRun(t *testing.T, m fortranMPI, bin string, p fortranProg) {
	src := p.Src
	const np = 3
	argv := append(append([]string(nil), m.Mpirun...), "-np", fmt.Sprint(np))
	plain := runCmd(t, t.TempDir(), nil, append(append([]string(nil), argv...), bin)...)
	dir := filepath.Join(t.TempDir(), "tr")
	env := []string{"LD_PRELOAD=" + m.Lib, "GCLOCK_DIR=" + dir, "GCLOCK_QUIET=1"}
	targv := append(append([]string(nil), argv...), m.Export(env)...)
	traced := runCmd(t, t.TempDir(), env, append(targv, bin)...)
	if plain.Code != 0 || traced.Code != 0 || sortedLines(plain.Stdout) != sortedLines(traced.Stdout) || sortedLines(plain.Stdout) == "" {
		t.Fatalf("output changed by the recorder: without: code %d\n%s\nwith: code %d\n%s\n%s",
			plain.Code, plain.Stdout, traced.Code, traced.Stdout, traced.Stderr)
	}
	if l := gclockLines(traced.Stderr); len(l) != 0 {
		t.Errorf("recorder warnings: %v", l)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no trace written: %v\nstderr:\n%s", err, traced.Stderr)
	}
	cartIDs := map[uint64]int{} // the Cartesian communicator's id -> ranks
	for rank, rt := range readTraces(t, dir, np) {
		got := map[trace.Op]int{}
		for _, e := range rt.Events {
			if e.Op != trace.OpFlush {
				got[e.Op]++
			}
			// Odd ranks receive with MPI_ANY_SOURCE and MPI_STATUS_IGNORE:
			// the wrapper's own status still names the sender and size.
			// The in-place Allgather (Fortran's MPI_IN_PLACE, an array
			// descriptor in MPICH's f08) sends its own block, receives
			// the others'.
			if p.InPlace && e.Op == trace.OpAllgather && (e.Sent != 4 || e.Recv != 4*(np-1)) {
				t.Errorf("rank %d: in-place MPI_Allgather sent/received %d/%d bytes, want 4/%d", rank, e.Sent, e.Recv, 4*(np-1))
			}
			// The Fortran datatypes of MPI_Neighbor_alltoallw are converted
			// per neighbour (the 1-D ring's 2).
			if e.Op == trace.OpNeighborAlltoallw && (e.Sent != 8 || e.Recv != 8) {
				t.Errorf("rank %d: MPI_Neighbor_alltoallw sent/received %d/%d bytes, want 8/8", rank, e.Sent, e.Recv)
			}
			if e.Op == trace.OpRecv && (e.Peer != int32((rank+np-1)%np) || e.Recv != 4) {
				t.Errorf("rank %d: MPI_Recv from peer %d with %d bytes, want %d and 4", rank, e.Peer, e.Recv, (rank+np-1)%np)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(fortranWant) {
			t.Errorf("rank %d: events per op %v, want %v", rank, got, fortranWant)
		}
		// The Fortran constructors are wrapped like the C ones: each
		// kind once, no communicator of unknown origin.
		kinds := map[string]int{}
		for _, c := range rt.Meta.Comms {
			kinds[c.Kind]++
		}
		for _, k := range []string{"split", "cart", "idup", "create_group", "intercomm", "merge"} {
			if kinds[k] != 1 {
				t.Errorf("rank %d: %d communicators of kind %q, want 1 (all: %v)", rank, kinds[k], k, kinds)
			}
		}
		if kinds["unknown"] != 0 {
			t.Errorf("rank %d: %d unknown communicators (all: %v)", rank, kinds["unknown"], kinds)
		}
		var split, cart *trace.Comm
		for i, c := range rt.Meta.Comms {
			switch c.Kind {
			case "split":
				split = &rt.Meta.Comms[i]
			case "cart":
				cart = &rt.Meta.Comms[i]
			}
		}
		if cart == nil || len(cart.Members) != np || cart.FreedNS == 0 {
			t.Errorf("rank %d: MPI_Cart_create's communicator %+v, want %d members and a free time (kinds: %v)", rank, cart, np, commKinds(rt.Meta.Comms))
		} else if id, ok := cartIDs[cart.ID]; !ok && len(cartIDs) > 0 {
			t.Errorf("rank %d: Cartesian communicator id %#x, other ranks %v: not agreed", rank, cart.ID, cartIDs)
		} else {
			cartIDs[cart.ID] = id + 1
		}
		var members []int32
		for r := rank % 2; r < np; r += 2 {
			members = append(members, int32(r))
		}
		if split == nil || fmt.Sprint(split.Members) != fmt.Sprint(members) || split.ID == 0 || split.FreedNS == 0 {
			t.Errorf("rank %d: MPI_Comm_split's communicator %+v, want members %v, an agreed id and a free time", rank, split, members)
		}
	}
	run, err := rundir.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	p2p, err := merge.AnalyzeP2P(run, merge.P2POptions{Clock: correct.ClockInterp})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * fortranN * np; p2p.Messages != want || p2p.UnmatchedSends != 0 || p2p.UnmatchedRecvs != 0 || p2p.Violations != 0 {
		t.Errorf("point-to-point: %d messages (want %d), unmatched %d/%d, clock violations %d",
			p2p.Messages, want, p2p.UnmatchedSends, p2p.UnmatchedRecvs, p2p.Violations)
	}
	res, err := merge.Analyze(run, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Analysis.Clock.Violations != 0 || len(res.Analysis.Problems) != 0 {
		t.Errorf("collectives: %d clock-condition violations, problems %v", res.Analysis.Clock.Violations, res.Analysis.Problems)
	}
	// Call sites: the return address of the Fortran wrapper is in the
	// program, so every collective call site resolves to its source line.
	sites := 0
	for _, c := range res.Analysis.Callsites {
		sites++
		if filepath.Base(c.File) != src || c.Line <= 0 {
			t.Errorf("call site %#x of %s resolves to %s:%d (%s in %s), want a line of %s", c.Callsite, c.Op, c.File, c.Line, c.Function, c.Object, src)
		}
	}
	if sites < 4 {
		t.Errorf("%d collective call sites, want at least 4 (Allreduce, Bcast, Barrier, in-place Allreduce)", sites)
	}
}

// sortedLines returns s's lines sorted (ranks print in any order).
func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// commKinds lists the kinds of a rank's communicators (for messages).
func commKinds(cs []trace.Comm) []string {
	var k []string
	for _, c := range cs {
		k = append(k, c.Kind)
	}
	return k
}
