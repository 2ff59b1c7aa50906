// The emulated device: "device" memory is separate host memory, so the storages' sync logic,
// transfer counters and error paths run for real in CI without a GPU. It is stricter than a
// GPU runtime on purpose: every copy checks that its host side lies outside the device
// allocations and its device side inside one (or in memory the backend does not know, which is
// how wrapped caller pairs look), catching a swapped direction or an overrun that CUDA would
// turn into a fault or silent corruption, and fresh device memory is poisoned
// (0xFF bytes: NaN for floats, -1 for integers) so a missing initial fill shows in tests.
// Work completes before each call returns; streams and events are ids the backend issued.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "common/errors.hpp"
#include "device/backends.hpp"
#include "device/strided_plan.hpp"
#include "kernels/kernels.hpp"
#include "memory/host_allocator.hpp"

namespace gts::device {
namespace {

constexpr int max_emulated_devices = 64;
constexpr unsigned char poison_byte = 0xFF;

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

const char* dir_name(direction d) {
  switch (d) {
    case direction::host_to_device:
      return "host_to_device";
    case direction::device_to_host:
      return "device_to_host";
    case direction::device_to_device:
      return "device_to_device";
  }
  return "?";
}

class emulated_backend final : public backend {
 public:
  emulated_backend() { reload_environment(); }

  const char* name() const override { return "emulated"; }

  int device_count() noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }

  std::string no_device_reason() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (count_ > 0) return "";
    if (!count_error_.empty()) return count_error_;
    return "no device: the emulated backend is set to 0 devices "
           "(GTSTORAGE_EMULATED_DEVICES=0 or set_emulated_device_count(0))";
  }

