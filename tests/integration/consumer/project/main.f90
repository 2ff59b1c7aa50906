! A minimal downstream Fortran program: `use gtstorage` from the installed, compiler-specific
! module directory; creates a field with a halo, writes it through a pointer, releases it.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
program consumer_fortran
  use, intrinsic :: iso_c_binding
  use gtstorage
  implicit none

  integer(gtstorage_handle_kind) :: field
  real(c_double), pointer :: p(:,:,:)
  integer :: status

  call gtstorage_create(field, [6, 5, 4], preset="gt:cpu_kfirst", halo=[1, 1, 0], &
                        init=GTSTORAGE_INIT_ZEROS, status=status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  call gtstorage_get_pointer(field, p, status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  ! The interior starts at 1, the halo below it.
  if (any(lbound(p) /= [0, 0, 1]) .or. any(ubound(p) /= [5, 4, 4])) error stop "unexpected bounds"
  p = 1.5_c_double
  if (sum(p) /= 1.5_c_double * 120) error stop "unexpected sum"
  call gtstorage_release(field, status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  print '(a)', "consumer_fortran OK"
end program consumer_fortran
