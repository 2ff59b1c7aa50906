! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> The bind(C) derived types mirror the C structs: same size and same offset of every field. A
!> mismatch would make the library read the wrong fields. The list of structs and fields is
!> generated from the header (abi_layout_gen.inc here, abi_layout_gen.h in helpers.c, both by
!> tools/gen_bindings.py), so a struct or field added to the header is checked without an edit.
program test_abi
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  call check_all_layouts()
  call check(tfh_abi_size(0_c_int32_t) == -1, "helpers: struct number 0 is out of range")
  call report("test_abi")

contains

  integer(c_int64_t) function off(base, field)
    type(c_ptr), intent(in) :: base, field
    off = int(addr(field) - addr(base), c_int64_t)
  end function off

  subroutine same_size(which, name, fsize)
    integer, intent(in) :: which
    character(*), intent(in) :: name
    integer(c_size_t), intent(in) :: fsize
    integer(c_int64_t) :: csize
    csize = tfh_abi_size(int(which, c_int32_t))
    call check(int(fsize, c_int64_t) == csize, name//": sizeof "//itoa(int(fsize))// &
               " in Fortran, "//itoa(int(csize))//" in C")
  end subroutine same_size

  subroutine same_offset(which, field, name, foffset)
    integer, intent(in) :: which, field
    character(*), intent(in) :: name
    integer(c_int64_t), intent(in) :: foffset
    integer(c_int64_t) :: coffset
    coffset = tfh_abi_offset(int(which, c_int32_t), int(field, c_int32_t))
    call check(foffset == coffset, name//": offset "//itoa(int(foffset))//" in Fortran, "// &
               itoa(int(coffset))//" in C")
  end subroutine same_offset

  include "abi_layout_gen.inc"
end program test_abi
