! Diffusion on a periodic 2-D domain split over processes, with module gtstorage_mpi.
!
!   mpiexec -n 4 ./exchange_f
!
! Every process owns a block of a 64 x 48 x 4 field: a gtstorage storage with a halo of 2 in I and
! J (gt:cpu_kfirst layout), reached through a Fortran pointer whose interior starts at 1 and whose
! halo runs from -1 to 0 and past the extent. Each step exchanges the halos and applies a 5-point
! diffusion stencil. At the end every process compares its block with the same steps computed on
! the whole field (small enough to do everywhere): they must agree exactly.
program exchange_example
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use gtstorage
  use gtstorage_mpi
  implicit none

  integer, parameter :: ni = 64, nj = 48, nk = 4, h = 2, steps = 10
  real(c_double), parameter :: nu = 0.1_c_double
  integer(gtstorage_decomp_kind) :: d
  integer(gtstorage_handle_kind) :: u
  integer(gtstorage_exchange_kind) :: ex
  type(gtstorage_exchange_info) :: info
  integer :: first(2), extent(2), rank, nprocs, step, i, j, bad, total
  real(c_double), pointer :: p(:, :, :)
  real(c_double), allocatable :: next(:, :, :), ref(:, :, :), rnext(:, :, :)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)

  ! Every call below fails with a message and stops (no status= given, fatal mode).
  call gtstorage_set_error_mode(GTSTORAGE_ERRORS_ARE_FATAL)
  call gtstorage_decomp_create(d, MPI_COMM_WORLD, dims="IJ", periodic=[.true., .true.])
  call gtstorage_decomp_local_extent(d, [ni, nj], first, extent)
  call gtstorage_create(u, [extent(1) + 2 * h, extent(2) + 2 * h, nk], preset="gt:cpu_kfirst", &
                        halo=[h, h, h, h, 0, 0])
  call gtstorage_get_pointer(u, p)
  p = 0
  allocate (ref(ni, nj, nk))
  call initial(ref)
  p(1:extent(1), 1:extent(2), :) = ref(first(1):first(1) + extent(1) - 1, &
                                       first(2):first(2) + extent(2) - 1, :)

  call gtstorage_exchange_create(ex, d, [u])
  allocate (next(extent(1), extent(2), nk))
  do step = 1, steps
    call gtstorage_exchange_start(ex)
    call gtstorage_exchange_wait(ex)  ! work that needs no halo could run in between
    next = p(1:extent(1), 1:extent(2), :) + nu * (p(2:extent(1) + 1, 1:extent(2), :) + &
           p(0:extent(1) - 1, 1:extent(2), :) + p(1:extent(1), 2:extent(2) + 1, :) + &
           p(1:extent(1), 0:extent(2) - 1, :) - 4 * p(1:extent(1), 1:extent(2), :))
    p(1:extent(1), 1:extent(2), :) = next
  end do
  call gtstorage_exchange_get_info(ex, info)

  ! The whole field, serially, in the same order of sums.
  allocate (rnext(ni, nj, nk))
  do step = 1, steps
    do j = 1, nj
      do i = 1, ni
        rnext(i, j, :) = ref(i, j, :) + nu * (ref(modulo(i, ni) + 1, j, :) + &
                         ref(modulo(i - 2, ni) + 1, j, :) + ref(i, modulo(j, nj) + 1, :) + &
                         ref(i, modulo(j - 2, nj) + 1, :) - 4 * ref(i, j, :))
      end do
    end do
    ref = rnext
  end do
  bad = count(p(1:extent(1), 1:extent(2), :) /= ref(first(1):first(1) + extent(1) - 1, &
                                                    first(2):first(2) + extent(2) - 1, :))
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(i0, a, i0, a, i0, a, a)', nprocs, " processes, ", steps, " steps, ", &
      info%bytes_sent, " halo bytes sent per step by rank 0: ", &
      merge("matches the serial result     ", "DIFFERS FROM the serial result", total == 0)
  end if

  call gtstorage_exchange_release(ex)
  call gtstorage_release(u)
  call gtstorage_decomp_release(d)
  deallocate (next, ref, rnext)
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  subroutine initial(a)
    real(c_double), intent(out) :: a(:, :, :)
    real(c_double), parameter :: pi = acos(-1.0_c_double)
    integer :: i, j, k
    do k = 1, size(a, 3)
      do j = 1, size(a, 2)
        do i = 1, size(a, 1)
          a(i, j, k) = sin(2 * pi * (i - 1) / size(a, 1)) * cos(2 * pi * (j - 1) / size(a, 2)) + &
                       0.1_c_double * (k - 1)
        end do
      end do
    end do
  end subroutine initial

end program exchange_example
