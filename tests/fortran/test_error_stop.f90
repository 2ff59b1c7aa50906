! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Without status=, a failed call stops the program with ERROR STOP and the library's message
!> (CTest checks the message and the non-zero exit) instead of returning a null pointer that a
!> later access would crash on.
program test_error_stop
  use, intrinsic :: iso_c_binding
  use gtstorage
  implicit none
  integer(gtstorage_handle_kind) :: s
  real(c_float), pointer :: p(:,:,:)
  call gtstorage_create(s, [4, 3, 2])
  call gtstorage_get_pointer(s, p)
  print *, "not reached", associated(p)
end program test_error_stop
