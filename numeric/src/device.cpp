// The device API: CUDA's current device, chosen per host thread.
#include <marg/numeric/backend.hpp>
#include <marg/numeric/device.hpp>
#include <marg/numeric/error.hpp>

#include <string>

#include "memory/device_memory.hpp"

namespace marg {
void set_device(int device) {
  const int count = detail::device::gpu_usable() ? device_count() : 0;
  MARG_EXPECTS(device >= 0 && device < count,
               detail::bad_argument("marg::set_device", "device", device,
                                    ("in [0, " + std::to_string(count) +
                                     ") (the usable CUDA devices; none without a GPU)")
                                        .c_str()));
  detail::device::make_current(device);
}

int current_device() {
  return detail::device::gpu_usable() ? detail::device::current() : -1;
}

namespace detail {

device_guard::device_guard(int device) {
  if (device < 0 || !detail::device::gpu_usable()) return;
  const int here = device::current();
  if (here == device) return;
  device::make_current(device);
  previous_ = here;
}

device_guard::~device_guard() {
  if (previous_ >= 0) device::restore_current(previous_);
}

}  // namespace detail
}  // namespace marg
