#include "python/interpreter.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "python/embedding_module.hpp"

namespace gts::python {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

const char* env_or_null(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once, at init
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// The "version = 3.12.1" line of a venv's pyvenv.cfg, "" if absent.
std::string venv_version(const std::string& venv) {
  std::ifstream cfg(venv + "/pyvenv.cfg");
  std::string line;
  while (std::getline(cfg, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key == "version" || key == "version_info") {
      std::string value = line.substr(eq + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return "";
}

// A PyStatus failure as an error naming what was being configured.
void check_status(const PyStatus& status, const std::string& what) {
  if (PyStatus_Exception(status) != 0) {
    std::string message = "gtstorage_python_init: Python could not start";
    if (!what.empty()) message += " (" + what + ")";
    message += ": ";
    message += status.err_msg != nullptr ? status.err_msg : "no reason given";
    if (status.func != nullptr) message += std::string(" [") + status.func + "]";
    if (PyStatus_IsExit(status) != 0)
      message += " (exit code " + std::to_string(status.exitcode) + ")";
    fail(error_kind::python, message);
  }
}

void set_string(PyConfig& config, wchar_t** field, const std::string& value, const char* name) {
  check_status(PyConfig_SetBytesString(&config, field, value.c_str()), name);
}

// The file that holds libgtstorage's code in this process (what the Python package must load, so
// that Python and the model share one handle table); "" when it is the program itself (a static
// link, which must export the gtstorage_* symbols: the package then finds them in the process).
std::string libgtstorage_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gtstorage_version), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  char exe[4096] = "";
  char lib[4096] = "";
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0 && realpath(info.dli_fname, lib) != nullptr &&
      std::string(exe, static_cast<std::size_t>(n)) == lib) {
    return "";
  }
  return info.dli_fname;
}

// A host process that runs another Python (say Debian's python3.11, which exports the C API from
// its executable, loading this library through ctypes): the Py_* symbols this library uses then
// resolve to that interpreter's (they come first in the global scope), whose ABI is not the one
// this library was compiled for. Such a process is refused before any other Python call.
void refuse_foreign_python() {
  if (Py_IsInitialized() == 0) return;
  const char* running = Py_GetVersion();
  const std::string ours =
      std::to_string(PY_MAJOR_VERSION) + "." + std::to_string(PY_MINOR_VERSION) + ".";
  if (running != nullptr && std::strncmp(running, ours.c_str(), ours.size()) == 0) return;
  Dl_info info{};
  const char* where =
      dladdr(reinterpret_cast<void*>(&Py_IsInitialized), &info) != 0 && info.dli_fname != nullptr
          ? info.dli_fname
          : "another object";
  std::string version = running != nullptr ? running : "?";
  version = version.substr(0, version.find(' '));
  fail(error_kind::python,
       "gtstorage_python_init: the process already runs Python " + version + " (" + where +
           "), not the Python this libgtstorage_python embeds (" + gtstorage_python_build_python() +
           "): build libgtstorage_python with that Python (GTSTORAGE_PYTHON_EXECUTABLE)");
}

}  // namespace

interpreter& interpreter::get() {
  static auto* const instance = new interpreter();  // never destroyed: usable until exit
  return *instance;
}

void interpreter::require_running(const char* function) const {
  switch (state_) {
    case interpreter_state::started:
    case interpreter_state::attached:
      return;
    case interpreter_state::none:
      fail(error_kind::python, std::string(function) +
                                   ": the Python interpreter is not initialized (call "
                                   "gtstorage_python_init first)");
    case interpreter_state::finalized:
      fail(error_kind::python, std::string(function) +
                                   ": the Python interpreter was finalized "
                                   "(gtstorage_python_finalize)");
  }
}

void interpreter::init(const gtstorage_python_options& options) {
  const std::unique_lock<std::shared_mutex> lock(lifecycle_);
  if (state_ == interpreter_state::started || state_ == interpreter_state::attached) {
    if (options.sys_path != nullptr) {
      const gil g;
      add_sys_path(options.sys_path);
    }
    return;
  }
  if (state_ == interpreter_state::finalized) {
    fail(error_kind::unsupported,
         "gtstorage_python_init: the interpreter was finalized and cannot be started again in "
         "this process (extension modules such as NumPy do not survive a restart)");
  }
  if (!start_failure_.empty()) fail(error_kind::python, start_failure_);
  refuse_foreign_python();
  if (Py_IsInitialized() != 0) {
    attach();
    const gil g;
    if (options.sys_path != nullptr) add_sys_path(options.sys_path);
    return;
  }
  try {
    start(options);
  } catch (const error& e) {
    if (e.kind() == error_kind::python) start_failure_ = e.what();
    throw;
  }
}

void interpreter::start(const gtstorage_python_options& options) {
  const bool use_env = options.use_environment != 0;
  // The virtual environment: the option, else $VIRTUAL_ENV. Checked here, since Python itself
  // would silently fall back to the base installation.
  std::string venv;
  if (options.virtual_env != nullptr) {
    venv = options.virtual_env;
  } else if (use_env) {
    if (const char* v = env_or_null("VIRTUAL_ENV")) venv = v;
  }
  const std::string ours =
      std::to_string(PY_MAJOR_VERSION) + "." + std::to_string(PY_MINOR_VERSION);
  if (!venv.empty()) {
    const std::string name = options.virtual_env != nullptr ? "virtual_env" : "VIRTUAL_ENV";
    if (!is_directory(venv)) fail_arg(name, "'" + venv + "' is not a directory");
    const std::string version = venv_version(venv);
    if (version.empty()) {
      fail_arg(name, "'" + venv + "' is not a virtual environment (no pyvenv.cfg with a version)");
    }
    if (version.rfind(ours + ".", 0) != 0 && version != ours) {
      fail_arg(name, "'" + venv + "' was made with Python " + version +
                         "; this libgtstorage_python embeds Python " + ours +
                         " (make the venv with python" + ours + ")");
    }
  }

  PyConfig config;
  if (use_env) {
    PyConfig_InitPythonConfig(&config);
  } else {
    PyConfig_InitIsolatedConfig(&config);
  }
  try {
    config.parse_argv = 0;
    config.install_signal_handlers = options.install_signal_handlers != 0 ? 1 : 0;
    std::string home;
    if (options.python_home != nullptr) {
      home = options.python_home;
      if (!is_directory(home)) fail_arg("python_home", "'" + home + "' is not a directory");
    } else if (!(use_env && env_or_null("PYTHONHOME") != nullptr)) {
      home = GTSTORAGE_PYTHON_BUILD_PREFIX;  // where the Python the library was built with lives
    }
    if (!home.empty()) set_string(config, &config.home, home, "python_home");
    // sys.executable: what subprocesses of Python code run (compilers of GT4Py backends,
    // multiprocessing). Python finds a venv through pyvenv.cfg next to (or above) it.
    if (!venv.empty()) {
      set_string(config, &config.executable, venv + "/bin/python" + ours, "virtual_env");
    } else {
      set_string(config, &config.executable, GTSTORAGE_PYTHON_BUILD_EXECUTABLE, "executable");
    }
    std::string where;  // what chose the prefix, for the message
    if (!home.empty()) {
      where = options.python_home != nullptr ? "python_home " + home : "home " + home;
    } else if (const char* env_home = env_or_null("PYTHONHOME")) {
      where = std::string("PYTHONHOME=") + env_home;
    }
    check_status(Py_InitializeFromConfig(&config), where);
  } catch (...) {
    PyConfig_Clear(&config);
    throw;
  }
  PyConfig_Clear(&config);
  // Python runs; this thread holds the GIL.
  starter_ = std::this_thread::get_id();
  state_ = interpreter_state::started;
  install_embedding_module(libgtstorage_path());
  if (options.sys_path != nullptr) add_sys_path(options.sys_path);
  saved_ = PyEval_SaveThread();  // other threads (and this one, through PyGILState) may now run
}

void interpreter::attach() {
  state_ = interpreter_state::attached;
  const gil g;
  install_embedding_module(libgtstorage_path());
}

void interpreter::add_sys_path(const char* entries) {
  PyObject* path = PySys_GetObject("path");  // borrowed
  if (path == nullptr || PyList_Check(path) == 0) {
    fail(error_kind::python, "gtstorage_python_init: sys.path is not a list");
  }
  std::stringstream in(entries);
  std::string entry;
  Py_ssize_t at = 0;
  while (std::getline(in, entry, ':')) {
    if (entry.empty()) continue;
    ref item(PyUnicode_DecodeFSDefault(entry.c_str()));
    if (!item || PyList_Insert(path, at++, item.get()) != 0) {
      PyErr_Clear();
      fail(error_kind::python, "gtstorage_python_init: sys_path: cannot add '" + entry + "'");
    }
  }
}

}  // namespace gts::python
