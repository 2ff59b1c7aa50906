! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Bad requests through the Fortran layer: each returns its status and a message that names the
!> problem, leaves outputs null, and the program goes on (no crash, no stop when status= is given).
program test_errors
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  integer(c_int64_t) :: live0

  live0 = live_handles()
  call check_handles()
  call check_create_arguments()
  call check_pointer_requests()
  call check_views()
  call check_copies()
  call check_messages()
  call check(live_handles() == live0, "nothing leaked by failed calls")
  call report("test_errors")

contains

  subroutine expect(status, expected, part, what)
    integer, intent(in) :: status, expected
    character(*), intent(in) :: part, what
    call check_status(status, expected, what)
    call check_contains(gtstorage_last_error(), part, what//": message")
  end subroutine expect

  subroutine check_handles()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer :: st, n
    call gtstorage_get_pointer(GTSTORAGE_NULL_HANDLE, p, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "null handle")
    call check(.not. associated(p), "null handle: pointer null")
    call check(len(gtstorage_last_error()) > 0, "null handle: message")
    call gtstorage_create(s, [3, 3, 3], status=st)
    call check_status(st, GTSTORAGE_OK, "create")
    call gtstorage_release(s, st)
    call check_status(st, GTSTORAGE_OK, "release")
    call gtstorage_release(s, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "double release")
    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "released handle")
    call check(.not. associated(p), "released handle: pointer null")
    call gtstorage_query(s, ndim=n, status=st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "query of a released handle")
    call gtstorage_retain(s, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "retain of a released handle")
    call gtstorage_release(int(z'7fff00000000beef', gtstorage_handle_kind), st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "never issued handle")
  end subroutine check_handles

  subroutine check_create_arguments()
    integer(gtstorage_handle_kind) :: s
    integer :: st, empty(0)
    call gtstorage_create(s, [4, 4, 4], preset="no-such-preset", status=st)
    call expect(st, GTSTORAGE_ERROR_UNKNOWN_PRESET, "gt:cpu_kfirst", "unknown preset lists names")
    call check(s == GTSTORAGE_NULL_HANDLE, "unknown preset: null handle")
    ! An empty shape is a 0-d storage (issue 8); what stays invalid is a halo for it.
    call gtstorage_create(s, empty, status=st)
    call check_status(st, GTSTORAGE_OK, "empty shape: a 0-d storage")
    call gtstorage_release(s)
    call gtstorage_create(s, empty, halo=[1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "halo", "halo for a 0-d storage")
    call gtstorage_create(s, [(2, st = 1, 17)], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "shape", "17 dimensions")
    call gtstorage_create(s, [4, 4, 4], halo=[1, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "halo", "halo of 2 values for 3 dims")
    call gtstorage_create(s, [4, 4, 4], halo=[3, 0, 0], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "halo", "halo wider than the shape")
    call gtstorage_create(s, [4, -1, 4], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "shape", "negative extent")
    call gtstorage_create(s, [4, 4, 4], layout=[0, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "layout", "layout of 2 values")
    call gtstorage_create(s, [4, 4, 4], layout=[0, 0, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "layout", "layout not a permutation")
    call gtstorage_create(s, [4, 4, 4], aligned_index=[1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "aligned_index", "aligned_index size")
    call gtstorage_create(s, [4, 4, 4], dtype="<x3", status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "dtype", "bad dtype")
    call gtstorage_create(s, [4, 4, 4], dims="IJX", status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "dims", "bad dims")
    call gtstorage_create(s, [4, 4, 4], dims="IJI", status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "dims", "duplicate dims")
    call gtstorage_create(s, [4, 4, 4], alignment=3, status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "align", "alignment 3 B incompatible with <f8")
    call gtstorage_create(s, [4, 4, 4], fill_value=1.0_c_double, init=GTSTORAGE_INIT_ZEROS, &
                          status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "fill_value", "fill_value with init zeros")
    call gtstorage_create(s, [huge(1), huge(1), huge(1)], status=st)
    call check(st == GTSTORAGE_ERROR_OUT_OF_MEMORY .or. st == GTSTORAGE_ERROR_OVERFLOW, &
               "huge storage: out of memory or overflow, got "//gtstorage_status_name(st))
    call check(s == GTSTORAGE_NULL_HANDLE, "huge storage: null handle")
  end subroutine check_create_arguments

  subroutine check_pointer_requests()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p3(:,:,:), p2(:,:)
    real(c_float), pointer :: f3(:,:,:)
    integer(c_int64_t), pointer :: i3(:,:,:)
    logical(c_bool), pointer :: b3(:,:,:)
    integer :: st
    call gtstorage_create(s, [4, 3, 2], status=st)
    call gtstorage_get_pointer(s, f3, st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "real(c_float)", "real32 pointer to <f8")
    call check(.not. associated(f3), "real32 pointer stays null")
    call gtstorage_get_pointer(s, i3, st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "integer(c_int64_t)", "int64 pointer to <f8")
    call gtstorage_get_pointer(s, b3, st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "logical(c_bool)", "logical pointer to <f8")
    call gtstorage_get_pointer(s, p2, st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "3 dimensions", "rank-2 pointer to 3-d")
    call check(.not. associated(p2), "rank-2 pointer stays null")
    ! A host storage has no device side.
    call gtstorage_get_pointer(s, p3, st, side=GTSTORAGE_SIDE_DEVICE)
    call check_status(st, GTSTORAGE_ERROR_NO_SUCH_BUFFER, "device pointer of a host storage")
    call check(.not. associated(p3), "device pointer stays null")
    call gtstorage_get_pointer(s, p3, st, side=7)
    call check(st /= GTSTORAGE_OK .and. .not. associated(p3), "side 7 refused")
    ! After the failures the right request still works.
    call gtstorage_get_pointer(s, p3, st)
    call check_status(st, GTSTORAGE_OK, "matching pointer")
    call gtstorage_release(s)
  end subroutine check_pointer_requests

  subroutine check_views()
    integer(gtstorage_handle_kind) :: s, v
    integer :: st
    call gtstorage_create(s, [6, 5, 4], halo=[1, 1, 0], status=st)
    call gtstorage_slice(s, v, lower=[-1, 1, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "outside the bounds", "slice below lbound")
    call check(v == GTSTORAGE_NULL_HANDLE, "failed slice: null view")
    call gtstorage_slice(s, v, upper=[5, 4, 5], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "dimension 3", "slice above ubound")
    call gtstorage_slice(s, v, stride=[1, 0, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "stride(2)", "slice stride 0")
    call gtstorage_slice(s, v, lower=[1, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "lower", "slice lower of 2 values")
    call gtstorage_transpose(s, [1, 1, 2], v, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "transpose by a non-permutation")
    call gtstorage_transpose(s, [1, 2], v, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "transpose with 2 of 3 dims")
    call gtstorage_release(s)
  end subroutine check_views

  subroutine check_copies()
    integer(gtstorage_handle_kind) :: s, t, w
    real(c_double), target :: a(4, 3), b(5, 3, 2)
    integer :: st
    call gtstorage_create(s, [5, 3, 2], status=st)
    call gtstorage_create(t, [5, 3, 3], status=st)
    call gtstorage_copy_from_array(s, a, st)
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               "copy_from_array of another rank: "//gtstorage_status_name(st))
    call gtstorage_copy_to_array(b(1:4, :, :), s, st)
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               "copy_to_array of another shape: "//gtstorage_status_name(st))
    call gtstorage_copy(t, s, st)
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               "copy between shapes: "//gtstorage_status_name(st))
    call gtstorage_wrap(w, b, halo=[1, 1], status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "halo", "wrap with 2 halo values for rank 3")
    call check(w == GTSTORAGE_NULL_HANDLE, "failed wrap: null handle")
    call gtstorage_wrap(w, b, dims="IJQ", status=st)
    call expect(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "dims", "wrap with bad dims")
    call gtstorage_release(s)
    call gtstorage_release(t)
  end subroutine check_copies

  !> The message belongs to the last call: a success clears it.
  subroutine check_messages()
    integer(gtstorage_handle_kind) :: s
    integer :: st
    call gtstorage_create(s, [4, 4], halo=[1, 1, 1], status=st)
    call check(len(gtstorage_last_error()) > 0, "message after a failure")
    call check_contains(gtstorage_last_error(), "gtstorage_create", "message names the procedure")
    call gtstorage_create(s, [4, 4], status=st)
    call check_status(st, GTSTORAGE_OK, "create after a failure")
    call check(gtstorage_last_error() == "", "message cleared by a success")
    call gtstorage_release(s)
    call check(gtstorage_status_name(GTSTORAGE_ERROR_INVALID_HANDLE) == &
               "GTSTORAGE_ERROR_INVALID_HANDLE", "status name")
    call check(gtstorage_status_name(GTSTORAGE_OK) == "GTSTORAGE_OK", "status name of OK")
  end subroutine check_messages
end program test_errors
