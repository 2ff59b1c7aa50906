// The emulated CUDA runtime: streams and queued operations.
#include "emulated/runtime_internal.hpp"

namespace gts::emulated::impl {

stream* per_thread_stream(runtime_state& s, int device) {
  stream*& p = tls_streams.s[static_cast<std::size_t>(device)];
  if (p == nullptr || p->destroyed) {
    auto owned = std::make_unique<stream>();
    owned->device = device;
    owned->flags = cudaStreamDefault;  // blocking: ordered with the legacy stream
    p = owned.get();
    s.devices[device].blocking.push_back(p);
    // Owned by the retired list from the start: it is freed once its thread is gone and its
    // work has run.
    s.retired.push_back(std::move(owned));
  }
  return p;
}

stream* resolve(runtime_state& s, cudaStream_t h, cudaError_t& err) {
  err = cudaSuccess;
  if (h == nullptr || h == cudaStreamLegacy || h == cudaStreamPerThread) {
    if (tls_device >= s.m.device_count) {
      err = cudaErrorInvalidDevice;
      return nullptr;
    }
    return h == cudaStreamPerThread ? per_thread_stream(s, tls_device)
                                    : s.devices[tls_device].legacy.get();
  }
  auto it = s.streams.find(h);
  if (it == s.streams.end()) {
    ++s.counts.dead_handles;
    err = cudaErrorInvalidResourceHandle;
    return nullptr;
  }
  return it->second.get();
}

op_ptr enqueue(runtime_state& s, stream& st, const char* what, std::function<cudaError_t()> work,
               const op_ptr& extra) {
  auto o = std::make_shared<op>();
  o->device = st.device;
  o->failures_seen = s.devices[st.device].failures;
  o->what = what;
  o->work = std::move(work);
  auto depend = [&](const op_ptr& d) {
    if (d && d->state != op_state::done) o->deps.push_back(d);
  };
  depend(st.last);
  device_state& dev = s.devices[st.device];
  if (st.legacy) {
    for (stream* b : dev.blocking) depend(b->last);
  } else if (st.blocking()) {
    depend(dev.legacy->last);
  }
  depend(extra);
  st.last = o;
  return o;
}

void complete(std::unique_lock<std::mutex>& lk, runtime_state& s, const op_ptr& target) {
  if (!target) return;
  std::vector<op_ptr> todo{target};
  while (!todo.empty()) {
    op_ptr o = todo.back();
    if (o->state == op_state::done) {
      todo.pop_back();
      continue;
    }
    if (o->state == op_state::running) {
      s.cv.wait(lk);
      continue;
    }
    // Of the dependencies still pending, the last one first: an event or another stream's work
    // before the stream's own predecessor, so work that is ordered only by stream order and not
    // by the event it should have waited for runs in the wrong order and shows it.
    op_ptr dep;
    for (auto d = o->deps.rbegin(); d != o->deps.rend(); ++d) {
      if ((*d)->state != op_state::done) {
        dep = *d;
        break;
      }
    }
    if (dep) {
      todo.push_back(dep);
      continue;
    }
    o->state = op_state::running;
    std::function<cudaError_t()> work = std::move(o->work);
    // Work queued before the device failed never runs (bookkeeping does), also when a test
    // clears the failure (control::clear_failures) before anything waited for it: a GPU's
    // failed context does not come back with its queue.
    const device_state& od = s.devices[o->device];
    const bool dead =
        !o->bookkeeping && (od.sticky != cudaSuccess || od.failures != o->failures_seen);
    lk.unlock();
    cudaError_t e = cudaSuccess;
    if (!dead && work) {
      try {
        e = work();
      } catch (...) {  // out of memory in the simulator itself: the work failed
        e = cudaErrorLaunchFailure;
      }
    }
    lk.lock();
    if (e != cudaSuccess && s.devices[o->device].sticky == cudaSuccess) {
      s.devices[o->device].sticky = e;
      ++s.devices[o->device].failures;
    }
    o->state = op_state::done;
    o->done_at = std::chrono::steady_clock::now();
    o->deps.clear();
    ++s.counts.ops_executed;
    s.cv.notify_all();
    todo.pop_back();
  }
}

void run_if_eager(std::unique_lock<std::mutex>& lk, runtime_state& s, const op_ptr& o) {
  if (s.eager) complete(lk, s, o);
}

void prune_retired(runtime_state& s) {
  for (auto it = s.retired.begin(); it != s.retired.end();) {
    stream* p = it->get();
    if (!p->destroyed || !p->idle()) {
      ++it;
      continue;
    }
    auto& b = s.devices[p->device].blocking;
    b.erase(std::remove(b.begin(), b.end(), p), b.end());
    it = s.retired.erase(it);
  }
}

std::vector<op_ptr> last_ops_of(runtime_state& s, int device) {
  std::vector<op_ptr> v{s.devices[device].legacy->last};
  for (auto& [h, p] : s.streams) {
    if (p->device == device) v.push_back(p->last);
  }
  for (auto& p : s.retired) {
    if (p->device == device) v.push_back(p->last);
  }
  return v;
}

void complete_device(std::unique_lock<std::mutex>& lk, runtime_state& s, int device) {
  for (const op_ptr& last : last_ops_of(s, device)) complete(lk, s, last);
}

cudaError_t after_sync(runtime_state& s, int device) {
  trim_device_pools(s, device);
  prune_retired(s);
  return s.devices[device].sticky;
}

}  // namespace gts::emulated::impl
