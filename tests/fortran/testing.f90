! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Minimal test support for the Fortran tests: counted checks, a final report that fails the
!> program (ERROR STOP, non-zero exit) if any check failed, and the C helpers of helpers.c.
module gts_testing
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  use gtstorage
  implicit none
  private
  public :: check, check_status, check_contains, report, finish, c_index, read_c, write_c, &
            address_c, addr, live_handles, itoa, tfh_abi_size, tfh_abi_offset, field_value, &
            fill_field, field_mismatches

  integer, save :: n_checks = 0, n_failed = 0

  interface
    function tfh_read(h, idx, re, im) bind(C, name="tfh_read") result(st)
      import :: c_int, c_int64_t, c_double
      integer(c_int64_t), value :: h
      integer(c_int64_t), intent(in) :: idx(*)
      real(c_double), intent(out) :: re, im
      integer(c_int) :: st
    end function tfh_read
    function tfh_write(h, idx, re, im) bind(C, name="tfh_write") result(st)
      import :: c_int, c_int64_t, c_double
      integer(c_int64_t), value :: h
      integer(c_int64_t), intent(in) :: idx(*)
      real(c_double), value :: re, im
      integer(c_int) :: st
    end function tfh_write
    function tfh_address(h, idx) bind(C, name="tfh_address") result(a)
      import :: c_intptr_t, c_int64_t
      integer(c_int64_t), value :: h
      integer(c_int64_t), intent(in) :: idx(*)
      integer(c_intptr_t) :: a
    end function tfh_address
    function tfh_abi_size(which) bind(C, name="tfh_abi_size") result(n)
      import :: c_int32_t, c_int64_t
      integer(c_int32_t), value :: which
      integer(c_int64_t) :: n
    end function tfh_abi_size
    function tfh_abi_offset(which, field) bind(C, name="tfh_abi_offset") result(n)
      import :: c_int32_t, c_int64_t
      integer(c_int32_t), value :: which, field
      integer(c_int64_t) :: n
    end function tfh_abi_offset
  end interface

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    n_checks = n_checks + 1
    if (.not. condition) then
      n_failed = n_failed + 1
      write (error_unit, '(a)') "FAILED: "//what
    end if
  end subroutine check

  !> Checks a status; on mismatch also prints the library's message.
  subroutine check_status(status, expected, what)
    integer, intent(in) :: status, expected
    character(*), intent(in) :: what
    call check(status == expected, what//": status "//gtstorage_status_name(status)// &
               ", expected "//gtstorage_status_name(expected)//" ["//gtstorage_last_error()//"]")
  end subroutine check_status

  !> Checks that text contains part.
  subroutine check_contains(text, part, what)
    character(*), intent(in) :: text, part, what
    call check(index(text, part) > 0, what//": '"//text//"' does not contain '"//part//"'")
  end subroutine check_contains

  !> Prints the counts; a failed check makes the program fail.
  subroutine report(name)
    character(*), intent(in) :: name
    write (output_unit, '(a,": ",i0," checks, ",i0," failed")') name, n_checks, n_failed
    if (n_failed > 0) error stop 1
    if (n_checks == 0) error stop "no checks ran"
  end subroutine report

  !> The end of a test program: no storage left of those it made (live0 were live before it),
  !> then the report.
  subroutine finish(name, live0)
    character(*), intent(in) :: name
    integer(c_int64_t), intent(in) :: live0
    call check(live_handles() == live0, "every storage released")
    call report(name)
  end subroutine finish

  !> The value the tests store at element (i, j, k): its indices, readable in decimal digits,
  !> plus shift (0 if absent; a fraction makes every value one no integer conversion keeps).
  pure function field_value(i, j, k, shift) result(v)
    integer, intent(in) :: i, j, k
    real(c_double), intent(in), optional :: shift
    real(c_double) :: v
    v = 10000.0_c_double * i + 100.0_c_double * j + k
    if (present(shift)) v = v + shift
  end function field_value

  !> Sets every element of a, whose lower bounds are lb (lbound of the actual array), to the
  !> field_value of its indices (with shift).
  subroutine fill_field(a, lb, shift)
    integer, intent(in) :: lb(3)
    real(c_double), intent(inout) :: a(lb(1):, lb(2):, lb(3):)
    real(c_double), intent(in), optional :: shift
    integer :: i, j, k
    do k = lb(3), ubound(a, 3)
      do j = lb(2), ubound(a, 2)
        do i = lb(1), ubound(a, 1)
          a(i, j, k) = field_value(i, j, k, shift)
        end do
      end do
    end do
  end subroutine fill_field

  !> How many elements of a (lower bounds lb) do not hold the field_value of their indices.
  function field_mismatches(a, lb, shift) result(bad)
    integer, intent(in) :: lb(3)
    real(c_double), intent(in) :: a(lb(1):, lb(2):, lb(3):)
    real(c_double), intent(in), optional :: shift
    integer :: bad, i, j, k
    bad = 0
    do k = lb(3), ubound(a, 3)
      do j = lb(2), ubound(a, 2)
        do i = lb(1), ubound(a, 1)
          if (a(i, j, k) /= field_value(i, j, k, shift)) bad = bad + 1
        end do
      end do
    end do
  end function field_mismatches

  !> 0-based C index (halo included) of the Fortran pointer index f, given the pointer's lbounds.
  pure function c_index(f, lb) result(c)
    integer, intent(in) :: f(:), lb(:)
    integer(c_int64_t) :: c(size(f))
    c = int(f - lb, c_int64_t)
  end function c_index

  !> Element at Fortran index f read by C (manual addressing through gtstorage_interface).
  function read_c(h, f, lb, im) result(re)
    integer(gtstorage_handle_kind), intent(in) :: h
    integer, intent(in) :: f(:), lb(:)
    real(c_double), intent(out), optional :: im
    real(c_double) :: re, im_
    integer(c_int) :: st
    st = tfh_read(h, c_index(f, lb), re, im_)
    if (st /= 0) then
      call check(.false., "tfh_read status "//itoa(int(st)))
      re = -huge(1.0_c_double)
    end if
    if (present(im)) im = im_
  end function read_c

  subroutine write_c(h, f, lb, re, im)
    integer(gtstorage_handle_kind), intent(in) :: h
    integer, intent(in) :: f(:), lb(:)
    real(c_double), intent(in) :: re
    real(c_double), intent(in), optional :: im
    real(c_double) :: im_
    im_ = 0
    if (present(im)) im_ = im
    call check(tfh_write(h, c_index(f, lb), re, im_) == 0, "tfh_write")
  end subroutine write_c

  !> Address C computes for the element at Fortran index f.
  function address_c(h, f, lb) result(a)
    integer(gtstorage_handle_kind), intent(in) :: h
    integer, intent(in) :: f(:), lb(:)
    integer(c_intptr_t) :: a
    a = tfh_address(h, c_index(f, lb))
  end function address_c

  !> Integer value of an address (for comparing with address_c).
  function addr(p) result(a)
    type(c_ptr), intent(in) :: p
    integer(c_intptr_t) :: a
    a = transfer(p, a)
  end function addr

  function live_handles() result(n)
    integer(c_int64_t) :: n
    type(gtstorage_stats) :: stats
    integer :: st
    call gtstorage_get_stats(stats, st)
    call check_status(st, GTSTORAGE_OK, "gtstorage_get_stats")
    n = stats%live_handles
  end function live_handles

  function itoa(i) result(str)
    integer, intent(in) :: i
    character(:), allocatable :: str
    character(24) :: buf
    write (buf, '(i0)') i
    str = trim(buf)
  end function itoa
end module gts_testing
