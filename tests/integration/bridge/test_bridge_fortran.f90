! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
! Module gtstorage_python from Fortran (issue 24, point 2): the model's own arrays reach Python
! without a copy, whatever their rank (1-7), lower bounds, halo, contiguity (sections by their
! strides, never a compiler temporary) and type (real(4), real(8), integer(4), integer(8),
! logical(c_bool) with NVHPC's 0xFF for .true.). Python (tests/integration/bridge/py/bridge_checks.py)
! records the address, shape, strides and halo it sees and writes the domain; this program
! checks each against the array itself. Skips (exit 77) without GTSTORAGE_BRIDGE_VENV.
program test_bridge_fortran
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gtstorage_python
  implicit none

  integer, parameter :: nh = 2
  integer(gtstorage_python_function_kind) :: view_fn, logical_fn
  integer(gtstorage_handle_kind) :: h_out
  real(c_double), target :: report(32)
  character(len=4096) :: venv, sys_path
  integer :: st, failures, venv_len, path_len

  failures = 0
  call get_environment_variable("GTSTORAGE_BRIDGE_VENV", venv, venv_len)
  if (venv_len == 0) then
    print '(a)', "SKIPPED: GTSTORAGE_BRIDGE_VENV not set"
    stop 77
  end if
  call get_command_argument(1, sys_path, path_len)  ! where gtstorage and bridge_checks are
  call gtstorage_python_init(virtual_env=venv(1:venv_len), sys_path=sys_path(1:path_len), &
                             status=st)
  call check(st == GTSTORAGE_OK, "init: "//gtstorage_last_error())
  call gtstorage_python_resolve(view_fn, "bridge_checks:fortran_view", st)
  call check(st == GTSTORAGE_OK, "resolve: "//gtstorage_last_error())
  call gtstorage_python_resolve(logical_fn, "bridge_checks:logical_probe", st)
  call check(st == GTSTORAGE_OK, "resolve: "//gtstorage_last_error())
  call gtstorage_wrap(h_out, report)

  call ranks_one_to_seven()
  call sections()
  call types()
  call logicals()
  call calls_from_fortran_errors()
  call device_wrap()

  call gtstorage_release(h_out)
  call gtstorage_python_finalize(st)
  call check(st == GTSTORAGE_OK, "finalize")
  if (failures > 0) then
    print '(i0,a)', failures, " check(s) failed"
    error stop 1
  end if
  print '(a)', "test_bridge_fortran: all checks passed"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(2a)', "FAILED: ", what
    end if
  end subroutine check

  ! Calls fortran_view on s and checks the address, shape, byte strides and halo Python saw.
  subroutine expect_view(s, what, address, shape, strides, halo)
    integer(gtstorage_handle_kind), intent(in) :: s
    character(*), intent(in) :: what
    type(c_ptr), intent(in) :: address
    integer, intent(in) :: shape(:), strides(:), halo(:)
    integer :: n, st
    n = size(shape)
    call gtstorage_python_call(view_fn, [s, h_out], st)
    call check(st == GTSTORAGE_OK, what//": call: "//gtstorage_last_error())
    call check(int(report(1), c_intptr_t) == transfer(address, 0_c_intptr_t), &
               what//": Python sees the model's address")
    call check(nint(report(2)) == n, what//": ndim")
    call check(all(nint(report(3:2 + n)) == shape), what//": shape")
    call check(all(nint(report(10:9 + n)) == strides), what//": byte strides")
    call check(all(nint(report(17:16 + 2 * n)) == halo), what//": halo")
  end subroutine expect_view

  ! Arrays allocated with lower bounds 1 - nh (the model's halo): Python sees the whole array,
  ! its halo, and writes the domain only.
  subroutine ranks_one_to_seven()
    real(c_double), allocatable, target :: a1(:), a2(:, :), a3(:, :, :), a4(:, :, :, :), &
                                           a5(:, :, :, :, :), a6(:, :, :, :, :, :), &
                                           a7(:, :, :, :, :, :, :)
    integer(gtstorage_handle_kind) :: s
    allocate (a1(1 - nh:5 + nh))
    a1 = 0
    call gtstorage_wrap(s, a1, halo=[nh])
    call expect_view(s, "rank 1", c_loc(a1(1 - nh)), [9], [8], [nh, nh])
    call check(all(a1(1:5) == 1) .and. all(a1(1 - nh:0) == 0) .and. all(a1(6:) == 0), &
               "rank 1: domain written, halo untouched")
    call gtstorage_release(s)

    allocate (a2(1 - nh:4 + nh, 1 - nh:3 + nh))
    a2 = 0
    call gtstorage_wrap(s, a2, halo=[nh, nh], dims="IJ")
    call expect_view(s, "rank 2", c_loc(a2(1 - nh, 1 - nh)), [8, 7], [8, 64], [nh, nh, nh, nh])
    call check(all(a2(1:4, 1:3) == 1) .and. sum(a2) == 12, "rank 2: domain only")
    call gtstorage_release(s)

    allocate (a3(1 - nh:6 + nh, 1 - nh:5 + nh, 4))
    a3 = 0
    call gtstorage_wrap(s, a3, halo=[nh, nh, 0])
    call expect_view(s, "rank 3", c_loc(a3(1 - nh, 1 - nh, 1)), [10, 9, 4], [8, 80, 720], &
                     [nh, nh, nh, nh, 0, 0])
    call check(all(a3(1:6, 1:5, :) == 1) .and. sum(a3) == 6 * 5 * 4, "rank 3: domain only")
    call gtstorage_release(s)

    allocate (a4(0:2, 3, -1:1, 2))
    a4 = 0
    call gtstorage_wrap(s, a4, halo=[1, 0, 1, 0])
    call expect_view(s, "rank 4", c_loc(a4(0, 1, -1, 1)), [3, 3, 3, 2], [8, 24, 72, 216], &
                     [1, 1, 0, 0, 1, 1, 0, 0])
    call check(all(a4(1, :, 0, :) == 1) .and. sum(a4) == 6, "rank 4: domain only")
    call gtstorage_release(s)

    allocate (a5(2, 2, 2, 2, 3))
    a5 = 0
    call gtstorage_wrap(s, a5)
    call expect_view(s, "rank 5", c_loc(a5(1, 1, 1, 1, 1)), [2, 2, 2, 2, 3], &
                     [8, 16, 32, 64, 128], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    call check(all(a5 == 1), "rank 5: all written")
    call gtstorage_release(s)

    allocate (a6(2, 1, 2, 1, 2, 3))
    a6 = 0
    call gtstorage_wrap(s, a6)
    call expect_view(s, "rank 6", c_loc(a6(1, 1, 1, 1, 1, 1)), [2, 1, 2, 1, 2, 3], &
                     [8, 16, 16, 32, 32, 64], [(0, st=1, 12)])
    call check(all(a6 == 1), "rank 6: all written")
    call gtstorage_release(s)

    allocate (a7(-1:1, 2, 1, 2, 1, 2, 0:1))
    a7 = 0
    call gtstorage_wrap(s, a7, halo=[1, 0, 0, 0, 0, 0, 0])
    call expect_view(s, "rank 7", c_loc(a7(-1, 1, 1, 1, 1, 1, 0)), [3, 2, 1, 2, 1, 2, 2], &
                     [8, 24, 48, 48, 96, 96, 192], [1, 1, (0, st=1, 12)])
    call check(all(a7(0, :, :, :, :, :, :) == 1) .and. sum(a7) == 16, "rank 7: domain only")
    call gtstorage_release(s)
  end subroutine ranks_one_to_seven

  ! Non-contiguous sections are passed by their strides: the address is the model's, so no
  ! temporary was made (gtstorage_wrap's dummy is assumed-rank: the compiler passes the
  ! section's descriptor, never a copy).
  subroutine sections()
    integer, parameter :: nx = 6, ny = 5, nz = 3
    real(c_double), allocatable, target :: p(:, :, :)
    real(c_double), allocatable :: expected(:, :, :)
    integer(gtstorage_handle_kind) :: s
    allocate (p(1 - nh:nx + nh, 1 - nh:ny + nh, nz))
    p = 0
    call gtstorage_wrap(s, p(:, 2:ny - 1, :))
    call expect_view(s, "section p(:, 2:ny-1, :)", c_loc(p(1 - nh, 2, 1)), &
                     [nx + 2 * nh, ny - 2, nz], [8, 8 * (nx + 2 * nh), 8 * (nx + 2 * nh) * (ny + 2 * nh)], &
                     [(0, st=1, 6)])
    allocate (expected, mold=p)
    expected = 0
    expected(:, 2:ny - 1, :) = 1
    call check(all(p == expected), "section: exactly the section written")
    call gtstorage_release(s)

    p = 0
    call gtstorage_wrap(s, p(1:nx:2, :, 2))
    call expect_view(s, "section p(1:nx:2, :, 2)", c_loc(p(1, 1 - nh, 2)), [nx / 2, ny + 2 * nh], &
                     [16, 8 * (nx + 2 * nh)], [0, 0, 0, 0])
    expected = 0
    expected(1:nx:2, :, 2) = 1
    call check(all(p == expected), "stride-2 section: exactly its elements written")
    call gtstorage_release(s)
  end subroutine sections

  subroutine types()
    real(c_float), allocatable, target :: r4(:, :)
    integer(c_int32_t), allocatable, target :: i4(:, :)
    integer(c_int64_t), allocatable, target :: i8(:, :)
    integer(gtstorage_handle_kind) :: s
    allocate (r4(0:3, 2), i4(0:3, 2), i8(0:3, 2))
    r4 = 1.5
    i4 = 7
    i8 = 2_c_int64_t**40
    call gtstorage_wrap(s, r4, halo=[1, 0])
    call expect_view(s, "real(4)", c_loc(r4(0, 1)), [4, 2], [4, 16], [1, 1, 0, 0])
    call check(all(r4(1:2, :) == 2.5) .and. all(r4(0, :) == 1.5), "real(4) values")
    call gtstorage_release(s)
    call gtstorage_wrap(s, i4, halo=[1, 0])
    call expect_view(s, "integer(4)", c_loc(i4(0, 1)), [4, 2], [4, 16], [1, 1, 0, 0])
    call check(all(i4(1:2, :) == 8) .and. all(i4(3, :) == 7), "integer(4) values")
    call gtstorage_release(s)
    call gtstorage_wrap(s, i8, halo=[1, 0])
    call expect_view(s, "integer(8)", c_loc(i8(0, 1)), [4, 2], [8, 32], [1, 1, 0, 0])
    call check(all(i8(1:2, :) == 2_c_int64_t**40 + 1), "integer(8) values")
    call gtstorage_release(s)
  end subroutine types

  ! logical(c_bool) is one byte; NVHPC writes .true. as 0xFF, which NumPy reads as True.
  subroutine logicals()
    logical(c_bool), allocatable, target :: flags(:)
    integer(c_int8_t), pointer :: bytes(:)
    integer(gtstorage_handle_kind) :: s
    integer :: st
    allocate (flags(6))
    flags = .false.
    call c_f_pointer(c_loc(flags), bytes, [6])
    bytes(2:3) = -1_c_int8_t  ! 0xFF
    flags(5) = .true.         ! gfortran's 1
    call gtstorage_wrap(s, flags)
    call gtstorage_python_call(logical_fn, [s, h_out], st)
    call check(st == GTSTORAGE_OK, "logical: call: "//gtstorage_last_error())
    call check(nint(report(1)) == 3, "logical: 0xFF and 1 both read as true")
    call check(nint(report(2)) == 2, "logical: the 0xFF bytes reach Python unchanged")
    call check(nint(report(3)) == 1, "logical: one 0xFF element is True")
    call check(.not. flags(1) .and. flags(2) .and. bytes(2) == 1, "logical: written back")
    call gtstorage_release(s)
  end subroutine logicals

  ! Errors come back as a status with the message; the program goes on.
  subroutine calls_from_fortran_errors()
    integer(gtstorage_python_function_kind) :: fn
    real(c_double), target :: a(3, 2)
    integer(gtstorage_handle_kind) :: s
    integer :: st
    a = 0
    call gtstorage_wrap(s, a)
    call gtstorage_python_resolve(fn, "bridge_checks:raises", st)
    call gtstorage_python_call(fn, [s], st)
    call check(st == GTSTORAGE_ERROR_PYTHON, "raises: status")
    call check(index(gtstorage_last_error(), "ValueError: model asked for trouble with shape (3, 2)") > 0, &
               "raises: message "//gtstorage_last_error())
    call gtstorage_python_release_function(fn)
    call gtstorage_python_resolve(fn, "bridge_checks:record_scalars", st)
    call gtstorage_python_call(fn, [h_out], st, args=[py_int("i", 42), py_real("x", 0.25d0), &
                                                       py_logical("flag", .true.), &
                                                       py_string("text", "abc ")])
    call check(st == GTSTORAGE_OK, "record_scalars: "//gtstorage_last_error())
    call check(all(report(1:6) == [42d0, 0.25d0, 1d0, 4d0, 97d0, 1d0]), "named scalars from Fortran")
    call gtstorage_python_call(fn, [h_out], st, args=[py_int("i", 42_c_int64_t), &
                                                       py_real("x", 0.5), py_logical("flag", .false.), &
                                                       py_string("text", "")])
    call check(st == GTSTORAGE_OK .and. all(report(1:4) == [42d0, 0.5d0, 0d0, 0d0]), &
               "kinds 8 and 4: "//gtstorage_last_error())
    call gtstorage_python_call(fn, [h_out, s], st)
    call check(st == GTSTORAGE_ERROR_INVALID_ARGUMENT, "wrong arity: status")
    call check(index(gtstorage_last_error(), "2 storages passed; the function takes 1") > 0, &
               "wrong arity: message "//gtstorage_last_error())
    call gtstorage_python_release_function(fn)
    call gtstorage_release(s)
  end subroutine calls_from_fortran_errors

  ! gtstorage_wrap_device, what an OpenACC model calls inside `host_data use_device(a)`: here on
  ! the emulated device (GTSTORAGE_DEVICE_BACKEND=emulated, test bridge.fortran_emulated_device),
  ! whose device memory the program can address. The array wrapped is the device buffer of a
  ! storage the library made; Python reads it through the device side of the new storage.
  subroutine device_wrap()
    integer(gtstorage_handle_kind) :: owner, s
    integer(gtstorage_python_function_kind) :: fn
    real(c_double), pointer :: d(:, :)
    integer :: n, st
    call gtstorage_device_count(n, st)
    if (st /= GTSTORAGE_OK .or. n == 0) return
    call gtstorage_create(owner, [16, 8], device=GTSTORAGE_DEVICE_GPU, status=st)
    call check(st == GTSTORAGE_OK, "device storage: "//gtstorage_last_error())
    call gtstorage_fill(owner, 2.0_c_double, status=st)
    call gtstorage_get_pointer(owner, d, st, side=GTSTORAGE_SIDE_DEVICE)
    call check(st == GTSTORAGE_OK, "device pointer: "//gtstorage_last_error())
    call gtstorage_wrap_device(s, d, halo=[1, 1], dims="IJ", stream=c_null_ptr, status=st)
    call check(st == GTSTORAGE_OK, "gtstorage_wrap_device: "//gtstorage_last_error())
    call gtstorage_python_resolve(fn, "bridge_checks:device_read", st)
    call gtstorage_python_call(fn, [s, h_out], st)
    call check(st == GTSTORAGE_OK, "device_read: "//gtstorage_last_error())
    call check(report(1) == 2.0_c_double * 128 .and. nint(report(3)) == 128, &
               "Python reads the wrapped device memory")
    ! A host array is not device memory: refused, with the message.
    call gtstorage_wrap_device(s, report, status=st)
    call check(st /= GTSTORAGE_OK .and. index(gtstorage_last_error(), "gtstorage_wrap_device") > 0, &
               "host memory as device_data: "//gtstorage_last_error())
    call gtstorage_python_release_function(fn)
    call gtstorage_release(s)
    call gtstorage_release(owner)
    print '(a)', "device wrap: checked on the emulated device"
  end subroutine device_wrap

end program test_bridge_fortran
