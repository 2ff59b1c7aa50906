! gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
! Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
!
!> Host and device pointers of a mirrored GPU storage from Fortran, on the emulated device (a
!> separate "device" copy in host memory, so device pointers can be dereferenced here and the
!> sync logic is testable without a GPU): GDP-3's touch/acquire move the data exactly when the
!> other side was modified, and both pointers have the same halo-aware bounds.
program test_device
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none

  integer(gtstorage_handle_kind) :: s
  real(c_double), pointer :: h(:,:,:), d(:,:,:)
  type(gtstorage_transfer_stats) :: ts
  integer(c_int64_t), allocatable :: strides(:)
  integer :: st, state, n, dev
  logical :: need
  integer(c_int64_t) :: live0

  live0 = live_handles()
  call gtstorage_set_device_backend("emulated", st)
  call check_status(st, GTSTORAGE_OK, "select the emulated device")
  if (st /= GTSTORAGE_OK) call report("test_device")
  call gtstorage_device_count(n, st)
  call check(st == GTSTORAGE_OK .and. n >= 1, "emulated device count")
  call gtstorage_get_device(dev, st)
  call check(st == GTSTORAGE_OK .and. dev == 0, "current device 0 at start")
  if (n >= 2) then
    call gtstorage_set_device(1, st)
    call gtstorage_get_device(dev, st)
    call check(st == GTSTORAGE_OK .and. dev == 1, "current device 1 after set_device(1)")
    call gtstorage_set_device(0, st)
  end if
  call gtstorage_set_device(n, st)
  call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, "set_device(count) refused")
  call check(index(gtstorage_last_error(), "device_id") > 0, "message names device_id")
  call gtstorage_get_device(dev, st)
  call check(st == GTSTORAGE_OK .and. dev == 0, "a refused set_device changes nothing")

  call gtstorage_create(s, [7, 5, 4], preset="gt:gpu", halo=[1, 1, 0], &
                        managed=GTSTORAGE_MANAGED_MIRROR, status=st)
  call check_status(st, GTSTORAGE_OK, "create a mirrored gt:gpu storage")
  if (st /= GTSTORAGE_OK) call report("test_device")

  call gtstorage_get_pointer(s, h, st)
  call check_status(st, GTSTORAGE_OK, "host pointer")
  call gtstorage_get_pointer(s, d, st, side=GTSTORAGE_SIDE_DEVICE)
  call check_status(st, GTSTORAGE_OK, "device pointer")
  call check(all(lbound(h) == [0, 0, 1]) .and. all(ubound(h) == [6, 4, 4]), "host bounds")
  call check(all(lbound(d) == lbound(h)) .and. all(ubound(d) == ubound(h)), "device bounds")
  call check(.not. c_associated(c_loc(h(1, 1, 1)), c_loc(d(1, 1, 1))), "two buffers")
  ! gt:gpu: I fastest, rows padded to 32 elements, first interior point aligned on 256 bytes.
  call gtstorage_query(s, strides=strides, side=GTSTORAGE_SIDE_DEVICE)
  call check(strides(1) == 8 .and. mod(strides(2), 256_c_int64_t) == 0, "device row padding")
  call check(mod(addr(c_loc(d(1, 1, 1))), 256_c_intptr_t) == 0, "device alignment")

  ! Host writes, touch, acquire on the device: one host-to-device transfer.
  h = 3
  call gtstorage_touch(s, GTSTORAGE_SIDE_HOST, st)
  call gtstorage_get_sync_state(s, state)
  call check(state == GTSTORAGE_SYNC_HOST_DIRTY, "host dirty after touch")
  call gtstorage_acquire(s, GTSTORAGE_SIDE_DEVICE, st)
  call check_status(st, GTSTORAGE_OK, "acquire device")
  call check(all(d == 3), "device sees the host's values")
  call gtstorage_acquire(s, GTSTORAGE_SIDE_DEVICE, st)
  ts%struct_size = int(c_sizeof(ts), c_int32_t)
  call check(gtstorage_get_transfer_stats_c(s, ts) == GTSTORAGE_OK, "transfer stats")
  call check(ts%h2d_count == 1 .and. ts%d2h_count == 0, "one transfer, none redundant")

  ! Device writes (as a kernel would), touch, acquire on the host: one device-to-host transfer.
  d(1, 1, 1) = 7
  d(0, 0, 1) = -7
  call gtstorage_touch(s, GTSTORAGE_SIDE_DEVICE, st)
  call gtstorage_get_sync_state(s, state)
  call check(state == GTSTORAGE_SYNC_DEVICE_DIRTY, "device dirty after touch")
  call gtstorage_acquire(s, GTSTORAGE_SIDE_HOST, st)
  call check_status(st, GTSTORAGE_OK, "acquire host")
  call check(h(1, 1, 1) == 7 .and. h(0, 0, 1) == -7 .and. h(2, 1, 1) == 3, &
             "host sees the device's values, halo included")
  call check(gtstorage_get_transfer_stats_c(s, ts) == GTSTORAGE_OK, "transfer stats")
  call check(ts%h2d_count == 1 .and. ts%d2h_count == 1, "one transfer each way")

  ! The same cycle in the DualView-style vocabulary (gtstorage_modify / _need_sync / _sync_to).
  h = 5
  call gtstorage_modify(s, GTSTORAGE_SIDE_HOST, status=st)
  call check_status(st, GTSTORAGE_OK, "modify host")
  call gtstorage_need_sync(s, GTSTORAGE_SIDE_DEVICE, need, st)
  call check(need, "device needs a sync after modify(host)")
  call gtstorage_need_sync(s, GTSTORAGE_SIDE_HOST, need, st)
  call check(.not. need, "host needs no sync after modify(host)")
  call gtstorage_sync_to(s, GTSTORAGE_SIDE_DEVICE, status=st)
  call check_status(st, GTSTORAGE_OK, "sync_to device")
  call check(all(d == 5), "device sees the host's values (sync_to)")
  call gtstorage_modify(s, GTSTORAGE_SIDE_DEVICE, status=st)
  call gtstorage_modify(s, GTSTORAGE_SIDE_HOST, status=st)
  call check_status(st, GTSTORAGE_ERROR_SYNC_CONFLICT, "modify host while the device is")
  call gtstorage_modify(s, GTSTORAGE_SIDE_HOST, force=.true., status=st)
  call check_status(st, GTSTORAGE_OK, "modify host, force")
  call gtstorage_mark_synchronized(s, st)
  call gtstorage_get_sync_state(s, state)
  call check(state == GTSTORAGE_SYNC_CLEAN, "clean after mark_synchronized")
  call gtstorage_sync_to(s, GTSTORAGE_SIDE_HOST, force=.true., stream=0_c_int64_t, status=st)
  call gtstorage_wait_stream(s, status=st)
  call check_status(st, GTSTORAGE_OK, "sync_to host (async, forced) and wait_stream")
  call check(gtstorage_get_transfer_stats_c(s, ts) == GTSTORAGE_OK, "transfer stats")
  call check(ts%h2d_count == 2 .and. ts%d2h_count == 2, "new vocabulary: one transfer each way")

  call gtstorage_release(s)
  deallocate (strides)   ! main-program variables are not deallocated at the end (LeakSanitizer)
  call check(live_handles() == live0, "storage released")
  call report("test_device")
end program test_device
