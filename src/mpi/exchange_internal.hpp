// What the two halves of the exchange (exchange.cpp: building it; exchange_step.cpp: running a
// step) share: reading a storage's descriptor and naming a field in messages. Internal to
// src/mpi.
#pragma once

#include <string>

#include "gtstorage/gtstorage.h"
#include "mpi/boundary.hpp"

namespace gts::mpi {

/// The descriptor of side @p side of storage @p h; a failure names @p context.
inline gtstorage_interface_info describe(gtstorage_handle h, int side, const std::string& context) {
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  check_gts(gtstorage_interface(h, side, &info), context);
  return info;
}

/// "fields[i]": a bound field as messages name it.
inline std::string field_name(int i) {
  return "fields[" + std::to_string(i) + "]";
}

}  // namespace gts::mpi
