// The Python exception being raised, as a gtstorage status and message.
#pragma once

#include <string>

namespace gts::python {

/// Fetches and clears the current Python exception (the GIL held, an exception set) and throws a
/// component::status_error: #GTSTORAGE_ERROR_INVALID_ARGUMENT for gtstorage.bridge's argument
/// errors, the status of a gtstorage exception, else #GTSTORAGE_ERROR_PYTHON. The message is
/// "<context>: <type>: <text> (at <file>:<line> in <function>)", the frame being the innermost
/// of the traceback (where the exception was raised).
[[noreturn]] void throw_python_error(const std::string& context);

}  // namespace gts::python
