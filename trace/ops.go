package trace

// Op identifies a recorded MPI function. The numbering is part of the file
// format: append only. cshim's generated wrappers use the same numbers (the
// generator reads this table), so C and Go cannot drift.
type Op uint16

// Operation codes.
const (
	OpUnknown Op = iota
	OpBarrier
	OpBcast
	OpReduce
	OpAllreduce
	OpGather
	OpGatherv
	OpScatter
	OpScatterv
	OpAllgather
	OpAllgatherv
	OpAlltoall
	OpAlltoallv
	OpAlltoallw
	OpReduceScatter
	OpReduceScatterBlock
	OpScan
	OpExscan
	opCount
)

var opNames = [...]string{
	OpUnknown:            "Unknown",
	OpBarrier:            "MPI_Barrier",
	OpBcast:              "MPI_Bcast",
	OpReduce:             "MPI_Reduce",
	OpAllreduce:          "MPI_Allreduce",
	OpGather:             "MPI_Gather",
	OpGatherv:            "MPI_Gatherv",
	OpScatter:            "MPI_Scatter",
	OpScatterv:           "MPI_Scatterv",
	OpAllgather:          "MPI_Allgather",
	OpAllgatherv:         "MPI_Allgatherv",
	OpAlltoall:           "MPI_Alltoall",
	OpAlltoallv:          "MPI_Alltoallv",
	OpAlltoallw:          "MPI_Alltoallw",
	OpReduceScatter:      "MPI_Reduce_scatter",
	OpReduceScatterBlock: "MPI_Reduce_scatter_block",
	OpScan:               "MPI_Scan",
	OpExscan:             "MPI_Exscan",
}

// String returns the MPI function name, e.g. "MPI_Allreduce".
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "Op(" + itoa(int(o)) + ")"
}

// OpByName returns the op for an MPI function name ("MPI_Allreduce").
func OpByName(name string) (Op, bool) {
	for i, n := range opNames {
		if n == name && i != 0 {
			return Op(i), true
		}
	}
	return OpUnknown, false
}

// Ops lists every defined op except OpUnknown, in code order.
func Ops() []Op {
	out := make([]Op, 0, int(opCount)-1)
	for o := Op(1); o < opCount; o++ {
		out = append(out, o)
	}
	return out
}

// IsCollective reports whether o is a collective (matched across members).
func (o Op) IsCollective() bool { return o >= OpBarrier && o <= OpExscan }

// Synchronizing reports whether no member can leave the op before the last
// member entered it (the clock condition of DESIGN.md): Barrier, Allreduce,
// Allgather(v), Alltoall(v,w), Reduce_scatter(_block).
func (o Op) Synchronizing() bool {
	switch o {
	case OpBarrier, OpAllreduce, OpAllgather, OpAllgatherv, OpAlltoall,
		OpAlltoallv, OpAlltoallw, OpReduceScatter, OpReduceScatterBlock:
		return true
	}
	return false
}

// HasRoot reports whether the op takes a root argument.
func (o Op) HasRoot() bool {
	switch o {
	case OpBcast, OpReduce, OpGather, OpGatherv, OpScatter, OpScatterv:
		return true
	}
	return false
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
