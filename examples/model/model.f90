! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
! A Fortran mini-model that calls GT4Py on its own fields (issue 24): the model allocates its
! 3-D fields with halos itself, decomposes the domain over MPI processes, exchanges halos with
! libgtstorage_mpi and calls a GT4Py stencil (examples/model/model_physics.py) every step through
! libgtstorage_python, on the same arrays: no copy, in or out.
!
!   mpiexec -n 4 ./model_f [cartesian|next] [steps]
!
! "cartesian" (default) calls model_physics:diffuse, a gtscript stencil; "next" calls
! model_physics:diffuse_next, a gt4py.next program. At the end every process compares its block
! with the same steps computed by plain Fortran on the whole field (the same expression in the
! same order: no tolerance), checks that the stencil never wrote the halo, and that the library
! allocated and copied nothing while the model ran.
program model
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use gtstorage
  use gtstorage_mpi
  use gtstorage_python
  implicit none

  integer, parameter :: ni = 40, nj = 30, nk = 5, nh = 2
  real(c_double), parameter :: alpha = 0.1_c_double, sentinel = -999.0_c_double
  character(len=16) :: variant
  character(len=16) :: arg
  integer(gtstorage_decomp_kind) :: d
  integer(gtstorage_handle_kind) :: s(2)
  integer(gtstorage_exchange_kind) :: ex(2)
  integer(gtstorage_python_function_kind) :: fn
  type(gtstorage_stats) :: before, after
  ! The model's own fields, allocated by the model, halo at 1-nh .. 0 and n+1 .. n+nh.
  real(c_double), allocatable, target :: u(:, :, :), v(:, :, :)
  real(c_double), allocatable :: ref(:, :, :), rnext(:, :, :)
  integer :: first(2), extent(2), rank, nprocs, step, steps, cur, nxt, bad, total, halo_writes
  integer :: st, i
  integer(8) :: clock0, clock1, rate, first_step, later_steps

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  variant = "cartesian"
  steps = 8
  if (command_argument_count() >= 1) call get_command_argument(1, variant)
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) steps
  end if

  ! Every gtstorage call below that fails stops with its message (no status= given).
  call gtstorage_set_error_mode(GTSTORAGE_ERRORS_ARE_FATAL)

  ! ---- the model's decomposition and fields -----------------------------------------------
  call gtstorage_decomp_create(d, MPI_COMM_WORLD, dims="IJ", periodic=[.true., .true.])
  call gtstorage_decomp_local_extent(d, [ni, nj], first, extent)
  allocate (u(1 - nh:extent(1) + nh, 1 - nh:extent(2) + nh, nk))
  allocate (v, mold=u)
  allocate (ref(ni, nj, nk), rnext(ni, nj, nk))
  call initial(ref)
  u = 0
  v = 0
  u(1:extent(1), 1:extent(2), :) = ref(first(1):first(1) + extent(1) - 1, &
                                       first(2):first(2) + extent(2) - 1, :)

  ! ---- the same arrays as storages: wrapped, not copied ------------------------------------
  call gtstorage_wrap(s(1), u, halo=[nh, nh, 0], dims="IJK")
  call gtstorage_wrap(s(2), v, halo=[nh, nh, 0], dims="IJK")
  call gtstorage_exchange_create(ex(1), d, [s(1)])
  call gtstorage_exchange_create(ex(2), d, [s(2)])

  ! ---- Python: each process embeds its interpreter -----------------------------------------
  ! VIRTUAL_ENV (a venv with gt4py) and PYTHONPATH (where model_physics.py is) come from the
  ! environment. GT4Py writes the generated stencil into its cache once: process 0 imports the
  ! module (which builds it) before the others do.
  call gtstorage_python_init()
  if (rank == 0) call resolve()
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank /= 0) call resolve()

  ! ---- the time loop --------------------------------------------------------------------------
  call gtstorage_get_stats(before)
  halo_writes = 0
  cur = 1
  first_step = 0
  later_steps = 0
  call system_clock(count_rate=rate)
  do step = 1, steps
    nxt = 3 - cur
    call gtstorage_exchange_run(ex(cur))  ! the input's halo from the neighbours
    call set_halo(nxt, sentinel)          ! to see whether the stencil writes there
    call system_clock(clock0)
    call step_python(s(cur), s(nxt))
    call system_clock(clock1)
    if (step == 1) then
      first_step = clock1 - clock0
    else
      later_steps = later_steps + (clock1 - clock0)
    end if
    if (count_halo(nxt, sentinel) /= halo_cells()) halo_writes = halo_writes + 1
    cur = nxt
  end do
  call gtstorage_get_stats(after)

  ! ---- the reference: plain Fortran on the whole periodic field -------------------------------
  do step = 1, steps
    call reference_step(ref, rnext)
    ref = rnext
  end do
  bad = 0
  if (cur == 1) then
    bad = count(u(1:extent(1), 1:extent(2), :) /= ref(first(1):first(1) + extent(1) - 1, &
                                                      first(2):first(2) + extent(2) - 1, :))
  else
    bad = count(v(1:extent(1), 1:extent(2), :) /= ref(first(1):first(1) + extent(1) - 1, &
                                                      first(2):first(2) + extent(2) - 1, :))
  end if
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, halo_writes, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  st = 0
  if (after%host_bytes /= before%host_bytes .or. after%h2d_bytes /= before%h2d_bytes .or. &
      after%d2h_bytes /= before%d2h_bytes .or. after%live_handles /= before%live_handles) st = 1
  call MPI_Allreduce(MPI_IN_PLACE, st, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(a,a,a,i0,a,i0,a,i0,a)', "model (", trim(variant), "): ", nprocs, " process(es), ", &
      steps, " steps, ", ni * nj * nk, " points"
    print '(a,i0,a,i0,a,i0)', "  library while the model ran: host bytes allocated ", &
      after%host_bytes - before%host_bytes, ", bytes copied host<->device ", &
      (after%h2d_bytes - before%h2d_bytes) + (after%d2h_bytes - before%d2h_bytes), &
      ", storages made ", after%live_handles - before%live_handles
    print '(a,i0,a,i0)', "  points differing from the Fortran reference: ", total, &
      "; steps whose stencil wrote a halo: ", halo_writes
    print '(a,f12.3,a,f12.3,a)', "  Python step on process 0: first", &
      1d3 * real(first_step, 8) / real(rate, 8), " ms, then", &
      1d3 * real(later_steps, 8) / real(rate, 8) / max(1, steps - 1), " ms per step"
  end if

  call gtstorage_python_release_function(fn)
  call gtstorage_python_finalize()
  do i = 1, 2
    call gtstorage_exchange_release(ex(i))
    call gtstorage_release(s(i))
  end do
  call gtstorage_decomp_release(d)
  if (rank == 0) then
    if (total == 0 .and. halo_writes == 0 .and. st == 0) then
      print '(a)', "  OK: identical to the reference, halo untouched, zero copies"
    else
      print '(a)', "  FAILED"
    end if
  end if
  call MPI_Finalize()
  if (total /= 0 .or. halo_writes /= 0 .or. st /= 0) error stop 1

contains

  subroutine resolve()
    if (variant == "next") then
      call gtstorage_python_resolve(fn, "model_physics:diffuse_next")
    else
      call gtstorage_python_resolve(fn, "model_physics:diffuse")
    end if
  end subroutine resolve

  subroutine step_python(s_in, s_out)
    integer(gtstorage_handle_kind), intent(in) :: s_in, s_out
    if (variant == "next") then
      call gtstorage_python_call(fn, [s_in, s_out], &
                                 args=[py_real("alpha", alpha), py_int("nx", extent(1)), &
                                       py_int("ny", extent(2)), py_int("nz", nk)])
    else
      call gtstorage_python_call(fn, [s_in, s_out], args=[py_real("alpha", alpha)])
    end if
  end subroutine step_python

  ! The halo ring of field k (1: u, 2: v) set to value / counted.
  subroutine set_halo(k, value)
    integer, intent(in) :: k
    real(c_double), intent(in) :: value
    if (k == 1) then
      call fill_halo(u, value)
    else
      call fill_halo(v, value)
    end if
  end subroutine set_halo

  subroutine fill_halo(a, value)
    real(c_double), intent(inout) :: a(1 - nh:, 1 - nh:, :)
    real(c_double), intent(in) :: value
    a(1 - nh:0, :, :) = value
    a(extent(1) + 1:, :, :) = value
    a(:, 1 - nh:0, :) = value
    a(:, extent(2) + 1:, :) = value
  end subroutine fill_halo

  integer function count_halo(k, value)
    integer, intent(in) :: k
    real(c_double), intent(in) :: value
    if (k == 1) then
      count_halo = count(u == value)
    else
      count_halo = count(v == value)
    end if
  end function count_halo

  integer function halo_cells()
    halo_cells = ((extent(1) + 2 * nh) * (extent(2) + 2 * nh) - extent(1) * extent(2)) * nk
  end function halo_cells

  subroutine initial(a)
    real(c_double), intent(out) :: a(:, :, :)
    integer :: i, j, k
    do k = 1, nk
      do j = 1, nj
        do i = 1, ni
          a(i, j, k) = real(mod(7 * i + 13 * j + 5 * k, 17), c_double) / 4
        end do
      end do
    end do
  end subroutine initial

  ! The stencil of model_physics.py, evaluated in the same order as NumPy does:
  ! u + alpha * ((((u(i-1) + u(i+1)) + u(j-1)) + u(j+1)) - 4 u), periodic.
  subroutine reference_step(a, b)
    real(c_double), intent(in) :: a(:, :, :)
    real(c_double), intent(out) :: b(:, :, :)
    integer :: i, j, k, im, ip, jm, jp
    do k = 1, nk
      do j = 1, nj
        jm = modulo(j - 2, nj) + 1
        jp = modulo(j, nj) + 1
        do i = 1, ni
          im = modulo(i - 2, ni) + 1
          ip = modulo(i, ni) + 1
          b(i, j, k) = a(i, j, k) + alpha * ((((a(im, j, k) + a(ip, j, k)) + a(i, jm, k)) + &
                                              a(i, jp, k)) - 4.0_c_double * a(i, j, k))
        end do
      end do
    end do
  end subroutine reference_step

end program model
