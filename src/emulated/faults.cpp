// The emulated CUDA runtime: faults in guard pages and freed memory, error names.
#include "emulated/runtime_internal.hpp"

namespace gts::emulated::impl {

void write_str(const char* t) {
  ssize_t r = write(2, t, std::strlen(t));
  (void)r;
}

void fault_handler(int sig, siginfo_t* info, void* context) {
  runtime_state* s = g_state;
  if (s != nullptr && s->mu.try_lock()) {
    if (allocation* a = find(*s, info->si_addr)) {
      char msg[512];
      const auto* p = static_cast<const std::byte*>(info->si_addr);
      const char* where = p < a->data_lo    ? "in the guard page before"
                          : p >= a->data_hi ? "in the guard page after"
                                            : "inside";
      std::snprintf(msg, sizeof msg,
                    "emulated memcheck: invalid access at %p %s a %s%zu-byte %s allocation at %p "
                    "on device %d%s%s%s\n",
                    info->si_addr, where, a->live ? "" : "freed ", a->bytes, kind_name(a->kind),
                    static_cast<void*>(a->user), a->device, a->live ? "" : " (freed by ",
                    a->live ? "" : a->freed_by, a->live ? "" : ")");
      write_str(msg);
      if (detail::in_kernel()) {
        std::snprintf(msg, sizeof msg,
                      "emulated memcheck: by a kernel thread, blockIdx (%u,%u,%u) threadIdx "
                      "(%u,%u,%u)\n",
                      blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
        write_str(msg);
      }
    }
    s->mu.unlock();
  }
  // Chained: a handler the program had gets the signal as if this one were not there; without
  // one, the previous disposition is restored and the faulting access, executed again, takes
  // the default action (the process dies, as on a GPU).
  const struct sigaction& previous = sig == SIGBUS ? previous_bus : previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
      previous.sa_handler != nullptr) {
    previous.sa_handler(sig);
    return;
  }
  sigaction(sig, &previous, nullptr);
}

void uninstall_fault_handler(runtime_state& s) {
  if (!s.fault_handler_installed) return;
  sigaction(SIGSEGV, &previous_segv, nullptr);
  sigaction(SIGBUS, &previous_bus, nullptr);
  s.fault_handler_installed = false;
}

const char* error_name(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError:
      return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidPitchValue:
      return "cudaErrorInvalidPitchValue";
    case cudaErrorInvalidDevicePointer:
      return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection:
      return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorStubLibrary:
      return "cudaErrorStubLibrary";
    case cudaErrorInsufficientDriver:
      return "cudaErrorInsufficientDriver";
    case cudaErrorDevicesUnavailable:
      return "cudaErrorDevicesUnavailable";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources:
      return "cudaErrorLaunchOutOfResources";
    case cudaErrorAssert:
      return "cudaErrorAssert";
    case cudaErrorHardwareStackError:
      return "cudaErrorHardwareStackError";
    case cudaErrorIllegalInstruction:
      return "cudaErrorIllegalInstruction";
    case cudaErrorMisalignedAddress:
      return "cudaErrorMisalignedAddress";
    case cudaErrorInvalidAddressSpace:
      return "cudaErrorInvalidAddressSpace";
    case cudaErrorInvalidPc:
      return "cudaErrorInvalidPc";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported:
      return "cudaErrorNotSupported";
    case cudaErrorSystemDriverMismatch:
      return "cudaErrorSystemDriverMismatch";
    case cudaErrorCompatNotSupportedOnDevice:
      return "cudaErrorCompatNotSupportedOnDevice";
    case cudaErrorUnknown:
      return "cudaErrorUnknown";
  }
  return "cudaErrorUnknown";
}

const char* error_string(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidPitchValue:
      return "invalid pitch argument";
    case cudaErrorInvalidDevicePointer:
      return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorStubLibrary:
      return "CUDA driver is a stub library";
    case cudaErrorInsufficientDriver:
      return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorDevicesUnavailable:
      return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case cudaErrorAssert:
      return "device-side assert triggered";
    case cudaErrorHardwareStackError:
      return "hardware stack error";
    case cudaErrorIllegalInstruction:
      return "an illegal instruction was encountered";
    case cudaErrorMisalignedAddress:
      return "misaligned address";
    case cudaErrorInvalidAddressSpace:
      return "operation not supported on global/shared address space";
    case cudaErrorInvalidPc:
      return "invalid program counter";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorNotSupported:
      return "operation not supported";
    case cudaErrorSystemDriverMismatch:
      return "system has unsupported display driver / cuda driver combination";
    case cudaErrorCompatNotSupportedOnDevice:
      return "forward compatibility was attempted on non supported HW";
    case cudaErrorUnknown:
      return "unknown error";
  }
  return "unknown error";
}

}  // namespace gts::emulated::impl
