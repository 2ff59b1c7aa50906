// The emulated CUDA runtime: its state, the calling thread's current device and last error, error
// injection.
#include <cstddef>
#include <iterator>

#include "emulated/runtime_internal.hpp"

namespace gts::emulated::impl {

runtime_state* g_state = nullptr;  // for the fault handler

thread_local int tls_device = 0;

thread_local cudaError_t tls_last_error = cudaSuccess;

thread_local per_thread_streams tls_streams;

std::size_t page_size() {
  static const auto p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

std::size_t round_up(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

const char* kind_name(mem_kind k) {
  // Indexed by mem_kind, in its order.
  static const char* const names[] = {"device", "managed", "pinned host", "stream-ordered"};
  static_assert(std::size(names) == static_cast<std::size_t>(mem_kind::pool) + 1);
  const auto i = static_cast<std::size_t>(k);
  return i < std::size(names) ? names[i] : "?";
}

runtime_state& state() {
  // Never destroyed: storages freed from static destructors may still call in.
  static runtime_state* const s = [] {
    auto* p = new runtime_state();
    load_environment(*p);
    g_state = p;
    return p;
  }();
  return *s;
}

cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess && e != cudaErrorNotReady) tls_last_error = e;
  return e;
}

cudaError_t dead_handle(runtime_state& s) {
  ++s.counts.dead_handles;
  return ret(cudaErrorInvalidResourceHandle);
}

cudaError_t init_error(const runtime_state& s) {
  if (s.m.driver_version <= 0 || s.m.driver_version < runtime_version) {
    return cudaErrorInsufficientDriver;
  }
  if (s.m.device_count <= 0) return cudaErrorNoDevice;
  return cudaSuccess;
}

bool valid_ordinal(const runtime_state& s, int d) {
  return d >= 0 && d < s.m.device_count;
}

cudaError_t device_error(const runtime_state& s, int d) {
  if (!valid_ordinal(s, d)) return cudaErrorInvalidDevice;
  return s.devices[d].sticky;
}

injected inject(runtime_state& s, control::call_class c) {
  injection& in = s.injections[static_cast<int>(c)];
  if (in.remaining <= 0) return {};
  if (--in.remaining > 0) return {};
  return {in.error, in.async};
}

cudaError_t admit(runtime_state& s, int d, control::call_class c, cudaError_t* deferred) {
  if (const cudaError_t e = device_error(s, d)) return e;
  const injected inj = inject(s, c);
  if (inj.error != cudaSuccess && inj.async && deferred != nullptr) {
    *deferred = inj.error;
    return cudaSuccess;
  }
  return inj.error;
}

cudaError_t admit_stream(runtime_state& s, cudaStream_t h, control::call_class c, stream*& st,
                         cudaError_t* deferred) {
  cudaError_t err = cudaSuccess;
  st = resolve(s, h, err);
  if (st == nullptr) return err;
  return admit(s, st->device, c, deferred);
}

void report(runtime_state& s, const std::string& text) {
  ++s.counts.memcheck_errors;
  s.reports.push_back(text);
  std::fprintf(stderr, "emulated memcheck: %s\n", text.c_str());
}

}  // namespace gts::emulated::impl
