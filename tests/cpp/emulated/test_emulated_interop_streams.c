/*
 * CUDA Array Interface v3 and DLPack device export on the emulated device, through the public C
 * API only (what a C or Fortran caller and the Python binding see):
 * - the `stream` field of gtstorage_interface_info (CAI v3's "stream") follows
 *   gtstorage_set_stream() on every kind of storage and on both sides, per handle: a view takes
 *   its base's stream when it is made and keeps its own afterwards; stream 0 of the sync
 *   functions is that stream (a stream that was never created is refused, naming "stream");
 * - descriptors and DLPack tensors (legacy and versioned) agree, and say what the memory is:
 *   emulated device memory is kDLExtDev with its device ordinal, never kDLCUDA; its unified and
 *   pinned memory are host memory, kDLCPU with DLPack device id 0 (dlpack.h: "for vanilla CPU
 *   memory, pinned memory, or managed memory, this is set to 0"), on device 0 and device 1.
 */
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gtstorage/gtstorage_experimental.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define OK(call)                                                          \
  do {                                                                    \
    const int rc_ = (call);                                               \
    ++checks;                                                             \
    if (rc_ != GTSTORAGE_OK) {                                            \
      ++failures;                                                         \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, \
              gtstorage_status_name(rc_), gtstorage_last_error());        \
    }                                                                     \
  } while (0)

#define IS(call, want, needle)                                                                  \
  do {                                                                                          \
    const int rc_ = (call);                                                                     \
    ++checks;                                                                                   \
    if (rc_ != (want) || strstr(gtstorage_last_error(), needle) == NULL) {                      \
      ++failures;                                                                               \
      fprintf(stderr, "%s:%d: %s -> %s (want %s, a message naming '%s'): %s\n", __FILE__,       \
              __LINE__, #call, gtstorage_status_name(rc_), gtstorage_status_name(want), needle, \
              gtstorage_last_error());                                                          \
    }                                                                                           \
  } while (0)

static const int64_t shape[3] = {7, 6, 5};
static const int64_t halo[6] = {1, 1, 1, 1, 0, 0};

enum kind { DEVICE_ONLY, MIRROR, UNIFIED, PINNED_MIRROR, N_KINDS };
static const char* const kind_names[N_KINDS] = {"device-only", "mirror", "unified",
                                                "pinned mirror"};

static gtstorage_handle make(enum kind k, int32_t device_id) {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_handle h = 0;
  o.ndim = 3;
  o.shape = shape;
  o.halo = halo;
  o.preset = "gt:gpu";
  o.device = GTSTORAGE_DEVICE_GPU;
  o.device_id = device_id;
  o.init = GTSTORAGE_INIT_ZEROS;
  o.managed = k == DEVICE_ONLY ? GTSTORAGE_MANAGED_NONE
              : k == UNIFIED   ? GTSTORAGE_MANAGED_UNIFIED
                               : GTSTORAGE_MANAGED_MIRROR;
  o.host_memory = k == PINNED_MIRROR ? GTSTORAGE_HOST_PINNED : GTSTORAGE_HOST_PAGEABLE;
  OK(gtstorage_create(&o, &h));
  return h;
}

static gtstorage_interface_info describe(gtstorage_handle h, int32_t side) {
  gtstorage_interface_info i = GTSTORAGE_INTERFACE_INFO_INIT;
  OK(gtstorage_interface(h, side, &i));
  return i;
}

static int has_side(gtstorage_handle h, int32_t side) {
  int32_t has = 0;
  OK(gtstorage_has_side(h, side, &has));
  return has;
}

/* The stream each existing side of @p h reports. */
static void expect_stream(gtstorage_handle h, uint64_t want, const char* what) {
  for (int32_t side = GTSTORAGE_SIDE_HOST; side <= GTSTORAGE_SIDE_DEVICE; ++side) {
    if (!has_side(h, side)) continue;
    const gtstorage_interface_info i = describe(h, side);
    ++checks;
    if (i.stream != want) {
      ++failures;
      fprintf(stderr, "%s: side %d reports stream %llu, want %llu\n", what, side,
              (unsigned long long)i.stream, (unsigned long long)want);
    }
  }
}

