// Parts shared by every backend: the ordinal check of the core interface and the usage counters
// of the tools interface.
#include <string>

#include "common/errors.hpp"
#include "device/backend_tools.hpp"
#include "device/device_backend.hpp"

namespace gts::device {

int backend::checked_device(int device_id) {
  const int n = device_count();
  if (n == 0) {
    const no_device_status why = no_device();
    fail(why.kind, why.reason);
  }
  const int id = device_id == -1 ? current_device() : device_id;
  if (id < 0 || id >= n) {
    fail(error_kind::invalid_argument,
         "device_id: " + std::to_string(device_id) + " is out of range; the " + name() +
             " backend has " + std::to_string(n) + " device" + (n == 1 ? "" : "s") +
             " (ordinals 0.." + std::to_string(n - 1) + ", -1 = current)");
  }
  return id;
}

transfer_counters usage_counters::transfers() const noexcept {
  transfer_counters c;
  for (int i = 0; i < 3; ++i) {
    c.count[i] = count_[i].load(std::memory_order_relaxed);
    c.bytes[i] = bytes_[i].load(std::memory_order_relaxed);
  }
  return c;
}

void usage_counters::reset_transfers() noexcept {
  for (int i = 0; i < 3; ++i) {
    count_[i].store(0, std::memory_order_relaxed);
    bytes_[i].store(0, std::memory_order_relaxed);
  }
}

int64_t usage_counters::allocated_bytes(memory_kind kind) const noexcept {
  return allocated_[static_cast<int>(kind)].load(std::memory_order_relaxed);
}

void usage_counters::note_transfer(direction dir, std::size_t bytes) noexcept {
  const int i = static_cast<int>(dir);
  count_[i].fetch_add(1, std::memory_order_relaxed);
  bytes_[i].fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

void usage_counters::note_allocation(memory_kind kind, int64_t delta_bytes) noexcept {
  allocated_[static_cast<int>(kind)].fetch_add(delta_bytes, std::memory_order_relaxed);
}

}  // namespace gts::device
