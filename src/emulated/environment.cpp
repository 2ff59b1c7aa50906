// The emulated CUDA runtime: the environment (GTSTORAGE_EMULATED_DEVICES, GTSTORAGE_SIM_*).
#include "emulated/runtime_internal.hpp"

namespace gts::emulated::impl {

const char* const class_names[n_call_classes] = {"alloc",        "memcpy",       "memset",
                                                 "launch",       "synchronize",  "stream_create",
                                                 "event_create", "event_record", "prefetch"};

const cudaError_t class_default_error[n_call_classes] = {
    cudaErrorMemoryAllocation,     cudaErrorInvalidValue,          cudaErrorInvalidValue,
    cudaErrorLaunchOutOfResources, cudaErrorLaunchFailure,         cudaErrorMemoryAllocation,
    cudaErrorMemoryAllocation,     cudaErrorInvalidResourceHandle, cudaErrorInvalidValue};

bool parse_int(const char* text, long long lo, long long hi, long long& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

bool parse_failure(runtime_state& s, const std::string& item) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = item.find(':', start);
    parts.push_back(item.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 4) return false;
  int c = -1;
  for (int k = 0; k < n_call_classes; ++k) {
    if (parts[0] == class_names[k]) c = k;
  }
  long long nth = 0, code = class_default_error[c < 0 ? 0 : c];
  if (c < 0 || !parse_int(parts[1].c_str(), 1, 1 << 30, nth)) return false;
  if (parts.size() >= 3 && !parts[2].empty() && !parse_int(parts[2].c_str(), 1, 1000, code)) {
    return false;
  }
  if (parts.size() == 4 && parts[3] != "async") return false;
  s.injections[c] =
      injection{static_cast<int>(nth), static_cast<cudaError_t>(code), parts.size() == 4};
  return true;
}

void load_environment(runtime_state& s) {
  s.m = control::machine{};
  s.env_error.clear();
  s.injections = {};
  s.seed = 1;
  s.shuffle = true;
  s.eager = false;
  auto bad = [&](const char* var, const char* value, const char* want) {
    if (s.env_error.empty()) {
      s.env_error = std::string(var) + "='" + value + "' is not " + want;
    }
  };
  long long v = 0;
  // An integer variable in [lo, hi], or a message saying what it should be.
  auto integer = [&](const char* var, long long lo, long long hi, const char* want, auto set) {
    const char* e = std::getenv(var);
    if (e == nullptr || *e == '\0') return;
    if (parse_int(e, lo, hi, v)) {
      set(v);
    } else {
      bad(var, e, want);
    }
  };
  integer("GTSTORAGE_EMULATED_DEVICES", 0, max_devices, "a device count (0..64)",
          [&](long long x) { s.m.device_count = static_cast<int>(x); });
  integer("GTSTORAGE_SIM_DRIVER_VERSION", 0, 1000000,
          "a CUDA version number such as 12040 (0 = no driver)",
          [&](long long x) { s.m.driver_version = static_cast<int>(x); });
  integer("GTSTORAGE_SIM_DEVICE_MEMORY", 1, 1ll << 50, "a size in bytes",
          [&](long long x) { s.m.device_memory = static_cast<std::size_t>(x); });
  integer("GTSTORAGE_SIM_MULTIPROCESSORS", 1, 1024, "a count (1..1024)",
          [&](long long x) { s.m.multiprocessors = static_cast<int>(x); });
  if (const char* e = std::getenv("GTSTORAGE_SIM_SEED"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "ordered") == 0) {
      s.shuffle = false;
    } else if (parse_int(e, 0, INT64_MAX, v)) {
      s.seed = static_cast<uint64_t>(v);
    } else {
      bad("GTSTORAGE_SIM_SEED", e, "a seed (a non-negative integer) or 'ordered'");
    }
  }
  if (const char* e = std::getenv("GTSTORAGE_SIM_EXECUTION"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "eager") == 0 || std::strcmp(e, "deferred") == 0) {
      s.eager = std::strcmp(e, "eager") == 0;
    } else {
      bad("GTSTORAGE_SIM_EXECUTION", e, "'deferred' or 'eager'");
    }
  }
  if (const char* e = std::getenv("GTSTORAGE_SIM_FAIL"); e != nullptr && *e != '\0') {
    std::string list = e;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = list.find(',', start);
      const std::string item = list.substr(start, comma - start);
      if (!parse_failure(s, item)) {
        bad("GTSTORAGE_SIM_FAIL", e,
            "a list of class:n[:error[:async]] (classes: alloc, memcpy, memset, launch, "
            "synchronize, stream_create, event_create, event_record, prefetch)");
        break;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (const char* e = std::getenv("GTSTORAGE_SIM_FAULT_REPORTS"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "0") == 0 || std::strcmp(e, "1") == 0) {
      s.fault_reports = e[0] == '1';
    } else {
      bad("GTSTORAGE_SIM_FAULT_REPORTS", e, "0 or 1");
    }
  }
  if (!s.env_error.empty()) s.m.device_count = 0;
}

}  // namespace gts::emulated::impl
