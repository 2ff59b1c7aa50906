/*
 * Compiled (not run) by the abi.tiers_* tests with -std=c99 -Wall -Wextra -pedantic -Werror
 * -Werror=implicit-function-declaration, once per TIERS_MODE:
 *
 *   1  every *_INIT macro, input and output structs alike, compiles warning-free   (passes)
 *   2  gtstorage.h alone does not declare the experimental tier                   (must fail)
 *   3  GTSTORAGE_EXPERIMENTAL before gtstorage.h declares it                       (passes)
 *   4  gtstorage_experimental.h declares it (and includes gtstorage.h)             (passes)
 *   5  a deprecated function warns (an error under -Werror)                        (must fail)
 *   6  GTSTORAGE_NO_DEPRECATION_WARNINGS silences it (the old sync vocabulary and
 *      the device functions' names before the naming rule)                         (passes)
 *   7  the new sync vocabulary and device names are declared without any warning   (passes)
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#if TIERS_MODE == 3
#define GTSTORAGE_EXPERIMENTAL
#endif
#if TIERS_MODE == 6
#define GTSTORAGE_NO_DEPRECATION_WARNINGS
#endif
#if TIERS_MODE == 4
#include <gtstorage/gtstorage_experimental.h>
#else
#include <gtstorage/gtstorage.h>
#endif

int tiers_check(gtstorage_handle h);
int tiers_check(gtstorage_handle h) {
#if TIERS_MODE == 1
  gtstorage_create_options create = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_wrap_options wrap = GTSTORAGE_WRAP_OPTIONS_INIT;
  gtstorage_array array = GTSTORAGE_ARRAY_INIT;
  gtstorage_plan_info plan = GTSTORAGE_PLAN_INFO_INIT;
  gtstorage_preset_info preset = GTSTORAGE_PRESET_INFO_INIT;
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  gtstorage_stats stats = GTSTORAGE_STATS_INIT;
  gtstorage_transfer_stats transfer = GTSTORAGE_TRANSFER_STATS_INIT;
  gtstorage_pool_stats pool = GTSTORAGE_POOL_STATS_INIT;
  gtstorage_dlpack_options dlpack = GTSTORAGE_DLPACK_OPTIONS_INIT;
  (void)h;
  return (int)(create.struct_size + wrap.struct_size + array.struct_size + plan.struct_size +
               preset.struct_size + info.struct_size + stats.struct_size + transfer.struct_size +
               pool.struct_size + dlpack.struct_size);
#elif TIERS_MODE == 2 || TIERS_MODE == 3 || TIERS_MODE == 4
  int64_t count = 0;
  return gtstorage_refcount(h, &count) + gtstorage_reset_transfer_stats() +
         gtstorage_device_set_backend("emulated");
#elif TIERS_MODE == 5 || TIERS_MODE == 6
  char backend[16];
  int32_t device = 0;
  return gtstorage_sync(h, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0) +
         gtstorage_acquire(h, GTSTORAGE_SIDE_HOST) + gtstorage_touch(h, GTSTORAGE_SIDE_HOST) +
         gtstorage_sync_async(h, GTSTORAGE_SYNC_WAIT_STREAM, 0, 0) +
         gtstorage_get_device_backend(backend, sizeof backend) + gtstorage_set_device(0) +
         gtstorage_get_device(&device);
#elif TIERS_MODE == 7
  int32_t need = 0, device = 0;
  char backend[16];
  return gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_NONE) +
         gtstorage_sync_to_async(h, GTSTORAGE_SIDE_HOST, GTSTORAGE_SYNC_FLAG_FORCE, 0) +
         gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0) + gtstorage_need_sync(h, 0, &need) +
         gtstorage_mark_synchronized(h) + gtstorage_wait_stream(h, 0) + need +
         gtstorage_device_get_backend(backend, sizeof backend) + gtstorage_device_set_current(0) +
         gtstorage_device_get_current(&device);
#else
#error "TIERS_MODE must be 1 … 7"
#endif
}
