// Library-wide live counts and transfer counters (relaxed atomics: they are statistics, read for
// leak checks and to prove that no redundant copy happened, not used for synchronization).
#pragma once

#include <atomic>
#include <cstdint>

#include "device/device_types.hpp"

namespace gts {

struct transfer_counters {
  std::atomic<int64_t> h2d_count{0};
  std::atomic<int64_t> h2d_bytes{0};
  std::atomic<int64_t> d2h_count{0};
  std::atomic<int64_t> d2h_bytes{0};

  void add_h2d(int64_t bytes) {
    h2d_count.fetch_add(1, std::memory_order_relaxed);
    h2d_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  void add_d2h(int64_t bytes) {
    d2h_count.fetch_add(1, std::memory_order_relaxed);
    d2h_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  void reset() {
    h2d_count = 0;
    h2d_bytes = 0;
    d2h_count = 0;
    d2h_bytes = 0;
  }
};

struct global_stats {
  std::atomic<int64_t> live_buffers{0};
  std::atomic<int64_t> host_bytes{0};
  std::atomic<int64_t> device_bytes{0};
  transfer_counters transfers;
};

global_stats& stats();

/// The one ledger of the transfers the library makes between host and device memory (syncs and
/// the copy API): @p bytes moved in direction @p dir are recorded in the storage's own counters
/// (@p storage_counters, may be null) and in the library's, together, so the two figures cannot
/// drift apart. A device-to-device copy is not a host<->device transfer and is not recorded.
void record_transfer(transfer_counters* storage_counters, device::direction dir, int64_t bytes);

}  // namespace gts
