/*
 * The smaller findings of the fuzz and bad-input campaign of issue 23 (F1, F3, F4, F12, F13 and
 * the four message points still open from the previous campaign), through the public C API on
 * the emulated device. Each test failed before its fix. (F5 and F8, dead streams, are in
 * tests/cpp/emulated/test_emulated_interop_streams.c; F6 in
 * tests/cpp/emulated/test_emulated_queued_work.cpp; F7, F9 and F10 in tests/mpi/test_agreement.c;
 * F11 in tests/python/test_duck_array.py.)
 */
#include "dlpack/dlpack.h"
#include "support.h"

/* dlpack.h declares the versioned struct without a typedef in C. */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;

static int use_emulated(void** state) {
  (void)state;
  return gtstorage_set_device_backend("emulated") == GTSTORAGE_OK ? 0 : -1;
}

static gtstorage_handle create_1d(int64_t n, const char* preset, int32_t managed) {
  gtstorage_create_options o = gts_options(1, &n, preset);
  gtstorage_handle h = 0;
  o.managed = managed;
  o.init = GTSTORAGE_INIT_ZEROS;
  GTS_OK(gtstorage_create(&o, &h));
  return h;
}

static void* data_of(gtstorage_handle h, int32_t side) {
  void* p = NULL;
  GTS_OK(gtstorage_data(h, side, &p));
  return p;
}

static double first_value(gtstorage_handle h) {
  const int64_t one = 1;
  double v = -1.0;
  gtstorage_handle first = 0;
  gtstorage_slice_spec spec = {0, 1, 1, GTSTORAGE_SLICE_RANGE, 0};
  GTS_OK(gtstorage_slice(h, &spec, 1, &first));
  gtstorage_array a = gts_array(1, &one, &v);
  GTS_OK(gtstorage_copy_to_array(&a, first));
  GTS_OK(gtstorage_release(first));
  return v;
}

/* A versioned DLPack tensor (no deleter: the memory belongs to the test) of @p n doubles. */
static DLManagedTensorVersioned versioned_tensor(void* data, int64_t* shape, DLDeviceType type) {
  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = 1;
  t.dl_tensor.data = data;
  t.dl_tensor.device.device_type = type;
  t.dl_tensor.ndim = 1;
  t.dl_tensor.shape = shape;
  t.dl_tensor.dtype.code = kDLFloat;
  t.dl_tensor.dtype.bits = 64;
  t.dl_tensor.dtype.lanes = 1;
  return t;
}

/* F1: an empty wrap or DLPack import given data = NULL reported data = NULL in its descriptor,
 * where the header promises a valid, non-null address for a view without elements. */
