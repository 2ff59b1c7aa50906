! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Pointers over every kind of layout: for each preset (K-first, I-first, Fortran and C order,
!> padded and aligned), the pointer p(i,j,k) from gtstorage_get_pointer has the halo-aware
!> bounds, and every value written through it is read back by C through gtstorage_interface and
!> manual byte addressing (and the other way round), so a wrong stride, permutation, padding or
!> offset shows up as a wrong value or address.
program test_layouts
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  integer(c_int64_t) :: live0
  !> Added to every field_value: the values are no integers, which no conversion would keep.
  real(c_double), parameter :: shift = 0.25_c_double

  live0 = live_handles()
  ! Layout maps (rank of I, J, K by stride, 0 = largest) from the preset table of the core.
  call check_preset("gt:cpu_kfirst", [0, 1, 2], contiguous=.false., alignment=1)
  call check_preset("gt:cpu_ifirst", [2, 1, 0], contiguous=.true., alignment=1)
  call check_preset("F", [2, 1, 0], contiguous=.true., alignment=1)
  call check_preset("C", [0, 1, 2], contiguous=.false., alignment=1)
  call check_preset("gridtools:cpu_ifirst", [2, 0, 1], contiguous=.false., alignment=64)
  call check_preset("gridtools:cpu_kfirst", [0, 1, 2], contiguous=.false., alignment=1)
  call check_preset("dace:cpu", [1, 2, 0], contiguous=.false., alignment=1)
  call check_preset("numpy", [0, 1, 2], contiguous=.false., alignment=1)
  call check_dims_by_name()
  call check_data_dims()
  call check_aligned_index()
  call check_fill_value()
  call check_pitch_padding()
  call finish("test_layouts", live0)

