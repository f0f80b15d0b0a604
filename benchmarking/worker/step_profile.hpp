#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>

namespace blaster {

// [milliseconds] where a worker's wall time went, by its steps ("context", "run", ...);
// "process" is what the worker did not see: starting and ending the process.
using step_profile = std::map<std::string, double>;

// Adds the wall time of its scope to one step of a profile.
class phase_timer {
 public:
  phase_timer(step_profile& profile, std::string phase)
      : profile_(profile), phase_(std::move(phase)), started_(std::chrono::steady_clock::now()) {}
  ~phase_timer() {
    profile_[phase_] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_)
            .count();
  }
  phase_timer(const phase_timer&) = delete;
  phase_timer& operator=(const phase_timer&) = delete;

 private:
  step_profile& profile_;
  std::string phase_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace blaster
