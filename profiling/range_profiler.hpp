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
#include <optional>
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

// The host half of a collection: which of `metrics` the chip has, and the configuration CUPTI
// builds from those, with the passes it needs. Needs no GPU: `chip` is CUPTI's name for the chip
// (GH100 for the H100 and the H200), and `availability` the device's counter availability image,
// which only the GPU can give and only chips newer than this CUPTI need (empty: none).
class counter_configuration {
 public:
  counter_configuration(const std::string& chip, const std::vector<std::uint8_t>& availability,
                        const std::vector<std::string>& metrics);
  ~counter_configuration();
  counter_configuration(const counter_configuration&) = delete;
  counter_configuration& operator=(const counter_configuration&) = delete;

  // The metrics the chip has, in the order asked, and the others.
  [[nodiscard]] const std::vector<std::string>& metrics() const { return metrics_; }
  [[nodiscard]] const std::vector<std::string>& missing() const { return missing_; }
  [[nodiscard]] const std::vector<std::uint8_t>& image() const { return image_; }
  [[nodiscard]] int passes() const { return passes_; }
  [[nodiscard]] CUpti_Profiler_Host_Object* host() const { return host_; }

 private:
  void release() noexcept;

  std::vector<std::string> metrics_;
  std::vector<std::string> missing_;
  std::vector<std::uint8_t> image_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  int passes_ = 0;
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
  [[nodiscard]] const std::vector<std::string>& missing() const { return config_->missing(); }
  [[nodiscard]] int passes() const { return config_->passes(); }

  // One pass: begin, launch the kernels, then end once they have finished on the device.
  // end_pass() is true once every pass the counters need has run.
  void begin_pass();
  bool end_pass();

  // Every kernel's counters, in launch order, named as CUPTI names them; after the last pass.
  std::vector<range_values> results();

 private:
  void release() noexcept;

  std::string chip_;
  std::optional<counter_configuration> config_;
  std::vector<const char*> names_;  // config_'s metrics, as CUPTI takes them
  std::vector<std::uint8_t> counter_data_;
  CUpti_RangeProfiler_Object* profiler_ = nullptr;
  bool initialized_ = false;
};

}  // namespace blaster
