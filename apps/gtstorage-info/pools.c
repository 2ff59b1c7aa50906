/*
 * gtstorage-info --pool-stats: the memory pools' counters of this process
 * (gtstorage_pool_get_stats() and the pool fields of gtstorage_get_stats()), after --exercise N
 * create + release rounds if asked.
 *
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
#include <inttypes.h>
#include <stdio.h>

#include "info.h"

enum { POOL_HOST, POOL_PINNED, POOL_DEVICE, NPOOLS };
static const char* const pool_names[NPOOLS] = {"host", "pinned_host", "device"};
static const int32_t pool_memory[NPOOLS] = {GTSTORAGE_MEMORY_HOST, GTSTORAGE_MEMORY_PINNED_HOST,
                                            GTSTORAGE_MEMORY_DEVICE};

/* Creates one zero-filled storage (see exercise_pools). */
static int create_field(const char* preset, int32_t managed, int32_t host_memory,
                        const int64_t* shape, uint32_t ndim, gtstorage_handle* out) {
  gtstorage_create_options co = GTSTORAGE_CREATE_OPTIONS_INIT;
  int status;
  co.ndim = ndim;
  co.shape = shape;
  co.preset = preset;
  co.managed = managed;
  co.host_memory = host_memory;
  co.init = GTSTORAGE_INIT_ZEROS;
  status = gtstorage_create(&co, out);
  return status == GTSTORAGE_OK ? 0 : library_error("gtstorage_create", status);
}

/* Creates and releases n fields of 1 MiB (64 x 64 x 32 <f8) in each pooled memory: pageable
   host (numpy preset), and where there is a device a mirrored gt:gpu pair with pinned host memory
   (a pinned host block and a device block). The first of each is a pool miss, the others are
   served from the pool. A device block is released in stream order: the device's legacy stream,
   where created storages live, is waited for (through a small device storage kept for that)
   before the next create, so the release has happened, as a time loop on a GPU would see it. */
static int exercise_pools(int64_t n, int have_device) {
  static const int64_t shape[3] = {64, 64, 32};
  static const int64_t one[1] = {1};
  gtstorage_handle waiter = GTSTORAGE_NULL_HANDLE;
  int64_t i;
  int rc = 0, status;
  if (n > 0 && have_device &&
      (rc = create_field("gt:gpu", GTSTORAGE_MANAGED_NONE, GTSTORAGE_HOST_PAGEABLE, one, 1,
                         &waiter)) != 0)
    return rc;
  for (i = 0; i < n && rc == 0; ++i) {
    gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
    if ((rc = create_field("numpy", GTSTORAGE_MANAGED_NONE, GTSTORAGE_HOST_PAGEABLE, shape, 3,
                           &h)) != 0)
      break;
    if ((status = gtstorage_release(h)) != GTSTORAGE_OK) {
      rc = library_error("gtstorage_release", status);
      break;
    }
    if (!have_device) continue;
    if ((rc = create_field("gt:gpu", GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_HOST_PINNED, shape, 3,
                           &h)) != 0)
      break;
    if ((status = gtstorage_release(h)) != GTSTORAGE_OK) {
      rc = library_error("gtstorage_release", status);
    } else if ((status = gtstorage_wait_stream(waiter, 0)) != GTSTORAGE_OK) {
      rc = library_error("gtstorage_wait_stream", status);
    }
  }
  if (waiter != GTSTORAGE_NULL_HANDLE) {
    status = gtstorage_release(waiter);
    if (rc == 0 && status != GTSTORAGE_OK) rc = library_error("gtstorage_release", status);
  }
  return rc;
}

static void json_pool(const gtstorage_pool_stats* s, int present) {
  printf("{\"present\": %s, \"limit_bytes\": %" PRId64 ", \"held_bytes\": %" PRId64
         ", \"held_blocks\": %" PRId64 ", \"in_use_bytes\": %" PRId64
         ", \"high_water_bytes\": %" PRId64 ", \"hits\": %" PRId64 ", \"misses\": %" PRId64
         ", \"evictions\": %" PRId64 "}",
         present ? "true" : "false", s->limit_bytes, s->held_bytes, s->held_blocks, s->in_use_bytes,
         s->high_water_bytes, s->hits, s->misses, s->evictions);
}

