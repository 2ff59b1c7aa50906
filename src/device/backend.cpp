// Parts of gts::device::backend shared by every implementation: ordinal checks and counters.
#include <array>
#include <atomic>
#include <string>

#include "common/errors.hpp"
#include "device/device_backend.hpp"

namespace gts::device {

struct backend::counters_impl {
  std::array<std::atomic<int64_t>, 3> count{};
  std::array<std::atomic<int64_t>, 3> bytes{};
  std::array<std::atomic<int64_t>, 3> allocated{};
};

backend::backend() : counters_(std::make_unique<counters_impl>()) {}
backend::~backend() = default;

int backend::checked_device(int device_id) {
  const int n = device_count();
  if (n == 0) fail(no_device_kind(), no_device_reason());
  const int id = device_id == -1 ? current_device() : device_id;
  if (id < 0 || id >= n) {
    fail(error_kind::invalid_argument,
         "device_id: " + std::to_string(device_id) + " is out of range; the " + name() +
             " backend has " + std::to_string(n) + " device" + (n == 1 ? "" : "s") +
             " (ordinals 0.." + std::to_string(n - 1) + ", -1 = current)");
  }
  return id;
}

transfer_counters backend::counters() const noexcept {
  transfer_counters c;
  for (int i = 0; i < 3; ++i) {
    c.count[i] = counters_->count[i].load(std::memory_order_relaxed);
    c.bytes[i] = counters_->bytes[i].load(std::memory_order_relaxed);
  }
  return c;
}

void backend::reset_counters() noexcept {
  for (int i = 0; i < 3; ++i) {
    counters_->count[i].store(0, std::memory_order_relaxed);
    counters_->bytes[i].store(0, std::memory_order_relaxed);
  }
}

int64_t backend::allocated_bytes(memory_kind kind) const noexcept {
  return counters_->allocated[static_cast<int>(kind)].load(std::memory_order_relaxed);
}

void backend::note_transfer(direction dir, std::size_t bytes) noexcept {
  const int i = static_cast<int>(dir);
  counters_->count[i].fetch_add(1, std::memory_order_relaxed);
  counters_->bytes[i].fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

void backend::note_allocation(memory_kind kind, int64_t delta_bytes) noexcept {
  counters_->allocated[static_cast<int>(kind)].fetch_add(delta_bytes, std::memory_order_relaxed);
}

}  // namespace gts::device
