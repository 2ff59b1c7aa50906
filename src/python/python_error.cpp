#include "python/python_error.hpp"

#include "capi/component_boundary.hpp"
#include "python/interpreter.hpp"

namespace gts::python {
namespace {

// str(obj) as UTF-8, "" when it fails (the failure cleared: this runs while reporting an error).
std::string text_of(PyObject* obj) {
  if (obj == nullptr) return "";
  ref s(PyObject_Str(obj));
  const char* utf8 = s ? PyUnicode_AsUTF8(s.get()) : nullptr;
  if (utf8 == nullptr) {
    PyErr_Clear();
    return "";
  }
  return utf8;
}

ref attr(PyObject* obj, const char* name) {
  if (obj == nullptr) return ref();
  ref r(PyObject_GetAttrString(obj, name));
  if (!r) PyErr_Clear();
  return r;
}

// "module.Qualname" of the exception's type ("ValueError" for builtins).
std::string type_name(PyObject* exc) {
  auto* type = reinterpret_cast<PyObject*>(Py_TYPE(exc));
  std::string name = text_of(attr(type, "__qualname__").get());
  const std::string module = text_of(attr(type, "__module__").get());
  if (!module.empty() && module != "builtins") name = module + "." + name;
  return name;
}

// " (at file:line in function)" of the innermost traceback frame, "" without a traceback.
std::string innermost_frame(PyObject* exc) {
  ref tb(PyException_GetTraceback(exc));
  if (!tb || tb.get() == Py_None) return "";
  for (;;) {
    ref next = attr(tb.get(), "tb_next");
    if (!next || next.get() == Py_None) break;
    tb = std::move(next);
  }
  const ref frame = attr(tb.get(), "tb_frame");
  const ref code = attr(frame.get(), "f_code");
  const std::string file = text_of(attr(code.get(), "co_filename").get());
  const std::string line = text_of(attr(tb.get(), "tb_lineno").get());
  const std::string function = text_of(attr(code.get(), "co_name").get());
  if (file.empty()) return "";
  return " (at " + file + ":" + line + " in " + function + ")";
}

}  // namespace

void throw_python_error(const std::string& context) {
#if PY_VERSION_HEX >= 0x030C0000
  ref exc(PyErr_GetRaisedException());
#else
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (value != nullptr && traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  ref exc(value);
#endif
  if (!exc) {
    throw component::status_error(GTSTORAGE_ERROR_PYTHON,
                                  context + ": failed without a Python exception");
  }
  // gtstorage.bridge.ArgumentError and gtstorage.GTStorageError say which status they are.
  int status = GTSTORAGE_ERROR_PYTHON;
  if (const ref code = attr(exc.get(), "_gtstorage_status"); code && PyLong_Check(code.get())) {
    const long value = PyLong_AsLong(code.get());
    if (value < 0 && value > -1000) status = static_cast<int>(value);
    PyErr_Clear();
  }
  std::string message = context + ": " + type_name(exc.get());
  const std::string text = text_of(exc.get());
  if (!text.empty()) message += ": " + text;
  message += innermost_frame(exc.get());
  throw component::status_error(status, message);
}

}  // namespace gts::python
