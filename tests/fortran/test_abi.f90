! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> The bind(C) derived types mirror the C structs: same size, same offsets of the last field and
!> of the fields that follow padding. A mismatch would make the library read the wrong fields.
program test_abi
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  type(gtstorage_array), target :: t1
  type(gtstorage_create_options), target :: t2
  type(gtstorage_wrap_options), target :: t3
  type(gtstorage_plan_info), target :: t4
  type(gtstorage_preset_info), target :: t5
  type(gtstorage_slice_spec), target :: t6
  type(gtstorage_interface_info), target :: t7
  type(gtstorage_stats), target :: t8
  type(gtstorage_transfer_stats), target :: t9

  call same(1, "gtstorage_array", c_sizeof(t1), off(c_loc(t1), c_loc(t1%dtype)))
  call same(2, "gtstorage_create_options", c_sizeof(t2), off(c_loc(t2), c_loc(t2%source)), &
            off(c_loc(t2), c_loc(t2%alignment_bytes)))
  call same(3, "gtstorage_wrap_options", c_sizeof(t3), off(c_loc(t3), c_loc(t3%reserved)), &
            off(c_loc(t3), c_loc(t3%release)))
  call same(4, "gtstorage_plan_info", c_sizeof(t4), off(c_loc(t4), c_loc(t4%device)), &
            off(c_loc(t4), c_loc(t4%itemsize)))
  call same(5, "gtstorage_preset_info", c_sizeof(t5), off(c_loc(t5), c_loc(t5%base_layout)), &
            off(c_loc(t5), c_loc(t5%alignment)))
  call same(6, "gtstorage_slice_spec", c_sizeof(t6), off(c_loc(t6), c_loc(t6%reserved)))
  call same(7, "gtstorage_interface_info", c_sizeof(t7), off(c_loc(t7), c_loc(t7%stream)), &
            off(c_loc(t7), c_loc(t7%itemsize)))
  call same(8, "gtstorage_stats", c_sizeof(t8), off(c_loc(t8), c_loc(t8%d2h_bytes)))
  call same(9, "gtstorage_transfer_stats", c_sizeof(t9), off(c_loc(t9), c_loc(t9%d2h_bytes)))
  call report("test_abi")

contains

  integer(c_int64_t) function off(base, field)
    type(c_ptr), intent(in) :: base, field
    off = int(addr(field) - addr(base), c_int64_t)
  end function off

  subroutine same(which, name, fsize, flast, fmiddle)
    integer, intent(in) :: which
    character(*), intent(in) :: name
    integer(c_size_t), intent(in) :: fsize
    integer(c_int64_t), intent(in) :: flast
    integer(c_int64_t), intent(in), optional :: fmiddle
    integer(c_int32_t) :: w
    w = int(which, c_int32_t)
    call check(int(fsize, c_int64_t) == tfh_struct_size(w), name//": sizeof "// &
               itoa(int(fsize))//" in Fortran, "//itoa(int(tfh_struct_size(w)))//" in C")
    call check(flast == tfh_struct_last_offset(w), name//": offset of the last field")
    if (present(fmiddle)) &
      call check(fmiddle == tfh_struct_field_offset(w), name//": offset after padding")
  end subroutine same
end program test_abi
