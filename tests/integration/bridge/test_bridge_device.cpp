// libgtstorage_python on the emulated device (issue 24, point 7): the model's device memory and
// the model's stream (what OpenACC gives through acc_get_cuda_stream) reach Python, and Python
// reads the data the model's "kernel" wrote without any device-wide synchronization, in stream
// order.
//
// The simulated CUDA runtime runs queued work only when something waits for it, so a read that
// is not ordered after the model's work sees the old values. The program links the library
// statically (the simulator's control API is internal) together with libgtstorage_python's
// sources, and exports the gtstorage_* symbols, which the embedded Python's gtstorage package
// finds in the process (_gtstorage_embedding.library_path ""). Needs GTSTORAGE_BRIDGE_VENV.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../cpp/support.hpp"
#include "device/device_backend.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"
#include "gtstorage/gtstorage_experimental.h"
#include "gtstorage/gtstorage_python.h"

namespace sim = gts::emulated;
namespace ctl = gts::emulated::control;

namespace {

constexpr int64_t kN = 4096;

// A storage over the caller's memory of @p ndim extents @p shape: @p host on the host side or
// @p device on the device side (nullptr: no such side).
gtstorage_handle wrapped(uint32_t ndim, const int64_t* shape, void* host, void* device) {
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = ndim;
  w.shape = shape;
  w.data = host;
  w.device_data = device;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  return h;
}

void model_kernel_then_python(gtstorage_python_function fn, double value) {
  // The model's device array and stream.
  sim::cudaStream_t stream = nullptr;
  CHECK(sim::cudaStreamCreate(&stream) == sim::cudaSuccess);
  void* device = nullptr;
  CHECK(sim::cudaMalloc(&device, kN * sizeof(double)) == sim::cudaSuccess);
  std::vector<double> zeros(kN, 0.0), values(kN, value);
  CHECK(sim::cudaMemcpy(device, zeros.data(), kN * sizeof(double), sim::cudaMemcpyHostToDevice) ==
        sim::cudaSuccess);

  // Wrapped as the device side of a storage, with the model's stream.
  const int64_t shape[2] = {64, 64};
  const gtstorage_handle h = wrapped(2, shape, nullptr, device);
  GTS_OK(gtstorage_set_stream(h, reinterpret_cast<uint64_t>(stream)));
  double report[3] = {0, 0, 0};
  const int64_t rshape[1] = {3};
  const gtstorage_handle out = wrapped(1, rshape, report, nullptr);

  // The model's "kernel": work queued on its stream that writes the array (still pending: the
  // simulator runs it when something waits for the stream).
  CHECK(sim::cudaMemcpyAsync(device, values.data(), kN * sizeof(double),
                             sim::cudaMemcpyHostToDevice, stream) == sim::cudaSuccess);
  CHECK(ctl::pending_operations() > 0);

  const int64_t syncs_before = ctl::get_counters().device_synchronizes;
  const gtstorage_handle args[2] = {h, out};
  GTS_OK(gtstorage_python_call(fn, args, 2, nullptr, 0, 0));
  CHECK_MSG(report[0] == value * kN, "Python read sum %g, want %g (the model's kernel's values)",
            report[0], value * kN);
  CHECK_MSG(report[1] == static_cast<double>(reinterpret_cast<uint64_t>(stream)),
            "current_stream() %g is not the model's stream", report[1]);
  CHECK(report[2] == kN);
  CHECK_MSG(ctl::get_counters().device_synchronizes == syncs_before,
            "%lld device-wide synchronizations during the call",
            static_cast<long long>(ctl::get_counters().device_synchronizes - syncs_before));

  GTS_OK(gtstorage_release(out));
  GTS_OK(gtstorage_release(h));
  CHECK(sim::cudaStreamSynchronize(stream) == sim::cudaSuccess);
  CHECK(sim::cudaFree(device) == sim::cudaSuccess);
  CHECK(sim::cudaStreamDestroy(stream) == sim::cudaSuccess);
}

}  // namespace

int main(int argc, char** argv) {
  const char* venv = std::getenv("GTSTORAGE_BRIDGE_VENV");
  if (venv == nullptr || *venv == '\0' || argc < 2) {
    std::printf("SKIPPED: GTSTORAGE_BRIDGE_VENV not set\n");
    return 77;
  }
  ctl::set_machine(ctl::machine{});
  gts::device::set_emulated_device_count(1);
  GTS_OK(gtstorage_set_device_backend("emulated"));
  gtstorage_python_options o = GTSTORAGE_PYTHON_OPTIONS_INIT;
  o.virtual_env = venv;
  o.sys_path = argv[1];
  GTS_OK(gtstorage_python_init(&o));
  gtstorage_python_function fn = 0;
  GTS_OK(gtstorage_python_resolve("bridge_checks:device_read", &fn));
  model_kernel_then_python(fn, 3.0);
  model_kernel_then_python(fn, 5.0);  // again: the cached views, a new storage and stream
  GTS_OK(gtstorage_python_release_function(fn));
  GTS_OK(gtstorage_python_finalize());
  return test::report("test_bridge_device");
}
