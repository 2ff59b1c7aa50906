// The embedded (or attached) CPython interpreter of libgtstorage_python: starting it with the
// configuration of gtstorage_python_options, attaching to one the process already runs, the
// GIL around each use, and finalization. Python.h must come first in every file that uses it.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "common/errors.hpp"
#include "gtstorage/gtstorage_python.h"

namespace gts::python {

/// What the library knows about the interpreter (the values of gtstorage_python_state()).
enum class interpreter_state : int32_t { none = 0, started = 1, attached = 2, finalized = 3 };

/// The process's interpreter as this library uses it. One instance (interpreter::get()).
class interpreter {
 public:
  static interpreter& get();

  /// gtstorage_python_init(): starts or attaches (under the lifecycle lock, exclusively).
  void init(const gtstorage_python_options& options);
  /// gtstorage_python_finalize(); @p before_finalize runs with the GIL held first (it drops the
  /// function handles' Python objects).
  template <class F>
  void finalize(F&& before_finalize);

  [[nodiscard]] interpreter_state state() const noexcept { return state_; }

  /// Throws error_kind::python naming @p function unless the interpreter is usable now.
  void require_running(const char* function) const;

  /// Held shared by every call that uses Python, exclusively by init and finalize, so that the
  /// interpreter cannot go away under a call on another thread.
  std::shared_mutex& lifecycle() noexcept { return lifecycle_; }

 private:
  void start(const gtstorage_python_options& options);
  void attach();
  void add_sys_path(const char* entries);

  std::shared_mutex lifecycle_;
  interpreter_state state_ = interpreter_state::none;
  PyThreadState* saved_ = nullptr;  // the starting thread's state while it does not run Python
  std::thread::id starter_;
  std::string start_failure_;  // why the last start failed ("" if none)
};

/// The GIL for the lifetime of the object (PyGILState: works on any thread, also re-entrantly
/// from a thread that already holds it).
class gil {
 public:
  gil() noexcept : state_(PyGILState_Ensure()) {}
  ~gil() { PyGILState_Release(state_); }
  gil(const gil&) = delete;
  gil& operator=(const gil&) = delete;

 private:
  PyGILState_STATE state_;
};

/// A strong reference, released (with the GIL held by the caller) when the object goes.
class ref {
 public:
  ref() = default;
  explicit ref(PyObject* owned) noexcept : p_(owned) {}
  ref(const ref&) = delete;
  ref& operator=(const ref&) = delete;
  ref(ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  ref& operator=(ref&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~ref() { Py_XDECREF(p_); }
  [[nodiscard]] PyObject* get() const noexcept { return p_; }
  PyObject* release() noexcept {
    PyObject* p = p_;
    p_ = nullptr;
    return p;
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

template <class F>
void interpreter::finalize(F&& before_finalize) {
  const std::unique_lock<std::shared_mutex> lock(lifecycle_);
  if (state_ == interpreter_state::attached) {
    {
      const gil g;
      before_finalize();
    }
    state_ = interpreter_state::none;  // the host's interpreter goes on; a later init re-attaches
    return;
  }
  if (state_ != interpreter_state::started) return;
  if (std::this_thread::get_id() != starter_) {
    fail_arg("gtstorage_python_finalize",
             "must be called from the thread that called gtstorage_python_init (Python is "
             "finalized by the thread that started it)");
  }
  PyEval_RestoreThread(saved_);
  saved_ = nullptr;
  before_finalize();
  Py_FinalizeEx();  // a failure to flush stdout is Python's to report; the state is final
  state_ = interpreter_state::finalized;
}

}  // namespace gts::python
