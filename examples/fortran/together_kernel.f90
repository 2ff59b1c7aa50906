! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> The Fortran part of the three-language example (see together.py): a model routine that gets a
!> storage handle from Python through ctypes and writes the interior of the field through a
!> Fortran pointer p(i, j, k), whatever layout Python chose (here K-first, which no
!> c_f_pointer could describe).
module together_kernel
  use, intrinsic :: iso_c_binding
  use gtstorage
  implicit none
  private
  public :: together_fill_interior, together_fortran_address

contains

  !> Writes p(i, j, k) = 10000 i + 100 j + k on the interior (indices from 1) of a 3-d float64
  !> storage and leaves the halo alone. The handle comes by value, as Python's ctypes passes an
  !> integer; the result is a gtstorage status (the message is gtstorage_fortran_last_error()).
  function together_fill_interior(handle) bind(C, name="together_fill_interior") result(status)
    integer(c_int64_t), value :: handle
    integer(c_int) :: status
    real(c_double), pointer :: p(:,:,:)
    integer, allocatable :: n(:)
    integer :: st, i, j, k

    call gtstorage_get_pointer(handle, p, st)
    if (st /= GTSTORAGE_OK) then
      status = int(st, c_int)
      return
    end if
    call gtstorage_query(handle, domain_shape=n, status=st)
    if (st /= GTSTORAGE_OK) then
      status = int(st, c_int)
      return
    end if
    ! Loop order only matters for speed: k innermost walks memory contiguously in K-first.
    do i = 1, n(1)
      do j = 1, n(2)
        do k = 1, n(3)
          p(i, j, k) = 10000.0_c_double * i + 100.0_c_double * j + k
        end do
      end do
    end do
    ! GDP-3 discipline: say which side was written (a no-op for host-only storages).
    call gtstorage_modify(handle, GTSTORAGE_SIDE_HOST, status=st)
    status = int(st, c_int)
  end function together_fill_interior

  !> Address of p(i, j, k) as the Fortran pointer sees it (0 on failure), so Python can check
  !> that Fortran, C and NumPy all address the same bytes.
  function together_fortran_address(handle, i, j, k) bind(C, name="together_fortran_address") &
      result(address)
    integer(c_int64_t), value :: handle
    integer(c_int), value :: i, j, k
    integer(c_intptr_t) :: address
    real(c_double), pointer :: p(:,:,:)
    integer :: st
    address = 0
    call gtstorage_get_pointer(handle, p, st)
    if (st /= GTSTORAGE_OK) return
    if (any([i, j, k] < lbound(p)) .or. any([i, j, k] > ubound(p))) return
    address = transfer(c_loc(p(i, j, k)), address)
  end function together_fortran_address
end module together_kernel
