// Internal tests of the device backends (src/device): registry and selection, the emulated
// backend in full (allocation, alignment, copies of every layout kind, fills, streams, events,
// prefetch, counters, thread safety, and its strictness about device vs host pointers), the
// "none" backend, and the CUDA/HIP backends: their no-driver behaviour everywhere, and the same
// functional suite as the emulated device when a GPU is present.
//
// Environment checks: when GTSTORAGE_TEST_EXPECT_BACKEND is set, the first active() must pick
// that backend (CTest runs this binary with GTSTORAGE_DEVICE_BACKEND set to check the variable).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support.hpp"
#include "device/allocation_registry.hpp"
#include "device/backend_tools.hpp"
#include "device/device_backend.hpp"
#include "device/stream_ordering.hpp"

using gts::error_kind;
using gts::strided_array;
using namespace gts::device;

namespace {

bool has_backend(const std::string& name) {
  for (const auto& n : compiled_backends()) {
    if (n == name) return true;
  }
  return false;
}

// ------------------------------------------------------------------------------------------------
// Helpers over a backend: a device buffer with a known initial content.

struct dev_buffer {
  backend* be = nullptr;
  std::byte* ptr = nullptr;
  int64_t bytes = 0;
  memory_kind kind = memory_kind::device;
  dev_buffer(backend& b, int64_t n, memory_kind k = memory_kind::device, int dev = -1,
             std::size_t align = 256)
      : be(&b), bytes(n), kind(k) {
    ptr = static_cast<std::byte*>(b.allocate(static_cast<std::size_t>(n), align, k, dev));
  }
  ~dev_buffer() { be->free(ptr, kind, -1); }
  dev_buffer(const dev_buffer&) = delete;
  dev_buffer& operator=(const dev_buffer&) = delete;