int pool_stats(const options* opt) {
  gtstorage_pool_stats ps[NPOOLS];
  gtstorage_stats st = GTSTORAGE_STATS_INIT;
  char backend[64] = "none";
  int32_t devices = 0;
  int have_device, k, rc, status;
  /* No device (no driver, the "none" backend) is not an error here: the device pools are
     reported absent. */
  if (gtstorage_device_count(&devices) != GTSTORAGE_OK) devices = 0;
  have_device = devices > 0;
  if ((status = gtstorage_device_get_backend(backend, sizeof backend)) != GTSTORAGE_OK)
    return library_error("gtstorage_device_get_backend", status);
  if (opt->exercise > 0 && (rc = exercise_pools(opt->exercise, have_device)) != 0) return rc;
  for (k = 0; k < NPOOLS; ++k) {
    gtstorage_pool_stats init = GTSTORAGE_POOL_STATS_INIT;
    ps[k] = init;
    if ((status = gtstorage_pool_get_stats(pool_memory[k], &ps[k])) != GTSTORAGE_OK)
      return library_error("gtstorage_pool_get_stats", status);
  }
  if ((status = gtstorage_get_stats(&st)) != GTSTORAGE_OK)
    return library_error("gtstorage_get_stats", status);

  if (opt->json) {
    printf("{\n  \"device_backend\": ");
    json_string(backend);
    printf(",\n  \"devices\": %" PRId32 ",\n  \"exercise\": %" PRId64 ",\n  \"pools\": {", devices,
           opt->exercise > 0 ? opt->exercise : 0);
    for (k = 0; k < NPOOLS; ++k) {
      printf("%s\n    \"%s\": ", k ? "," : "", pool_names[k]);
      json_pool(&ps[k], k == POOL_HOST || have_device);
    }
    printf("\n  },\n  \"stats\": {\"pool_held_bytes\": %" PRId64 ", \"pool_hits\": %" PRId64
           ", \"pool_misses\": %" PRId64 ", \"pool_high_water_bytes\": %" PRId64
           ", \"live_handles\": %" PRId64 ", \"live_buffers\": %" PRId64
           ", \"host_bytes\": %" PRId64 ", \"device_bytes\": %" PRId64 "}\n}\n",
           st.pool_held_bytes, st.pool_hits, st.pool_misses, st.pool_high_water_bytes,
           st.live_handles, st.live_buffers, st.host_bytes, st.device_bytes);
    return 0;
  }
  printf("device backend  %s (%" PRId32 " device%s)\n", backend, devices, devices == 1 ? "" : "s");
  if (opt->exercise > 0)
    printf("exercise        %" PRId64 " create + release of a 1 MiB field per pooled memory\n",
           opt->exercise);
  else
    printf("exercise        none: the counters of this process so far (see --exercise)\n");
  printf("\n%-12s %14s %14s %7s %12s %14s %8s %8s %9s\n", "pool", "limit(B)", "held(B)", "blocks",
         "in use(B)", "high water(B)", "hits", "misses", "evictions");
  for (k = 0; k < NPOOLS; ++k) {
    const gtstorage_pool_stats* s = &ps[k];
    if (k != POOL_HOST && !have_device) {
      printf("%-12s %14s\n", pool_names[k], "(no device)");
      continue;
    }
    printf("%-12s %14" PRId64 " %14" PRId64 " %7" PRId64 " %12" PRId64 " %14" PRId64 " %8" PRId64
           " %8" PRId64 " %9" PRId64 "%s\n",
           pool_names[k], s->limit_bytes, s->held_bytes, s->held_blocks, s->in_use_bytes,
           s->high_water_bytes, s->hits, s->misses, s->evictions,
           s->limit_bytes == 0 ? "  (not pooled)" : "");
  }
  printf("\nall pools     held %" PRId64 " B, %" PRId64 " hits, %" PRId64
         " misses, high water %" PRId64 " B (gtstorage_get_stats)\n",
         st.pool_held_bytes, st.pool_hits, st.pool_misses, st.pool_high_water_bytes);
  printf("live          %" PRId64 " handles, %" PRId64 " buffers, %" PRId64 " host bytes, %" PRId64
         " device bytes\n",
         st.live_handles, st.live_buffers, st.host_bytes, st.device_bytes);
  if (opt->exercise <= 0)
    printf("\nA fresh process has empty pools; --exercise N creates and releases fields first.\n");
  return 0;
}
