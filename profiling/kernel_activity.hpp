#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blaster {

// One kernel execution as CUPTI saw it: the device's own start and end, not the host's view.
struct kernel_record {
  std::string name;  // mangled, as the module names it
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// Records, through CUPTI's activity API, every kernel that runs while the object lives and is
// not paused. It tells which kernels a timed region really ran and how long each took on the
// device. One at a time in a process.
class kernel_activity {
 public:
  explicit kernel_activity(bool paused = false);
  ~kernel_activity();
  kernel_activity(const kernel_activity&) = delete;
  kernel_activity& operator=(const kernel_activity&) = delete;

  // Every record so far, after flushing CUPTI's buffers; the caller synchronizes first.
  std::vector<kernel_record> collect();
  // The same, and forgets them: the next call returns only what ran after this one.
  std::vector<kernel_record> take();

  // Recording costs the host time at every launch; a timed region that must not pay it pauses.
  void pause();
  void resume();

 private:
  bool paused_ = false;
};

// What a timing asks of CUPTI: record from a point on, the kernels' device time since the last
// question, and how often each kernel ran. CUPTI starts only at the first start(): once started
// it slows every later launch a little, so samples that must not pay for it come first, and the
// recorder's end detaches it, so that the process's later launches do not pay either. Where
// CUPTI cannot start (a profiler such as Nsight Compute already holds it), start() says so and
// the caller times by events alone.
class kernel_recorder {
 public:
  // Kernels of these names (the harness's own, run between samples) are left out.
  explicit kernel_recorder(std::vector<std::string> ignored = {});

  // Forgets what was recorded and records from here: a record of a kernel that began earlier (a
  // buffer CUPTI delivers late, of an earlier context of the process) is left out. False when
  // CUPTI is unavailable.
  bool start();
  void stop();
  // [microseconds] the recorded kernels' device time since start() or the last call.
  double take_us();
  // The recorded kernels themselves since start() or the last call, in the order they began.
  std::vector<kernel_record> take_records();

  [[nodiscard]] const std::map<std::string, int>& seen() const { return seen_; }
  [[nodiscard]] int executions() const { return executions_; }  // of every kernel since start()
  // [microseconds] each kernel's summed device time since start(), by name.
  [[nodiscard]] const std::map<std::string, double>& seen_us() const { return seen_us_; }
  [[nodiscard]] const std::string& unavailable() const { return unavailable_; }

 private:
  std::vector<std::string> ignored_;
  std::optional<kernel_activity> activity_;
  std::uint64_t since_ns_ = 0;       // CUPTI's clock at start()
  std::map<std::string, int> seen_;  // name -> executions since start()
  int executions_ = 0;
  std::map<std::string, double> seen_us_;
  std::string unavailable_;  // why CUPTI could not start
};

}  // namespace blaster
