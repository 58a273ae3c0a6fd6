! Fortran test program for the recorder (issue 11), mpif.h or `use mpi`:
! compiled with -DMPIF for mpif.h. Every rank does, N times: Allreduce,
! Bcast, Barrier, a Send/Recv ring step (odd ranks receive with
! MPI_ANY_SOURCE and MPI_STATUS_IGNORE), an Irecv/Isend ring step completed
! by Waitall (statuses array or MPI_STATUSES_IGNORE); then one in-place
! Allreduce, an in-place Allgather, Comm_split, an Allreduce on the split
! communicator and Comm_free. tests/fortran_test.go knows these counts.
program fortran_legacy
#ifdef MPIF
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer, parameter :: n = 5
  integer :: ierr, rank, np, i, sub, cart, right, left
  integer :: dcomm, gcomm, inter, merged, wgroup, ireq
  integer :: dims(1), wcounts(2), wtypes(2), wsend(2), wrecv(2)
  integer(kind=MPI_ADDRESS_KIND) :: wdisp(2)
  logical :: periods(1)
  integer :: sval, rval, sbuf, rbuf, check
  integer :: buf(4), gbuf(64), reqs(2), sts(MPI_STATUS_SIZE, 2), st(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  right = mod(rank + 1, np)
  left = mod(rank - 1 + np, np)
  check = 0
  do i = 1, n
    sval = rank + i
    call MPI_Allreduce(sval, rval, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    check = check + rval
    buf = 0
    if (rank == 0) buf = (/ i, 2*i, 3*i, 4*i /)
    call MPI_Bcast(buf, 4, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    check = check + sum(buf)
    ! The last trip's barrier is not recorded (selective tracing).
    if (i == n) call MPI_Pcontrol(0)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (i == n) call MPI_Pcontrol(1)
    sbuf = rank * 100 + i
    if (mod(rank, 2) == 0) then
      call MPI_Send(sbuf, 1, MPI_INTEGER, right, i, MPI_COMM_WORLD, ierr)
      call MPI_Recv(rbuf, 1, MPI_INTEGER, left, i, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(rbuf, 1, MPI_INTEGER, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(sbuf, 1, MPI_INTEGER, right, i, MPI_COMM_WORLD, ierr)
    end if
    check = check + rbuf
    call MPI_Irecv(rval, 1, MPI_INTEGER, left, 1000 + i, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(sbuf, 1, MPI_INTEGER, right, 1000 + i, MPI_COMM_WORLD, reqs(2), ierr)
    if (mod(i, 2) == 0) then
      call MPI_Waitall(2, reqs, sts, ierr)
      if (sts(MPI_SOURCE, 1) /= left) check = check - 1000000
    else
      call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    end if
    check = check + rval
  end do
  sval = rank
  call MPI_Allreduce(MPI_IN_PLACE, sval, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sval
  gbuf = 0
  gbuf(rank + 1) = rank + 7
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_INTEGER, gbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(gbuf(1:np))
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
  call MPI_Allreduce(rank, rval, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  check = check + rval
  ! the constructors without a parent counter of their own
  call MPI_Comm_idup(MPI_COMM_WORLD, dcomm, ireq, ierr)
  call MPI_Wait(ireq, st, ierr)
  call MPI_Barrier(dcomm, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
  call MPI_Comm_create_group(MPI_COMM_WORLD, wgroup, 5, gcomm, ierr)
  call MPI_Group_free(wgroup, ierr)
  call MPI_Barrier(gcomm, ierr)
  call MPI_Intercomm_create(sub, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 9, inter, ierr)
  call MPI_Intercomm_merge(inter, mod(rank, 2) == 1, merged, ierr)
  call MPI_Barrier(merged, ierr)
  call MPI_Comm_free(merged, ierr)
  call MPI_Comm_free(inter, ierr)
  call MPI_Comm_free(gcomm, ierr)
  call MPI_Comm_free(dcomm, ierr)
  call MPI_Comm_free(sub, ierr)
  dims(1) = np
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Allreduce(rank, rval, 1, MPI_INTEGER, MPI_MAX, cart, ierr)
  check = check + rval
  ! one integer to and from each of the 2 neighbours, per-neighbour types
  wcounts = 1
  wtypes = MPI_INTEGER
  wdisp(1) = 0
  wdisp(2) = 4
  wsend(1) = rank
  wsend(2) = 10 * rank
  call MPI_Neighbor_alltoallw(wsend, wcounts, wdisp, wtypes, wrecv, wcounts, wdisp, wtypes, cart, ierr)
  check = check + wrecv(1) + wrecv(2)
  call MPI_Comm_free(cart, ierr)
  print '(A,I0,A,I0)', 'rank ', rank, ' check ', check
  call MPI_Finalize(ierr)
end program fortran_legacy
