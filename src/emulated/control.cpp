// The emulated CUDA runtime: control (control.hpp).
#include "emulated/runtime_internal.hpp"

namespace gts::emulated {

using namespace impl;  // NOLINT(google-build-using-namespace): the runtime's own internals

namespace control {

machine current_machine() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.m;
}

void set_machine(const machine& m) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.m = m;
  s.m.device_count = std::clamp(m.device_count, 0, max_devices);
  s.m.multiprocessors = std::max(1, m.multiprocessors);
  s.env_error.clear();
}

void fail_nth(call_class c, int nth, cudaError_t error, bool async) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.injections[static_cast<int>(c)] = injection{std::max(nth, 1), error, async};
}

void set_sticky_error(int device, cudaError_t error) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (device >= 0 && device < max_devices) {
    s.devices[device].sticky = error;
    ++s.devices[device].failures;
  }
}

void clear_failures() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.injections = {};
  for (device_state& d : s.devices) d.sticky = cudaSuccess;
}

bool injection_pending(call_class c) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.injections[static_cast<int>(c)].remaining > 0;
}

void set_execution(bool eager) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.eager = eager;
}

void set_schedule(uint64_t seed, bool shuffle) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.seed = seed;
  s.shuffle = shuffle;
}

counters get_counters() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.counts;
}

std::vector<launch_record> launches() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return {s.launch_log.begin(), s.launch_log.end()};
}

void reset_counters() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.counts = counters{};
  s.launch_log.clear();
}

std::vector<std::string> take_memcheck_reports() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  std::vector<std::string> r;
  r.swap(s.reports);
  return r;
}

int64_t pending_operations() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  // Count the queued ops reachable from every stream's last op and every event.
  std::unordered_set<const op*> seen;
  std::vector<const op*> todo;
  auto add = [&](const op_ptr& o) {
    if (o && o->state != op_state::done) todo.push_back(o.get());
  };
  for (const device_state& d : s.devices) add(d.legacy->last);
  for (auto& [h, p] : s.streams) add(p->last);
  for (auto& p : s.retired) add(p->last);
  for (auto& [h, e] : s.events) add(e->marker);
  while (!todo.empty()) {
    const op* o = todo.back();
    todo.pop_back();
    if (!seen.insert(o).second) continue;
    for (const op_ptr& d : o->deps) add(d);
  }
  return static_cast<int64_t>(seen.size());
}

bool stream_is_live(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.streams.find(stream) != s.streams.end();
}

live_memory live_allocations() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  live_memory m;
  for (const allocation* a : s.live) {
    ++m.blocks;
    m.bytes += static_cast<int64_t>(a->bytes);
    m.free_refused += a->free_refused ? 1 : 0;
  }
  return m;
}

void reload_environment() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  load_environment(s);
}

void set_fault_reports(bool on) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.fault_reports = on;
  if (on) {
    install_fault_handler(s);
  } else {
    uninstall_fault_handler(s);
  }
}

bool fault_reports_installed() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.fault_handler_installed;
}

std::string environment_error() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.env_error;
}

}  // namespace control

}  // namespace gts::emulated