  void set_all(unsigned char v) {
    std::vector<std::byte> h(static_cast<std::size_t>(bytes), static_cast<std::byte>(v));
    be->copy(ptr, h.data(), h.size(), direction::host_to_device, 0);
    be->synchronize(0);
  }
  std::vector<std::byte> read() {
    std::vector<std::byte> h(static_cast<std::size_t>(bytes));
    be->copy(h.data(), ptr, h.size(), direction::device_to_host, 0);
    be->synchronize(0);
    return h;
  }
};

int64_t payload(const test::layout& l, int itemsize) {
  int64_t n = itemsize;
  for (int d = 0; d < l.ndim; ++d) n *= l.shape[d];
  return n;
}

// ------------------------------------------------------------------------------------------------
// Functional suite: runs against the emulated backend and against a real GPU when present.

void suite_alloc(backend& be) {
  const int n = be.device_count();
  CHECK(n > 0);
  for (memory_kind k : {memory_kind::device, memory_kind::unified, memory_kind::pinned_host}) {
    // 24 and 48: not powers of two (GT4Py's rule allows 24 bytes for <f8).
    for (std::size_t align : {std::size_t(0), std::size_t(64), std::size_t(256), std::size_t(4096),
                              std::size_t(1) << 16, std::size_t(24), std::size_t(48)}) {
      const int64_t before = be.tools().allocated_bytes(k);
      void* p = be.allocate(1000, align, k, n - 1);
      CHECK(p != nullptr);
      const std::size_t want = align == 0 ? 256 : align;
      CHECK_MSG(reinterpret_cast<uintptr_t>(p) % want == 0, "align %zu kind %d", want,
                static_cast<int>(k));
      CHECK(be.tools().allocated_bytes(k) == before + 1000);
      const pointer_info pi = be.allocations().query_pointer(static_cast<std::byte*>(p) + 999);
      CHECK(pi.owned);
      CHECK(pi.base == p);
      CHECK(pi.bytes == 1000);
      if (k == memory_kind::device) {
        CHECK(pi.space == pointer_space::device);
        CHECK(pi.device_id == n - 1);
      } else if (k == memory_kind::unified) {
        CHECK(pi.space == pointer_space::unified);
        CHECK(pi.device_id == n - 1);
      } else {
        CHECK(pi.space == pointer_space::pinned_host);
      }
      be.free(p, k, n - 1);
      CHECK(be.tools().allocated_bytes(k) == before);
      CHECK(!be.allocations().query_pointer(p).owned);
    }
  }
  // Zero bytes: valid, distinct pointers.
  void* a = be.allocate(0, 0, memory_kind::device, 0);
  void* b = be.allocate(0, 0, memory_kind::device, 0);
  CHECK(a != nullptr && b != nullptr && a != b);
  be.free(a, memory_kind::device, 0);
  be.free(b, memory_kind::device, 0);
  // Freeing nothing, twice, or a foreign pointer is ignored.
  be.free(nullptr, memory_kind::device, 0);
  int on_stack = 0;
  be.free(&on_stack, memory_kind::device, 0);
  const pointer_info host = be.allocations().query_pointer(&on_stack);
  CHECK(!host.owned);
  CHECK(host.space == pointer_space::host);

  // An alignment that is not a power of two is honoured from the address the runtime returned,
  // whatever it is (the runtime aligns to 256 bytes, which no multiple of 3 divides).
  {
    std::vector<void*> blocks;
    for (int i = 0; i < 64; ++i) {
      void* p = be.allocate(10 + static_cast<std::size_t>(i) * 8, 48, memory_kind::device, 0);
      CHECK_MSG(reinterpret_cast<uintptr_t>(p) % 48 == 0, "block %d at %p", i, p);
      blocks.push_back(p);
    }
    for (void* p : blocks) be.free(p, memory_kind::device, 0);
  }
  EXPECT_ERROR(error_kind::invalid_argument, "device_id",
               be.allocate(10, 0, memory_kind::device, n));
  EXPECT_ERROR(error_kind::invalid_argument, "device_id",
               be.allocate(10, 0, memory_kind::device, -2));
  // -1 = the current device.
  set_current_device(n - 1);
  void* c = be.allocate(16, 0, memory_kind::device, -1);
  CHECK(be.allocations().query_pointer(c).device_id == n - 1);
  be.free(c, memory_kind::device, -1);
  set_current_device(0);

  const device_properties props = be.tools().properties(0);
  CHECK(!props.name.empty());
  CHECK(props.total_memory > 0);
  EXPECT_ERROR(error_kind::invalid_argument, "device_id", (void)be.tools().properties(n));
}

void suite_copy_1d(backend& be) {
  const transfer_counters c0 = be.tools().counters();
  std::vector<unsigned char> src(4096), back(4096, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  dev_buffer d1(be, 4096), d2(be, 4096);
  be.copy(d1.ptr, src.data(), 4096, direction::host_to_device, 0);
  be.copy(d2.ptr, d1.ptr, 4096, direction::device_to_device, 0);
  be.copy(back.data(), d2.ptr, 4096, direction::device_to_host, 0);
  be.synchronize(0);
  CHECK(std::memcmp(src.data(), back.data(), 4096) == 0);
  // Zero bytes moves nothing and counts nothing.
  be.copy(d1.ptr, src.data(), 0, direction::host_to_device, 0);
  const transfer_counters c1 = be.tools().counters();
  CHECK(c1.count[0] - c0.count[0] == 1);
  CHECK(c1.bytes[0] - c0.bytes[0] == 4096);
  CHECK(c1.count[1] - c0.count[1] == 1);
  CHECK(c1.bytes[1] - c0.bytes[1] == 4096);
  CHECK(c1.count[2] - c0.count[2] == 1);
  CHECK(c1.bytes[2] - c0.bytes[2] == 4096);
  EXPECT_ERROR(error_kind::invalid_argument, "dst",
               be.copy(nullptr, src.data(), 8, direction::host_to_device, 0));
  EXPECT_ERROR(error_kind::invalid_argument, "src",
               be.copy(d1.ptr, nullptr, 8, direction::host_to_device, 0));
  // Pinned and unified memory as the host side of transfers.
  dev_buffer pinned(be, 4096, memory_kind::pinned_host);
  dev_buffer unified(be, 4096, memory_kind::unified);
  std::memcpy(pinned.ptr, src.data(), 4096);
  be.copy(d1.ptr, pinned.ptr, 4096, direction::host_to_device, 0);
  be.copy(unified.ptr, d1.ptr, 4096, direction::device_to_device, 0);
  be.synchronize(0);
  be.prefetch(unified.ptr, 4096, -1, 0);
  be.synchronize(0);
  CHECK(std::memcmp(unified.ptr, src.data(), 4096) == 0);
}

// Round trip host -> device -> device -> host through three random layouts; gaps of every
// destination must stay untouched, and each leg counts exactly one transfer.
// A random shape of @p ndim extents in [1, max_extent], halved along its largest extents until
// it holds at most 2^22 elements: the GPU suite's extents (up to 300) would otherwise draw 4-D
// fields of up to 8.1e9 elements, whose host-side pattern and check took minutes per trial.
void draw_shape(std::mt19937_64& rng, int ndim, int64_t max_extent, int64_t* shape) {
  constexpr int64_t max_elements = int64_t{1} << 22;
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) {
    shape[d] = 1 + static_cast<int64_t>(rng() % max_extent);
    n *= shape[d];
  }
  while (n > max_elements) {
    int64_t* largest = std::max_element(shape, shape + ndim);
    n = n / *largest * ((*largest + 1) / 2);
    *largest = (*largest + 1) / 2;
  }
}

// One random trial of the strided suites: an item size, a shape, and layouts of that shape
// whose element (0,…,0) is aligned to the item size.
struct trial {
  int itemsize = 0;
  int ndim = 0;
  int64_t shape[gts::max_ndim] = {};

