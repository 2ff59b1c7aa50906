# The Python that libgtstorage_python embeds (GTSTORAGE_PYTHON_EXECUTABLE, default python3 on
# PATH). The interpreter is asked where its headers and shared libpython are: the library links
# exactly that Python (an embedding library is built per Python minor version, like an extension
# module), and any virtual environment made from it is chosen at run time.
#
# Sets GTSTORAGE_HAVE_PYTHON_EMBED, GTSTORAGE_PYTHON_EMBED_MISSING_REASON and, when found, the
# imported target gtstorage_embedded_python plus GTSTORAGE_PYTHON_EMBED_VERSION (3.12.1),
# GTSTORAGE_PYTHON_EMBED_MINOR (3.12), GTSTORAGE_PYTHON_EMBED_PREFIX and
# GTSTORAGE_PYTHON_EMBED_EXECUTABLE.
set(GTSTORAGE_HAVE_PYTHON_EMBED OFF)
set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON "GTSTORAGE_ENABLE_PYTHON_EMBED=OFF")
if(GTSTORAGE_ENABLE_PYTHON_EMBED)
  set(_exe "${GTSTORAGE_PYTHON_EXECUTABLE}")
  if(NOT _exe)
    find_program(_gts_python3 NAMES python3 NO_CACHE)
    set(_exe "${_gts_python3}")
  endif()
  set(_probe [=[
import sys, sysconfig, os
v = sysconfig.get_config_var
libdir = v("LIBDIR") or ""
name = v("LDLIBRARY") or ""
lib = ""
for d in (libdir, v("LIBPL") or "", os.path.join(libdir, v("MULTIARCH") or "")):
    if name.endswith(".so") and os.path.isfile(os.path.join(d, name)):
        lib = os.path.join(d, name)
        break
print(";".join([sysconfig.get_paths()["include"], lib, sys.version.split()[0],
                "%d.%d" % sys.version_info[:2], sys.base_prefix, str(v("Py_ENABLE_SHARED") or 0),
                os.path.realpath(sys.executable)]))
]=])
  if(NOT _exe)
    set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON "no python3 found (set GTSTORAGE_PYTHON_EXECUTABLE)")
  else()
    execute_process(COMMAND "${_exe}" -c "${_probe}" OUTPUT_VARIABLE _out RESULT_VARIABLE _rc
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT _rc EQUAL 0)
      set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON "${_exe} could not be run")
    else()
      list(GET _out 0 _inc)
      list(GET _out 1 _lib)
      list(GET _out 2 GTSTORAGE_PYTHON_EMBED_VERSION)
      list(GET _out 3 GTSTORAGE_PYTHON_EMBED_MINOR)
      list(GET _out 4 GTSTORAGE_PYTHON_EMBED_PREFIX)
      list(GET _out 6 GTSTORAGE_PYTHON_EMBED_EXECUTABLE)
      if(GTSTORAGE_PYTHON_EMBED_MINOR VERSION_LESS 3.10)
        set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON
            "${_exe} is Python ${GTSTORAGE_PYTHON_EMBED_VERSION}; 3.10 or newer is needed")
      elseif(NOT EXISTS "${_inc}/Python.h")
        set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON
            "${_exe} has no Python.h in ${_inc} (Debian: python3-dev)")
      elseif(NOT _lib)
        set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON
            "${_exe} has no shared libpython (build Python with --enable-shared; Debian: libpython3-dev)")
      else()
        set(GTSTORAGE_HAVE_PYTHON_EMBED ON)
        set(GTSTORAGE_PYTHON_EMBED_MISSING_REASON "")
        add_library(gtstorage_embedded_python SHARED IMPORTED)
        set_target_properties(gtstorage_embedded_python PROPERTIES
          IMPORTED_LOCATION "${_lib}" INTERFACE_INCLUDE_DIRECTORIES "${_inc}")
        message(STATUS "gtstorage: libgtstorage_python embeds Python ${GTSTORAGE_PYTHON_EMBED_VERSION} (${_lib})")
      endif()
    endif()
  endif()
  if(NOT GTSTORAGE_HAVE_PYTHON_EMBED)
    message(STATUS "gtstorage: building without libgtstorage_python: ${GTSTORAGE_PYTHON_EMBED_MISSING_REASON}")
  endif()
endif()