static void empty_wraps_report_a_non_null_address(void** state) {
  (void)state;
  const int64_t shape[2] = {0, 4};
  const gtstorage_wrap_options w = gts_wrap_options(2, shape, NULL);
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  gtstorage_interface_info info = gts_host_info(h);
  assert_non_null(info.data);
  assert_non_null(data_of(h, GTSTORAGE_SIDE_HOST));
  GTS_EQ64(info.nbytes, 0);
  GTS_OK(gtstorage_release(h));

  int64_t none[1] = {0};
  DLManagedTensorVersioned t = versioned_tensor(NULL, none, kDLCPU);
  GTS_OK(gtstorage_wrap_dlpack(&t, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
  info = gts_host_info(h);
  assert_non_null(info.data);
  GTS_OK(gtstorage_release(h));

  /* An empty device tensor without an address (PyTorch's empty CUDA tensors): an empty device
   * storage on the tensor's device, not a refusal naming device_id. */
  t = versioned_tensor(NULL, none, kDLExtDev);
  t.dl_tensor.device.device_id = 1;
  GTS_OK(gtstorage_wrap_dlpack(&t, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
  int32_t has = -1;
  GTS_OK(gtstorage_has_side(h, GTSTORAGE_SIDE_HOST, &has));
  assert_int_equal(has, 0);
  info = gts_info(h, GTSTORAGE_SIDE_DEVICE);
  assert_non_null(info.data);
  assert_int_equal(info.device_type, GTSTORAGE_DL_EXT_DEV);
  assert_int_equal(info.device_id, 1);
  GTS_OK(gtstorage_fill_double(h, 1.0));
  GTS_OK(gtstorage_release(h));
}

/* F3: a DLPack tensor (or a wrap) over emulated-device memory whose shape is larger than its
 * allocation was accepted, and a later fill wrote past the end. The library knows the
 * allocation of its own memory and of the simulated runtime's: the span must fit in it. */
static void device_wraps_must_fit_their_allocation(void** state) {
  (void)state;
  const gtstorage_handle owner = create_1d(100, "gt:gpu", GTSTORAGE_MANAGED_NONE);
  gtstorage_interface_info info = gts_info(owner, GTSTORAGE_SIDE_DEVICE);
  double* device = (double*)info.allocation;
  const int64_t room = info.allocation_bytes / 8; /* doubles that fit */
  gtstorage_handle h = 0;

  int64_t too_many[1] = {room + 1};
  DLManagedTensorVersioned t = versioned_tensor(device, too_many, kDLExtDev);
  GTS_EXPECT(gtstorage_wrap_dlpack(&t, GTSTORAGE_DLPACK_VERSIONED, NULL, &h),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "dl_tensor.data");
  assert_non_null(strstr(gtstorage_last_error(), "outside the allocation"));
  assert_int_equal(h, 0);
  /* The same through gtstorage_wrap, and a span that starts inside and ends outside. */
  gtstorage_wrap_options w = gts_wrap_options(1, too_many, NULL);
  w.device_data = device;
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "device_data");
  int64_t ten[1] = {10};
  w.shape = ten;
  w.device_data = device + room - 5;
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "device_data");
  /* Negative strides reaching below the allocation's start. */
  const int64_t back[1] = {-8};
  w.device_data = device + 3;
  w.device_strides = back;
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "device_data");
  /* What fits is wrapped, and filled without touching the owner's other elements. */
  int64_t exact[1] = {room};
  t = versioned_tensor(device, exact, kDLExtDev);
  GTS_OK(gtstorage_wrap_dlpack(&t, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
  GTS_OK(gtstorage_fill_double(h, 2.0));
  GTS_OK(gtstorage_release(h));
  w.device_strides = NULL;
  w.shape = ten;
  w.device_data = device + room - 10;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_OK(gtstorage_release(h));
  assert_true(first_value(owner) == 2.0);
  /* Device memory passed as host memory (a kDLCPU tensor, data of a wrap) is refused whatever
   * its shape: host code (fills, copies, NumPy) would address it. The fuzzer found the
   * kDLCPU tensor larger than its device allocation accepted. */
  t = versioned_tensor(device, too_many, kDLCPU);
  GTS_EXPECT(gtstorage_wrap_dlpack(&t, GTSTORAGE_DLPACK_VERSIONED, NULL, &h),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "dl_tensor.data");
  assert_non_null(strstr(gtstorage_last_error(), "is device memory (device 0"));
  t = versioned_tensor(device, ten, kDLCPU);
  GTS_EXPECT(gtstorage_wrap_dlpack(&t, GTSTORAGE_DLPACK_VERSIONED, NULL, &h),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "dl_tensor.data");
  gtstorage_wrap_options host = gts_wrap_options(1, ten, device);
  h = 0;
  GTS_EXPECT(gtstorage_wrap(&host, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "data");
  assert_int_equal(h, 0);
  GTS_OK(gtstorage_release(owner));
  /* Unified memory is host memory too, and where the runtime knows its allocation the
   * elements must lie inside it. */
  const gtstorage_handle unified = create_1d(100, "gt:gpu", GTSTORAGE_MANAGED_UNIFIED);
  info = gts_host_info(unified);
  const int64_t unified_room[1] = {info.allocation_bytes / 8 + 1};
  host.data = info.allocation;
  host.shape = unified_room;
  GTS_EXPECT(gtstorage_wrap(&host, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "data");
  assert_non_null(strstr(gtstorage_last_error(), "outside the allocation"));
  host.shape = ten;
  GTS_OK(gtstorage_wrap(&host, &h));
  GTS_OK(gtstorage_fill_double(h, 3.0));
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(unified));
}

/* F4: without AddressSanitizer, the block a thread kept for its next create (up to 64 KiB)
 * stayed counted as in use by the host pool after every storage was released. */
static void released_blocks_are_not_in_use(void** state) {
  (void)state;
  gtstorage_pool_stats before = GTSTORAGE_POOL_STATS_INIT, after = GTSTORAGE_POOL_STATS_INIT;
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_HOST, &before));
  for (int64_t n = 512; n <= 8192; n *= 2) { /* 4 KiB ... 64 KiB of doubles: pooled blocks */
    const gtstorage_handle h = create_1d(n, "gt:cpu_ifirst", GTSTORAGE_MANAGED_NONE);
    GTS_OK(gtstorage_release(h));
    GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_HOST, &after));
    if (after.in_use_bytes != before.in_use_bytes) {
      fail_msg("%" PRId64 " doubles: %" PRId64 " bytes in use after the release, %" PRId64
               " before",
               n, after.in_use_bytes, before.in_use_bytes);
    }
  }
  /* And a trim to 0 gives everything back. */
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_HOST, 0));
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_HOST, &after));
  GTS_EQ64(after.held_bytes, 0);
}

