// The "none" backend: what "auto" resolves to on a machine without a usable GPU. It has no
// devices; every request throws no_device with a reason that says why (no driver, not built,
// explicitly selected) and how to get a device (GTSTORAGE_DEVICE_BACKEND=emulated).
#include <mutex>
#include <string>

#include "common/errors.hpp"
#include "device/allocation_registry.hpp"
#include "device/backend_tools.hpp"
#include "device/backends.hpp"
#include "device/stream_ordering.hpp"

namespace gts::device {
namespace {

class none_backend final : public backend,
                           public stream_ordering,
                           public allocation_registry,
                           public backend_tools {
 public:
  none_backend() : backend("none") { attach(*this, *this, *this); }

  int device_count() noexcept override { return 0; }
  no_device_status no_device() override {
    std::lock_guard<std::mutex> lock(mu_);
    return why_;
  }
  void set_reason(const std::string& r, error_kind kind) {
    std::lock_guard<std::mutex> lock(mu_);
    why_ = {kind, r};
  }
  [[noreturn]] void refuse() {
    const no_device_status why = no_device();
    fail(why.kind, why.reason);
  }

  int current_device() override { refuse(); }
  void set_current_device(int) override { refuse(); }

  void* allocate(std::size_t, std::size_t, memory_kind, int) override { refuse(); }
  void free(void*, memory_kind, int) noexcept override {}
  void copy(void*, const void*, std::size_t, direction, uint64_t) override { refuse(); }
  void copy_strided(const strided_array&, const strided_array&, direction, uint64_t) override {
    refuse();
  }
  void fill(const strided_array&, const void*, uint64_t) override { refuse(); }
  void synchronize(uint64_t) override { refuse(); }
  void prefetch(const void*, std::size_t, int, uint64_t) override { refuse(); }
  int dl_device_type(memory_kind) const noexcept override { return dl::cpu; }

  // ordering
  uint64_t create_event(int) override { refuse(); }
  void destroy_event(uint64_t) noexcept override {}
  void record_event(uint64_t, uint64_t) override { refuse(); }
  void wait_event(uint64_t, uint64_t) override { refuse(); }
  void synchronize_event(uint64_t) override { refuse(); }
  void synchronize_device(int) override { refuse(); }

  // allocations
  pointer_info query_pointer(const void*) noexcept override { return {}; }

  // tools
  device_properties properties(int) override { refuse(); }
  uint64_t create_stream(int) override { refuse(); }
  void destroy_stream(uint64_t) noexcept override {}
  bool event_done(uint64_t) override { refuse(); }
  float elapsed_ms(uint64_t, uint64_t) override { refuse(); }

 private:
  std::mutex mu_;
  no_device_status why_{error_kind::no_device, "no device backend is active"};
};

none_backend& instance() {
  // Never destroyed: storages freed from other static destructors may still reach it.
  static none_backend* const b = new none_backend();
  return *b;
}

}  // namespace

backend& none_backend_instance() {
  return instance();
}
void set_none_reason(const std::string& reason, error_kind kind) {
  instance().set_reason(reason, kind);
}

}  // namespace gts::device
