#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blaster {

// One kernel execution as CUPTI saw it: the device's own start and end, not the host's view.
struct kernel_record {
  std::string name;         // mangled, as the module names it
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// Records, through CUPTI's activity API, every kernel that runs while the object lives. It
// tells which kernels a timed region really ran and how long each took on the device. One at
// a time in a process.
class kernel_activity {
 public:
  kernel_activity();
  ~kernel_activity();
  kernel_activity(const kernel_activity&) = delete;
  kernel_activity& operator=(const kernel_activity&) = delete;

  // Every record so far, after flushing CUPTI's buffers; the caller synchronizes first.
  std::vector<kernel_record> collect();
};

}  // namespace blaster
