! Fortran test program for the recorder (issue 11), `use mpi_f08`: the
! same calls as fortran_legacy.F90 with the MPI-3 Fortran 2008 bindings
! (handles are derived types, ierror optional and mostly omitted).
program fortran_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 5
  integer :: rank, np, i, right, left
  integer :: sval, rval, sbuf, rbuf, check
  integer :: buf(4), gbuf(64)
  type(MPI_Comm) :: sub, cart, ring, dcomm, gcomm, inter, merged
  type(MPI_Group) :: wgroup
  type(MPI_Request) :: ireq
  integer :: dims(1), wcounts(2), wsend(2), wrecv(2)
  integer(kind=MPI_ADDRESS_KIND) :: wdisp(2)
  type(MPI_Datatype) :: wtypes(2)
  logical :: periods(1)
  type(MPI_Request) :: reqs(2)
  type(MPI_Status) :: sts(2), st

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  right = mod(rank + 1, np)
  left = mod(rank - 1 + np, np)
  check = 0
  do i = 1, n
    sval = rank + i
    call MPI_Allreduce(sval, rval, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    check = check + rval
    buf = 0
    if (rank == 0) buf = (/ i, 2*i, 3*i, 4*i /)
    call MPI_Bcast(buf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD)
    check = check + sum(buf)
    ! The last trip's barrier is not recorded (selective tracing).
    if (i == n) call MPI_Pcontrol(0)
    call MPI_Barrier(MPI_COMM_WORLD)
    if (i == n) call MPI_Pcontrol(1)
    sbuf = rank * 100 + i
    if (mod(rank, 2) == 0) then
      call MPI_Send(sbuf, 1, MPI_INTEGER, right, i, MPI_COMM_WORLD)
      call MPI_Recv(rbuf, 1, MPI_INTEGER, left, i, MPI_COMM_WORLD, st)
    else
      call MPI_Recv(rbuf, 1, MPI_INTEGER, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call MPI_Send(sbuf, 1, MPI_INTEGER, right, i, MPI_COMM_WORLD)
    end if
    check = check + rbuf
    call MPI_Irecv(rval, 1, MPI_INTEGER, left, 1000 + i, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(sbuf, 1, MPI_INTEGER, right, 1000 + i, MPI_COMM_WORLD, reqs(2))
    if (mod(i, 2) == 0) then
      call MPI_Waitall(2, reqs, sts)
      if (sts(1)%MPI_SOURCE /= left) check = check - 1000000
    else
      call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    end if
    check = check + rval
  end do
  sval = rank
  call MPI_Allreduce(MPI_IN_PLACE, sval, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  check = check + sval
  gbuf = 0
  gbuf(rank + 1) = rank + 7
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_INTEGER, gbuf, 1, MPI_INTEGER, MPI_COMM_WORLD)
  check = check + sum(gbuf(1:np))
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub)
  call MPI_Allreduce(rank, rval, 1, MPI_INTEGER, MPI_SUM, sub)
  check = check + rval
  ! the constructors without a parent counter of their own
  call MPI_Comm_idup(MPI_COMM_WORLD, dcomm, ireq)
  call MPI_Wait(ireq, st)
  call MPI_Barrier(dcomm)
  call MPI_Comm_group(MPI_COMM_WORLD, wgroup)
  call MPI_Comm_create_group(MPI_COMM_WORLD, wgroup, 5, gcomm)
  call MPI_Group_free(wgroup)
  call MPI_Barrier(gcomm)
  call MPI_Intercomm_create(sub, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 9, inter)
  call MPI_Intercomm_merge(inter, mod(rank, 2) == 1, merged)
  call MPI_Barrier(merged)
  call MPI_Comm_free(merged)
  call MPI_Comm_free(inter)
  call MPI_Comm_free(gcomm)
  call MPI_Comm_free(dcomm)
  call MPI_Comm_free(sub)
  dims(1) = np
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart)
  call MPI_Allreduce(rank, rval, 1, MPI_INTEGER, MPI_MAX, cart)
  check = check + rval
  ! one integer to and from each of the 2 neighbours, per-neighbour types,
  ! on a distributed graph of the same ring: MPICH 4.0.2's mpi_f08
  ! MPI_Neighbor_alltoallw fails on a Cartesian communicator (it asks for
  ! distributed-graph degrees), with or without the recorder
  wsend(1) = left
  wsend(2) = right
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, wsend, MPI_UNWEIGHTED, 2, wsend, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring)
  wcounts = 1
  wtypes = MPI_INTEGER
  wdisp(1) = 0
  wdisp(2) = 4
  wsend(1) = rank
  wsend(2) = 10 * rank
  call MPI_Neighbor_alltoallw(wsend, wcounts, wdisp, wtypes, wrecv, wcounts, wdisp, wtypes, ring)
  check = check + wrecv(1) + wrecv(2)
  call MPI_Comm_free(ring)
  call MPI_Comm_free(cart)
  print '(A,I0,A,I0)', 'rank ', rank, ' check ', check
  call MPI_Finalize()
end program fortran_f08
