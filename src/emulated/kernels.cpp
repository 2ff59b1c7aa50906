// The emulated CUDA runtime: kernel launches.
#include "emulated/runtime_internal.hpp"

namespace gts::emulated {

using namespace impl;  // NOLINT(google-build-using-namespace): the runtime's own internals

cudaError_t detail::launch(const cudaLaunchConfig_t* config, const void* kernel,
                           std::function<void()> body) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (config == nullptr || kernel == nullptr || !body) return ret(cudaErrorInvalidValue);
  const dim3 g = config->gridDim, b = config->blockDim;
  const uint64_t threads = uint64_t(b.x) * b.y * b.z;
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535 ||
      b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024) {
    return ret(cudaErrorInvalidConfiguration);
  }
  // Kernels here declare their shared memory statically; dynamic shared memory is not simulated.
  if (config->dynamicSmemBytes != 0) return ret(cudaErrorNotSupported);
  const int d = tls_device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, config->stream, err);
  if (st == nullptr) return ret(err);
  // CUDA: "A kernel launch will fail if it is issued to a stream that is not associated to the
  // current device."
  if (st->device != d) return ret(cudaErrorInvalidResourceHandle);
  cudaError_t async_error = cudaSuccess;
  if (const cudaError_t e = admit(s, d, control::call_class::launch, &async_error)) return ret(e);
  const uint64_t n = ++s.launches;
  s.launch_log.push_back(control::launch_record{g, b, d});
  if (s.launch_log.size() > 4096) s.launch_log.pop_front();
  detail::schedule order{s.seed ^ (n * 0x9E3779B97F4A7C15ull), s.shuffle};
  op_ptr o = enqueue(s, *st, "kernel", [g, b, body = std::move(body), order, d, n, async_error]() {
    if (async_error != cudaSuccess) return async_error;
    const std::string thrown = detail::run_grid(g, b, body, order);
    runtime_state& rs = state();
    std::lock_guard<std::mutex> guard(rs.mu);
    ++rs.counts.kernels;
    if (!thrown.empty()) {
      report(rs, "kernel launch #" + std::to_string(n) + " failed: " + thrown);
      return cudaErrorLaunchFailure;
    }
    return check_redzones(rs, d, n) ? cudaErrorIllegalAddress : cudaSuccess;
  });
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

}  // namespace gts::emulated
