#pragma once

// Hardware counters of every kernel launched in a pass, through CUPTI's Profiler Host and Range
// Profiler APIs with automatic ranges (one per kernel, from its start to its end on the device,
// as Nsight Compute counts them) and user replay: the counters need several passes over the
// same work, and the caller runs the work once per pass, restoring what it changed in between,
// so that every pass counts the same work on the same data.

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

struct CUpti_Profiler_Host_Object;
struct CUpti_RangeProfiler_Object;

namespace blaster {

// Counters cannot be collected here: the driver does not permit them to this user
// (ERR_NVGPUCTRPERM), another profiler holds them, or CUPTI does not support the device.
class counters_unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct range_values {
  std::string name;
  std::map<std::string, double> values;
};

class range_profiler {
 public:
  // Profiles `metrics` (those the chip has; missing() names the others) of up to `max_ranges`
  // kernels per pass on `context`, the current context of device `device`.
  range_profiler(CUcontext context, int device, const std::vector<std::string>& metrics,
                 std::size_t max_ranges);
  ~range_profiler();
  range_profiler(const range_profiler&) = delete;
  range_profiler& operator=(const range_profiler&) = delete;

  [[nodiscard]] const std::string& chip() const { return chip_; }
  [[nodiscard]] const std::vector<std::string>& missing() const { return missing_; }
  [[nodiscard]] int passes() const { return passes_; }

  // One pass: begin, launch the kernels, then end once they have finished on the device.
  // end_pass() is true once every pass the counters need has run.
  void begin_pass();
  bool end_pass();

  // Every kernel's counters, in launch order, named as CUPTI names them; after the last pass.
  std::vector<range_values> results();

 private:
  void release() noexcept;

  std::string chip_;
  std::vector<std::string> metrics_;
  std::vector<const char*> names_;
  std::vector<std::string> missing_;
  std::vector<std::uint8_t> config_;
  std::vector<std::uint8_t> counter_data_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  bool initialized_ = false;
  int passes_ = 0;
};

}  // namespace blaster
