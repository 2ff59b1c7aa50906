! Module gtstorage_mpi from Fortran (mpi_f08), run under mpiexec by CTest (label "mpi"): a
! periodic 2-D decomposition, a field filled through a halo-aware Fortran pointer with a function
! of the global index, exchanged with corners (BOX) and without (STAR), checked everywhere; the
! communicator as type(MPI_Comm) and as an integer handle; failures as statuses on every rank.
program test_mpi_exchange_fortran
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi_f08
  use gtstorage
  use gtstorage_mpi
  implicit none

  integer, parameter :: nx = 13, ny = 10, nz = 3, h = 2
  integer :: rank, nprocs, failures, total, st
  integer(gtstorage_decomp_kind) :: d, d2
  integer(gtstorage_handle_kind) :: u, v
  integer(gtstorage_exchange_kind) :: ex
  integer :: first(2), extent(2)
  type(gtstorage_decomp_info) :: info
  type(gtstorage_exchange_info) :: xinfo
  real(c_double), pointer :: p(:, :, :)

  failures = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  call gtstorage_decomp_create(d, MPI_COMM_WORLD, dims="IJ", periodic=[.true., .true.], &
                               status=st)
  call expect(st == GTSTORAGE_OK, "decomposition: "//gtstorage_last_error())
  call gtstorage_decomp_get_info(d, info, status=st)
  call expect(st == GTSTORAGE_OK .and. info%size == nprocs, "decomp info")
  call gtstorage_decomp_local_extent(d, [nx, ny], first, extent, status=st)
  call expect(st == GTSTORAGE_OK, "local extent")

  ! Two fields: K-first and I-first storage orders, the same halo.
  call gtstorage_create(u, [extent(1) + 2 * h, extent(2) + 2 * h, nz], preset="gt:cpu_kfirst", &
                        halo=[h, h, h, h, 0, 0], status=st)
  call expect(st == GTSTORAGE_OK, "create u")
  call gtstorage_create(v, [extent(1) + 2 * h, extent(2) + 2 * h, nz], preset="gt:cpu_ifirst", &
                        halo=[h, h, h, h, 0, 0], status=st)
  call expect(st == GTSTORAGE_OK, "create v")

  call fill(u, 1)
  call fill(v, 2)
  call gtstorage_exchange_create(ex, d, [u, v], status=st)
  call expect(st == GTSTORAGE_OK, "exchange_create: "//gtstorage_last_error())
  call gtstorage_exchange_run(ex, status=st)
  call expect(st == GTSTORAGE_OK, "exchange_run: "//gtstorage_last_error())
  call check(u, 1, .true.)
  call check(v, 2, .true.)
  call gtstorage_exchange_get_info(ex, xinfo, status=st)
  call expect(st == GTSTORAGE_OK .and. xinfo%nfields == 2 .and. xinfo%steps == 1, "exchange info")
  call gtstorage_exchange_release(ex, status=st)
  call expect(st == GTSTORAGE_OK, "exchange_release")

  ! Faces only, started and waited for, over a decomposition made from an integer handle.
  call gtstorage_decomp_create(d2, MPI_COMM_WORLD%MPI_VAL, dims="IJ", &
                               periodic=[.true., .true.], status=st)
  call expect(st == GTSTORAGE_OK, "decomposition from an integer handle")
  call fill(u, 3)
  call gtstorage_exchange_create(ex, d2, [u], corners=.false., status=st)
  call expect(st == GTSTORAGE_OK, "exchange_create STAR")
  call gtstorage_exchange_start(ex, status=st)
  call expect(st == GTSTORAGE_OK, "exchange_start")
  call gtstorage_exchange_wait(ex, status=st)
  call expect(st == GTSTORAGE_OK, "exchange_wait")
  call check(u, 3, .false.)
  call gtstorage_exchange_release(ex, status=st)
  call gtstorage_decomp_release(d2, status=st)
  call expect(st == GTSTORAGE_OK, "decomp_release")

  ! Bad input: a status and a message on every rank.
  call gtstorage_decomp_create(d2, 987654, status=st)
  call expect(st == GTSTORAGE_ERROR_INVALID_ARGUMENT .and. &
              index(gtstorage_last_error(), "not a valid communicator") > 0, &
              "bad communicator: "//gtstorage_last_error())
  call gtstorage_decomp_create(d2, MPI_COMM_WORLD, proc_dims=[nprocs + 1, 1], status=st)
  call expect(st == GTSTORAGE_ERROR_INVALID_ARGUMENT, "grid that does not fit")
  call gtstorage_exchange_create(ex, d, [u], width=[3, 3, 3, 3], status=st)
  call expect(st == GTSTORAGE_ERROR_INVALID_ARGUMENT .and. &
              index(gtstorage_last_error(), "narrower than the exchanged width") > 0, &
              "width above the halo: "//gtstorage_last_error())
  call gtstorage_exchange_run(0_gtstorage_exchange_kind, status=st)
  call expect(st == GTSTORAGE_ERROR_INVALID_HANDLE, "exchange handle 0")

  call expect(d2 == 0, "a failed gtstorage_decomp_create leaves 0")
  call gtstorage_release(u)
  call gtstorage_release(v)
  call gtstorage_decomp_release(d)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(i0, a, i0, a)', nprocs, " processes (Fortran): ", total, " failures"
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      write (error_unit, '(a, i0, a)') "[rank ", rank, "] FAILED: "//what
      failures = failures + 1
    end if
  end subroutine expect

  pure real(c_double) function value(f, gi, gj, k)
    integer, intent(in) :: f, gi, gj, k
    value = real(f * 100000 + gi * 1000 + gj * 10 + k, c_double)
  end function value

  ! Global index (1-based, periodic) of local pointer index i of dim dim.
  pure integer function global(i, dim)
    integer, intent(in) :: i, dim
    integer :: n
    n = merge(nx, ny, dim == 1)
    global = modulo(first(dim) + i - 2, n) + 1
  end function global

  subroutine fill(s, f)
    integer(gtstorage_handle_kind), intent(in) :: s
    integer, intent(in) :: f
    integer :: i, j, k
    call gtstorage_get_pointer(s, p)
    p = -1.0_c_double
    do k = 1, nz
      do j = 1, extent(2)
        do i = 1, extent(1)
          p(i, j, k) = value(f, global(i, 1), global(j, 2), k)
        end do
      end do
    end do
  end subroutine fill

  subroutine check(s, f, corners)
    integer(gtstorage_handle_kind), intent(in) :: s
    integer, intent(in) :: f
    logical, intent(in) :: corners
    integer :: i, j, k, bad
    logical :: halo_i, halo_j
    real(c_double) :: want
    call gtstorage_get_pointer(s, p)
    call expect(lbound(p, 1) == 1 - h .and. ubound(p, 1) == extent(1) + h, "pointer bounds")
    bad = 0
    do k = 1, nz
      do j = 1 - h, extent(2) + h
        do i = 1 - h, extent(1) + h
          halo_i = i < 1 .or. i > extent(1)
          halo_j = j < 1 .or. j > extent(2)
          want = value(f, global(i, 1), global(j, 2), k)
          if (halo_i .and. halo_j .and. .not. corners) want = -1.0_c_double
          if (p(i, j, k) /= want) bad = bad + 1
        end do
      end do
    end do
    call expect(bad == 0, "field values after the exchange")
  end subroutine check

end program test_mpi_exchange_fortran
