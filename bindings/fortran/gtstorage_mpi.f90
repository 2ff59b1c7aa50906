! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Fortran binding of libgtstorage_mpi (module `gtstorage_mpi`): decompositions and halo
!> exchanges of storages over MPI (include/gtstorage/gtstorage_mpi.h).
!>
!> Like module gtstorage it has two layers: the C API as bind(C) interfaces named <C name>_c
!> (generated from the header, gtstorage_mpi_c_api.inc), and a Fortran layer under the plain C
!> names with optional arguments and an optional `status` last (failures are handled as in module
!> gtstorage: gtstorage_last_error() has the message, gtstorage_set_error_mode() decides what a
!> failure without status= does). The communicator is a `type(MPI_Comm)` of mpi_f08 or a default
!> integer handle of `use mpi` (generic interface); module gtstorage itself never needs an MPI.
!>
!>   use gtstorage; use gtstorage_mpi; use mpi_f08
!>   call gtstorage_decomp_create(d, MPI_COMM_WORLD, dims="IJ", periodic=[.true., .true.])
!>   call gtstorage_decomp_local_extent(d, [nx, ny], first, extent)
!>   call gtstorage_create(u, [extent(1) + 4, extent(2) + 4, nz], halo=[2, 2, 2, 2, 0, 0])
!>   call gtstorage_exchange_create(ex, d, [u, v])
!>   call gtstorage_exchange_start(ex); ...; call gtstorage_exchange_wait(ex)
!>
!> Global indices of this layer are 1-based: gtstorage_decomp_local_extent returns the first
!> global index of the block (the C offset + 1).
module gtstorage_mpi
  use, intrinsic :: iso_c_binding
  use gtstorage
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  ! The C ABI of gtstorage_mpi.h: constants, bind(C) types and <C name>_c interfaces, generated
  ! by tools/gen_bindings.py (test bindings.generated_up_to_date).
  include "gtstorage_mpi_c_api.inc"

  public :: gtstorage_decomp_create, gtstorage_decomp_release, gtstorage_decomp_get_info, &
            gtstorage_decomp_local_extent, gtstorage_exchange_create, gtstorage_exchange_start, &
            gtstorage_exchange_wait, gtstorage_exchange_test, gtstorage_exchange_run, &
            gtstorage_exchange_release, gtstorage_exchange_get_info, gtstorage_mpi_gpu_aware

  !> Creates a decomposition over a communicator (type(MPI_Comm) or an integer handle).
  !> Collective.
  interface gtstorage_decomp_create
    module procedure decomp_create_f08, decomp_create_handle
  end interface gtstorage_decomp_create