/* F12: a wrapped host buffer whose device side is unified memory could not be filled (the fill
 * went to the device runtime with the host address: "cudaMemsetAsync failed"), directly and
 * through a DLPack re-import of that host side; the same wrap over device memory worked. */
static void host_side_of_a_unified_pair_is_filled_on_the_host(void** state) {
  (void)state;
  const gtstorage_handle unified = create_1d(16, "gt:gpu", GTSTORAGE_MANAGED_UNIFIED);
  double host[16] = {0};
  int64_t n[1] = {16};
  gtstorage_handle pair = 0, again = 0;
  gtstorage_wrap_options w = gts_wrap_options(1, n, host);
  w.device_data = data_of(unified, GTSTORAGE_SIDE_DEVICE);
  GTS_OK(gtstorage_wrap(&w, &pair));
  /* Zeros went to cudaMemsetAsync on the host address (refused); other values to a device
   * kernel, which writes host memory only on the emulated device (a GPU faults). */
  for (int i = 0; i < 16; ++i) host[i] = 9.0;
  GTS_OK(gtstorage_fill_double(pair, 0.0));
  for (int i = 0; i < 16; ++i) assert_true(host[i] == 0.0);
  GTS_OK(gtstorage_fill_double(pair, 3.0));
  for (int i = 0; i < 16; ++i) assert_true(host[i] == 3.0);
  DLManagedTensorVersioned* exported = NULL;
  GTS_OK(gtstorage_to_dlpack_versioned(pair, GTSTORAGE_SIDE_HOST, &exported));
  GTS_OK(gtstorage_wrap_dlpack(exported, GTSTORAGE_DLPACK_VERSIONED, NULL, &again));
  GTS_OK(gtstorage_fill_double(again, 0.0));
  for (int i = 0; i < 16; ++i) assert_true(host[i] == 0.0);
  GTS_OK(gtstorage_fill_double(again, 4.0));
  for (int i = 0; i < 16; ++i) assert_true(host[i] == 4.0);
  /* The device side, unified memory, is filled where it lives and reads back. */
  GTS_OK(gtstorage_modify(pair, GTSTORAGE_SIDE_HOST, 0));
  GTS_OK(gtstorage_sync_to(pair, GTSTORAGE_SIDE_DEVICE, 0));
  assert_true(first_value(unified) == 4.0);
  GTS_RELEASE(again, pair, unified);
}

/* F13: after every storage was released, the device pool held more than the limit set with
 * gtstorage_pool_set_limit (a 256-byte block over a 116-byte limit), where docs/memory-pools.md
 * says a block larger than the limit is not kept. It shows where the block's stream-ordered
 * release has run and no synchronization has trimmed the pool since: the CTest entry with
 * GTSTORAGE_SIM_EXECUTION=eager (queued work runs at once). */
static void device_blocks_larger_than_the_limit_are_not_kept(void** state) {
  (void)state;
  gtstorage_pool_stats st = GTSTORAGE_POOL_STATS_INIT, first = GTSTORAGE_POOL_STATS_INIT;
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &first));
  GTS_OK(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_DEVICE, 116));
  const gtstorage_handle keep = create_1d(4, "gt:gpu", GTSTORAGE_MANAGED_NONE); /* 32 bytes */
  for (int round = 0; round < 3; ++round) {
    const gtstorage_handle big = create_1d(32, "gt:gpu", GTSTORAGE_MANAGED_NONE); /* 256 */
    GTS_OK(gtstorage_fill_double(big, 1.0));
    GTS_OK(gtstorage_release(big));
    GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &st));
    if (st.held_bytes > 116) {
      fail_msg("round %d: the device pool holds %" PRId64 " bytes over its limit of 116", round,
               st.held_bytes);
    }
  }
  /* Blocks within the limit are still pooled (and reused). */
  GTS_OK(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_DEVICE, (int64_t)1 << 20));
  const gtstorage_handle small = create_1d(8192, "gt:gpu", GTSTORAGE_MANAGED_NONE); /* 64 KiB */
  GTS_OK(gtstorage_release(small));
  GTS_OK(gtstorage_wait_stream(keep, 0)); /* the device reaches the stream-ordered release */
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &st));
  const int64_t hits = st.hits;
  const gtstorage_handle reused = create_1d(8192, "gt:gpu", GTSTORAGE_MANAGED_NONE);
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &st));
  GTS_EQ64(st.hits, hits + 1);
  GTS_OK(gtstorage_release(reused));
  GTS_OK(gtstorage_release(keep));
  GTS_OK(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_DEVICE, first.limit_bytes));
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
}

