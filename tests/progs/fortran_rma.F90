! Fortran one-sided test program (issue 11 §4, docs/rma.md), `use mpi` or
! mpif.h (-DMPIF): MPI_Win_create, a fence epoch (MPI_Put to the right,
! MPI_Get from the left, MPI_Accumulate to the right, 2 rounds), a lock
! epoch (MPI_Win_lock, MPI_Fetch_and_op, MPI_Win_flush, MPI_Win_unlock),
! a PSCW epoch with one-member groups, MPI_Win_free. Rank 0 prints every
! rank's checksum; tests/rma_test.go knows these counts.
program fortran_rma
#ifdef MPIF
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer, parameter :: k = 4, rounds = 2
  integer :: ierr, rank, np, right, left, win, i, world, gl, gr
  integer :: a(4*k), src(k), got(k), one, old, check, allc(64)
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  right = mod(rank + 1, np)
  left = mod(rank - 1 + np, np)
  a = rank
  src = (/ (rank + i, i = 1, k) /)
  got = 0
  wsize = 4 * 4 * k
  call MPI_Win_create(a, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  do i = 1, rounds
    disp = 0
    call MPI_Put(src, k, MPI_INTEGER, right, disp, k, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    disp = k
    call MPI_Get(got, k, MPI_INTEGER, left, disp, k, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    disp = 2 * k
    call MPI_Accumulate(got, k, MPI_INTEGER, right, disp, k, MPI_INTEGER, MPI_SUM, win, ierr)
    call MPI_Win_fence(0, win, ierr)
  end do
  one = 1
  disp = 3 * k
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win, ierr)
  call MPI_Fetch_and_op(one, old, MPI_INTEGER, right, disp, MPI_SUM, win, ierr)
  call MPI_Win_flush(right, win, ierr)
  call MPI_Win_unlock(right, win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  call MPI_Group_incl(world, 1, (/ left /), gl, ierr)
  call MPI_Group_incl(world, 1, (/ right /), gr, ierr)
  call MPI_Win_post(gl, 0, win, ierr)
  call MPI_Win_start(gr, 0, win, ierr)
  disp = 3 * k + 1
  call MPI_Put(src, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_complete(win, ierr)
  call MPI_Win_wait(win, ierr)
  call MPI_Group_free(gl, ierr)
  call MPI_Group_free(gr, ierr)
  call MPI_Group_free(world, ierr)
  call MPI_Win_free(win, ierr)
  check = sum(a * (/ (i, i = 1, 4*k) /)) + sum(got) * 7 + old
  call MPI_Gather(check, 1, MPI_INTEGER, allc, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, np
      print '(a,i0,a,i0)', 'rank ', i - 1, ' checksum ', allc(i)
    end do
  end if
  call MPI_Finalize(ierr)
end program fortran_rma
