// Which backend is active. (The current device is the runtime's, per thread: see
// backend::current_device.)
// The environment (GTSTORAGE_DEVICE_BACKEND) is read once, at the first active() call, so a
// program that never touches devices never initializes a GPU runtime. The active pointer is an
// atomic read on the fast path; selection and the environment error take a mutex.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "device/backends.hpp"

namespace gts::device {
namespace {

struct registry {
  std::mutex mu;
  std::atomic<backend*> active{nullptr};
  std::vector<backend*> used;  // every backend that has been active (for pool_trim)
  bool env_read = false;
  bool env_failed = false;
  error_kind env_kind = error_kind::invalid_argument;
  std::string env_message;
};

registry& reg() {
  static registry* const r = new registry();  // Never destroyed (see backends.hpp).
  return *r;
}

const char* const known_names = "cuda, hip, emulated, none, auto";

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

[[noreturn]] void not_built(const std::string& name) {
  fail(
      error_kind::unsupported, "backend: '" + name + "' is not compiled into this build of " +
                                   "gtstorage (compiled: " +
                                   [] {
                                     std::string s;
                                     for (const auto& n : compiled_backends()) {
                                       s += (s.empty() ? "" : ", ") + n;
                                     }
                                     return s;
                                   }() +
                                   ")");
}

// The backends compiled into this build, in the order "auto" prefers them and
// compiled_backends() lists them.
struct compiled_backend {
  const char* name;
  backend& (*instance)();
};
const compiled_backend compiled[] = {
#if defined(GTSTORAGE_WITH_CUDA)
    {"cuda", cuda_backend_instance},
#endif
#if defined(GTSTORAGE_WITH_HIP)
    {"hip", hip_backend_instance},
#endif
#if defined(GTSTORAGE_WITH_EMULATED)
    {"emulated", emulated_backend_instance},
#endif
    {"none", none_backend_instance},
};

const compiled_backend* find_compiled(const std::string& name) {
  for (const compiled_backend& c : compiled) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// "auto": the first compiled GPU backend with a device, else "none" with the reasons. A GPU
// backend held back by a driver older than its runtime makes the refusals driver_too_old, so a
// GPU job on a badly configured node fails with that, not with a plain "no device".
backend& resolve_auto() {
  struct gpu {
    const char* name;
    const char* label;
  };
  std::string why;
  error_kind kind = error_kind::no_device;
  const char* separator = "";
  for (const gpu g : {gpu{"cuda", "CUDA"}, gpu{"hip", "HIP"}}) {
    why += separator;
    separator = "; ";
    const compiled_backend* c = find_compiled(g.name);
    if (c == nullptr) {
      why += std::string("built without ") + g.label;
      continue;
    }
    backend& b = c->instance();
    if (b.device_count() > 0) return b;
    const no_device_status none = b.no_device();
    why += none.reason;
    if (none.kind == error_kind::driver_too_old) kind = error_kind::driver_too_old;
  }
  set_none_reason(
      "no device: the 'auto' device backend found no GPU (" + why +
          "); set GTSTORAGE_DEVICE_BACKEND=emulated to run device code paths on the host",
      kind);
  return none_backend_instance();
}

backend& resolve(const std::string& given) {
  const std::string name = lower(given);
  if (name == "auto") return resolve_auto();
  if (name == "none") {
    set_none_reason(
        "no device: the device backend 'none' was selected "
        "(GTSTORAGE_DEVICE_BACKEND or gtstorage_set_device_backend)");
    return none_backend_instance();
  }
  if (const compiled_backend* c = find_compiled(name)) return c->instance();
  if (name == "cuda" || name == "hip" || name == "emulated") not_built(name);
  fail(error_kind::invalid_argument,
       "backend: unknown device backend '" + given + "'; known: " + known_names);
}

}  // namespace

backend& active() {
  registry& r = reg();
  if (backend* b = r.active.load(std::memory_order_acquire)) return *b;
  std::lock_guard<std::mutex> lock(r.mu);
  if (backend* b = r.active.load(std::memory_order_acquire)) return *b;
  if (!r.env_read) {
    r.env_read = true;
    const char* env = std::getenv("GTSTORAGE_DEVICE_BACKEND");
    const std::string name = (env == nullptr || *env == '\0') ? "auto" : env;
    try {
      backend& b = resolve(name);
      r.active.store(&b, std::memory_order_release);
      if (std::find(r.used.begin(), r.used.end(), &b) == r.used.end()) r.used.push_back(&b);
      return *r.active.load(std::memory_order_acquire);
    } catch (const error& e) {
      r.env_failed = true;
      r.env_kind = e.kind();
      r.env_message = std::string("GTSTORAGE_DEVICE_BACKEND: ") + e.what();
    }
  }
  fail(r.env_kind, r.env_message);
}

backend* selected() noexcept {
  return reg().active.load(std::memory_order_acquire);
}

void set_backend(const std::string& name) {
  backend& b = resolve(name);
  registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.env_read = true;
  r.env_failed = false;
  r.env_message.clear();
  r.active.store(&b, std::memory_order_release);
  if (std::find(r.used.begin(), r.used.end(), &b) == r.used.end()) r.used.push_back(&b);
}

std::vector<backend*> used_backends() {
  registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.used;
}

backend& get_backend(const std::string& name) {
  return resolve(name);
}

std::string active_name() {
  return active().name();
}

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names;
  for (const compiled_backend& c : compiled) names.emplace_back(c.name);
  return names;
}

void reload_environment() {
#if defined(GTSTORAGE_WITH_EMULATED)
  emulated_reload_environment();
#endif
  registry& r = reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.env_read = false;
  r.env_failed = false;
  r.env_message.clear();
  r.active.store(nullptr, std::memory_order_release);
}

void set_emulated_device_count(int count) {
#if defined(GTSTORAGE_WITH_EMULATED)
  emulated_set_device_count(count);
#else
  (void)count;
  not_built("emulated");
#endif
}

int current_device() {
  return active().current_device();
}

void set_current_device(int device_id) {
  if (device_id < 0) {
    fail_arg("device_id", std::to_string(device_id) + " is negative; ordinals start at 0");
  }
  active().set_current_device(device_id);
}

}  // namespace gts::device
