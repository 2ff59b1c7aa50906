! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> The rest of the Fortran layer: queries, views (domain view, transpose, sections) seen through
!> pointers, copies, sync operations on host storages, reference counts, presets, version, and
!> the raw C interfaces (*_c) with the bind(C) structs.
program test_api
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  integer(c_int64_t) :: live0

  live0 = live_handles()
  call check_version_and_presets()
  call check_query()
  call check_views()
  call check_copies()
  call check_scalar_empty_and_alignment()
  call check_sync()
  call check_refcount()
  call check_raw_api()
  call finish("test_api", live0)

contains

  !> A K-first storage with halo (2, 1), (1, 1), (0, 1), filled with field_value through its
  !> pointer.
  subroutine make_field(s, p)
    integer(gtstorage_handle_kind), intent(out) :: s
    real(c_double), pointer, intent(out) :: p(:,:,:)
    integer :: st
    call gtstorage_create(s, [8, 6, 4], preset="gt:cpu_kfirst", halo=[2, 1, 1, 1, 0, 1], &
                          status=st)
    call check_status(st, GTSTORAGE_OK, "make_field: create")
    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_OK, "make_field: get_pointer")
    call fill_field(p, lbound(p))
  end subroutine make_field

  subroutine check_version_and_presets()
    character(len=GTSTORAGE_PRESET_NAME_SIZE), allocatable :: names(:)
    character(16) :: expected
    integer :: st, i
    logical :: found
    call check(gtstorage_version() == GTSTORAGE_VERSION_NUMBER, "runtime version = module's")
    write (expected, '(i0,".",i0,".",i0)') GTSTORAGE_VERSION_MAJOR, GTSTORAGE_VERSION_MINOR, &
      GTSTORAGE_VERSION_PATCH
    call check(gtstorage_version_string() == trim(expected), "version string")
    call gtstorage_preset_names(names, st)
    call check_status(st, GTSTORAGE_OK, "preset_names")
    call check(size(names) >= 16, "at least the 16 presets of the table")
    block
      character(len=20), parameter :: required(6) = [character(20) :: "numpy", &
        "gt:cpu_kfirst", "gt:cpu_ifirst", "gridtools:cpu_ifirst", "F", "C"]
      integer :: r
      do r = 1, size(required)
        found = .false.
        do i = 1, size(names)
          if (names(i) == required(r)) found = .true.
        end do
        call check(found, "preset list has "//trim(required(r)))
      end do
    end block
  end subroutine check_version_and_presets

  subroutine check_query()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer, allocatable :: shp(:), dshape(:), halo(:), lb(:), ub(:)
    character(:), allocatable :: dims, dtype
    integer :: ndim, itemsize, sync_state, st
    integer(c_int64_t) :: nbytes
    logical :: ro
    type(gtstorage_interface_info) :: info

    call make_field(s, p)
    call gtstorage_query(s, ndim=ndim, shape=shp, domain_shape=dshape, halo=halo, lbounds=lb, &
                         ubounds=ub, dims=dims, dtype=dtype, itemsize=itemsize, nbytes=nbytes, &
                         readonly=ro, sync_state=sync_state, status=st)
    call check_status(st, GTSTORAGE_OK, "query")
    call check(ndim == 3, "query ndim")
    call check(all(shp == [8, 6, 4]), "query shape")
    call check(all(dshape == [5, 4, 3]), "query domain_shape")
    call check(all(halo == [2, 1, 1, 1, 0, 1]), "query halo pairs")
    call check(all(lb == lbound(p)) .and. all(ub == ubound(p)), "query bounds = pointer bounds")
    call check(dims == "IJK", "query dims")
    call check(dtype == "<f8", "query dtype")
    call check(itemsize == 8 .and. nbytes == 8 * 8 * 6 * 4, "query itemsize, nbytes")
    call check(.not. ro, "query readonly")
    call check(sync_state == GTSTORAGE_SYNC_CLEAN, "query sync_state")

    ! The same through the C descriptor struct.
    call gtstorage_interface(s, info, status=st)
    call check_status(st, GTSTORAGE_OK, "interface")
    call check(info%ndim == 3 .and. all(info%shape(1:3) == [8, 6, 4]), "interface shape")
    call check(info%typestr(1) == "<" .and. info%typestr(2) == "f" .and. info%typestr(3) == "8", &
               "interface typestr")
    call check(c_associated(info%data, c_loc(p(lbound(p, 1), lbound(p, 2), lbound(p, 3)))), &
               "interface data = first element of the pointer")
    call check(all(info%origin(1:3) == [2, 1, 0]), "interface origin = lower halo")
    call check(info%device_type == GTSTORAGE_DL_CPU, "interface device type")
    call gtstorage_release(s)

    ! Comma separated dims once a label has more than one character.
    call gtstorage_create(s, [2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], status=st)
    call check_status(st, GTSTORAGE_OK, "14-d create")
    call gtstorage_query(s, dims=dims)
    call check(dims == "I,J,K,0,1,2,3,4,5,6,7,8,9,10", "14-d dims: "//dims)
    call gtstorage_release(s)
  end subroutine check_query

  subroutine check_views()
    integer(gtstorage_handle_kind) :: s, v
    real(c_double), pointer :: p(:,:,:), q(:,:,:)
    integer :: st, i, j, k, bad, cnt

    call make_field(s, p)

    call gtstorage_domain_view(s, v, st)
    call check_status(st, GTSTORAGE_OK, "domain_view")
    call gtstorage_get_pointer(v, q, st)
    call check(all(lbound(q) == 1) .and. all(ubound(q) == [5, 4, 3]), "domain_view bounds")
    call check(all(q == p(1:5, 1:4, 1:3)), "domain_view values")
    call gtstorage_release(v)

    call gtstorage_transpose(s, [3, 2, 1], v, st)
    call check_status(st, GTSTORAGE_OK, "transpose")
    call gtstorage_get_pointer(v, q, st)
    call check(all(lbound(q) == [1, 0, -1]) .and. all(ubound(q) == [4, 5, 6]), "transpose bounds")
    bad = 0
    do k = 1, 4
      do j = 0, 5
        do i = -1, 6
          if (q(k, j, i) /= p(i, j, k)) bad = bad + 1
        end do
      end do
    end do
    call check(bad == 0, "transpose: q(k, j, i) = p(i, j, k)")
    call gtstorage_release(v)

    ! Sections in the pointer's index space; the halo left inside the view keeps its bounds.
    call gtstorage_slice(s, v, lower=[0, 0, 1], upper=[5, 4, 3], status=st)
    call check_status(st, GTSTORAGE_OK, "slice with part of the halo")
    call gtstorage_get_pointer(v, q, st)
    call check(all(lbound(q) == [0, 0, 1]) .and. all(ubound(q) == [5, 4, 3]), &
               "slice keeps the halo inside it")
    call check(all(q == p(0:5, 0:4, 1:3)), "slice values")
    call gtstorage_release(v)

    call gtstorage_slice(s, v, lower=[1, 1, 1], upper=[5, 4, 3], stride=[2, 1, 1], status=st)
    call check_status(st, GTSTORAGE_OK, "strided slice")
    call gtstorage_get_pointer(v, q, st)
    call check(all(shape(q) == [3, 4, 3]), "strided slice shape")
    call check(all(q == p(1:5:2, 1:4, 1:3)), "strided slice values")
    call gtstorage_release(v)

    ! Down to the first halo point: the exclusive C stop would be -1, so the binding uses None.
    call gtstorage_slice(s, v, lower=[6, 1, 1], upper=[-1, 1, 1], stride=[-1, 1, 1], status=st)
    call check_status(st, GTSTORAGE_OK, "reversed slice")
    call gtstorage_get_pointer(v, q, st)
    cnt = size(q, 1)
    call check(cnt == 8, "reversed slice length")
    call check(all(q(:, 1, 1) == p(6:-1:-1, 1, 1)), "reversed slice values")
    call gtstorage_release(v)

    ! A view keeps the memory alive after the storage is released.
    call gtstorage_domain_view(s, v, st)
    call gtstorage_release(s)
    call gtstorage_get_pointer(v, q, st)
    call check_status(st, GTSTORAGE_OK, "view after the storage was released")
    call check(q(1, 1, 1) == field_value(1, 1, 1), "view keeps the data")
    call gtstorage_release(v)
  end subroutine check_views

  subroutine check_copies()
    integer(gtstorage_handle_kind) :: s, t
    real(c_double), pointer :: p(:,:,:), q(:,:,:)
    real(c_double), target :: big(16, 6, 4)
    integer :: st
    call make_field(s, p)
    call gtstorage_create(t, [8, 6, 4], preset="F", halo=[2, 1, 1, 1, 0, 1], &
                          init=GTSTORAGE_INIT_ZEROS, status=st)
    call gtstorage_copy(t, s, st)
    call check_status(st, GTSTORAGE_OK, "copy K-first -> F")
    call gtstorage_get_pointer(t, q, st)
    call check(all(q == p), "copy K-first -> F values")
    ! Copies from and to a non-contiguous array section.
    big = 0
    call gtstorage_copy_to_array(big(1:16:2, :, :), s, st)
    call check_status(st, GTSTORAGE_OK, "copy_to_array into a strided section")
    call check(all(big(1:16:2, :, :) == p) .and. all(big(2:16:2, :, :) == 0), &
               "copy_to_array section values, gaps untouched")
    big(1:16:2, :, :) = -big(1:16:2, :, :)
    call gtstorage_copy_from_array(t, big(1:16:2, :, :), st)
    call check_status(st, GTSTORAGE_OK, "copy_from_array from a strided section")
    call check(all(q == -p), "copy_from_array section values")
    call gtstorage_release(t)
    call gtstorage_release(s)
  end subroutine check_copies

  !> Issue 8: a 0-d storage (an empty shape, a scalar pointer), extents 0 (size-0 pointers and
  !> sections), and GT4Py's alignments that are not powers of two (24 bytes for real64).
  subroutine check_scalar_empty_and_alignment()
    integer(gtstorage_handle_kind) :: s, t, v
    real(c_double), pointer :: x, y, e(:,:,:), q(:,:,:)
    real(c_double), target :: w, none(4, 0, 5)
    real(c_double), pointer :: z(:,:)
    integer :: st, ndim, empty(0)
    integer(c_int64_t) :: nbytes
    integer(c_intptr_t) :: address

    ! 0-d: one element, reached through a scalar pointer.
    call gtstorage_create(s, empty, fill_value=2.5_c_double, status=st)
    call check_status(st, GTSTORAGE_OK, "0-d create")
    call gtstorage_query(s, ndim=ndim, nbytes=nbytes, status=st)
    call check(ndim == 0 .and. nbytes == 8, "0-d query: ndim 0, 8 bytes")
    call gtstorage_get_pointer(s, x, st)
    call check_status(st, GTSTORAGE_OK, "0-d get_pointer (scalar)")
    call check(associated(x), "0-d pointer associated")
    call check(x == 2.5_c_double, "0-d value")
    x = 4.0_c_double
    call gtstorage_get_pointer(s, z, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "rank-2 pointer to a 0-d storage")
    call gtstorage_transpose(s, empty, v, st)
    call check_status(st, GTSTORAGE_OK, "0-d transpose of no axes")
    call gtstorage_get_pointer(v, y, st)
    call check(y == 4.0_c_double, "0-d view value")
    call gtstorage_release(v)
    call gtstorage_create(t, empty, init=GTSTORAGE_INIT_ZEROS, status=st)
    call gtstorage_copy(t, s, st)
    call check_status(st, GTSTORAGE_OK, "0-d copy")
    call gtstorage_get_pointer(t, y, st)
    call check(y == 4.0_c_double, "0-d copied value")
    w = 0
    call gtstorage_copy_to_array(w, t, st)
    call check_status(st, GTSTORAGE_OK, "0-d copy_to_array (scalar)")
    call check(w == 4.0_c_double, "0-d copy_to_array value")
    w = -1
    call gtstorage_copy_from_array(t, w, st)
    call check(y == -1.0_c_double, "0-d copy_from_array value")
    call gtstorage_release(t)
    call gtstorage_wrap(t, w, status=st)
    call check_status(st, GTSTORAGE_OK, "0-d wrap of a scalar")
    call gtstorage_copy(t, s, st)
    call check(w == 4.0_c_double, "0-d wrapped scalar written")
    call gtstorage_release(t)
    call gtstorage_release(s)

    ! Extents 0: size-0 pointers, copies and sections that move nothing.
    call gtstorage_create(s, [4, 0, 5], init=GTSTORAGE_INIT_ONES, status=st)
    call check_status(st, GTSTORAGE_OK, "create with an extent 0")
    call gtstorage_get_pointer(s, e, st)
    call check_status(st, GTSTORAGE_OK, "get_pointer of an empty storage")
    call check(associated(e) .and. size(e) == 0 .and. all(shape(e) == [4, 0, 5]), &
               "empty pointer: shape (4, 0, 5)")
    call gtstorage_copy_from_array(s, none, st)
    call check_status(st, GTSTORAGE_OK, "copy_from_array of a size-0 array")
    call gtstorage_copy_to_array(none, s, st)
    call check_status(st, GTSTORAGE_OK, "copy_to_array into a size-0 array")
    call gtstorage_slice(s, v, status=st)
    call check_status(st, GTSTORAGE_OK, "section of an empty storage")
    call gtstorage_release(v)
    call gtstorage_release(s)
    call make_field(s, q)
    call gtstorage_slice(s, v, lower=[3, 1, 1], upper=[2, 4, 3], status=st)
    call check_status(st, GTSTORAGE_OK, "empty section 3:2")
    call gtstorage_get_pointer(v, e, st)
    call check(size(e) == 0 .and. all(shape(e) == [0, 4, 3]), "empty section shape (0, 4, 3)")
    call gtstorage_release(v)
    call gtstorage_release(s)

    ! 24 bytes for real64: 3 elements per aligned block; K (contiguous) padded 7 -> 9.
    call gtstorage_create(s, [5, 4, 7], preset="gt:cpu_kfirst", alignment=24, &
                          init=GTSTORAGE_INIT_ZEROS, status=st)
    call check_status(st, GTSTORAGE_OK, "alignment 24 bytes")
    call gtstorage_get_pointer(s, q, st)
    address = transfer(c_loc(q(1, 1, 1)), address)
    call check(modulo(address, 24_c_intptr_t) == 0, "element (1,1,1) is 24-byte aligned")
    address = transfer(c_loc(q(1, 2, 1)), address) - address
    call check(address == 9 * 8, "J stride = 9 padded K elements")
    call gtstorage_release(s)
  end subroutine check_scalar_empty_and_alignment

  !> On host storages every sync operation is a valid no-op.
  subroutine check_sync()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer :: st, op, state
    call make_field(s, p)
    do op = GTSTORAGE_SYNC_HOST_TO_DEVICE, GTSTORAGE_SYNC_WAIT_STREAM
      call gtstorage_sync(s, op, status=st)
      call check_status(st, GTSTORAGE_OK, "sync op "//itoa(op))
    end do
    call gtstorage_sync(s, GTSTORAGE_SYNC_SYNCHRONIZE, force=.true., status=st)
    call check_status(st, GTSTORAGE_OK, "forced synchronize")
    call gtstorage_acquire(s, GTSTORAGE_SIDE_HOST, st)
    call check_status(st, GTSTORAGE_OK, "acquire host")
    call gtstorage_touch(s, GTSTORAGE_SIDE_HOST, st)
    call check_status(st, GTSTORAGE_OK, "touch host")
    call gtstorage_get_sync_state(s, state, st)
    call check_status(st, GTSTORAGE_OK, "get_sync_state")
    call check(state == GTSTORAGE_SYNC_CLEAN, "host storage stays clean")
    call check(p(1, 1, 1) == field_value(1, 1, 1), "data unchanged by sync")
    call gtstorage_release(s)
  end subroutine check_sync

  subroutine check_refcount()
    integer(gtstorage_handle_kind) :: s
    integer :: st, n
    type(gtstorage_stats) :: stats
    integer(c_int64_t) :: buffers0
    call gtstorage_get_stats(stats)
    buffers0 = stats%live_buffers
    call gtstorage_create(s, [4, 4], status=st)
    call gtstorage_get_stats(stats)
    call check(stats%live_buffers == buffers0 + 1, "one more live buffer")
    call gtstorage_refcount(s, n, st)
    call check(st == GTSTORAGE_OK .and. n == 1, "refcount 1")
    call gtstorage_retain(s, st)
    call gtstorage_refcount(s, n, st)
    call check(n == 2, "refcount 2 after retain")
    call gtstorage_release(s, st)
    call gtstorage_refcount(s, n, st)
    call check(st == GTSTORAGE_OK .and. n == 1, "still valid after one release")
    call gtstorage_release(s, st)
    call check_status(st, GTSTORAGE_OK, "last release")
    call gtstorage_get_stats(stats)
    call check(stats%live_buffers == buffers0, "buffer freed")
  end subroutine check_refcount

  !> The C API itself, with the bind(C) structs, as a C programmer would call it.
  subroutine check_raw_api()
    type(gtstorage_create_options) :: opts
    type(gtstorage_plan_info) :: plan
    type(gtstorage_preset_info) :: preset
    integer(c_int64_t), target :: shp(3), halo(6)
    character(kind=c_char), target :: name(14)
    integer(c_int64_t) :: s
    type(c_ptr) :: data
    integer :: st
    ! The size-less init writes the 1.0 layout only (never past an old caller's struct); the
    ! sized one fills the whole struct of this header.
    st = gtstorage_create_options_init_c(opts)
    call check_status(st, GTSTORAGE_OK, "create_options_init_c")
    call check(opts%struct_size < c_sizeof(opts), "size-less init writes the 1.0 size")
    call check(opts%pool == GTSTORAGE_POOL_DEFAULT, "pool field keeps its default")
    st = gtstorage_create_options_init_sized_c(opts, c_sizeof(opts))
    call check_status(st, GTSTORAGE_OK, "create_options_init_sized_c")
    call check(opts%struct_size == c_sizeof(opts), "C sizeof = Fortran c_sizeof (create options)")
    call check(opts%device_id == -1 .and. opts%init == GTSTORAGE_INIT_UNINITIALIZED, &
               "create_options_init_c defaults")
    shp = [10, 6, 4]
    halo = [1, 1, 1, 1, 0, 0]
    name = transfer("gt:cpu_ifirst"//c_null_char, name)
    opts%ndim = 3
    opts%shape = c_loc(shp)
    opts%halo = c_loc(halo)
    opts%preset = c_loc(name)
    plan%struct_size = int(c_sizeof(plan), c_int32_t)
    st = gtstorage_plan_c(opts, plan)
    call check_status(st, GTSTORAGE_OK, "plan_c")
    call check(plan%contiguous_dim == 0, "plan: I contiguous for gt:cpu_ifirst")
    call check(all(plan%layout(1:3) == [2, 1, 0]), "plan layout")
    call check(plan%itemsize == 8 .and. plan%strides(1) == 8, "plan strides")
    st = gtstorage_create_c(opts, s)
    call check_status(st, GTSTORAGE_OK, "create_c")
    st = gtstorage_data_c(s, GTSTORAGE_SIDE_HOST, data)
    call check(st == GTSTORAGE_OK .and. c_associated(data), "data_c")
    st = gtstorage_release_c(s)
    call check_status(st, GTSTORAGE_OK, "release_c")
    st = gtstorage_release_c(s)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "release_c twice")
    call check(len(gtstorage_c_string(gtstorage_last_error_c())) > 0, "last_error_c message")
    preset%struct_size = int(c_sizeof(preset), c_int32_t)
    st = gtstorage_preset_find_c("gridtools:cpu_ifirst"//c_null_char, preset)
    call check_status(st, GTSTORAGE_OK, "preset_find_c")
    call check(preset%alignment == 64 .and. preset%alignment_unit == GTSTORAGE_ALIGN_BYTES, &
               "gridtools:cpu_ifirst: 64 bytes")
    call check(all(preset%base_layout == [2, 0, 1]), "gridtools:cpu_ifirst base layout")
  end subroutine check_raw_api
end program test_api
