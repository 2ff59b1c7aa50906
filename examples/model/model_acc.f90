! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
! The OpenACC version of the mini-model's step (issue 24): the model keeps its fields on the
! device with OpenACC, runs its own kernel on async queue 1, and calls Python on the device
! copies of its arrays without a copy and in stream order:
!
!   !$acc host_data use_device(u, v)      -> the device addresses
!   gtstorage_wrap_device(..., stream=acc_get_cuda_stream(1))
!   gtstorage_python_call(...)            -> a CuPy kernel (model_physics_device.py) queued on
!                                            the same CUDA stream, after the model's kernel
!
! With a GPU the Python step is model_physics_device:diffuse_device (CuPy). Without one, libgomp
! runs the OpenACC regions on the host (its fallback: the "device" copy is the host array, the stream
! is NULL) and the program calls model_physics:diffuse (GT4Py on NumPy) on the host arrays. Either
! way the result is compared with plain Fortran after `!$acc update self`.
!
! Build (gfortran 12 with Debian's gcc-12-offload-nvptx; CUDA 13's ptxas needs -misa=sm_80):
!   gfortran -fopenacc -foffload=nvptx-none -foffload-options=nvptx-none=-misa=sm_80 \
!            -foffload-options=nvptx-none=-lm -foffload-options=nvptx-none=-lgfortran ...
module model_acc_support
  use, intrinsic :: iso_c_binding
  implicit none
  ! libgomp's acc_get_cuda_stream is a C function (gfortran's openacc module has no binding).
  interface
    function acc_get_cuda_stream(async) bind(C, name="acc_get_cuda_stream") result(stream)
      import :: c_int, c_ptr
      integer(c_int), value :: async
      type(c_ptr) :: stream
    end function acc_get_cuda_stream
  end interface
end module model_acc_support

program model_acc
  use, intrinsic :: iso_c_binding
  use openacc
  use gtstorage
  use gtstorage_python
  use model_acc_support
  implicit none

  integer, parameter :: nx = 48, ny = 40, nz = 6, nh = 2, queue = 1
  real(c_double), parameter :: alpha = 0.1_c_double
  real(c_double), allocatable, target :: u(:, :, :), v(:, :, :)
  real(c_double), allocatable :: ref(:, :, :)
  logical :: on_device
  integer :: i, j, k, bad

  allocate (u(1 - nh:nx + nh, 1 - nh:ny + nh, nz), v(1 - nh:nx + nh, 1 - nh:ny + nh, nz))
  v = -999
  on_device = acc_get_device_type() /= acc_device_host
  call gtstorage_set_error_mode(GTSTORAGE_ERRORS_ARE_FATAL)
  call gtstorage_python_init()

  !$acc enter data create(u) copyin(v)
  ! The model's own kernel, queued on its async queue: u everywhere (halo included, periodic).
  !$acc parallel loop collapse(3) async(queue) present(u)
  do k = 1, nz
    do j = 1 - nh, ny + nh
      do i = 1 - nh, nx + nh
        u(i, j, k) = real(mod(7 * (modulo(i - 1, nx) + 1) + 13 * (modulo(j - 1, ny) + 1) + &
                              5 * k, 17), c_double) / 4
      end do
    end do
  end do
  call python_step(u, v)
  !$acc wait(queue)
  !$acc update self(v)
  !$acc exit data delete(u, v)

  ! The reference on the host.
  allocate (ref(nx, ny, nz))
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        ref(i, j, k) = f(i, j, k) + alpha * ((((f(i - 1, j, k) + f(i + 1, j, k)) + &
                                               f(i, j - 1, k)) + f(i, j + 1, k)) - &
                                             4.0_c_double * f(i, j, k))
      end do
    end do
  end do
  bad = count(v(1:nx, 1:ny, :) /= ref)
  print '(a,a,a,i0,a,i0)', "model_acc (", merge("device", "host  ", on_device), &
    "): points differing from the Fortran reference: ", bad, "; halo points written: ", &
    count(v /= -999) - nx * ny * nz
  call gtstorage_python_finalize()
  if (bad /= 0 .or. count(v /= -999) /= nx * ny * nz) then
    print '(a)', "FAILED"
    error stop 1
  end if
  print '(a)', "OK: identical to the reference, halo untouched, no copy"

contains

  pure real(c_double) function f(i, j, k)
    integer, intent(in) :: i, j, k
    f = real(mod(7 * (modulo(i - 1, nx) + 1) + 13 * (modulo(j - 1, ny) + 1) + 5 * k, 17), &
             c_double) / 4
  end function f

  ! Inside host_data use_device the dummies' addresses are the device copies' (an allocatable
  ! cannot be named in use_device with gfortran 12: hence the assumed-shape dummies).
  subroutine python_step(a, b)
    real(c_double), target, intent(inout) :: a(1 - nh:, 1 - nh:, :), b(1 - nh:, 1 - nh:, :)
    integer(gtstorage_handle_kind) :: sa, sb
    integer(gtstorage_python_function_kind) :: fn
    type(c_ptr) :: stream
    !$acc host_data use_device(a, b)
    if (on_device) then
      stream = acc_get_cuda_stream(queue)
      call gtstorage_wrap_device(sa, a, halo=[nh, nh, 0], dims="IJK", readonly=.true., &
                                 stream=stream)
      call gtstorage_wrap_device(sb, b, halo=[nh, nh, 0], dims="IJK", stream=stream)
      call gtstorage_python_resolve(fn, "model_physics_device:diffuse_device")
    else
      ! libgomp's host fallback: the "device" copy is the host array, and the queue ran already.
      call gtstorage_wrap(sa, a, halo=[nh, nh, 0], dims="IJK", readonly=.true.)
      call gtstorage_wrap(sb, b, halo=[nh, nh, 0], dims="IJK")
      call gtstorage_python_resolve(fn, "model_physics:diffuse")
    end if
    call gtstorage_python_call(fn, [sa, sb], args=[py_real("alpha", alpha)])
    !$acc end host_data
    call gtstorage_python_release_function(fn)
    call gtstorage_release(sa)
    call gtstorage_release(sb)
  end subroutine python_step

end program model_acc