  void reload_environment() {
    const char* env = std::getenv("GTSTORAGE_EMULATED_DEVICES");
    std::lock_guard<std::mutex> lock(mu_);
    count_error_.clear();
    count_ = 2;
    if (env == nullptr || *env == '\0') return;
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 0 || v > max_emulated_devices) {
      // device_count() cannot throw: report 0 devices and name the bad value in every error.
      count_ = 0;
      count_error_ = std::string("no device: GTSTORAGE_EMULATED_DEVICES='") + env +
                     "' is not a device count (0.." + std::to_string(max_emulated_devices) + ")";
      return;
    }
    count_ = static_cast<int>(v);
  }

  void set_count(int count) {
    if (count < 0 || count > max_emulated_devices) {
      fail_arg("count",
               std::to_string(count) + " is not in 0.." + std::to_string(max_emulated_devices));
    }
    std::lock_guard<std::mutex> lock(mu_);
    count_ = count;
    count_error_.clear();
  }

  void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                 int device_id) override {
    if (alignment == 0) alignment = 256;
    if ((alignment & (alignment - 1)) != 0) {
      fail_arg("alignment", std::to_string(alignment) + " is not a power of two");
    }
    const int dev = checked_device(device_id);
    // At least one byte: a zero-byte request still gets a unique address.
    host_block block = allocate_host(bytes == 0 ? 1 : bytes, alignment);
    std::memset(block.ptr, poison_byte, bytes == 0 ? 1 : bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      allocs_[reinterpret_cast<uintptr_t>(block.ptr)] = record{block, bytes, kind, dev};
    }
    note_allocation(kind, static_cast<int64_t>(bytes));
    return block.ptr;
  }

  void free(void* ptr, memory_kind, int) noexcept override {
    if (ptr == nullptr) return;
    record r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == allocs_.end()) return;
      r = it->second;
      allocs_.erase(it);
    }
    note_allocation(r.kind, -static_cast<int64_t>(r.bytes));
    free_host(r.block);
  }

  void copy(void* dst, const void* src, std::size_t bytes, direction dir,
            uint64_t stream) override {
    check_stream(stream);
    if (bytes == 0) return;
    if (dst == nullptr || src == nullptr) fail_arg(dst ? "src" : "dst", "is NULL");
    check_sides(dst, 0, static_cast<int64_t>(bytes), src, 0, static_cast<int64_t>(bytes), dir,
                "copy");
    std::memmove(dst, src, bytes);
    note_transfer(dir, bytes);
  }

  void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                    uint64_t stream) override {
    check_stream(stream);
    detail::check_same_shape(dst, src, "copy_strided");
    if (dst.size() == 0) return;
    if (dst.data == nullptr || src.data == nullptr) fail_arg(dst.data ? "src" : "dst", "is NULL");
    const detail::byte_span ds = detail::span_of(dst);
    const detail::byte_span ss = detail::span_of(src);
    check_sides(dst.data, ds.lo, ds.hi, src.data, ss.lo, ss.hi, dir, "copy_strided");
    // Equal item sizes: a bitwise copy of any layouts, whatever the element kinds.
    kernels::copy(detail::as_bitwise(dst), detail::as_bitwise(src));
    note_transfer(dir, static_cast<std::size_t>(dst.size() * dst.type.itemsize));
  }

  void fill(const strided_array& dst, const void* value, uint64_t stream) override {
    check_stream(stream);
    if (dst.size() == 0) return;
    if (dst.data == nullptr) fail_arg("dst", "is NULL");
    if (value == nullptr) fail_arg("value", "is NULL");
    const detail::byte_span sp = detail::span_of(dst);
    {
      std::lock_guard<std::mutex> lock(mu_);
      const std::byte* p = dst.data + sp.lo;
      if (find(p, sp.bytes()) == nullptr && overlaps_any(p, sp.bytes())) {
        fail(error_kind::invalid_argument,
             "fill: destination " + hex(p) + " (+" + std::to_string(sp.bytes()) +
                 " bytes) straddles the end of an allocation of the emulated backend");
      }
    }
    kernels::fill(detail::as_bitwise(dst), value);
  }

  void synchronize(uint64_t stream) override { check_stream(stream); }

  void synchronize_device(int device_id) override { checked_device(device_id); }

  void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) override {
    check_stream(stream);
    if (device_id != -1) checked_device(device_id);
    if (bytes == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    const auto* p = static_cast<const std::byte*>(ptr);
    const record* r = find(p, static_cast<int64_t>(bytes));
    // Like CUDA: prefetching the library's own non-unified memory is an error; unknown
    // (caller-wrapped) memory is accepted.
    if (r != nullptr ? r->kind != memory_kind::unified
                     : overlaps_any(p, static_cast<int64_t>(bytes))) {
      fail(error_kind::invalid_argument, "prefetch: " + hex(ptr) + " (+" + std::to_string(bytes) +
                                             " bytes) is not inside a unified allocation");
    }
  }

  int dl_device_type(memory_kind kind) const noexcept override {
    switch (kind) {
      case memory_kind::device:
        return dl::cuda;
      case memory_kind::unified:
        return dl::cuda_managed;
      case memory_kind::pinned_host:
        return dl::cuda_host;
    }
    return dl::cuda;
  }

  device_properties properties(int device_id) override {
    const int dev = checked_device(device_id);
    device_properties p;
    p.name = "emulated device " + std::to_string(dev);
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) p.total_memory = static_cast<std::size_t>(pages) * page;
    p.multiprocessors = kernels::thread_count();
    p.concurrent_managed_access = true;
    return p;
  }

  pointer_info query_pointer(const void* ptr) noexcept override {
    pointer_info info;
    std::lock_guard<std::mutex> lock(mu_);
    const record* r = find(static_cast<const std::byte*>(ptr), 1);
    if (r == nullptr) return info;
    info.owned = true;
    info.base = r->block.ptr;
    info.bytes = r->bytes;
    switch (r->kind) {
      case memory_kind::device:
        info.space = pointer_space::device;
        info.device_id = r->device;
        break;
      case memory_kind::unified:
        info.space = pointer_space::unified;
        info.device_id = r->device;
        break;
      case memory_kind::pinned_host:
        info.space = pointer_space::pinned_host;
        break;
    }
    return info;
  }

  uint64_t create_stream(int device_id) override {
    checked_device(device_id);
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = next_id_++;
    streams_.insert(id);
    return id;
  }

  void destroy_stream(uint64_t stream) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(stream);
  }

  uint64_t create_event(int device_id) override {
    checked_device(device_id);
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = next_id_++;
    events_[id] = event_record{};
    return id;
  }

  void destroy_event(uint64_t event) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.erase(event);
  }

  void record_event(uint64_t event, uint64_t stream) override {
    check_stream(stream);
    std::lock_guard<std::mutex> lock(mu_);
    event_record& e = find_event(event);
    e.recorded = true;
    e.when = std::chrono::steady_clock::now();
  }

  void wait_event(uint64_t stream, uint64_t event) override {
    check_stream(stream);
    std::lock_guard<std::mutex> lock(mu_);
    find_event(event);
  }

  void synchronize_event(uint64_t event) override {
    std::lock_guard<std::mutex> lock(mu_);
    find_event(event);
  }

  bool event_done(uint64_t event) override {
    std::lock_guard<std::mutex> lock(mu_);
    find_event(event);
    return true;  // Work completes before each call returns.
  }

  float elapsed_ms(uint64_t start, uint64_t end) override {
    std::lock_guard<std::mutex> lock(mu_);
    const event_record& a = find_event(start);
    const event_record& b = find_event(end);
    if (!a.recorded || !b.recorded) {
      fail(error_kind::invalid_argument,
           "elapsed_ms: event " + std::to_string(a.recorded ? end : start) + " was never recorded");
    }
    return std::chrono::duration<float, std::milli>(b.when - a.when).count();
  }

 private:
  struct record {
    host_block block;
    std::size_t bytes = 0;
    memory_kind kind = memory_kind::device;
    int device = 0;
  };
  struct event_record {
    bool recorded = false;
    std::chrono::steady_clock::time_point when{};
  };

  // Allocation containing [p, p + n); caller holds mu_.
  const record* find(const std::byte* p, int64_t n) const {
    const auto key = reinterpret_cast<uintptr_t>(p);
    auto it = allocs_.upper_bound(key);
    if (it == allocs_.begin()) return nullptr;
    --it;
    const uintptr_t base = it->first;
    const uintptr_t end = base + (it->second.bytes == 0 ? 1 : it->second.bytes);
    if (key < base || key + static_cast<uintptr_t>(n) > end) return nullptr;
    return &it->second;
  }

  // True when [p, p + n) overlaps any device (not unified, not pinned) allocation.
  bool overlaps_device(const std::byte* p, int64_t n) const {
    const auto lo = reinterpret_cast<uintptr_t>(p);
    const uintptr_t hi = lo + static_cast<uintptr_t>(n);
    auto it = allocs_.upper_bound(hi - 1);
    while (it != allocs_.begin()) {
      --it;
      const uintptr_t end = it->first + (it->second.bytes == 0 ? 1 : it->second.bytes);
      if (end <= lo) break;  // Sorted by base; earlier blocks end before this one starts.
      if (it->second.kind == memory_kind::device) return true;
    }
    return false;
  }

  // True when [p, p + n) overlaps any allocation of this backend.
  bool overlaps_any(const std::byte* p, int64_t n) const {
    const auto lo = reinterpret_cast<uintptr_t>(p);
    auto it = allocs_.upper_bound(lo + static_cast<uintptr_t>(n) - 1);
    if (it == allocs_.begin()) return false;
    --it;
    return it->first + (it->second.bytes == 0 ? 1 : it->second.bytes) > lo;
  }

  // The device side of a transfer: inside one device or unified allocation, or memory this
  // backend does not know at all (a caller's buffer wrapped as device data: the C API has no
  // way to obtain emulated device memory, so wrapped pairs use plain host memory). Straddling
  // an allocation's end, or pinned host memory, is refused.
  void check_device_side(const void* data, int64_t lo, int64_t hi, const char* role, direction dir,
                         const char* who) const {
    const std::byte* p = static_cast<const std::byte*>(data) + lo;
    const record* r = find(p, hi - lo);
    if (r == nullptr ? !overlaps_any(p, hi - lo) : r->kind != memory_kind::pinned_host) return;
    fail(error_kind::invalid_argument,
         std::string(who) + ": " + dir_name(dir) + " " + role + " " + hex(p) + " (+" +
             std::to_string(hi - lo) +
             " bytes) is not inside a device or unified allocation of the emulated backend");
  }

  void check_host_side(const void* data, int64_t lo, int64_t hi, const char* role, direction dir,
                       const char* who) const {
    const std::byte* p = static_cast<const std::byte*>(data) + lo;
    if (overlaps_device(p, hi - lo)) {
      fail(error_kind::invalid_argument, std::string(who) + ": " + dir_name(dir) + " " + role +
                                             " " + hex(p) + " (+" + std::to_string(hi - lo) +
                                             " bytes) is device memory, not host memory");
    }
  }

  void check_sides(const void* dst, int64_t dlo, int64_t dhi, const void* src, int64_t slo,
                   int64_t shi, direction dir, const char* who) {
    std::lock_guard<std::mutex> lock(mu_);
    switch (dir) {
      case direction::host_to_device:
        check_device_side(dst, dlo, dhi, "destination", dir, who);
        check_host_side(src, slo, shi, "source", dir, who);
        break;
      case direction::device_to_host:
        check_host_side(dst, dlo, dhi, "destination", dir, who);
        check_device_side(src, slo, shi, "source", dir, who);
        break;
      case direction::device_to_device:
        check_device_side(dst, dlo, dhi, "destination", dir, who);
        check_device_side(src, slo, shi, "source", dir, who);
        break;
      default:
        fail_arg("dir", "is not a direction");
    }
  }

  void check_stream(uint64_t stream) {
    // 0, 1 and 2 are CUDA's predefined streams (default, cudaStreamLegacy, cudaStreamPerThread;
    // HIP's hipStreamPerThread is 2 too): valid without being created, as on a real device.
    if (stream <= 2) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (streams_.count(stream) == 0) {
      fail_arg("stream", std::to_string(stream) + " is not a live stream of the emulated backend");
    }
  }

  event_record& find_event(uint64_t event) {
    auto it = events_.find(event);
    if (it == events_.end()) {
      fail_arg("event", std::to_string(event) + " is not a live event of the emulated backend");
    }
    return it->second;
  }

  std::mutex mu_;
  int count_ = 2;
  std::string count_error_;
  std::map<uintptr_t, record> allocs_;
  std::set<uint64_t> streams_;
  std::map<uint64_t, event_record> events_;
  uint64_t next_id_ = 0x100;  // above the predefined streams 0, 1, 2
};

emulated_backend& instance() {
  // Never destroyed: storages freed from other static destructors may still reach it.
  static emulated_backend* const b = new emulated_backend();
  return *b;
}

}  // namespace

backend& emulated_backend_instance() {
  return instance();
}
void emulated_reload_environment() {
  instance().reload_environment();
}
void emulated_set_device_count(int count) {
  instance().set_count(count);
}

}  // namespace gts::device
