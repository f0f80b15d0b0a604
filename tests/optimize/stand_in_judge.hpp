#pragma once

// A judge for the loop's tests without a GPU, and candidates it understands.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "optimize/optimize_loop.hpp"

namespace blaster {

// Judges by what the source says of itself: "COMPILE_ERROR", "WRONG", "HANGS", "FAST <x>" (a
// passing candidate x times faster than the baseline's 100 us), "SLOW <ms>" (takes that long to
// be judged, then timed out), "NO_GPU" (compiles, and no GPU is there to judge it), "FAILS"
// (the machine fails: the evaluation throws).
class stand_in_judge final : public step_evaluator {
 public:
  void evaluate(const std::filesystem::path& source_file, std::int64_t /*session*/,
                attempt& a) override {
    const std::string source = read_file(source_file);
    ++evaluations;
    ++started;
    a.bench_run_id = 0;
    a.baseline_us = 100.0;
    if (source.find("FAILS") != std::string::npos) {
      throw error("the machine failed");
    } else if (source.find("COMPILE_ERROR") != std::string::npos) {
      // As bench says it: the file by the path it was written to.
      a.reason = "compile_error";
      a.message = source_file.string() + " does not compile for sm_90a";
      a.log = source_file.filename().string() + "(3): error: identifier \"oops\" is undefined";
      a.error_line = 3;
    } else if (source.find("WRONG") != std::string::npos) {
      a.reason = "wrong_result";
      a.message = "out[17]: 0.5 where the reference is 0.25";
    } else if (source.find("HANGS") != std::string::npos) {
      a.reason = "timeout";
      a.message = "the worker timed out after 5.0 s and was killed";
    } else if (const auto slow = source.find("SLOW "); slow != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(source.substr(slow + 5))));
      a.reason = "timeout";
      a.message = "a slow candidate";
    } else if (source.find("NO_GPU") != std::string::npos) {
      cannot_judge_ = "no CUDA driver on this machine";
    } else if (const auto at = source.find("FAST "); at != std::string::npos) {
      const double x = std::stod(source.substr(at + 5));
      a.variant = "k[VEC=4]";
      a.params = {{"VEC", "4"}};
      a.time_us = 100.0 / x;
      a.speedup = x;
      a.speedup_low = x * 0.98;
      a.speedup_high = x * 1.02;
      a.reward = *a.speedup_low;
      a.roofline_pct = 40.0 * x;
      a.diagnosis = "bandwidth-bound (DRAM at 70% of peak)";
    }
  }
  [[nodiscard]] nlohmann::json device() const override {
    return evaluations > 0 ? nlohmann::json{{"name", "NVIDIA H200"}, {"arch", "sm_90a"}}
                           : nlohmann::json(nullptr);
  }
  [[nodiscard]] std::string cannot_judge() const override { return cannot_judge_; }
  int evaluations = 0;
  std::atomic<int> started{0};  // evaluations begun, for tests on other threads

 private:
  std::string cannot_judge_;
};

// A proposer's reply (or a serve request) whose source says what the judge makes of it.
inline std::string candidate(const std::string& says, const std::string& hypothesis,
                             const std::vector<std::string>& tags = {}) {
  return nlohmann::json{
      {"source", "/* blaster {} */\n// " + says + "\n"}, {"hypothesis", hypothesis}, {"tags", tags}}
      .dump();
}

}  // namespace blaster
