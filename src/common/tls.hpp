// Access to thread-local variables on hot paths.
#pragma once

namespace gts {

/// @p object (a thread_local variable) through an address computed once. The library's
/// thread-locals use the global-dynamic TLS model (the faster models break dlopen'ed use, see
/// capi/boundary.cpp), where each address is a __tls_get_addr call, and GCC repeats that call
/// at every use of the variable in a function instead of keeping the address in a register: a
/// small create + release made nine such calls. The empty asm hides where the pointer came
/// from, so the compiler keeps it.
template <class T>
inline T& tls_ref(T& object) {
  T* p = &object;
  asm("" : "+r"(p));
  return *p;
}

}  // namespace gts
