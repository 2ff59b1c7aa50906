/* libgtstorage.so must load with dlopen (how Python's ctypes binding loads it), also when it
 * carries the static CUDA runtime, whose 4 KiB-aligned thread-local block only fits the static
 * TLS space left at dlopen time if nothing in the library forces the initial-exec TLS model.
 * Then device queries must work (0 devices and a reason without a driver), never abort. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_dlopen path/to/libgtstorage.so\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "FAIL: dlopen(%s): %s\n", argv[1], dlerror());
    return 1;
  }
  typedef int (*count_fn)(int32_t*);
  typedef int (*backend_fn)(char*, size_t);
  typedef const char* (*error_fn)(void);
  count_fn count = (count_fn)dlsym(lib, "gtstorage_device_count");
  backend_fn backend = (backend_fn)dlsym(lib, "gtstorage_get_device_backend");
  error_fn last_error = (error_fn)dlsym(lib, "gtstorage_last_error");
  if (count == NULL || backend == NULL || last_error == NULL) {
    fprintf(stderr, "FAIL: missing gtstorage_* symbols\n");
    return 1;
  }
  int32_t n = -1;
  const int status = count(&n);
  char name[64] = "";
  const int status2 = backend(name, sizeof name);
  printf("dlopen ok; device backend '%s', %d device(s) (status %d/%d) %s\n", name, (int)n, status,
         status2, last_error());
  if (status != 0 || status2 != 0 || n < 0) {
    fprintf(stderr, "FAIL: device queries after dlopen\n");
    return 1;
  }
  /* No dlclose: the library's registries are deliberately immortal (handles may be released
   * from other libraries' static destructors), so unloading it would only turn them into
   * unreachable blocks that LeakSanitizer reports. Processes keep the library loaded. */
  return 0;
}
