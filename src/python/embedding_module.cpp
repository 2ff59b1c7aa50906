#include "python/embedding_module.hpp"

#include <cstring>

#include "common/errors.hpp"
#include "python/interpreter.hpp"

namespace gts::python {
namespace {

// describe(handle, side) -> (data, shape, strides, typestr, readonly, halo, dims, has_host,
// has_device, device_type), or the failed status (an int: the caller raises with the thread's
// message, which no other call has replaced). What gtstorage.bridge needs to check a storage
// against its declaration and to make its view, in one call instead of a dozen through ctypes.
PyObject* describe(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "describe(handle, side) takes 2 arguments");
    return nullptr;
  }
  const unsigned long long handle = PyLong_AsUnsignedLongLong(args[0]);
  const long side = PyLong_AsLong(args[1]);
  if (PyErr_Occurred() != nullptr) return nullptr;
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  int32_t has_host = 0;
  int32_t has_device = 0;
  int status = gtstorage_interface(handle, static_cast<int32_t>(side), &info);
  if (status == GTSTORAGE_OK) status = gtstorage_has_side(handle, GTSTORAGE_SIDE_HOST, &has_host);
  if (status == GTSTORAGE_OK) {
    status = gtstorage_has_side(handle, GTSTORAGE_SIDE_DEVICE, &has_device);
  }
  if (status != GTSTORAGE_OK) return PyLong_FromLong(status);
  const auto n = static_cast<Py_ssize_t>(info.ndim);
  ref shape(PyTuple_New(n)), strides(PyTuple_New(n)), halo(PyTuple_New(n)), dims(PyTuple_New(n));
  if (!shape || !strides || !halo || !dims) return nullptr;
  for (Py_ssize_t d = 0; d < n; ++d) {
    PyTuple_SET_ITEM(shape.get(), d, PyLong_FromLongLong(info.shape[d]));
    PyTuple_SET_ITEM(strides.get(), d, PyLong_FromLongLong(info.strides[d]));
    PyTuple_SET_ITEM(halo.get(), d,
                     Py_BuildValue("(LL)", static_cast<long long>(info.halo[d][0]),
                                   static_cast<long long>(info.halo[d][1])));
    PyTuple_SET_ITEM(dims.get(), d, PyUnicode_FromString(info.dims[d]));
  }
  if (PyErr_Occurred() != nullptr) return nullptr;  // an item could not be made
  return Py_BuildValue(
      "(KOOsOOOOOi)", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(info.data)),
      shape.get(), strides.get(), info.typestr, info.readonly != 0 ? Py_True : Py_False, halo.get(),
      dims.get(), has_host != 0 ? Py_True : Py_False, has_device != 0 ? Py_True : Py_False,
      static_cast<int>(info.device_type));
}

// host_key(handle) -> bytes, or None, or the failed status: for a storage with a host buffer and
// no device buffer, the bytes of everything its NumPy view depends on (address, shape, strides,
// halo, dims, type, read-only), so that gtstorage.bridge finds the view it made for an equal
// description without building one (a model that wraps its arrays anew every call). None for a
// storage without a host buffer or with a device buffer too (its view needs a sync first).
PyObject* host_key(PyObject* /*module*/, PyObject* arg) {
  const unsigned long long handle = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred() != nullptr) return nullptr;
  int32_t has_device = 0;
  int status = gtstorage_has_side(handle, GTSTORAGE_SIDE_DEVICE, &has_device);
  if (status != GTSTORAGE_OK) return PyLong_FromLong(status);
  if (has_device != 0) Py_RETURN_NONE;
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  status = gtstorage_interface(handle, GTSTORAGE_SIDE_HOST, &info);
  if (status == GTSTORAGE_ERROR_NO_SUCH_BUFFER) Py_RETURN_NONE;
  if (status != GTSTORAGE_OK) return PyLong_FromLong(status);
  struct head {
    void* data;
    uint32_t ndim;
    int32_t readonly;
    char typestr[GTSTORAGE_TYPESTR_SIZE];
  };
  struct per_dim {
    int64_t shape, stride, halo_lower, halo_upper;
    char label[GTSTORAGE_DIM_LABEL_SIZE];
  };
  char buffer[sizeof(head) + GTSTORAGE_MAX_NDIM * sizeof(per_dim)] = {};
  head h{info.data, info.ndim, info.readonly, {}};
  std::memcpy(h.typestr, info.typestr, sizeof h.typestr);
  std::memcpy(buffer, &h, sizeof h);
  for (uint32_t d = 0; d < info.ndim; ++d) {
    per_dim p{info.shape[d], info.strides[d], info.halo[d][0], info.halo[d][1], {}};
    std::memcpy(p.label, info.dims[d], sizeof p.label);
    std::memcpy(buffer + sizeof h + d * sizeof p, &p, sizeof p);
  }
  return PyBytes_FromStringAndSize(
      buffer, static_cast<Py_ssize_t>(sizeof(head) + info.ndim * sizeof(per_dim)));
}

PyMethodDef methods[] = {
    {"host_key", &host_key, METH_O,
     "host_key(handle) -> bytes describing a host-only storage's view, None, or the status"},
    {"describe", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&describe)),
     METH_FASTCALL,
     "describe(handle, side) -> (data, shape, strides, typestr, readonly, halo, dims, has_host, "
     "has_device, device_type), or the failed gtstorage status"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void install_embedding_module(const std::string& library_path) {
  ref module(PyModule_New("_gtstorage_embedding"));
  if (!module || PyModule_AddFunctions(module.get(), methods) != 0 ||
      PyModule_AddStringConstant(module.get(), "library_path", library_path.c_str()) != 0 ||
      PyModule_AddStringConstant(module.get(), "build_python", gtstorage_python_build_python()) !=
          0) {
    PyErr_Clear();
    fail(error_kind::python, "gtstorage_python_init: cannot create module _gtstorage_embedding");
  }
  PyObject* modules = PyImport_GetModuleDict();  // borrowed
  if (PyDict_SetItemString(modules, "_gtstorage_embedding", module.get()) != 0) {
    PyErr_Clear();
    fail(error_kind::python, "gtstorage_python_init: cannot register _gtstorage_embedding");
  }
}

}  // namespace gts::python