static void stream_field_follows_set_stream(void) {
  for (int k = 0; k < N_KINDS; ++k) {
    const gtstorage_handle h = make((enum kind)k, 0);
    gtstorage_handle view = 0, later = 0;
    expect_stream(h, 0, kind_names[k]); /* the legacy default stream until set */
    OK(gtstorage_set_stream(h, 2));     /* the per-thread default stream */
    expect_stream(h, 2, kind_names[k]);
    OK(gtstorage_domain_view(h, &view)); /* takes the base's stream ... */
    expect_stream(view, 2, "view");
    OK(gtstorage_set_stream(view, 1)); /* ... and keeps its own afterwards */
    expect_stream(view, 1, "view");
    expect_stream(h, 2, kind_names[k]);
    OK(gtstorage_set_stream(h, 0));
    expect_stream(h, 0, kind_names[k]);
    expect_stream(view, 1, "view");
    OK(gtstorage_domain_view(h, &later));
    expect_stream(later, 0, "a view made after the reset");

    /* A stream that was never created is refused where it is given (the emulated runtime
     * knows its streams; a real one cannot check a handle): by set_stream, which leaves the
     * storage on the stream it had (issue 23, F8), and as the explicit stream of the sync
     * functions and of copy_sides (F5); a valid one works. */
    IS(gtstorage_set_stream(h, 0x7F00), GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream");
    expect_stream(h, 0, kind_names[k]);
    if (k == MIRROR || k == PINNED_MIRROR) {
      OK(gtstorage_fill_double(h, 3.0)); /* host side: no stream involved */
      IS(gtstorage_sync_to_async(h, GTSTORAGE_SIDE_DEVICE, 0, 0x7F00),
         GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream");
      OK(gtstorage_sync_to_async(h, GTSTORAGE_SIDE_DEVICE, 0, 1));
    } else if (k == DEVICE_ONLY) {
      OK(gtstorage_fill_double(h, 3.0));
    }
    IS(gtstorage_copy_sides(h, GTSTORAGE_SIDE_DEVICE, h, GTSTORAGE_SIDE_DEVICE, 0x7F00, 0),
       GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream");
    IS(gtstorage_wait_stream(h, 0x7F00), GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream");
    OK(gtstorage_wait_stream(h, 1));
    /* The view did not follow: its work goes to its own stream. */
    OK(gtstorage_fill_double(view, 4.0));
    OK(gtstorage_sync_to_async(view, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE, 0));
    OK(gtstorage_wait_stream(view, 0));
    OK(gtstorage_set_stream(h, 2));
    OK(gtstorage_sync_to_async(h, GTSTORAGE_SIDE_DEVICE, 0, 0));
    OK(gtstorage_wait_stream(h, 0));
    {
      double out[7 * 6 * 5];
      gtstorage_array a = GTSTORAGE_ARRAY_INIT;
      int wrong = 0;
      a.ndim = 3;
      a.data = out;
      a.shape = shape;
      OK(gtstorage_copy_to_array(&a, h));
      for (int64_t i = 0; i < 7; ++i)
        for (int64_t j = 0; j < 6; ++j)
          for (int64_t l = 0; l < 5; ++l) {
            const int interior = i >= 1 && i < 6 && j >= 1 && j < 5;
            const double want = interior ? 4.0 : (k == UNIFIED ? 0.0 : 3.0);
            wrong += out[(i * 6 + j) * 5 + l] != want;
          }
      ++checks;
      if (wrong != 0) {
        ++failures;
        fprintf(stderr, "%s: %d wrong values after the streams' work\n", kind_names[k], wrong);
      }
    }
    OK(gtstorage_release(later));
    OK(gtstorage_release(view));
    OK(gtstorage_release(h));
  }
}

/* A DLPack tensor of side @p side of @p h agrees with the descriptor (@p legacy: the pre-1.0
 * struct) and has device (@p type, @p id). */
static void expect_dlpack(gtstorage_handle h, int32_t side, int legacy, int32_t type, int32_t id,
                          const char* what) {
  const gtstorage_interface_info i = describe(h, side);
  const DLTensor* t = NULL;
  DLManagedTensor* l = NULL;
  struct DLManagedTensorVersioned* v = NULL;
  if (legacy) {
    OK(gtstorage_to_dlpack(h, side, &l));
    if (l == NULL) return;
    t = &l->dl_tensor;
  } else {
    OK(gtstorage_to_dlpack_versioned(h, side, &v));
    if (v == NULL) return;
    t = &v->dl_tensor;
    CHECK(v->version.major == 1);
    CHECK((v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  }
  ++checks;
  if ((int32_t)t->device.device_type != type || t->device.device_id != id ||
      i.device_type != type || i.device_id != id) {
    ++failures;
    fprintf(stderr,
            "%s, side %d (%s): DLPack device (%d, %d), descriptor (%d, %d), want (%d, %d)\n", what,
            side, legacy ? "legacy" : "versioned", (int)t->device.device_type,
            (int)t->device.device_id, (int)i.device_type, (int)i.device_id, (int)type, (int)id);
  }
  CHECK(t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged &&
        t->device.device_type != kDLCUDAHost);
  CHECK((const char*)t->data + t->byte_offset == (const char*)i.data);
  CHECK(t->ndim == 3);
  for (int d = 0; d < 3 && t->ndim == 3; ++d) {
    CHECK(t->shape[d] == i.shape[d]);
    CHECK(t->strides != NULL && t->strides[d] * i.itemsize == i.strides[d]);
  }
  if (l != NULL) l->deleter(l);
  if (v != NULL) v->deleter(v);
}

static void descriptors_say_what_the_memory_is(void) {
  for (int32_t dev = 0; dev < 2; ++dev) {
    for (int k = 0; k < N_KINDS; ++k) {
      char what[64];
      const gtstorage_handle h = make((enum kind)k, dev);
      gtstorage_handle view = 0;
      snprintf(what, sizeof what, "%s on device %d", kind_names[k], (int)dev);
      /* Device side: emulated device memory is kDLExtDev with the ordinal; unified memory is
       * host memory (kDLCPU, id 0). */
      const int32_t dtype = k == UNIFIED ? kDLCPU : kDLExtDev;
      const int32_t did = k == UNIFIED ? 0 : dev;
      for (int legacy = 0; legacy < 2; ++legacy) {
        expect_dlpack(h, GTSTORAGE_SIDE_DEVICE, legacy, dtype, did, what);
        if (k != DEVICE_ONLY) {
          /* Host side: pageable, pinned (the emulated device's pinned memory is host memory)
           * or the unified buffer itself: kDLCPU, id 0. */
          expect_dlpack(h, GTSTORAGE_SIDE_HOST, legacy, kDLCPU, 0, what);
        }
      }
      if (k == UNIFIED) {
        CHECK(describe(h, GTSTORAGE_SIDE_HOST).data == describe(h, GTSTORAGE_SIDE_DEVICE).data);
      }
      if (k == DEVICE_ONLY) {
        gtstorage_interface_info i = GTSTORAGE_INTERFACE_INFO_INIT;
        IS(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &i), GTSTORAGE_ERROR_NO_SUCH_BUFFER, "side");
      }
      /* A view reports what its base does. */
      OK(gtstorage_domain_view(h, &view));
      expect_dlpack(view, GTSTORAGE_SIDE_DEVICE, 0, dtype, did, "view");
      OK(gtstorage_release(view));
      OK(gtstorage_release(h));
    }
  }
}

int main(void) {
  gtstorage_stats before = GTSTORAGE_STATS_INIT, after = GTSTORAGE_STATS_INIT;
  int32_t count = 0;
  OK(gtstorage_set_device_backend("emulated"));
  OK(gtstorage_device_count(&count));
  CHECK(count == 2); /* GTSTORAGE_EMULATED_DEVICES=2 */
  OK(gtstorage_get_stats(&before));
  stream_field_follows_set_stream();
  descriptors_say_what_the_memory_is();
  OK(gtstorage_get_stats(&after));
  CHECK(after.live_handles == before.live_handles && after.live_buffers == before.live_buffers);
  CHECK(after.device_bytes == before.device_bytes);
  printf("test_emulated_interop_streams: %d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