/* The four message points still open from the previous campaign: each error names the
 * parameter the caller passed. */
static void messages_name_the_callers_parameter(void** state) {
  (void)state;
  /* gtstorage_copy into a read-only storage: "dst", not "handle". */
  const gtstorage_handle src = create_1d(8, "gt:cpu_ifirst", GTSTORAGE_MANAGED_NONE);
  double values[8] = {0};
  int64_t n[1] = {8};
  gtstorage_handle ro = 0;
  gtstorage_wrap_options w = gts_wrap_options(1, n, values);
  w.readonly = 1;
  GTS_OK(gtstorage_wrap(&w, &ro));
  GTS_EXPECT(gtstorage_copy(ro, src), GTSTORAGE_ERROR_READONLY, "dst:");
  assert_true(strncmp(gtstorage_last_error(), "dst:", 4) == 0);
  GTS_EXPECT(gtstorage_fill_double(ro, 1.0), GTSTORAGE_ERROR_READONLY, "handle:");
  GTS_OK(gtstorage_release(ro));

  /* Naming the active backend while storages live switches nothing and is accepted. */
  const gtstorage_handle dev = create_1d(8, "gt:gpu", GTSTORAGE_MANAGED_NONE);
  GTS_OK(gtstorage_set_device_backend("emulated"));
  GTS_EXPECT(gtstorage_set_device_backend("none"), GTSTORAGE_ERROR_INVALID_ARGUMENT, "name");
  GTS_OK(gtstorage_release(dev));
  GTS_OK(gtstorage_release(src));

  /* Without a device: pinned host memory names host_memory, not device; set_device names
   * device_id. */
  GTS_OK(gtstorage_set_device_backend("none"));
  gtstorage_create_options o = gts_options(1, n, "gt:cpu_ifirst");
  gtstorage_handle h = 0;
  o.host_memory = GTSTORAGE_HOST_PINNED;
  GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_NO_DEVICE, "host_memory");
  assert_true(strncmp(gtstorage_last_error(), "host_memory:", 12) == 0);
  GTS_EXPECT(gtstorage_set_device(-5), GTSTORAGE_ERROR_NO_DEVICE, "device_id");
  assert_true(strncmp(gtstorage_last_error(), "device_id: -5", 13) == 0);
  GTS_OK(gtstorage_set_device_backend("emulated"));
}

/* A pinned host storage of the emulated backend released after a switch to "none" returns its
 * block to the emulated backend's pinned pool; gtstorage_pool_trim(ALL, 0) under "none" must
 * empty it too (the fuzzer found the block still held, a runtime allocation left alive). */
static void trim_reaches_the_pools_of_a_former_backend(void** state) {
  (void)state;
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  gtstorage_create_options o;
  int64_t n[1] = {512};
  gtstorage_handle h = 0;
  o = gts_options(1, n, "gt:cpu_ifirst");
  o.host_memory = GTSTORAGE_HOST_PINNED;
  GTS_OK(gtstorage_create(&o, &h));
  GTS_OK(gtstorage_set_device_backend("none")); /* allowed: no device storage is alive */
  GTS_OK(gtstorage_release(h));                 /* its block goes to the emulated pinned pool */
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  GTS_OK(gtstorage_set_device_backend("emulated"));
  gtstorage_pool_stats pinned = GTSTORAGE_POOL_STATS_INIT;
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_PINNED_HOST, &pinned));
  GTS_EQ64(pinned.held_bytes, 0);
}

GTS_TEST_MAIN_WITH("campaign findings (issue 23)", GTS_TEST, use_emulated, NULL)
