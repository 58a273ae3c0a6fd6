"""mpi4py test program (tests/python_test.go): buffer-based (upper-case)
mpi4py calls, one MPI call each, so the trace's counts are known exactly,
and pickled (lower-case) send/recv, which mpi4py runs as MPI_Send and
MPI_Mprobe + MPI_Mrecv.

Per rank: MPI_Allreduce on MPI_COMM_WORLD, MPI_Comm_split by parity,
ITERS ring exchanges (MPI_Irecv + MPI_Isend + MPI_Waitall of both), ITERS
pickled ring steps (comm.send + comm.recv), an MPI_Barrier on each
communicator and an MPI_Allreduce on the split one.
Prints one deterministic line per rank."""
import sys
from array import array

from mpi4py import MPI

ITERS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

total = array('d', [0.0])
comm.Allreduce([array('d', [rank + 1.0]), MPI.DOUBLE], [total, MPI.DOUBLE], op=MPI.SUM)
sub = comm.Split(rank % 2, rank)

got = array('d', [0.0] * 8)
check = 0.0
for i in range(ITERS):
    out = array('d', [rank * 100.0 + i] * 8)
    reqs = [comm.Irecv([got, MPI.DOUBLE], source=(rank - 1) % size, tag=i),
            comm.Isend([out, MPI.DOUBLE], dest=(rank + 1) % size, tag=i)]
    MPI.Request.Waitall(reqs)
    check += got[0]

for i in range(ITERS):
    obj = {'i': i, 'from': rank}
    if rank % 2 == 0:
        comm.send(obj, dest=(rank + 1) % size, tag=500 + i)
        got_obj = comm.recv(source=(rank - 1) % size, tag=500 + i)
    else:
        got_obj = comm.recv(source=(rank - 1) % size, tag=500 + i)
        comm.send(obj, dest=(rank + 1) % size, tag=500 + i)
    check += got_obj['i'] + got_obj['from']

comm.Barrier()
sub.Barrier()
subsum = array('i', [0])
sub.Allreduce([array('i', [1]), MPI.INT], [subsum, MPI.INT], op=MPI.SUM)
print(f"rank {rank} total {total[0]:g} ring {check:g} sub {subsum[0]}", flush=True)