  trial(std::mt19937_64& rng, int64_t max_extent) {
    const int sizes[] = {1, 2, 4, 8, 16};
    itemsize = sizes[rng() % 5];
    ndim = 1 + static_cast<int>(rng() % 4);
    draw_shape(rng, ndim, max_extent, shape);
  }
  [[nodiscard]] test::layout layout(std::mt19937_64& rng) const {
    test::layout_options o;
    o.align = itemsize;
    return test::random_layout(rng, ndim, shape, itemsize, o);
  }
};

void suite_strided(backend& be, int trials, unsigned seed, int64_t max_extent) {
  std::mt19937_64 rng(seed);
  int64_t bad_total = 0;
  for (int t = 0; t < trials; ++t) {
    const trial tr(rng, max_extent);
    const int itemsize = tr.itemsize;
    const int ndim = tr.ndim;
    const test::layout la = tr.layout(rng);
    const test::layout l1 = tr.layout(rng);
    const test::layout l2 = tr.layout(rng);
    const test::layout lr = tr.layout(rng);
    std::vector<std::byte> host_a(static_cast<std::size_t>(la.bytes), std::byte{0x11});
    std::vector<std::byte> host_r(static_cast<std::size_t>(lr.bytes), std::byte{0x22});
    test::write_pattern(host_a.data(), la, itemsize, seed + t);
    dev_buffer d1(be, l1.bytes), d2(be, l2.bytes);
    d1.set_all(0x33);
    d2.set_all(0x44);
    const uint64_t stream = be.tools().create_stream(0);
    const transfer_counters c0 = be.tools().counters();
    be.copy_strided(l1.at(d1.ptr, itemsize), la.at(host_a.data(), itemsize),
                    direction::host_to_device, stream);
    be.copy_strided(l2.at(d2.ptr, itemsize), l1.at(d1.ptr, itemsize), direction::device_to_device,
                    stream);
    be.copy_strided(lr.at(host_r.data(), itemsize), l2.at(d2.ptr, itemsize),
                    direction::device_to_host, stream);
    be.synchronize(stream);
    const transfer_counters c1 = be.tools().counters();
    be.tools().destroy_stream(stream);
    const int64_t nb = payload(la, itemsize);
    for (int k = 0; k < 3; ++k) {
      CHECK(c1.count[k] - c0.count[k] == 1);
      CHECK(c1.bytes[k] - c0.bytes[k] == nb);
    }
    const int64_t bad_r = test::verify(host_r.data(), lr, itemsize, seed + t, 0x22);
    const int64_t bad_1 = test::verify(d1.read().data(), l1, itemsize, seed + t, 0x33);
    const int64_t bad_2 = test::verify(d2.read().data(), l2, itemsize, seed + t, 0x44);
    CHECK_MSG(bad_r == 0 && bad_1 == 0 && bad_2 == 0,
              "trial %d: itemsize %d ndim %d: %lld/%lld/%lld bad bytes", t, itemsize, ndim,
              static_cast<long long>(bad_1), static_cast<long long>(bad_2),
              static_cast<long long>(bad_r));
    bad_total += bad_r + bad_1 + bad_2;
  }
  CHECK(bad_total == 0);
  // Mismatches are refused, naming what differs.
  std::vector<std::byte> h(64);
  dev_buffer d(be, 64);
  strided_array a = test::layout{}.at(h.data(), 4);
  a.ndim = 1;
  a.shape[0] = 4;
  a.strides[0] = 4;
  strided_array b = a;
  b.data = d.ptr;
  b.shape[0] = 5;
  EXPECT_ERROR(error_kind::invalid_argument, "shape",
               be.copy_strided(b, a, direction::host_to_device, 0));
  b.shape[0] = 4;
  b.type.itemsize = 8;
  EXPECT_ERROR(error_kind::invalid_argument, "item size",
               be.copy_strided(b, a, direction::host_to_device, 0));
  b.type.itemsize = 4;
  b.ndim = 2;
  b.shape[1] = 1;
  EXPECT_ERROR(error_kind::invalid_argument, "dimensions",
               be.copy_strided(b, a, direction::host_to_device, 0));
}

void suite_fill(backend& be, int trials, unsigned seed, int64_t max_extent) {
  std::mt19937_64 rng(seed);
  for (int t = 0; t < trials; ++t) {
    const trial tr(rng, max_extent);
    const int itemsize = tr.itemsize;
    const int ndim = tr.ndim;
    const test::layout l = tr.layout(rng);
    unsigned char value[16];
    const bool byte_value = rng() % 4 == 0;  // Every byte equal: the memset path.
    for (int b = 0; b < 16; ++b) {
      value[b] = byte_value ? 0xAB : static_cast<unsigned char>(rng());
    }
    dev_buffer d(be, l.bytes);
    d.set_all(0x5C);
    be.fill(l.at(d.ptr, itemsize), value, 0);
    be.synchronize(0);
    const int64_t bad = test::verify_fill(d.read().data(), l, itemsize, value, 0x5C);
    CHECK_MSG(bad == 0, "fill trial %d: itemsize %d ndim %d: %lld bad bytes", t, itemsize, ndim,
              static_cast<long long>(bad));
  }
  // Unified memory is fillable too (kernels reach it).
  dev_buffer u(be, 64, memory_kind::unified);
  strided_array a = test::layout{}.at(u.ptr, 8);
  a.ndim = 1;
  a.shape[0] = 8;
  a.strides[0] = 8;
  const double v = 2.5;
  be.fill(a, &v, 0);
  be.synchronize(0);
  be.prefetch(u.ptr, 64, -1, 0);
  be.synchronize(0);
  double got[8];
  std::memcpy(got, u.ptr, sizeof got);
  bool ok = true;
  for (double g : got) ok = ok && g == 2.5;
  CHECK(ok);
  EXPECT_ERROR(error_kind::invalid_argument, "value", be.fill(a, nullptr, 0));
}

void suite_streams_events(backend& be) {
  const uint64_t s = be.tools().create_stream(0);
  CHECK(s != 0);
  const uint64_t e0 = be.ordering().create_event(0);
  const uint64_t e1 = be.ordering().create_event(0);
  be.ordering().record_event(e0, s);
  dev_buffer d(be, 1 << 20);
  std::vector<std::byte> h(1 << 20, std::byte{7});
  be.copy(d.ptr, h.data(), h.size(), direction::host_to_device, s);
  be.ordering().record_event(e1, s);
  be.ordering().wait_event(0, e1);
  be.ordering().synchronize_event(e1);
  CHECK(be.tools().event_done(e1));
  CHECK(be.tools().elapsed_ms(e0, e1) >= 0.0f);
  be.synchronize(s);
  be.ordering().synchronize_device(0);
  be.ordering().synchronize_device(-1);
  be.ordering().destroy_event(e0);
  be.ordering().destroy_event(e1);
  be.tools().destroy_stream(s);
  be.tools().destroy_stream(s);  // Twice: ignored.
  be.tools().destroy_stream(0);
  EXPECT_ERROR(error_kind::invalid_argument, "event", be.ordering().record_event(e0, 0));
  EXPECT_ERROR(error_kind::invalid_argument, "event", be.ordering().synchronize_event(e1));
  EXPECT_ERROR(error_kind::invalid_argument, "device_id",
               be.tools().create_stream(be.device_count()));
  EXPECT_ERROR(error_kind::invalid_argument, "device_id",
               be.ordering().create_event(be.device_count()));
}

void suite_threads(backend& be) {
  const int64_t before = be.tools().allocated_bytes(memory_kind::device);
  const transfer_counters c0 = be.tools().counters();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  const int nthreads = 4, iters = 50;
  for (int t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        const uint64_t s = be.tools().create_stream(t % be.device_count());
        std::vector<unsigned char> h(512), r(512);
        for (int i = 0; i < iters; ++i) {
          for (std::size_t k = 0; k < h.size(); ++k) h[k] = static_cast<unsigned char>(t + i + k);
          void* p = be.allocate(512, 256, memory_kind::device, t % be.device_count());
          be.copy(p, h.data(), 512, direction::host_to_device, s);
          be.copy(r.data(), p, 512, direction::device_to_host, s);
          be.synchronize(s);
          if (h != r) ++bad;
          be.free(p, memory_kind::device, -1);
        }
        be.tools().destroy_stream(s);
      } catch (...) {
        ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);
  CHECK(be.tools().allocated_bytes(memory_kind::device) == before);
  const transfer_counters c1 = be.tools().counters();
  CHECK(c1.count[0] - c0.count[0] == nthreads * iters);
  CHECK(c1.count[1] - c0.count[1] == nthreads * iters);
}

void run_functional_suite(backend& be, int trials, int64_t max_extent) {
  std::printf("functional suite on backend '%s' (%d devices)\n", be.name(), be.device_count());
  set_backend(be.name());  // set_current_device() checks against the active backend.
  suite_alloc(be);
  suite_copy_1d(be);
  suite_strided(be, trials, 1234u, max_extent);
  suite_fill(be, trials, 99u, max_extent);
  suite_streams_events(be);
  suite_threads(be);
  be.tools().reset_counters();
  const transfer_counters z = be.tools().counters();
  CHECK(z.count[0] == 0 && z.count[1] == 0 && z.count[2] == 0 && z.bytes[0] == 0);
}

// ------------------------------------------------------------------------------------------------
// Emulated-only: what its descriptors say, poison, strictness, device count control. (The
// simulated runtime's own semantics are tested in tests/cpp/emulated.)

void emulated_specifics() {
  backend& be = get_backend("emulated");
  CHECK(std::string(be.name()) == "emulated");
  // Host memory playing a GPU says so: kDLExtDev, never kDLCUDA; its unified and pinned memory
  // are host memory, and say that.
  CHECK(be.dl_device_type(memory_kind::device) == dl::ext_dev);
  CHECK(be.dl_device_type(memory_kind::unified) == dl::cpu);
  CHECK(be.dl_device_type(memory_kind::pinned_host) == dl::cpu);
  CHECK(be.no_device_reason().empty());
  // Fresh device memory is poisoned (0xFF), never zero.
  {
    dev_buffer d(be, 256);
    const std::vector<std::byte> r = d.read();
    bool all_ff = true;
    for (std::byte b : r) all_ff = all_ff && b == std::byte{0xFF};
    CHECK(all_ff);
  }
  // Copies that leave their allocation are refused by the runtime (and reported).
  std::vector<std::byte> h(256);
  dev_buffer d(be, 256);
  dev_buffer pinned(be, 256, memory_kind::pinned_host);
  EXPECT_ERROR(error_kind::device, "cudaMemcpyAsync",
               be.copy(d.ptr + 200, h.data(), 100, direction::host_to_device, 0));
  strided_array a = test::layout{}.at(h.data(), 8);
  a.ndim = 1;
  a.shape[0] = 4;
  a.strides[0] = 8;
  strided_array over = a;
  over.data = d.ptr + 240;
  EXPECT_ERROR(error_kind::device, "cudaMemcpyAsync",
               be.copy_strided(over, a, direction::host_to_device, 0));
  // Pinned memory is an ordinary host side of transfers.
  std::memset(pinned.ptr, 0x5A, 256);
  be.copy(d.ptr, pinned.ptr, 256, direction::host_to_device, 0);
  be.synchronize(0);
  CHECK(d.read()[255] == std::byte{0x5A});
  // Prefetch only applies to unified memory.
  EXPECT_ERROR(error_kind::invalid_argument, "unified", be.prefetch(d.ptr, 16, 0, 0));
  EXPECT_ERROR(error_kind::invalid_argument, "unified", be.prefetch(pinned.ptr, 16, -1, 0));
  dev_buffer u(be, 64, memory_kind::unified);
  EXPECT_ERROR(error_kind::invalid_argument, "device_id", be.prefetch(u.ptr, 16, 9, 0));
  // Streams the runtime never issued are the caller's argument errors.
  EXPECT_ERROR(error_kind::invalid_argument, "stream", be.synchronize(12345));
  EXPECT_ERROR(error_kind::invalid_argument, "stream",
               be.copy(d.ptr, h.data(), 8, direction::host_to_device, 777));
  const uint64_t e = be.ordering().create_event(0);
  const uint64_t f = be.ordering().create_event(0);
  be.ordering().record_event(e, 0);
  EXPECT_ERROR(error_kind::device, "cudaEventElapsedTime", (void)be.tools().elapsed_ms(e, f));
  be.ordering().destroy_event(e);
  be.ordering().destroy_event(f);
  // Misaligned (odd) element addresses: the plan narrows its unit, as on a GPU.
  {
    std::vector<std::byte> hsrc(64), hdst(64, std::byte{0});
    for (int i = 0; i < 64; ++i) hsrc[static_cast<std::size_t>(i)] = static_cast<std::byte>(i);
    strided_array s = test::layout{}.at(hsrc.data() + 1, 4);
    s.ndim = 1;
    s.shape[0] = 10;
    s.strides[0] = 4;
    strided_array t = s;
    t.data = d.ptr + 3;
    be.copy_strided(t, s, direction::host_to_device, 0);
    strided_array back = s;
    back.data = hdst.data() + 1;
    be.copy_strided(back, t, direction::device_to_host, 0);
    be.synchronize(0);
    CHECK(std::memcmp(hsrc.data() + 1, hdst.data() + 1, 40) == 0);
  }

  // Device count: default 2, settable, 0 = no device with a reason.
  set_emulated_device_count(3);
  CHECK(be.device_count() == 3);
  EXPECT_ERROR(error_kind::invalid_argument, "count", set_emulated_device_count(-1));
  EXPECT_ERROR(error_kind::invalid_argument, "count", set_emulated_device_count(65));
  set_emulated_device_count(0);
  CHECK(be.device_count() == 0);
  CHECK(be.no_device_reason().find("0 devices") != std::string::npos);
  EXPECT_ERROR(error_kind::no_device, "0 devices", be.allocate(8, 0, memory_kind::device, 0));
  EXPECT_ERROR(error_kind::no_device, "0 devices", be.tools().create_stream(0));
  EXPECT_ERROR(error_kind::no_device, "0 devices", (void)be.current_device());
  set_emulated_device_count(2);
  // GTSTORAGE_EMULATED_DEVICES: a count, or an error naming the bad value.
  setenv("GTSTORAGE_EMULATED_DEVICES", "5", 1);
  reload_environment();
  CHECK(be.device_count() == 5);
  setenv("GTSTORAGE_EMULATED_DEVICES", "two", 1);
  reload_environment();
  CHECK(be.device_count() == 0);
  EXPECT_ERROR(error_kind::no_device, "GTSTORAGE_EMULATED_DEVICES='two'",
               be.allocate(8, 0, memory_kind::device, 0));
  setenv("GTSTORAGE_EMULATED_DEVICES", "-3", 1);
  reload_environment();
  CHECK(be.device_count() == 0);
  unsetenv("GTSTORAGE_EMULATED_DEVICES");
  reload_environment();  // Also re-arms backend selection from the (unset) environment.
  CHECK(be.device_count() == 2);
  set_backend("emulated");
}

// ------------------------------------------------------------------------------------------------
// Registry

void registry_tests() {
  const std::vector<std::string> names = compiled_backends();
  CHECK(has_backend("emulated"));
  CHECK(has_backend("none"));
#if defined(GTSTORAGE_WITH_CUDA)
  CHECK(has_backend("cuda"));
#else
  CHECK(!has_backend("cuda"));
#endif
  set_backend("emulated");
  CHECK(active_name() == "emulated");
  CHECK(&active() == &get_backend("emulated"));
  set_backend("EMULATED");  // Names are case-insensitive.
  CHECK(active_name() == "emulated");
  EXPECT_ERROR(error_kind::invalid_argument, "known: cuda, hip, emulated, none, auto",
               set_backend("opencl"));
  EXPECT_ERROR(error_kind::invalid_argument, "'opencl'", (void)get_backend("opencl"));
  CHECK(active_name() == "emulated");  // A failed selection changes nothing.
  if (!has_backend("hip")) {
    EXPECT_ERROR(error_kind::unsupported, "not compiled", set_backend("hip"));
  }
  if (!has_backend("cuda")) {
    EXPECT_ERROR(error_kind::unsupported, "not compiled", set_backend("cuda"));
  }

  // Current device: process-wide, checked against the active backend.
  set_current_device(1);
  CHECK(current_device() == 1);
  EXPECT_ERROR(error_kind::invalid_argument, "device_id", set_current_device(2));
  EXPECT_ERROR(error_kind::invalid_argument, "negative", set_current_device(-1));
  CHECK(current_device() == 1);
  set_current_device(0);

  // "none": no devices, every request refused with the reason.
  set_backend("none");
  backend& none = active();
  CHECK(active_name() == "none");
  CHECK(none.device_count() == 0);
  CHECK(none.dl_device_type(memory_kind::device) == dl::cpu);
  CHECK(!none.allocations().query_pointer(&none).owned);
  none.free(nullptr, memory_kind::device, 0);
  none.tools().destroy_stream(1);
  none.ordering().destroy_event(1);
  EXPECT_ERROR(error_kind::no_device, "'none' was selected",
               none.allocate(8, 0, memory_kind::device, 0));
  EXPECT_ERROR(error_kind::no_device, "'none'", none.allocate(8, 0, memory_kind::pinned_host, -1));
  EXPECT_ERROR(error_kind::no_device, nullptr,
               none.copy(&none, &none, 1, direction::host_to_device, 0));
  strided_array a;
  EXPECT_ERROR(error_kind::no_device, nullptr,
               none.copy_strided(a, a, direction::host_to_device, 0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.fill(a, &a, 0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.synchronize(0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.ordering().synchronize_device(0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.prefetch(&a, 1, 0, 0));
  EXPECT_ERROR(error_kind::no_device, nullptr, (void)none.tools().properties(0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.tools().create_stream(0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.ordering().create_event(0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.ordering().record_event(1, 0));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.ordering().wait_event(0, 1));
  EXPECT_ERROR(error_kind::no_device, nullptr, none.ordering().synchronize_event(1));
  EXPECT_ERROR(error_kind::no_device, nullptr, (void)none.tools().event_done(1));
  EXPECT_ERROR(error_kind::no_device, nullptr, (void)none.tools().elapsed_ms(1, 2));
  EXPECT_ERROR(error_kind::no_device, nullptr, set_current_device(0));

  // "auto": a GPU backend with devices, else "none" whose reason says what was tried.
  set_backend("auto");
  const std::string resolved = active_name();
  if (resolved == "none") {
    const std::string why = active().no_device_reason();
    CHECK(why.find("'auto'") != std::string::npos);
    CHECK(why.find("emulated") != std::string::npos);
#if defined(GTSTORAGE_WITH_CUDA)
    CHECK(why.find("cudaGetDeviceCount") != std::string::npos);
#else
    CHECK(why.find("without CUDA") != std::string::npos);
#endif
    EXPECT_ERROR(error_kind::no_device, "'auto'", active().allocate(8, 0, memory_kind::device, 0));
  } else {
    CHECK(resolved == "cuda" || resolved == "hip");
    CHECK(active().device_count() > 0);
  }

  // The environment variable, read at first use (reload_environment() re-arms it).
  setenv("GTSTORAGE_DEVICE_BACKEND", "emulated", 1);
  reload_environment();
  CHECK(active_name() == "emulated");
  setenv("GTSTORAGE_DEVICE_BACKEND", "none", 1);
  reload_environment();
  CHECK(active_name() == "none");
  setenv("GTSTORAGE_DEVICE_BACKEND", "vulkan", 1);
  reload_environment();
  EXPECT_ERROR(error_kind::invalid_argument, "GTSTORAGE_DEVICE_BACKEND", (void)active());
  EXPECT_ERROR(error_kind::invalid_argument, "vulkan", (void)active_name());  // Still failing.
  set_backend("emulated");  // An explicit choice clears it.
  CHECK(active_name() == "emulated");
  if (!has_backend("hip")) {
    setenv("GTSTORAGE_DEVICE_BACKEND", "hip", 1);
    reload_environment();
    EXPECT_ERROR(error_kind::unsupported, "GTSTORAGE_DEVICE_BACKEND", (void)active());
  }
  setenv("GTSTORAGE_DEVICE_BACKEND", "", 1);  // Empty = auto.
  reload_environment();
  CHECK(active_name() == resolved);
  unsetenv("GTSTORAGE_DEVICE_BACKEND");
  set_backend("emulated");

  // Concurrent first use and switching: every thread sees a valid backend.
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        try {
          if (t == 0 && i % 10 == 0) set_backend(i % 20 == 0 ? "none" : "emulated");
          const std::string n = active().name();
          if (n != "none" && n != "emulated") ++bad;
        } catch (...) {
          ++bad;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);
  set_backend("emulated");
}

// ------------------------------------------------------------------------------------------------
// GPU backends: no-driver behaviour here, the functional suite where there is a GPU.

int gpu_suites_run = 0;  // GPU backends that ran their functional suite on a device

void gpu_backend_tests(const char* name) {
  if (!has_backend(name)) {
    std::printf("%s backend not compiled in: skipped\n", name);
    return;
  }
  backend& be = get_backend(name);
  CHECK(std::string(be.name()) == name);
  const bool cuda = std::string(name) == "cuda";
  CHECK(be.dl_device_type(memory_kind::device) == (cuda ? dl::cuda : dl::rocm));
  CHECK(be.dl_device_type(memory_kind::pinned_host) == (cuda ? dl::cuda_host : dl::rocm_host));
  CHECK(be.dl_device_type(memory_kind::unified) == (cuda ? dl::cuda_managed : dl::rocm));
  const int n = be.device_count();
  if (n == 0) {
    std::printf("%s: no device (%s): checking the no-driver behaviour\n", name,
                be.no_device_reason().c_str());
    // A GPU runner must not pass by testing the no-driver path.
    const char* require = std::getenv("GTSTORAGE_TEST_REQUIRE_GPU");
    CHECK_MSG(require == nullptr || std::string(require) != "1",
              "GTSTORAGE_TEST_REQUIRE_GPU=1 but the %s backend sees no device", name);
    const std::string why = be.no_device_reason();
    const error_kind kind = be.no_device_kind();
    if (kind == error_kind::driver_too_old) {  // a GPU behind an old driver
      CHECK(why.find("the driver supports CUDA") != std::string::npos);
    } else {
      CHECK(kind == error_kind::no_device);
      CHECK(why.find(cuda ? "no CUDA device" : "no HIP device") != std::string::npos);
      CHECK(why.find(cuda ? "cudaGetDeviceCount" : "hipGetDeviceCount") != std::string::npos);
    }
    for (memory_kind k : {memory_kind::device, memory_kind::unified, memory_kind::pinned_host}) {
      EXPECT_ERROR(kind, nullptr, be.allocate(1024, 0, k, 0));
      EXPECT_ERROR(kind, nullptr, be.allocate(1024, 0, k, -1));
    }
    int x = 0;
    std::vector<std::byte> h(64);
    strided_array a = test::layout{}.at(h.data(), 4);
    a.ndim = 1;
    a.shape[0] = 4;
    a.strides[0] = 4;
    EXPECT_ERROR(kind, nullptr, be.copy(&x, &x, 4, direction::host_to_device, 0));
    EXPECT_ERROR(kind, nullptr, be.copy_strided(a, a, direction::host_to_device, 0));
    EXPECT_ERROR(kind, nullptr, be.fill(a, &x, 0));
    EXPECT_ERROR(kind, nullptr, be.synchronize(0));
    EXPECT_ERROR(kind, nullptr, be.ordering().synchronize_device(0));
    EXPECT_ERROR(kind, nullptr, be.prefetch(&x, 4, 0, 0));
    EXPECT_ERROR(kind, nullptr, (void)be.tools().properties(0));
    EXPECT_ERROR(kind, nullptr, be.tools().create_stream(0));
    EXPECT_ERROR(kind, nullptr, be.ordering().create_event(-1));
    EXPECT_ERROR(kind, nullptr, be.ordering().record_event(1, 0));
    EXPECT_ERROR(kind, nullptr, (void)be.tools().elapsed_ms(1, 2));
    // Harmless calls stay harmless.
    be.free(nullptr, memory_kind::device, 0);
    be.free(&x, memory_kind::device, 0);
    be.tools().destroy_stream(0);
    be.ordering().destroy_event(0);
    const pointer_info pi = be.allocations().query_pointer(&x);
    CHECK(!pi.owned && pi.space == pointer_space::host);
    // Selecting it explicitly works; device requests then report no_device.
    set_backend(name);
    CHECK(active_name() == name);
    EXPECT_ERROR(kind, nullptr, set_current_device(0));
    set_backend("emulated");
    return;
  }
  if (std::getenv("GTSTORAGE_TEST_EXPECT_BACKEND") != nullptr) {
    std::printf("%s: %d device(s): the functional suite runs in device_backends\n", name, n);
    return;  // this run only checks the environment's backend selection
  }
  std::printf("%s: %d device(s), device 0 = %s: running the functional suite\n", name, n,
              be.tools().properties(0).name.c_str());
  set_backend(name);
  // Larger extents than on the emulated device so the row and transpose kernels run.
  // GTSTORAGE_GPU_TRIALS shortens it (tools/gpu-check.sh under compute-sanitizer).
  const char* trials = std::getenv("GTSTORAGE_GPU_TRIALS");
  run_functional_suite(be, trials != nullptr ? std::max(1, std::atoi(trials)) : 60, 300);
  ++gpu_suites_run;
  set_backend("emulated");
}

void check_environment_selection() {
  const char* want = std::getenv("GTSTORAGE_TEST_EXPECT_BACKEND");
  if (want == nullptr) return;
  // First use in this process: active() reads GTSTORAGE_DEVICE_BACKEND now.
  CHECK_MSG(active_name() == want, "active '%s', expected '%s'", active_name().c_str(), want);
  if (const char* nd = std::getenv("GTSTORAGE_TEST_EXPECT_DEVICES")) {
    CHECK(active().device_count() == std::atoi(nd));
  }
}

}  // namespace

int main() {
  try {
    check_environment_selection();
    unsetenv("GTSTORAGE_DEVICE_BACKEND");
    unsetenv("GTSTORAGE_EMULATED_DEVICES");
    reload_environment();
    registry_tests();
    set_backend("emulated");
    emulated_specifics();
    // Small extents (element kernels, every layout) and larger ones (row and transpose kernels,
    // grid-stride loops over more tiles than the simulated grid has blocks). The runs that only
    // check the environment's backend selection skip the larger ones.
    run_functional_suite(get_backend("emulated"), 150, 9);
    if (std::getenv("GTSTORAGE_TEST_EXPECT_BACKEND") == nullptr) {
      run_functional_suite(get_backend("emulated"), 25, 48);
    }
    gpu_backend_tests("cuda");
    gpu_backend_tests("hip");
    // A GPU runner must not pass because no GPU backend was built either.
    const char* require = std::getenv("GTSTORAGE_TEST_REQUIRE_GPU");
    CHECK_MSG(require == nullptr || std::string(require) != "1" || gpu_suites_run > 0 ||
                  std::getenv("GTSTORAGE_TEST_EXPECT_BACKEND") != nullptr,
              "GTSTORAGE_TEST_REQUIRE_GPU=1 but no GPU backend ran its functional suite (CUDA: "
              "%s, HIP: %s)",
              has_backend("cuda") ? "built" : "not built",
              has_backend("hip") ? "built" : "not built");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    return 2;
  }
  return test::report("test_device_backends");
}
