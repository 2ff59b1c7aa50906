// The base of the device layer's interfaces (device_backend.hpp and the three it hands out): a
// backend is a process-lifetime singleton that implements all of them, so none is copied,
// and each is destroyed through its own pointer, if ever.
#pragma once

namespace gts::device {

class interface {
 public:
  virtual ~interface() = default;
  interface(const interface&) = delete;
  interface& operator=(const interface&) = delete;

 protected:
  interface() = default;
};

}  // namespace gts::device
