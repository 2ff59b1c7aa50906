#include "storage/stats.hpp"

namespace gts {

global_stats& stats() {
  static global_stats s;
  return s;
}

void record_transfer(transfer_counters* storage_counters, device::direction dir, int64_t bytes) {
  if (dir == device::direction::host_to_device) {
    if (storage_counters != nullptr) storage_counters->add_h2d(bytes);
    stats().transfers.add_h2d(bytes);
  } else if (dir == device::direction::device_to_host) {
    if (storage_counters != nullptr) storage_counters->add_d2h(bytes);
    stats().transfers.add_d2h(bytes);
  }
}

}  // namespace gts
