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

namespace {

struct error_row {
  cudaError_t code;
  const char* name;
  const char* text;
};

const error_row error_rows[] = {
#define GTS_EMULATED_ERROR_ROW(name, number, text) {name, #name, text},
    GTS_EMULATED_CUDA_ERRORS(GTS_EMULATED_ERROR_ROW)
#undef GTS_EMULATED_ERROR_ROW
};

// The row of @p e; a value outside the list reads as cudaErrorUnknown, as CUDA's functions say.
const error_row& row_of(cudaError_t e) {
  const error_row* unknown = nullptr;
  for (const error_row& r : error_rows) {
    if (r.code == e) return r;
    if (r.code == cudaErrorUnknown) unknown = &r;
  }
  return *unknown;
}

}  // namespace

const char* error_name(cudaError_t e) {
  return row_of(e).name;
}

const char* error_string(cudaError_t e) {
  return row_of(e).text;
}

}  // namespace gts::emulated::impl
