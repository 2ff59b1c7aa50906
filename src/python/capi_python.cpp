// Every exported function of libgtstorage_python (gtstorage_python.h): argument checks, the
// table of function handles, and the call path (storages referenced for the call, the GIL, the
// Python adapter of gtstorage.bridge, exceptions turned into statuses).
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "capi/component_boundary.hpp"
#include "capi/struct_history_python.hpp"  // the struct-size contract of this header
#include "common/handle_table.hpp"
#include "python/interpreter.hpp"
#include "python/python_error.hpp"

namespace {

using gts::component::guarded;
using gts::component::status_error;
using gts::python::gil;
using gts::python::interpreter;
using gts::python::ref;

/// A resolved function: the adapter gtstorage.bridge made for it (called with the tuple of
/// handles and the keyword arguments) and the target it was resolved from, for messages.
struct function_entry {
  std::string target;
  PyObject* adapter = nullptr;  // strong; dropped with the GIL held (see drop())
};

// Entries are deleted by the table when their last reference goes, which may be outside the
// GIL; the adapter is therefore dropped explicitly first, under the GIL.
gts::basic_handle_table<function_entry>& functions() {
  static auto* const table = new gts::basic_handle_table<function_entry>(0xC0000001u);
  return *table;
}

// Every live function handle, to drop their adapters at finalization.
std::mutex g_issued_mutex;
std::vector<uint64_t> g_issued;

function_entry& lookup(uint64_t h, const char* function) {
  try {
    return functions().get(h);
  } catch (const gts::error& e) {
    std::string msg = e.what();
    const std::string prefix = "handle:";
    if (msg.compare(0, prefix.size(), prefix) == 0) msg = msg.substr(prefix.size());
    throw gts::error(e.kind(), std::string(function) + ": fn:" + msg);
  }
}

void forget(uint64_t h) {
  function_entry& entry = functions().get(h);
  Py_CLEAR(entry.adapter);
  functions().release(h);
  const std::lock_guard<std::mutex> lock(g_issued_mutex);
  for (auto& issued : g_issued) {
    if (issued == h) {
      issued = g_issued.back();
      g_issued.pop_back();
      break;
    }
  }
}

// "package.module:attr.attr" → module and attribute path, or an invalid_argument error.
void split_target(const std::string& target, std::string& module, std::string& attribute) {
  const auto colon = target.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == target.size() ||
      target.find(':', colon + 1) != std::string::npos) {
    gts::fail_arg("target", "'" + target +
                                "' is not of the form \"package.module:function\" (one colon "
                                "between the module and the function)");
  }
  for (const char c : target) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '/') {
      gts::fail_arg("target", "'" + target + "' contains a blank or a '/'");
    }
  }
  module = target.substr(0, colon);
  attribute = target.substr(colon + 1);
}

// Imports the module, follows the attributes and asks gtstorage.bridge for the adapter.
ref resolve_adapter(const std::string& target) {
  std::string module_name, attribute;
  split_target(target, module_name, attribute);
  const std::string context = "gtstorage_python_resolve(" + target + ")";
  ref obj(PyImport_ImportModule(module_name.c_str()));
  if (!obj) gts::python::throw_python_error(context);
  size_t start = 0;
  while (start <= attribute.size()) {
    const auto dot = attribute.find('.', start);
    const std::string part =
        attribute.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    ref next(PyObject_GetAttrString(obj.get(), part.c_str()));
    if (!next) gts::python::throw_python_error(context);
    obj = std::move(next);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  ref bridge(PyImport_ImportModule("gtstorage.bridge"));
  if (!bridge) gts::python::throw_python_error(context + ": importing gtstorage.bridge");
  ref adapter(PyObject_CallMethod(bridge.get(), "adapter_for", "Os", obj.get(), target.c_str()));
  if (!adapter) gts::python::throw_python_error(context);
  return adapter;
}

// The storages of one call, referenced until it returns (a model thread that releases a handle
// concurrently cannot free the memory under Python).
class call_references {
 public:
  call_references(const gtstorage_handle* storages, uint32_t n, const std::string& context) {
    handles_.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      const int rc = gtstorage_retain(storages[i]);
      if (rc != GTSTORAGE_OK) {
        gts::component::fail_gtstorage(rc, context + ": storages[" + std::to_string(i) + "]");
      }
      handles_.push_back(storages[i]);
    }
  }
  ~call_references() {
    for (const auto h : handles_) gtstorage_release(h);
  }
  call_references(const call_references&) = delete;
  call_references& operator=(const call_references&) = delete;

 private:
  std::vector<gtstorage_handle> handles_;
};

