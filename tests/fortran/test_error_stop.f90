! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> In the error mode GTSTORAGE_ERRORS_ARE_FATAL, a failed call without status= stops the program
!> with ERROR STOP and the library's message (CTest checks the message and the non-zero exit)
!> instead of returning a null pointer that a later access would crash on. A call with status=
!> still returns. The mode comes from gtstorage_set_error_mode (argument "api") or from
!> GTSTORAGE_FORTRAN_ERRORS=fatal (argument "env", set by CTest).
program test_error_stop
  use, intrinsic :: iso_c_binding
  use gtstorage
  implicit none
  integer(gtstorage_handle_kind) :: s
  real(c_float), pointer :: p(:,:,:)
  character(8) :: how
  integer :: st

  call get_command_argument(1, how)
  if (how == "api") then
    call gtstorage_set_error_mode(GTSTORAGE_ERRORS_ARE_FATAL)
  else if (how /= "env") then
    print '(a)', "not reached: usage: fortran_test_error_stop api|env"
    stop
  end if
  if (gtstorage_error_mode() /= GTSTORAGE_ERRORS_ARE_FATAL) then
    print '(a)', "not reached: the error mode is not GTSTORAGE_ERRORS_ARE_FATAL"
    stop
  end if
  ! With status= the mode does not matter: the failure is returned.
  call gtstorage_release(GTSTORAGE_NULL_HANDLE, st)
  if (st /= GTSTORAGE_ERROR_INVALID_HANDLE) then
    print '(a)', "not reached: status= in the fatal mode gave "//gtstorage_status_name(st)
    stop
  end if
  call gtstorage_create(s, [4, 3, 2])
  call gtstorage_get_pointer(s, p)
  print *, "not reached", associated(p)
end program test_error_stop
