"""A Python program that is the host of a model library (loaded with ctypes) which calls
gtstorage_python_init: libgtstorage_python attaches to this interpreter instead of starting one,
and calls through it run Python functions of this process. With another Python than the one the
library embeds (Debian's python3.11 for a library built with 3.12), init is refused.

Usage: attach_host.py <libgtstorage_python.so> attach|foreign [dir of the gtstorage package]
"""
import ctypes
import os
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.gtstorage_python_init.argtypes = [ctypes.c_void_p]
lib.gtstorage_python_state.argtypes = [ctypes.POINTER(ctypes.c_int32)]
lib.gtstorage_python_resolve.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64)]
lib.gtstorage_python_call.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64),
                                      ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32,
                                      ctypes.c_uint32]
# libgtstorage, next to it (already loaded as its dependency: the same object)
core = ctypes.CDLL(os.path.join(os.path.dirname(sys.argv[1]), "libgtstorage.so.1"))
last_error = core.gtstorage_last_error
last_error.restype = ctypes.c_char_p

if len(sys.argv) > 3:
    sys.path.insert(0, sys.argv[3])
status = lib.gtstorage_python_init(None)
if sys.argv[2] == "foreign":
    message = last_error().decode()
    print(f"init: {status}: {message}")
    ok = status == -16 and "the process already runs Python 3." in message
    print("refused another Python" if ok else "FAILED")
    sys.exit(0 if ok else 1)

state = ctypes.c_int32(-1)
lib.gtstorage_python_state(ctypes.byref(state))
calls = []


def record(*arrays):
    calls.append(len(arrays))


fn = ctypes.c_uint64(0)
rc = lib.gtstorage_python_resolve(b"__main__:record", ctypes.byref(fn))
if rc != 0:
    print("resolve:", last_error().decode())
rc2 = lib.gtstorage_python_call(fn, None, 0, None, 0, 0)
print(f"init {status}, state {state.value}, resolve {rc}, call {rc2}, calls {calls}")
rc3 = lib.gtstorage_python_finalize()  # detaches: this interpreter goes on
ok = status == 0 and state.value == 2 and rc == 0 and rc2 == 0 and calls == [0] and rc3 == 0
print("attached to the host's interpreter" if ok else "FAILED: " + last_error().decode())
sys.exit(0 if ok else 1)