void check_args(const gtstorage_python_arg* args, uint32_t nargs, const std::string& context) {
  for (uint32_t i = 0; i < nargs; ++i) {
    const auto& a = args[i];
    const std::string where = context + ": args[" + std::to_string(i) + "]";
    if (a.name == nullptr || *a.name == '\0') gts::fail_arg(where + ".name", "must be a keyword");
    if (a.reserved != 0) gts::fail_arg(where + ".reserved", "must be 0");
    if (a.kind < GTSTORAGE_PYTHON_INT64 || a.kind > GTSTORAGE_PYTHON_STRING) {
      gts::fail_arg(where + ".kind", std::to_string(a.kind) +
                                         " is not a gtstorage_python_arg_kind (1 int64, 2 "
                                         "double, 3 bool, 4 string) ('" +
                                         a.name + "')");
    }
    if (a.kind == GTSTORAGE_PYTHON_STRING && a.string_value == nullptr) {
      gts::fail_arg(where + ".string_value", std::string("must not be NULL ('") + a.name + "')");
    }
  }
}

ref scalar(const gtstorage_python_arg& a) {
  switch (a.kind) {
    case GTSTORAGE_PYTHON_INT64:
      return ref(PyLong_FromLongLong(a.int_value));
    case GTSTORAGE_PYTHON_DOUBLE:
      return ref(PyFloat_FromDouble(a.real_value));
    case GTSTORAGE_PYTHON_BOOL:
      return ref(PyBool_FromLong(a.int_value != 0 ? 1 : 0));
    default:
      return ref(PyUnicode_FromString(a.string_value));
  }
}

}  // namespace

