! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Quick start of the Fortran binding (docs/fortran.md walks through it): a K-first field with a
!> halo indexed p(i, j, k) from Fortran, a model-owned array shared as a storage, and a copy
!> between the two layouts.
program quickstart
  use, intrinsic :: iso_c_binding
  use gtstorage
  implicit none

  integer, parameter :: nx = 8, ny = 6, nz = 4, h = 2
  integer(gtstorage_handle_kind) :: field, model
  real(c_double), pointer :: p(:,:,:)
  real(c_double), target :: t(1 - h:nx + h, 1 - h:ny + h, nz)   ! the model's own array
  integer(c_int64_t), allocatable :: strides(:)
  integer :: i, j, k, status

  ! 1. A storage laid out for a K-first backend (K contiguous), halo h in I and J.
  call gtstorage_create(field, [nx + 2 * h, ny + 2 * h, nz], preset="gt:cpu_kfirst", &
                        halo=[h, h, 0], init=GTSTORAGE_INIT_ZEROS, status=status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()

  ! 2. A pointer indexed in the semantic order I, J, K whatever the memory order; the interior
  !    starts at 1, the halo at 1 - h.
  call gtstorage_get_pointer(field, p, status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  call gtstorage_query(field, strides=strides, status=status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  print '(a,3(i0,1x),a,3(i0,1x),a,3(i0,1x))', "bounds ", lbound(p), "to ", ubound(p), &
    "byte strides ", strides
  do i = 1, nx
    do j = 1, ny
      do k = 1, nz      ! k innermost: contiguous in this layout
        p(i, j, k) = i + 10 * j + 100 * k
      end do
    end do
  end do
  ! Periodic halo in I, written through the same pointer.
  p(1 - h:0, :, :) = p(nx - h + 1:nx, :, :)
  p(nx + 1:nx + h, :, :) = p(1:h, :, :)

  ! 3. The model's array t (I-first, Fortran order) as a storage sharing t's memory, then a
  !    layout-changing copy of the whole field, halo included, straight into t.
  call gtstorage_wrap(model, t, halo=[h, h, 0], status=status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  call gtstorage_copy(model, field, status)
  if (status /= GTSTORAGE_OK) error stop gtstorage_last_error()
  print '(a,l1)', "model array equals the field: ", all(t == p)
  print '(a,f6.1,a,f6.1)', "t(0, 1, 1) = ", t(0, 1, 1), ", p(nx, 1, 1) = ", p(nx, 1, 1)

  ! 4. A wrong request is a status, not a crash.
  block
    real(c_float), pointer :: wrong(:,:,:)
    call gtstorage_get_pointer(field, wrong, status)
    print '(a)', "real(4) pointer to a float64 field: "//gtstorage_status_name(status)
    print '(a)', "  "//gtstorage_last_error()
  end block

  call gtstorage_release(model)
  call gtstorage_release(field)
  deallocate (strides)   ! main-program variables are not deallocated at the end
end program quickstart
