// Checks only a real GPU can answer (see CMakeLists.txt): the CUDA backend through its internal
// interface, and the public C API through libgtstorage.so, whose static CUDA runtime is a second
// runtime in this process next to the test's own. Each check prints PASS, FAIL or SKIP (with the
// reason); the exit status is 1 if any failed, 77 when there is no device (1 instead with
// GTSTORAGE_TEST_REQUIRE_GPU=1).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/allocation_registry.hpp"
#include "device/backend_tools.hpp"
#include "device/device_backend.hpp"
/* The suites use the experimental tier (refcounts, counter resets, backend switching) and
 * also cover the deprecated sync spellings, which stay supported within the major version. */
#define GTSTORAGE_NO_DEPRECATION_WARNINGS
#include "gtstorage/gtstorage_experimental.h"

using gts::strided_array;
using namespace gts::device;

namespace {

int failed = 0;

#define EXPECT(cond, ...)                                           \
  do {                                                              \
    if (!(cond)) {                                                  \
      ++failed;                                                     \
      std::printf("  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                                     \
      std::printf("\n");                                            \
    }                                                               \
  } while (0)

struct skip {
  std::string why;
};

void run(const char* name, const std::function<void()>& f) {
  const int before = failed;
  try {
    f();
  } catch (const skip& s) {
    std::printf("SKIP %s: %s\n", name, s.why.c_str());
    return;
  } catch (const std::exception& e) {
    ++failed;
    std::printf("  FAIL exception: %s\n", e.what());
  }
  std::printf("%s %s\n", failed == before ? "PASS" : "FAIL", name);
}

strided_array arr(void* p, int itemsize, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  strided_array a;
  a.data = static_cast<std::byte*>(p);
  a.ndim = static_cast<int>(shape.size());
  for (int d = 0; d < a.ndim; ++d) {
    a.shape[d] = shape[static_cast<std::size_t>(d)];
    a.strides[d] = strides[static_cast<std::size_t>(d)];
  }
  a.type = gts::dtype{'u', itemsize};
  return a;
}

void need_memory(const device_properties& p, double bytes) {
  if (static_cast<double>(p.total_memory) < bytes * 1.15) {
    throw skip{"needs " + std::to_string(bytes / 1073741824.0) + " GiB of device memory"};
  }
}

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A fill and a row-kernel copy over more than 2^31 elements (int64 indexing, grid-stride loops
// with a capped grid), padded rows whose padding must stay untouched.
void more_than_2_31_elements(backend& be, const device_properties& p) {
  const int64_t rows = 65536 + 3, cols = 32768 + 1, pitch = cols + 1;  // 2-byte elements
  const int64_t bytes = rows * pitch * 2;
  need_memory(p, 2.0 * static_cast<double>(bytes));
  void* a = be.allocate(static_cast<std::size_t>(bytes), 256, memory_kind::device, 0);
  void* b = be.allocate(static_cast<std::size_t>(bytes), 256, memory_kind::device, 0);
  ok(cudaMemset(a, 0, static_cast<std::size_t>(bytes)), "cudaMemset");
  ok(cudaMemset(b, 0, static_cast<std::size_t>(bytes)), "cudaMemset");
  const strided_array A = arr(a, 2, {rows, cols}, {pitch * 2, 2});
  const strided_array B = arr(b, 2, {rows, cols}, {pitch * 2, 2});
  const uint16_t v = 0x1234;
  be.fill(A, &v, 0);
  be.copy_strided(B, A, direction::device_to_device, 0);
  be.synchronize(0);
  std::vector<uint16_t> row(static_cast<std::size_t>(pitch));
  for (int64_t r : {int64_t(0), rows / 2, rows - 1}) {
    ok(cudaMemcpy(row.data(), static_cast<char*>(b) + r * pitch * 2, row.size() * 2,
                  cudaMemcpyDeviceToHost),
       "cudaMemcpy");
    int64_t wrong = 0;
    for (int64_t c = 0; c < cols; ++c) wrong += row[static_cast<std::size_t>(c)] != v;
    EXPECT(wrong == 0, "row %lld: %lld elements wrong", static_cast<long long>(r),
           static_cast<long long>(wrong));
    EXPECT(row[static_cast<std::size_t>(cols)] == 0, "row %lld: padding written",
           static_cast<long long>(r));
  }
  be.free(a, memory_kind::device, 0);
  be.free(b, memory_kind::device, 0);
}

// A device layout change large enough for thousands of tiles per block.
void large_transpose(backend& be, const device_properties& p) {
  const int64_t n0 = 16384, n1 = 8192;
  const int64_t bytes = n0 * n1 * 4;
  need_memory(p, 2.0 * static_cast<double>(bytes));
  std::vector<uint32_t> host(static_cast<std::size_t>(n0 * n1));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i * 2654435761u);
  void* a = be.allocate(static_cast<std::size_t>(bytes), 256, memory_kind::device, 0);
  void* b = be.allocate(static_cast<std::size_t>(bytes), 256, memory_kind::device, 0);
  be.copy(a, host.data(), static_cast<std::size_t>(bytes), direction::host_to_device, 0);
  // b[i][j] = a[i][j] with b column-major.
  be.copy_strided(arr(b, 4, {n0, n1}, {4, n0 * 4}), arr(a, 4, {n0, n1}, {n1 * 4, 4}),
                  direction::device_to_device, 0);
  std::vector<uint32_t> back(host.size());
  be.copy(back.data(), b, static_cast<std::size_t>(bytes), direction::device_to_host, 0);
  be.synchronize(0);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n0; ++i) {
    for (int64_t j = 0; j < n1; ++j) {
      wrong +=
          back[static_cast<std::size_t>(j * n0 + i)] != host[static_cast<std::size_t>(i * n1 + j)];
    }
  }
  EXPECT(wrong == 0, "%lld elements wrong", static_cast<long long>(wrong));
  be.free(a, memory_kind::device, 0);
  be.free(b, memory_kind::device, 0);
}

// CUDA's predefined handles 1 (cudaStreamLegacy) and 2 (cudaStreamPerThread), as a CUDA Array
// Interface v3 producer passes them.
void predefined_streams(backend& be, const device_properties&) {
  const std::size_t n = 1 << 20;
  std::vector<unsigned char> h(n, 0x5A), back(n, 0);
  void* d = be.allocate(n, 256, memory_kind::device, 0);
  be.copy(d, h.data(), n, direction::host_to_device, 1);
  const unsigned char one = 0x33;
  be.fill(arr(d, 1, {int64_t(n / 2)}, {1}), &one, 2);  // ordered after the legacy stream's copy
  be.copy(back.data(), d, n, direction::device_to_host, 2);
  be.synchronize(2);
  EXPECT(back[0] == 0x33 && back[n / 2 - 1] == 0x33 && back[n / 2] == 0x5A && back[n - 1] == 0x5A,
         "%02x %02x %02x %02x", back[0], back[n / 2 - 1], back[n / 2], back[n - 1]);
  be.synchronize(1);
  be.free(d, memory_kind::device, 0);
}

// Unified memory prefetched to the device and back (CUDA 13's cudaMemLocation form).
void unified_prefetch(backend& be, const device_properties& p) {
  if (!p.concurrent_managed_access) throw skip{"no concurrent managed access"};
  const std::size_t n = std::size_t(64) << 20;
  auto* u = static_cast<unsigned char*>(be.allocate(n, 256, memory_kind::unified, 0));
  std::memset(u, 1, n);
  be.prefetch(u, n, 0, 0);
  const unsigned char seven = 7;
  be.fill(arr(u, 1, {int64_t(n)}, {1}), &seven, 0);
  be.prefetch(u, n, -1, 0);
  be.synchronize(0);
  EXPECT(u[0] == 7 && u[n - 1] == 7, "%d %d", u[0], u[n - 1]);
  be.free(u, memory_kind::unified, 0);
}

// A padded upload whose pitch the copy engine refuses: staged instead, same data.
void pitch_beyond_the_copy_engine(backend& be, const device_properties& p) {
  int max_pitch = 0;
  ok(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, 0), "cudaDeviceGetAttribute");
  const int64_t pitch = int64_t(max_pitch) + 256, rows = 2, width = 8;
  need_memory(p, static_cast<double>(pitch * rows));
  void* d = be.allocate(static_cast<std::size_t>(pitch * rows), 256, memory_kind::device, 0);
  std::vector<double> h{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  be.copy_strided(arr(d, 8, {rows, width}, {pitch, 8}), arr(h.data(), 8, {rows, width}, {64, 8}),
                  direction::host_to_device, 0);
  std::vector<double> back(16, 0.0);
  be.copy_strided(arr(back.data(), 8, {rows, width}, {64, 8}), arr(d, 8, {rows, width}, {pitch, 8}),
                  direction::device_to_host, 0);
  be.synchronize(0);
  EXPECT(back == h, "row 2 starts with %g", back[8]);
  be.free(d, memory_kind::device, 0);
}

// Device -1 after the application's cudaSetDevice: through the backend (one runtime) and
// through libgtstorage.so (its own static runtime: the current device lives in the driver).
void device_minus_one_after_cudaSetDevice(backend& be, const device_properties&) {
  if (be.device_count() < 2) throw skip{"needs two GPUs"};
  ok(cudaSetDevice(1), "cudaSetDevice");
  void* p = be.allocate(1024, 256, memory_kind::device, -1);
  EXPECT(be.allocations().query_pointer(p).device_id == 1, "backend: device %d",
         be.allocations().query_pointer(p).device_id);
  be.free(p, memory_kind::device, -1);
  const int64_t shape[1] = {128};
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 1;
  o.shape = shape;
  o.preset = "gt:gpu";
  gtstorage_handle h = 0;
  EXPECT(gtstorage_set_device_backend("cuda") == GTSTORAGE_OK, "%s", gtstorage_last_error());
  EXPECT(gtstorage_create(&o, &h) == GTSTORAGE_OK, "%s", gtstorage_last_error());
  gtstorage_interface_info info;
  info.struct_size = sizeof info;
  EXPECT(gtstorage_interface(h, GTSTORAGE_SIDE_DEVICE, &info) == GTSTORAGE_OK, "%s",
         gtstorage_last_error());
  EXPECT(info.device_id == 1, "C API: storage on device %d after cudaSetDevice(1)", info.device_id);
  gtstorage_release(h);
  ok(cudaSetDevice(0), "cudaSetDevice");
}

}  // namespace

// Issue 23, F6, on the GPU (docs/architecture.md, "Work left queued"): an asynchronous
// gtstorage_copy_sides, then the release of its destination or source, then a new zeroed
// storage that takes the released block from its pool. The application's stream is held up by
// a host function that sleeps, so the copy queued behind it is certainly pending at the
// release: a release that does not wait for it lets the copy land in the next storage (or read
// its zeros). Device, pageable and pinned host memory, both directions; through the public API.
void sleep_on_stream(void* /*user*/) {
  timespec t{0, 200 * 1000 * 1000};
  nanosleep(&t, nullptr);
}

gtstorage_handle create_field(int32_t device, int32_t host_memory, const char* what) {
  static const int64_t shape[3] = {64, 64, 32};  // 1 MiB of f8
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 3;
  o.shape = shape;
  o.preset = "gt:gpu";
  o.device = device;
  o.host_memory = host_memory;
  o.init = GTSTORAGE_INIT_ZEROS;
  gtstorage_handle h = 0;
  if (gtstorage_create(&o, &h) != GTSTORAGE_OK) {
    throw std::runtime_error(std::string(what) + ": " + gtstorage_last_error());
  }
  return h;
}

int64_t count_not(gtstorage_handle h, double want) {
  std::vector<double> v(64 * 64 * 32, -1.0);
  const int64_t shape[3] = {64, 64, 32};
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = 3;
  a.shape = shape;
  a.data = v.data();
  if (gtstorage_copy_to_array(&a, h) != GTSTORAGE_OK)
    throw std::runtime_error(gtstorage_last_error());
  int64_t n = 0;
  for (double x : v) n += x != want;
  return n;
}

void queued_work_is_waited_for(backend&, const device_properties&) {
  EXPECT(gtstorage_set_device_backend("cuda") == GTSTORAGE_OK, "%s", gtstorage_last_error());
  cudaStream_t s = nullptr;
  ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  struct kind {
    const char* name;
    int32_t device, host_memory, side;
  };
  const kind dev{"device", GTSTORAGE_DEVICE_GPU, GTSTORAGE_HOST_PAGEABLE, GTSTORAGE_SIDE_DEVICE};
  const kind hosts[] = {
      {"pageable host", GTSTORAGE_DEVICE_CPU, GTSTORAGE_HOST_PAGEABLE, GTSTORAGE_SIDE_HOST},
      {"pinned host", GTSTORAGE_DEVICE_CPU, GTSTORAGE_HOST_PINNED, GTSTORAGE_SIDE_HOST}};
  for (const kind& host : hosts) {
    for (const bool to_host : {true, false}) {
      for (const bool release_destination : {true, false}) {
        const kind& from = to_host ? dev : host;
        const kind& to = to_host ? host : dev;
        const kind& released = release_destination ? to : from;
        const std::string row = std::string(from.name) + " -> " + to.name + ", " +
                                (release_destination ? "destination" : "source") + " released";
        const gtstorage_handle src = create_field(from.device, from.host_memory, row.c_str());
        const gtstorage_handle dst = create_field(to.device, to.host_memory, row.c_str());
        EXPECT(gtstorage_fill_double(src, 1.0) == GTSTORAGE_OK, "%s", gtstorage_last_error());
        ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        const gtstorage_handle gone = release_destination ? dst : src;
        const gtstorage_handle kept = release_destination ? src : dst;
        void* block = nullptr;
        EXPECT(gtstorage_data(gone, released.side, &block) == GTSTORAGE_OK, "%s",
               gtstorage_last_error());
        ok(cudaLaunchHostFunc(s, sleep_on_stream, nullptr), "cudaLaunchHostFunc");
        EXPECT(gtstorage_copy_sides(dst, to.side, src, from.side, reinterpret_cast<uint64_t>(s),
                                    GTSTORAGE_COPY_FLAG_ASYNC) == GTSTORAGE_OK,
               "%s: %s", row.c_str(), gtstorage_last_error());
        EXPECT(gtstorage_release(gone) == GTSTORAGE_OK, "%s", gtstorage_last_error());
        const gtstorage_handle next =
            create_field(released.device, released.host_memory, row.c_str());
        void* next_block = nullptr;
        EXPECT(gtstorage_data(next, released.side, &next_block) == GTSTORAGE_OK, "%s",
               gtstorage_last_error());
        ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        const int64_t lost = count_not(next, 0.0), wrong = count_not(kept, 1.0);
        EXPECT(lost == 0, "%s: %lld of the next storage's zeros lost (%s block)", row.c_str(),
               static_cast<long long>(lost), next_block == block ? "same" : "another");
        EXPECT(wrong == 0, "%s: %lld values of the surviving storage wrong", row.c_str(),
               static_cast<long long>(wrong));
        if (next_block != block) std::printf("  note: %s: the block was not reused\n", row.c_str());
        gtstorage_release(next);
        gtstorage_release(kept);
      }
    }
  }
  ok(cudaStreamDestroy(s), "cudaStreamDestroy");
}

int main() {
  backend& be = get_backend("cuda");
  const char* require = std::getenv("GTSTORAGE_TEST_REQUIRE_GPU");
  if (be.device_count() == 0) {
    std::printf("no CUDA device: %s\n", be.no_device_reason().c_str());
    return require != nullptr && std::string(require) == "1" ? 1 : 77;
  }
  set_backend("cuda");
  const device_properties p = be.tools().properties(0);
  std::printf("device 0: %s, cc %d.%d, %d SMs, %.1f GiB, %d device(s)\n", p.name.c_str(), p.major,
              p.minor, p.multiprocessors, static_cast<double>(p.total_memory) / 1073741824.0,
              be.device_count());
  const std::pair<const char*, void (*)(backend&, const device_properties&)> checks[] = {
      {"fill + copy over more than 2^31 elements", more_than_2_31_elements},
      {"large tiled transpose (16384 x 8192, 4 bytes)", large_transpose},
      {"predefined streams 1 and 2", predefined_streams},
      {"unified memory prefetch", unified_prefetch},
      {"2-D copy beyond cudaDevAttrMaxPitch is staged", pitch_beyond_the_copy_engine},
      {"device -1 after cudaSetDevice(1)", device_minus_one_after_cudaSetDevice},
      {"work left queued is waited for by the release (issue 23, F6)", queued_work_is_waited_for},
  };
  for (const auto& [name, f] : checks) run(name, [&] { f(be, p); });
  std::printf("test_gpu_checks: %d failure(s)\n", failed);
  return failed == 0 ? 0 : 1;
}