extern "C" {

int gtstorage_python_init(const gtstorage_python_options* options) {
  return guarded([&] {
    gtstorage_python_options local = GTSTORAGE_PYTHON_OPTIONS_INIT;
    if (options != nullptr) {
      gts::capi::check_struct_size<gtstorage_python_options>("options", options->struct_size);
      local = *options;
      if (local.reserved != 0) gts::fail_arg("options.reserved", "must be 0");
    }
    interpreter::get().init(local);
  });
}

int gtstorage_python_finalize(void) {
  return guarded([&] {
    interpreter::get().finalize([] {
      std::vector<uint64_t> issued;
      {
        const std::lock_guard<std::mutex> lock(g_issued_mutex);
        issued = g_issued;
      }
      for (const auto h : issued) forget(h);
    });
  });
}

int gtstorage_python_state(int32_t* out_state) {
  return guarded([&] {
    if (out_state == nullptr) gts::fail_arg("out_state", "must not be NULL");
    const auto s = interpreter::get().state();
    *out_state = s == gts::python::interpreter_state::finalized ? 0 : static_cast<int32_t>(s);
  });
}

const char* gtstorage_python_build_python(void) {
  return GTSTORAGE_PYTHON_BUILD_VERSION " (" GTSTORAGE_PYTHON_BUILD_PREFIX ")";
}

int gtstorage_python_resolve(const char* target, gtstorage_python_function* out) {
  return guarded([&] {
    if (out == nullptr) gts::fail_arg("out", "must not be NULL");
    *out = 0;
    if (target == nullptr) gts::fail_arg("target", "must not be NULL");
    const std::shared_lock<std::shared_mutex> lock(interpreter::get().lifecycle());
    interpreter::get().require_running("gtstorage_python_resolve");
    const gil g;
    ref adapter = resolve_adapter(target);
    auto entry = std::make_unique<function_entry>();
    entry->target = target;
    entry->adapter = adapter.release();
    function_entry* raw = entry.get();
    uint64_t h = 0;
    try {
      h = functions().insert(std::move(entry));
      const std::lock_guard<std::mutex> issued_lock(g_issued_mutex);
      g_issued.push_back(h);
    } catch (...) {
      if (h == 0) {
        Py_CLEAR(raw->adapter);  // entry was not taken: it is deleted with the unique_ptr
      } else {
        forget(h);
      }
      throw;
    }
    *out = h;
  });
}

int gtstorage_python_release_function(gtstorage_python_function fn) {
  return guarded([&] {
    const std::shared_lock<std::shared_mutex> lock(interpreter::get().lifecycle());
    interpreter::get().require_running("gtstorage_python_release_function");
    lookup(fn, "gtstorage_python_release_function");
    const gil g;
    forget(fn);
  });
}

int gtstorage_python_call(gtstorage_python_function fn, const gtstorage_handle* storages,
                          uint32_t nstorages, const gtstorage_python_arg* args, uint32_t nargs,
                          uint32_t flags) {
  return guarded([&] {
    const std::shared_lock<std::shared_mutex> lock(interpreter::get().lifecycle());
    interpreter::get().require_running("gtstorage_python_call");
    function_entry& entry = lookup(fn, "gtstorage_python_call");
    functions().retain(fn);  // the entry outlives a concurrent gtstorage_python_release_function
    const std::unique_ptr<void, void (*)(void*)> unretain(reinterpret_cast<void*>(fn), [](void* h) {
      functions().release(reinterpret_cast<uint64_t>(h));
    });
    const std::string context = "gtstorage_python_call(" + entry.target + ")";
    if (flags != 0) gts::fail_arg(context + ": flags", "must be 0");
    if (nstorages > 0 && storages == nullptr) {
      gts::fail_arg(context + ": storages", "is NULL with nstorages " + std::to_string(nstorages));
    }
    if (nargs > 0 && args == nullptr) {
      gts::fail_arg(context + ": args", "is NULL with nargs " + std::to_string(nargs));
    }
    check_args(args, nargs, context);
    const call_references referenced(storages, nstorages, context);

    const gil g;
    if (entry.adapter == nullptr) {
      gts::fail(gts::error_kind::invalid_handle, context + ": fn was released");
    }
    const ref adapter(Py_NewRef(entry.adapter));  // kept if another thread forgets fn meanwhile
    ref handles(PyTuple_New(nstorages));
    if (!handles) gts::python::throw_python_error(context);
    for (uint32_t i = 0; i < nstorages; ++i) {
      PyObject* h = PyLong_FromUnsignedLongLong(storages[i]);
      if (h == nullptr) gts::python::throw_python_error(context);
      PyTuple_SET_ITEM(handles.get(), i, h);  // steals h
    }
    ref kwargs;
    if (nargs > 0) {
      kwargs = ref(PyDict_New());
      if (!kwargs) gts::python::throw_python_error(context);
      for (uint32_t i = 0; i < nargs; ++i) {
        const ref value = scalar(args[i]);
        if (!value || PyDict_SetItemString(kwargs.get(), args[i].name, value.get()) != 0) {
          gts::python::throw_python_error(context + ": args[" + std::to_string(i) + "] ('" +
                                          args[i].name + "')");
        }
      }
    }
    ref call_args(PyTuple_Pack(1, handles.get()));
    if (!call_args) gts::python::throw_python_error(context);
    const ref result(PyObject_Call(adapter.get(), call_args.get(), kwargs.get()));
    if (!result) gts::python::throw_python_error(context);
  });
}

}  // extern "C"
