// The functions the naming rule of gtstorage.h (its introduction: a family's noun before the
// verb, as in gtstorage_pool_get_stats) gave a new name. Each new name is the same function as
// its old one, which stays exported and working, declared in the header's deprecated section;
// here the new names forward to the old definitions in capi.cpp, so no behaviour is written
// twice. abidiff shows the new names as additions only.
#include <cstddef>
#include <cstdint>

#include "gtstorage/gtstorage.h"
#include "gtstorage/gtstorage_experimental.h"

extern "C" {

int gtstorage_device_get_backend(char* buf, size_t size) {
  return gtstorage_get_device_backend(buf, size);
}

int gtstorage_device_set_current(int32_t device_id) {
  return gtstorage_set_device(device_id);
}

int gtstorage_device_get_current(int32_t* out_device_id) {
  return gtstorage_get_device(out_device_id);
}

int gtstorage_device_set_backend(const char* name) {
  return gtstorage_set_device_backend(name);
}

}  // extern "C"
