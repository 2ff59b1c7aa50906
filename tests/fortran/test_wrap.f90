! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Fortran-owned arrays wrapped as storages (the py2fgen case: the model owns the memory, C and
!> Python get views): the storage sees the array's own memory, contiguous or not, with the halo
!> given by the caller; the release callback runs once; read-only wraps refuse writable pointers.
module test_wrap_callbacks
  use, intrinsic :: iso_c_binding
  implicit none
contains
  !> Release callback: counts its calls in the integer user_data points to.
  subroutine count_release(user_data) bind(C)
    type(c_ptr), value :: user_data
    integer(c_int), pointer :: counter
    call c_f_pointer(user_data, counter)
    counter = counter + 1
  end subroutine count_release
end module test_wrap_callbacks

program test_wrap
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  use test_wrap_callbacks
  implicit none

  integer(c_int64_t) :: live0

  live0 = live_handles()
  call check_model_field()
  call check_section()
  call check_reversed()
  call check_release_callback()
  call check_readonly()
  call check_kji_field()
  call check_copy_into_model_field()
  call finish("test_wrap", live0)

contains

  !> A model field with its halo in the declared bounds: interior 1:7 x 1:5 x 1:3.
  subroutine check_model_field()
    real(c_double), target :: a(-1:8, 0:6, 1:3)
    real(c_double), pointer :: p(:,:,:), v(:,:,:)
    integer(gtstorage_handle_kind) :: w, d
    integer(c_int64_t), allocatable :: strides(:)
    integer, allocatable :: shp(:), layout(:)
    character(:), allocatable :: dims
    integer :: st, i, j, k, bad, lb(3)

    lb = lbound(a)
    call fill_field(a, lb)
    call gtstorage_wrap(w, a, halo=[2, 1, 1, 1, 0, 0], status=st)
    call check_status(st, GTSTORAGE_OK, "model field: wrap")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(w, shape=shp, strides=strides, layout=layout, dims=dims)
    call check(all(shp == shape(a)), "model field: shape")
    call check(all(strides == [8_c_int64_t, 80_c_int64_t, 560_c_int64_t]), &
               "model field: column-major byte strides")
    call check(all(layout == [2, 1, 0]), "model field: I fastest")
    call check(dims == "IJK", "model field: default dims")

    ! C sees the model's values at the model's addresses.
    bad = 0
    do k = 1, 3
      do j = 0, 6
        do i = -1, 8
          if (read_c(w, [i, j, k], lb) /= a(i, j, k)) bad = bad + 1
          if (address_c(w, [i, j, k], lb) /= addr(c_loc(a(i, j, k)))) bad = bad + 1
        end do
      end do
    end do
    call check(bad == 0, "model field: C reads the Fortran array in place")
    call write_c(w, [1, 1, 1], lb, -5.0_c_double)
    call check(a(1, 1, 1) == -5.0_c_double, "model field: C writes into the Fortran array")

    ! A pointer to the wrapped storage has the array's own bounds (from the halo widths).
    call gtstorage_get_pointer(w, p, st)
    call check_status(st, GTSTORAGE_OK, "model field: get_pointer")
    call check(all(lbound(p) == lbound(a)) .and. all(ubound(p) == ubound(a)), &
               "model field: pointer bounds equal the array's")
    call check(c_associated(c_loc(p(-1, 0, 1)), c_loc(a(-1, 0, 1))) .and. &
               c_associated(c_loc(p(8, 6, 3)), c_loc(a(8, 6, 3))), "model field: same memory")

    ! Its domain view starts at the interior.
    call gtstorage_domain_view(w, d, st)
    call check_status(st, GTSTORAGE_OK, "model field: domain_view")
    call gtstorage_get_pointer(d, v, st)
    call check(all(lbound(v) == 1) .and. all(ubound(v) == [7, 5, 3]), "domain view: bounds")
    call check(c_associated(c_loc(v(1, 1, 1)), c_loc(a(1, 1, 1))), "domain view: interior start")
    call gtstorage_release(d)
    call gtstorage_release(w)
  end subroutine check_model_field

  !> A strided section: no copy, the storage strides follow the section.
  subroutine check_section()
    real(c_double), target :: big(10, 4, 3)
    integer(gtstorage_handle_kind) :: w
    integer(c_int64_t), allocatable :: strides(:)
    integer, allocatable :: shp(:)
    integer :: st, i, j, k, bad, lb(3)

    call fill_field(big, lbound(big))
    call gtstorage_wrap(w, big(1:10:2, :, 2:3), status=st)
    call check_status(st, GTSTORAGE_OK, "section: wrap")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(w, shape=shp, strides=strides)
    call check(all(shp == [5, 4, 2]), "section: shape")
    call check(all(strides == [16_c_int64_t, 80_c_int64_t, 320_c_int64_t]), "section: strides")
    lb = [1, 1, 1]
    bad = 0
    do k = 1, 2
      do j = 1, 4
        do i = 1, 5
          if (address_c(w, [i, j, k], lb) /= addr(c_loc(big(2 * i - 1, j, k + 1)))) bad = bad + 1
          if (read_c(w, [i, j, k], lb) /= big(2 * i - 1, j, k + 1)) bad = bad + 1
        end do
      end do
    end do
    call check(bad == 0, "section: C sees the section in place")
    call gtstorage_release(w)
  end subroutine check_section

  !> A section with a negative stride wraps in place too.
  subroutine check_reversed()
    real(c_double), target :: line(6)
    real(c_double), pointer :: p(:)
    integer(gtstorage_handle_kind) :: w
    integer(c_int64_t), allocatable :: strides(:)
    integer :: st, i
    line = [(real(i, c_double), i = 1, 6)]
    call gtstorage_wrap(w, line(6:1:-1), status=st)
    call check_status(st, GTSTORAGE_OK, "reversed: wrap")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(w, strides=strides)
    call check(strides(1) == -8, "reversed: negative stride")
    call gtstorage_get_pointer(w, p, st)
    call check_status(st, GTSTORAGE_OK, "reversed: get_pointer")
    call check(all(p == [6, 5, 4, 3, 2, 1]), "reversed: values")
    call check(c_associated(c_loc(p(6)), c_loc(line(1))), "reversed: same memory")
    call gtstorage_release(w)
  end subroutine check_reversed

  !> The release callback runs once, after the last reference (views included).
  subroutine check_release_callback()
    real(c_double), target :: a(4, 3)
    integer(c_int), target :: released
    integer(gtstorage_handle_kind) :: w, v
    type(c_funptr) :: callback
    integer :: st
    a = 1
    released = 0
    ! Through a variable: gfortran would place c_funloc(...) as an actual argument in read-only
    ! data, which needs a text relocation in a position-independent executable.
    callback = c_funloc(count_release)
    call gtstorage_wrap(w, a, release=callback, user_data=c_loc(released), status=st)
    call check_status(st, GTSTORAGE_OK, "callback: wrap")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_domain_view(w, v, st)
    call gtstorage_release(w, st)
    call check_status(st, GTSTORAGE_OK, "callback: release storage")
    call check(released == 0, "callback: not called while a view is alive")
    call gtstorage_release(v, st)
    call check_status(st, GTSTORAGE_OK, "callback: release view")
    call check(released == 1, "callback: called once after the last reference")
    call gtstorage_release(v, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, "callback: second release")
    call check(released == 1, "callback: not called again")
  end subroutine check_release_callback

  !> A read-only wrap gives pointers only to callers that promise to read.
  subroutine check_readonly()
    real(c_double), target :: a(3, 2)
    real(c_double), pointer :: p(:,:)
    integer(gtstorage_handle_kind) :: w
    logical :: ro
    integer :: st
    a = 4
    call gtstorage_wrap(w, a, readonly=.true., status=st)
    call check_status(st, GTSTORAGE_OK, "readonly: wrap")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(w, readonly=ro)
    call check(ro, "readonly: query")
    call gtstorage_get_pointer(w, p, st)
    call check_status(st, GTSTORAGE_ERROR_READONLY, "readonly: writable pointer refused")
    call check(.not. associated(p), "readonly: pointer stays null")
    call check_contains(gtstorage_last_error(), "readonly=.true.", "readonly: message")
    call gtstorage_get_pointer(w, p, st, readonly=.true.)
    call check_status(st, GTSTORAGE_OK, "readonly: pointer for reading")
    call check(all(p == 4), "readonly: values")
    call gtstorage_fill(w, 0.0_c_double, st)
    call check_status(st, GTSTORAGE_ERROR_READONLY, "readonly: fill refused")
    call check(all(a == 4), "readonly: array unchanged")
    call gtstorage_release(w)
  end subroutine check_readonly

  !> A K-first model array b(k, j, i) wrapped with dims "KJI": the pointer keeps that order.
  subroutine check_kji_field()
    real(c_double), target :: b(0:4, 3, 2)
    real(c_double), pointer :: p(:,:,:)
    integer(gtstorage_handle_kind) :: w
    character(:), allocatable :: dims
    integer, allocatable :: layout(:)
    integer :: st
    b = 0
    b(2, 3, 1) = 7
    call gtstorage_wrap(w, b, dims="KJI", halo=[1, 0, 0, 0, 0, 0], status=st)
    call check_status(st, GTSTORAGE_OK, "KJI wrap")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(w, dims=dims, layout=layout)
    call check(dims == "KJI", "KJI wrap: dims")
    call check(all(layout == [2, 1, 0]), "KJI wrap: K (first) fastest, as in memory")
    call gtstorage_get_pointer(w, p, st)
    call check(all(lbound(p) == [0, 1, 1]), "KJI wrap: bounds")
    call check(p(2, 3, 1) == 7, "KJI wrap: p(k, j, i)")
    call gtstorage_release(w)
  end subroutine check_kji_field

  !> A layout-changing copy from a K-first storage straight into the model's array.
  subroutine check_copy_into_model_field()
    real(c_double), target :: a(0:5, 0:4, 3)
    real(c_double), pointer :: p(:,:,:)
    integer(gtstorage_handle_kind) :: s, w
    integer :: st
    call gtstorage_create(s, [6, 5, 3], preset="gt:cpu_kfirst", halo=[1, 0, 1, 0, 0, 0], &
                          status=st)
    call check_status(st, GTSTORAGE_OK, "copy into model: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_get_pointer(s, p, st)
    call fill_field(p, lbound(p))
    call gtstorage_wrap(w, a, halo=[1, 0, 1, 0, 0, 0], status=st)
    call check_status(st, GTSTORAGE_OK, "copy into model: wrap")
    call gtstorage_copy(w, s, st)
    call check_status(st, GTSTORAGE_OK, "copy into model: copy")
    call check(all(a == p), "copy into model: values in the Fortran array")
    call gtstorage_release(w)
    call gtstorage_release(s)
  end subroutine check_copy_into_model_field
end program test_wrap