contains

  !> Creates decomposition d of the processes of comm. Optional: dims (labels of the decomposed
  !> dims, "IJ" by default, "I", "IJK", …), proc_dims (processes per dim, 0 = let MPI choose),
  !> periodic (per dim), reorder (allow MPI to renumber the processes).
  subroutine decomp_create_f08(d, comm, dims, proc_dims, periodic, reorder, status)
    integer(gtstorage_decomp_kind), intent(out) :: d
    type(MPI_Comm), intent(in) :: comm
    character(*), intent(in), optional :: dims
    integer, intent(in), optional :: proc_dims(:)
    logical, intent(in), optional :: periodic(:), reorder
    integer, intent(out), optional :: status
    call decomp_create_handle(d, comm%MPI_VAL, dims, proc_dims, periodic, reorder, status)
  end subroutine decomp_create_f08

  subroutine decomp_create_handle(d, comm, dims, proc_dims, periodic, reorder, status)
    integer(gtstorage_decomp_kind), intent(out) :: d
    integer, intent(in) :: comm
    character(*), intent(in), optional :: dims
    integer, intent(in), optional :: proc_dims(:)
    logical, intent(in), optional :: periodic(:), reorder
    integer, intent(out), optional :: status
    character(*), parameter :: where = "gtstorage_decomp_create"
    type(gtstorage_decomp_options) :: o
    character(kind=c_char), allocatable, target :: cdims(:)
    integer(c_int32_t), allocatable, target :: cprocs(:), cperiodic(:)
    integer :: n, i

    d = 0
    n = 2
    if (present(dims)) then
      n = len_trim(dims)
      if (index(dims, ",") > 0) n = (len_trim(dims) + 1) / 2
    else if (present(proc_dims)) then
      n = size(proc_dims)
    else if (present(periodic)) then
      n = size(periodic)
    end if
    if (present(proc_dims)) then
      if (.not. gtstorage_ndim_values("proc_dims", size(proc_dims), n, status, where)) return
    end if
    if (present(periodic)) then
      if (.not. gtstorage_ndim_values("periodic", size(periodic), n, status, where)) return
    end if
    o%struct_size = int(c_sizeof(o), c_int32_t)
    o%ndim = int(n, c_int32_t)
    o%comm = int(comm, c_int64_t)
    if (present(dims)) then
      allocate (cdims(len_trim(dims) + 1))
      do i = 1, len_trim(dims)
        cdims(i) = dims(i:i)
      end do
      cdims(len_trim(dims) + 1) = c_null_char
      o%dims = c_loc(cdims)
    end if
    if (present(proc_dims) .and. n > 0) then
      cprocs = int(proc_dims, c_int32_t)
      o%proc_dims = c_loc(cprocs)
    end if
    if (present(periodic) .and. n > 0) then
      allocate (cperiodic(n))
      cperiodic = 0
      where (periodic) cperiodic = 1
      o%periodic = c_loc(cperiodic)
    end if
    if (present(reorder)) then
      if (reorder) o%reorder = 1
    end if
    call gtstorage_finish_call(gtstorage_decomp_create_c(o, d), status, where)
  end subroutine decomp_create_handle

  !> Drops a reference to decomposition d (exchanges made from it keep their own).
  subroutine gtstorage_decomp_release(d, status)
    integer(gtstorage_decomp_kind), intent(in) :: d
    integer, intent(out), optional :: status
    call gtstorage_finish_call(gtstorage_decomp_release_c(d), status, "gtstorage_decomp_release")
  end subroutine gtstorage_decomp_release

  !> What decomposition d is on this process (C struct: ranks are MPI ranks, coords 0-based,
  !> neighbors(1:2, k) the lower and upper neighbour along dim k, -1 at a non-periodic edge).
  subroutine gtstorage_decomp_get_info(d, info, status)
    integer(gtstorage_decomp_kind), intent(in) :: d
    type(gtstorage_decomp_info), intent(out) :: info
    integer, intent(out), optional :: status
    info%struct_size = int(c_sizeof(info), c_int32_t)
    call gtstorage_finish_call(gtstorage_decomp_get_info_c(d, info), status, &
                               "gtstorage_decomp_get_info")
  end subroutine gtstorage_decomp_get_info

  !> The block of a global domain of extents global_shape (one per decomposed dim, grid order)
  !> that this process (or process `rank`) owns: first global index (1-based) and extent per dim.
  subroutine gtstorage_decomp_local_extent(d, global_shape, first, extent, rank, status)
    integer(gtstorage_decomp_kind), intent(in) :: d
    integer, intent(in) :: global_shape(:)
    integer, intent(out) :: first(size(global_shape)), extent(size(global_shape))
    integer, intent(in), optional :: rank
    integer, intent(out), optional :: status
    integer(c_int64_t) :: cglobal(max(1, size(global_shape))), coff(max(1, size(global_shape)))
    integer(c_int64_t) :: cext(max(1, size(global_shape)))
    integer(c_int32_t) :: crank
    integer(c_int) :: st
    crank = -1
    if (present(rank)) crank = int(rank, c_int32_t)
    cglobal = 0
    cglobal(1:size(global_shape)) = int(global_shape, c_int64_t)
    coff = 0
    cext = 0
    st = gtstorage_decomp_local_extent_c(d, crank, cglobal, int(size(global_shape), c_int32_t), &
                                         coff, cext)
    first = int(coff(1:size(global_shape))) + 1
    extent = int(cext(1:size(global_shape)))
    call gtstorage_finish_call(st, status, "gtstorage_decomp_local_extent")
  end subroutine gtstorage_decomp_local_extent

  !> Binds a persistent halo exchange ex of fields (storage handles) over decomposition d.
  !> Collective. Optional: width (2 per decomposed dim, lower and upper, grid order; default each
  !> field's halo), corners (.true. by default: faces, edges and corners; .false.: faces only),
  !> method (GTSTORAGE_EXCHANGE_AUTO / _DATATYPE / _PACK), side (GTSTORAGE_EXCHANGE_SIDE_*),
  !> gpu_aware (GTSTORAGE_GPU_AWARE_AUTO / _NO / _YES).
  subroutine gtstorage_exchange_create(ex, d, fields, width, corners, method, side, gpu_aware, &
                                       status)
    integer(gtstorage_exchange_kind), intent(out) :: ex
    integer(gtstorage_decomp_kind), intent(in) :: d
    integer(gtstorage_handle_kind), intent(in) :: fields(:)
    integer, intent(in), optional :: width(:)
    logical, intent(in), optional :: corners
    integer, intent(in), optional :: method, side, gpu_aware
    integer, intent(out), optional :: status
    type(gtstorage_exchange_options) :: o
    integer(c_int64_t), allocatable, target :: cwidth(:)
    integer(gtstorage_handle_kind) :: cfields(max(1, size(fields)))
    ex = 0
    o%struct_size = int(c_sizeof(o), c_int32_t)
    if (present(width)) then
      cwidth = int(width, c_int64_t)
      if (size(cwidth) > 0) o%width = c_loc(cwidth)
    end if
    if (present(corners)) then
      if (.not. corners) o%pattern = GTSTORAGE_EXCHANGE_STAR
    end if
    if (present(method)) o%method = int(method, c_int32_t)
    if (present(side)) o%side = int(side, c_int32_t)
    if (present(gpu_aware)) o%gpu_aware = int(gpu_aware, c_int32_t)
    cfields = 0
    cfields(1:size(fields)) = fields
    call gtstorage_finish_call(gtstorage_exchange_create_c(d, cfields, &
                                                           int(size(fields), c_int32_t), o, ex), &
                               status, "gtstorage_exchange_create")
  end subroutine gtstorage_exchange_create

  !> Starts one exchange (packs, posts every message); complete it with gtstorage_exchange_wait.
  subroutine gtstorage_exchange_start(ex, status)
    integer(gtstorage_exchange_kind), intent(in) :: ex
    integer, intent(out), optional :: status
    call gtstorage_finish_call(gtstorage_exchange_start_c(ex), status, "gtstorage_exchange_start")
  end subroutine gtstorage_exchange_start

  !> Completes the exchange started last: the halos are in place when it returns.
  subroutine gtstorage_exchange_wait(ex, status)
    integer(gtstorage_exchange_kind), intent(in) :: ex
    integer, intent(out), optional :: status
    call gtstorage_finish_call(gtstorage_exchange_wait_c(ex), status, "gtstorage_exchange_wait")
  end subroutine gtstorage_exchange_wait

  !> done = .true. (and the exchange completed) if every message has arrived.
  subroutine gtstorage_exchange_test(ex, done, status)
    integer(gtstorage_exchange_kind), intent(in) :: ex
    logical, intent(out) :: done
    integer, intent(out), optional :: status
    integer(c_int32_t) :: cdone
    cdone = 0
    call gtstorage_finish_call(gtstorage_exchange_test_c(ex, cdone), status, &
                               "gtstorage_exchange_test")
    done = cdone /= 0
  end subroutine gtstorage_exchange_test

  !> gtstorage_exchange_start then gtstorage_exchange_wait.
  subroutine gtstorage_exchange_run(ex, status)
    integer(gtstorage_exchange_kind), intent(in) :: ex
    integer, intent(out), optional :: status
    call gtstorage_finish_call(gtstorage_exchange_run_c(ex), status, "gtstorage_exchange_run")
  end subroutine gtstorage_exchange_run

  !> Releases exchange ex (completing a step in flight first) and its hold on the fields.
  subroutine gtstorage_exchange_release(ex, status)
    integer(gtstorage_exchange_kind), intent(in) :: ex
    integer, intent(out), optional :: status
    call gtstorage_finish_call(gtstorage_exchange_release_c(ex), status, &
                               "gtstorage_exchange_release")
  end subroutine gtstorage_exchange_release

  !> What exchange ex does per step (the C struct gtstorage_exchange_info).
  subroutine gtstorage_exchange_get_info(ex, info, status)
    integer(gtstorage_exchange_kind), intent(in) :: ex
    type(gtstorage_exchange_info), intent(out) :: info
    integer, intent(out), optional :: status
    info%struct_size = int(c_sizeof(info), c_int32_t)
    call gtstorage_finish_call(gtstorage_exchange_get_info_c(ex, info), status, &
                               "gtstorage_exchange_get_info")
  end subroutine gtstorage_exchange_get_info

  !> Whether this MPI passes device memory (see gtstorage_mpi.h).
  logical function gtstorage_mpi_gpu_aware(status) result(aware)
    integer, intent(out), optional :: status
    integer(c_int32_t) :: caware
    caware = 0
    call gtstorage_finish_call(gtstorage_mpi_gpu_aware_c(caware), status, "gtstorage_mpi_gpu_aware")
    aware = caware /= 0
  end function gtstorage_mpi_gpu_aware

end module gtstorage_mpi
