! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> The error mode GTSTORAGE_ERRORS_RETURN (the default): a failed call without status= returns
!> as one with status= does (null handles, disassociated pointers, data unchanged), its code is
!> gtstorage_last_status() and its message gtstorage_last_error(); the program goes on.
!> CTest runs it with GTSTORAGE_FORTRAN_ERRORS unset, "return" and an unknown value.
program test_error_return
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  interface
    function setenv(name, value, overwrite) bind(C, name="setenv") result(rc)
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: name(*), value(*)
      integer(c_int), value :: overwrite
      integer(c_int) :: rc
    end function setenv
  end interface

  integer(c_int64_t) :: live0

  call check_default_mode()
  live0 = live_handles()
  call check_handles()
  call check_arguments()
  call check_dimension_numbers()
  call check_same_as_status()
  call check_pointers()
  call check_data_unchanged()
  call check_set_error_mode()
  call check(live_handles() == live0, "nothing leaked by failed calls")
  call report("test_error_return")

contains

  !> Checks the last call's status and that its message contains part.
  subroutine expect(expected, part, what)
    integer, intent(in) :: expected
    character(*), intent(in) :: part, what
    call check_status(gtstorage_last_status(), expected, what)
    call check_contains(gtstorage_last_error(), part, what//": message")
  end subroutine expect

  subroutine check_default_mode()
    call check(gtstorage_last_status() == GTSTORAGE_OK, "last status before any call")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_RETURN, "default mode is RETURN")
    ! The environment is read once, on first use: changing it now changes nothing.
    call check(setenv("GTSTORAGE_FORTRAN_ERRORS"//c_null_char, "fatal"//c_null_char, 1_c_int) &
               == 0, "setenv")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_RETURN, "environment read only once")
  end subroutine check_default_mode

  ! Core messages count dimensions from 0; the Fortran API counts from 1 (same order).
  subroutine check_dimension_numbers()
    integer(gtstorage_handle_kind) :: s
    call gtstorage_create(s, [4, -1, 3])
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "dimension 2", "negative extent, 2nd dimension")
    call check(index(gtstorage_last_error(), "dimension 1") == 0, "no 0-based dimension number")
  end subroutine check_dimension_numbers

  subroutine check_handles()
    integer(gtstorage_handle_kind) :: s, v
    integer :: n
    call gtstorage_create(s, [3, 3, 3])
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "create")
    call gtstorage_release(s)
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "release")
    call gtstorage_release(s)
    call expect(GTSTORAGE_ERROR_INVALID_HANDLE, "gtstorage_release", "double release")
    call gtstorage_domain_view(s, v)
    call expect(GTSTORAGE_ERROR_INVALID_HANDLE, "gtstorage_domain_view", "view of a released handle")
    call check(v == GTSTORAGE_NULL_HANDLE, "view of a released handle: null view")
    n = -1
    call gtstorage_refcount(s, n)
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_INVALID_HANDLE, &
                      "refcount of a released handle")
    call check(n == 0, "refcount of a released handle: count 0")
    call gtstorage_query(s, ndim=n)
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_INVALID_HANDLE, &
                      "query of a released handle")
    call gtstorage_fill(s, 1.0_c_double)
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_INVALID_HANDLE, &
                      "fill of a released handle")
  end subroutine check_handles

  subroutine check_arguments()
    integer(gtstorage_handle_kind) :: s, v, w
    real(c_double), target :: b(5, 3, 2)
    ! Refused by the C library.
    call gtstorage_create(s, [4, 4, 4], dtype="<x3")
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "dtype", "bad dtype")
    call check(s == GTSTORAGE_NULL_HANDLE, "bad dtype: null handle")
    call gtstorage_create(s, [4, 4, 4], preset="no-such-preset")
    call expect(GTSTORAGE_ERROR_UNKNOWN_PRESET, "no-such-preset", "unknown preset")
    call check(s == GTSTORAGE_NULL_HANDLE, "unknown preset: null handle")
    ! Refused by the binding before any C call.
    call gtstorage_create(s, [4, 4, 4], halo=[1, 1])
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "halo", "halo of 2 values for 3 dims")
    call check(s == GTSTORAGE_NULL_HANDLE, "bad halo: null handle")
    ! A success resets the status and the message.
    call gtstorage_create(s, [6, 5, 4], halo=[1, 1, 0])
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "create after failures")
    call check(gtstorage_last_error() == "", "message cleared by a success")
    call check(s /= GTSTORAGE_NULL_HANDLE, "create after failures: handle")
    call gtstorage_slice(s, v, lower=[-1, 1, 1])
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "outside the bounds", "slice below lbound")
    call check(v == GTSTORAGE_NULL_HANDLE, "failed slice: null view")
    call gtstorage_transpose(s, [1, 1, 2], v)
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_INVALID_ARGUMENT, &
                      "transpose by a non-permutation")
    call check(v == GTSTORAGE_NULL_HANDLE, "failed transpose: null view")
    ! Fortran's numbering in the message: dimensions 1 … 3 (C's 0 … 2 would mislead).
    call check(index(gtstorage_last_error(), "perm: is not a permutation of 1 … 3") > 0, &
               "transpose message counts from 1: "//gtstorage_last_error())
    call gtstorage_transpose(s, [0, 1, 2], v)
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "1 … 3", "transpose by a 0-based permutation")
    call gtstorage_wrap(w, b, halo=[1, 1])
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "halo", "wrap with 2 halo values for rank 3")
    call check(w == GTSTORAGE_NULL_HANDLE, "failed wrap: null handle")
    call gtstorage_release(s)
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "release after failures")
  end subroutine check_arguments

  !> Without status= a call fails exactly as with it: same code, same message.
  subroutine check_same_as_status()
    integer(gtstorage_handle_kind) :: s
    character(:), allocatable :: message
    integer :: st
    call gtstorage_create(s, [4, 4], layout=[0, 0], status=st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "bad layout with status=")
    call check_status(gtstorage_last_status(), st, "last status set with status= too")
    message = gtstorage_last_error()
    call gtstorage_create(s, [4, 4], layout=[0, 0])
    call check_status(gtstorage_last_status(), st, "bad layout without status=")
    call check(gtstorage_last_error() == message, "same message: '"//gtstorage_last_error()// &
               "' vs '"//message//"'")
    call check(s == GTSTORAGE_NULL_HANDLE, "bad layout: null handle")
  end subroutine check_same_as_status

  subroutine check_pointers()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:), p2(:,:)
    real(c_float), pointer :: f(:,:,:)
    real(c_float), target :: t(2, 2, 2)
    call gtstorage_create(s, [4, 3, 2])
    f => t
    call gtstorage_get_pointer(s, f)
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "real(c_float)", "real32 pointer to <f8")
    call check(.not. associated(f), "real32 pointer: disassociated")
    call gtstorage_get_pointer(s, p2)
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "3 dimensions", "rank-2 pointer to 3-d")
    call check(.not. associated(p2), "rank-2 pointer: disassociated")
    call gtstorage_get_pointer(s, p)
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "matching pointer")
    call check(associated(p), "matching pointer: associated")
    ! A host storage has no device side; the pointer associated above is nullified.
    call gtstorage_get_pointer(s, p, side=GTSTORAGE_SIDE_DEVICE)
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_NO_SUCH_BUFFER, &
                      "device pointer of a host storage")
    call check(.not. associated(p), "device pointer: disassociated")
    call gtstorage_release(s)
  end subroutine check_pointers

  subroutine check_data_unchanged()
    integer(gtstorage_handle_kind) :: s, t
    real(c_double) :: a(5, 3, 2), b(4, 3, 2)
    integer :: st
    call gtstorage_create(s, [5, 3, 2], fill_value=7.0_c_double)
    call gtstorage_create(t, [5, 3, 3], fill_value=3.0_c_double)
    b = -1
    call gtstorage_copy_to_array(b, s)
    st = gtstorage_last_status()
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               "copy_to_array of another shape: "//gtstorage_status_name(st))
    call check(all(b == -1), "failed copy_to_array: array unchanged")
    call gtstorage_copy_from_array(s, b)
    st = gtstorage_last_status()
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               "copy_from_array of another shape: "//gtstorage_status_name(st))
    call gtstorage_copy(s, t)
    st = gtstorage_last_status()
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               "copy between shapes: "//gtstorage_status_name(st))
    a = 0
    call gtstorage_copy_to_array(a, s)
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "copy_to_array")
    call check(all(a == 7), "failed copies: storage unchanged")
    call gtstorage_release(s)
    call gtstorage_release(t)
  end subroutine check_data_unchanged

  subroutine check_set_error_mode()
    integer :: st
    ! A success after a failed C call: empty message, not the C library's earlier one.
    call gtstorage_release(GTSTORAGE_NULL_HANDLE)
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_INVALID_HANDLE, "release of null")
    call gtstorage_set_error_mode(GTSTORAGE_ERRORS_RETURN)
    call check_status(gtstorage_last_status(), GTSTORAGE_OK, "set RETURN")
    call check(gtstorage_last_error() == "", "set RETURN: empty message, got '"// &
               gtstorage_last_error()//"'")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_RETURN, "mode RETURN")
    ! A bad mode without status= returns too, and keeps the mode.
    call gtstorage_set_error_mode(2)
    call expect(GTSTORAGE_ERROR_INVALID_ARGUMENT, "gtstorage_set_error_mode: mode is 2", &
                "bad mode 2")
    call check_contains(gtstorage_last_error(), "GTSTORAGE_ERRORS_RETURN (0)", &
                        "bad mode: message names RETURN")
    call check_contains(gtstorage_last_error(), "GTSTORAGE_ERRORS_ARE_FATAL (1)", &
                        "bad mode: message names ARE_FATAL")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_RETURN, "bad mode 2: mode unchanged")
    ! In the fatal mode, calls with status= still return, a bad mode included.
    call gtstorage_set_error_mode(GTSTORAGE_ERRORS_ARE_FATAL, st)
    call check_status(st, GTSTORAGE_OK, "set ARE_FATAL")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_ARE_FATAL, "mode ARE_FATAL")
    call gtstorage_set_error_mode(-1, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "bad mode -1")
    call check_contains(gtstorage_last_error(), "mode is -1", "bad mode -1: message")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_ARE_FATAL, "bad mode -1: mode unchanged")
    call gtstorage_release(GTSTORAGE_NULL_HANDLE, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "status= returns in the fatal mode")
    call check_status(gtstorage_last_status(), GTSTORAGE_ERROR_INVALID_HANDLE, &
                      "last status in the fatal mode")
    call gtstorage_set_error_mode(GTSTORAGE_ERRORS_RETURN, st)
    call check_status(st, GTSTORAGE_OK, "back to RETURN")
    call check(gtstorage_error_mode() == GTSTORAGE_ERRORS_RETURN, "mode RETURN again")
  end subroutine check_set_error_mode
end program test_error_return