contains

  subroutine check_preset(preset, expected_layout, contiguous, alignment)
    character(*), intent(in) :: preset
    integer, intent(in) :: expected_layout(3), alignment
    logical, intent(in) :: contiguous
    ! Asymmetric halo (lower, upper per dimension) and an I extent that is no multiple of 8, so
    ! padding and offsets are not all zero.
    integer, parameter :: interior(3) = [7, 4, 3], halo(6) = [2, 1, 1, 2, 1, 0]
    integer :: full(3), lb(3), ub(3), st, i, j, k, d, e, bad
    integer, allocatable :: qlb(:), qub(:), layout(:), dshape(:), qshape(:)
    integer(c_int64_t), allocatable :: strides(:)
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    character(:), allocatable :: what

    what = "preset "//preset
    full = interior + halo(1::2) + halo(2::2)
    call gtstorage_create(s, full, preset=preset, halo=halo, init=GTSTORAGE_INIT_ZEROS, status=st)
    call check_status(st, GTSTORAGE_OK, what//": create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_OK, what//": get_pointer")
    call check(associated(p), what//": pointer associated")
    if (.not. associated(p)) return

    ! Bounds: interior from 1, lower halo from 1 - width, upper halo after the interior.
    lb = 1 - halo(1::2)
    ub = interior + halo(2::2)
    call check(all(lbound(p) == lb), what//": lbound")
    call check(all(ubound(p) == ub), what//": ubound")
    call gtstorage_query(s, shape=qshape, domain_shape=dshape, lbounds=qlb, ubounds=qub, &
                         layout=layout, strides=strides, status=st)
    call check_status(st, GTSTORAGE_OK, what//": query")
    call check(all(qshape == full), what//": query shape")
    call check(all(dshape == interior), what//": query domain_shape")
    call check(all(qlb == lb) .and. all(qub == ub), what//": query bounds")
    call check(all(layout == expected_layout), what//": layout map")

    ! Strides follow the layout map; the fastest dimension is contiguous.
    do d = 1, 3
      if (layout(d) == 2) call check(strides(d) == 8, what//": fastest dimension has stride 8")
      do e = 1, 3
        if (layout(d) < layout(e)) &
          call check(abs(strides(d)) > abs(strides(e)), what//": stride order")
      end do
    end do
    ! The pointer's own strides (in elements) agree with the byte strides.
    call check(addr(c_loc(p(2, 1, 1))) - addr(c_loc(p(1, 1, 1))) == strides(1), what//": I step")
    call check(addr(c_loc(p(1, 2, 1))) - addr(c_loc(p(1, 1, 1))) == strides(2), what//": J step")
    call check(addr(c_loc(p(1, 1, 2))) - addr(c_loc(p(1, 1, 1))) == strides(3), what//": K step")
    call check(is_contiguous(p) .eqv. contiguous, what//": is_contiguous")
    if (alignment > 1) then
      ! Only the contiguous dimension is padded (I here): the next stride exceeds the I extent.
      call check(mod(strides(3), int(alignment, c_int64_t)) == 0, what//": padded row")
      call check(strides(3) > 8 * full(1), what//": padding present")
    end if
    ! The default aligned element is the first interior point.
    call check(mod(addr(c_loc(p(1, 1, 1))), int(alignment, c_intptr_t)) == 0, &
               what//": first interior point aligned")

    ! Fortran writes everywhere (halo included), C reads back with its own addressing.
    call fill_field(p, lb, shift)
    bad = 0
    do k = lb(3), ub(3)
      do j = lb(2), ub(2)
        do i = lb(1), ub(1)
          if (read_c(s, [i, j, k], lb) /= field_value(i, j, k, shift)) bad = bad + 1
          if (address_c(s, [i, j, k], lb) /= addr(c_loc(p(i, j, k)))) bad = bad + 1
        end do
      end do
    end do
    call check(bad == 0, what//": C reads what Fortran wrote ("//itoa(bad)//" mismatches)")

    ! C writes at the corners, Fortran reads.
    call write_c(s, lb, lb, -1.0_c_double)
    call write_c(s, ub, lb, -2.0_c_double)
    call write_c(s, [1, 1, 1], lb, -3.0_c_double)
    call check(p(lb(1), lb(2), lb(3)) == -1.0_c_double, what//": C write at lower corner")
    call check(p(ub(1), ub(2), ub(3)) == -2.0_c_double, what//": C write at upper corner")
    call check(p(1, 1, 1) == -3.0_c_double, what//": C write at first interior point")
    call check(p(2, 1, 1) == field_value(2, 1, 1, shift), what//": neighbour untouched")

    call gtstorage_release(s, st)
    call check_status(st, GTSTORAGE_OK, what//": release")
  end subroutine check_preset

  !> The layout rule goes by dimension name: a ("K","J","I") storage of a K-first preset still has
  !> K contiguous, and the pointer is indexed p(k, j, i) like the storage's shape.
  subroutine check_dims_by_name()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer(c_int64_t), allocatable :: strides(:)
    character(:), allocatable :: dims
    integer :: st, lb(3), i, j, k, bad
    call gtstorage_create(s, [5, 4, 3], preset="gt:cpu_kfirst", dims="KJI", halo=[1, 0, 0], &
                          status=st)
    call check_status(st, GTSTORAGE_OK, "KJI: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(s, strides=strides, dims=dims)
    call check(dims == "KJI", "KJI: dims")
    call check(strides(1) == 8, "KJI: K (first dimension) contiguous")
    call check(strides(3) > strides(2), "KJI: I slowest")
    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_OK, "KJI: get_pointer")
    lb = lbound(p)
    call check(all(lb == [0, 1, 1]), "KJI: bounds")
    bad = 0
    do i = 1, 3
      do j = 1, 4
        do k = 0, 4
          p(k, j, i) = field_value(i, j, k, shift)
        end do
      end do
    end do
    do i = 1, 3
      do j = 1, 4
        do k = 0, 4
          if (read_c(s, [k, j, i], lb) /= field_value(i, j, k, shift)) bad = bad + 1
        end do
      end do
    end do
    call check(bad == 0, "KJI: C reads what Fortran wrote")
    call gtstorage_release(s)
  end subroutine check_dims_by_name

  !> Data dimensions come last in the pointer (the storage's order) and outermost in memory.
  subroutine check_data_dims()
    integer(gtstorage_handle_kind) :: s
    real(c_float), pointer :: p(:,:,:,:)
    integer, allocatable :: layout(:)
    character(:), allocatable :: dims
    integer :: st, lb(4), i, j, k, n, bad
    call gtstorage_create(s, [4, 3, 2, 5], preset="gt:cpu_ifirst", halo=[1, 1, 0, 0], &
                          dtype=GTSTORAGE_REAL32, status=st)
    call check_status(st, GTSTORAGE_OK, "IJK0: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(s, layout=layout, dims=dims)
    call check(dims == "IJK0", "IJK0: default dims of a 4-d storage, got "//dims)
    call check(all(layout == [3, 2, 1, 0]), "IJK0: data dimension outermost, I fastest")
    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_OK, "IJK0: get_pointer")
    lb = lbound(p)
    call check(all(lb == [0, 0, 1, 1]) .and. all(ubound(p) == [3, 2, 2, 5]), "IJK0: bounds")
    do n = 1, 5
      do k = 1, 2
        do j = 0, 2
          do i = 0, 3
            p(i, j, k, n) = real(1000 * n + 100 * i + 10 * j + k, c_float)
          end do
        end do
      end do
    end do
    bad = 0
    do n = 1, 5
      do k = 1, 2
        do j = 0, 2
          do i = 0, 3
            if (read_c(s, [i, j, k, n], lb) /= real(1000 * n + 100 * i + 10 * j + k, c_double)) &
              bad = bad + 1
          end do
        end do
      end do
    end do
    call check(bad == 0, "IJK0: C reads what Fortran wrote")
    call gtstorage_release(s)
  end subroutine check_data_dims

  !> aligned_index is given in the pointer's index space: here the first halo point of I.
  subroutine check_aligned_index()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer :: st
    call gtstorage_create(s, [11, 5, 4], preset="gridtools:cpu_ifirst", halo=[3, 1, 1], &
                          aligned_index=[-2, 1, 1], status=st)
    call check_status(st, GTSTORAGE_OK, "aligned_index: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_get_pointer(s, p, st)
    call check(lbound(p, 1) == -2, "aligned_index: lbound")
    call check(mod(addr(c_loc(p(-2, 1, 1))), 64_c_intptr_t) == 0, "aligned_index: p(-2,1,1) aligned")
    call check(mod(addr(c_loc(p(-2, 2, 1))), 64_c_intptr_t) == 0, "aligned_index: rows aligned")
    call gtstorage_release(s)
    ! Explicit alignment (bytes) overrides the preset's.
    call gtstorage_create(s, [9, 3, 2], preset="gt:cpu_ifirst", halo=[1, 1, 0], alignment=128, &
                          status=st)
    call check_status(st, GTSTORAGE_OK, "alignment: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_get_pointer(s, p, st)
    call check(mod(addr(c_loc(p(1, 1, 1))), 128_c_intptr_t) == 0, "alignment=128: aligned")
    call gtstorage_release(s)
  end subroutine check_aligned_index

  subroutine check_fill_value()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer(c_int32_t), pointer :: q(:,:)
    integer :: st
    call gtstorage_create(s, [4, 3, 2], preset="gt:cpu_kfirst", halo=[1, 1, 0], &
                          fill_value=2.5_c_double, status=st)
    call check_status(st, GTSTORAGE_OK, "fill_value: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_get_pointer(s, p, st)
    call check(all(p == 2.5_c_double), "fill_value: every element, halo included")
    call gtstorage_fill(s, -1.0_c_double)
    call check(all(p == -1.0_c_double), "gtstorage_fill(real64)")
    call gtstorage_fill(s, 3.0_c_float)
    call check(all(p == 3.0_c_double), "gtstorage_fill(real32)")
    call gtstorage_fill(s, 7)
    call check(all(p == 7.0_c_double), "gtstorage_fill(integer)")
    call gtstorage_release(s)
    call gtstorage_create(s, [3, 4], preset="F", dtype=GTSTORAGE_INT32, init=GTSTORAGE_INIT_ONES, &
                          status=st)
    call check_status(st, GTSTORAGE_OK, "init ones: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_get_pointer(s, q, st)
    call check(all(q == 1), "init=GTSTORAGE_INIT_ONES")
    call gtstorage_release(s)
  end subroutine check_fill_value

  ! pitch_padding: F order 512 x 9 x 2, J rows of 4096 bytes raised to 4160 (65 lines), K
  ! planes 4160 * 9 = 37440 = 585 * 64 (an odd multiple: kept). The pointer walks them, every
  ! value lands at its own address, and a bad value is refused with a message.
  subroutine check_pitch_padding()
    integer(gtstorage_handle_kind) :: s
    real(c_double), pointer :: p(:,:,:)
    integer(c_int64_t), allocatable :: strides(:)
    integer :: st
    call gtstorage_create(s, [512, 9, 2], preset="F", init=GTSTORAGE_INIT_ZEROS, &
                          pitch_padding=GTSTORAGE_PITCH_PADDING_AVOID_ALIASING, status=st)
    call check_status(st, GTSTORAGE_OK, "pitch_padding: create")
    if (st /= GTSTORAGE_OK) return
    call gtstorage_query(s, strides=strides, status=st)
    call check(all(strides == [8_c_int64_t, 4160_c_int64_t, 37440_c_int64_t]), &
               "pitch_padding: strides (8, 4160, 37440)")
    call gtstorage_get_pointer(s, p, st)
    call check(addr(c_loc(p(1, 2, 1))) - addr(c_loc(p(1, 1, 1))) == 4160, "pitch_padding: J step")
    call check(addr(c_loc(p(1, 1, 2))) - addr(c_loc(p(1, 1, 1))) == 37440, "pitch_padding: K step")
    call fill_field(p, lbound(p), shift)
    call check(field_mismatches(p, lbound(p), shift) == 0, &
               "pitch_padding: every value at its own address")
    call gtstorage_release(s)
    call gtstorage_create(s, [4, 4], pitch_padding=7, status=st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "pitch_padding=7 refused")
    call check(index(gtstorage_last_error(), "pitch_padding") > 0, "message names pitch_padding")
  end subroutine check_pitch_padding
end program test_layouts
