#pragma once

// A judge for the loop's tests without a GPU, and candidates it understands.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "benchmarking/statistics/statistics.hpp"
#include "benchmarking/statistics/verdict.hpp"
#include "evidence/store.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/optimize_loop.hpp"

namespace blaster {

// Judges by what the source says of itself: "COMPILE_ERROR", "WRONG", "HANGS", "FAST <x>" (a
// passing candidate x times faster than the baseline's 100 us; bandwidth-bound, or latency-bound
// where the source says "LATENCY"), "SLOW <ms>" (takes that long to be judged, then timed out),
// "WAIT <ms>" (takes that long, then as the rest says), "NO_GPU" (compiles, and no GPU is there
// to judge it), "FAILS" (the machine fails: the evaluation throws). Its device is an H200 (or
// `gpu`), and it times the baseline before the first step at 100 us, latency-bound, unless
// `baseline_on_gpu` is false (no GPU to time it on).
//
// Given a store, it judges as bench_evaluator does instead: each step is a bench run of its own
// in the store, whose report holds the baseline's and the candidate's session medians (as many
// sessions as the reply asks for, and at least `reward_sessions`), and the step is what
// fill_outcome makes of that report, so that `blaster verify` can recompute it.
class stand_in_judge final : public step_evaluator {
 public:
  stand_in_judge() = default;
  explicit stand_in_judge(store& records, int reward_sessions = default_reward_sessions)
      : records_(&records), reward_sessions_(reward_sessions) {}

  void evaluate(const std::filesystem::path& source_file, std::int64_t session,
                attempt& a) override {
    if (records_ != nullptr) return judge_as_bench(source_file, session, a);
    const std::string source = read_file(source_file);
    ++evaluations;
    ++started;
    if (const auto wait = source.find("WAIT "); wait != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(source.substr(wait + 5))));
    }
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
      const bool latency = source.find("LATENCY") != std::string::npos;
      a.diagnosis = latency ? "latency-bound (DRAM at 20% of peak)"
                            : "bandwidth-bound (DRAM at 70% of peak)";
      a.bound = latency ? "latency-bound" : "bandwidth-bound";
    }
    if (cannot_judge_.empty()) a.gpu = gpu_model(gpu);
  }
  std::optional<baseline_timing> time_baseline(std::int64_t /*session*/) override {
    ++baselines;
    baseline_timing t;
    if (!baseline_on_gpu) {
      t.message = "no CUDA driver on this machine";
      return t;
    }
    baseline_timed_ = true;
    t.time_us = 100.0;
    t.bound = "latency-bound";
    t.diagnosis = "latency-bound (DRAM at 10% of peak)";
    return t;
  }
  [[nodiscard]] nlohmann::json device() const override {
    if (evaluations == 0 && !baseline_timed_) return nullptr;
    return {{"name", gpu},
            {"model", gpu_model(gpu)},
            {"arch", "sm_90a"},
            {"sm_count", 132},
            {"total_memory_bytes", 150754820096},
            {"ceilings", {{"dram_copy_gbs", 4200.0}, {"l2_gbs", 9800.0}}}};
  }
  [[nodiscard]] std::string cannot_judge() const override { return cannot_judge_; }
  [[nodiscard]] int reward_sessions() const override { return reward_sessions_; }
  int evaluations = 0;
  std::atomic<int> started{0};  // evaluations begun, for tests on other threads
  int baselines = 0;            // the baseline's timings
  bool baseline_on_gpu = true;
  std::string gpu = "NVIDIA H200";

 private:
  void judge_as_bench(const std::filesystem::path& source_file, std::int64_t session,
                      attempt& a) {
    const std::string source = read_file(source_file);
    ++evaluations;
    ++started;
    bench_report report;
    report.task = "rmsnorm";
    report.timed_case = "canonical";
    report.gpu = source.find("NO_GPU") == std::string::npos;
    if (!report.gpu) report.gpu_unavailable = cannot_judge_ = "no CUDA driver on this machine";
    report.sessions = std::max(a.sessions > 0 ? a.sessions : 3, reward_sessions_);
    report.bootstrap_seed = 1000;  // one per run, as bench draws it; here the same for each
    // Sessions drift, as real ones do: the more of them, the narrower the interval.
    const auto drift = [](int i) { return 1.0 + 0.03 * std::sin(1.7 * i + 0.4); };
    variant_result baseline;
    baseline.candidate = baseline.label = "init";
    baseline.file = "init.cu";
    baseline.baseline = true;
    baseline.status = "passed";
    for (int i = 0; i < report.sessions; ++i) baseline.session_medians_us.push_back(100.0 * drift(i));
    baseline.time_us = median(baseline.session_medians_us);
    variant_result c;
    c.candidate = "step";
    c.label = "k[VEC=4]";
    c.file = source_file.string();
    c.params = {{"VEC", "4"}};
    c.status = "passed";
    if (!report.gpu) {
      c.status = "compiled";
      baseline.session_medians_us.clear();
      baseline.time_us.reset();
    } else if (source.find("COMPILE_ERROR") != std::string::npos) {
      c.status = "rejected";
      c.reason = reason_code::compile_error;
      c.message = source_file.string() + " does not compile for sm_90a";
      c.log = source_file.filename().string() + "(3): error: identifier \"oops\" is undefined";
    } else if (source.find("WRONG") != std::string::npos) {
      c.status = "rejected";
      c.reason = reason_code::wrong_result;
      c.message = "out[17]: 0.5 where the reference is 0.25";
    } else if (const auto at = source.find("FAST "); at != std::string::npos) {
      const double x = std::stod(source.substr(at + 5));
      for (int i = 0; i < report.sessions; ++i) {
        c.session_medians_us.push_back(baseline.session_medians_us[i] / x * drift(3 * i + 1));
      }
      c.time_us = median(c.session_medians_us);
      c.speedup = *baseline.time_us / *c.time_us;
      c.verdict = judge(session_comparison{.baseline_medians = baseline.session_medians_us,
                                           .candidate_medians = c.session_medians_us,
                                           .seed = report.bootstrap_seed});
    } else {
      c.status = "rejected";
      c.reason = reason_code::timeout;
      c.message = "the worker timed out after 5.0 s and was killed";
    }
    report.results = {baseline, c};
    report.run_id = records_->begin_run(
        fmt::format("blaster bench --task rmsnorm --candidate {} --sessions {} (step {} of run {})",
                    source_file.filename().string(), report.sessions, a.step, session),
        "rmsnorm", "");
    records_->finish_run(report.run_id, "completed",
                         records_->cas().put(stored_report_bytes(report)));
    fill_outcome(report, a, source, reward_sessions_);
  }

  store* records_ = nullptr;
  int reward_sessions_ = default_reward_sessions;
  std::string cannot_judge_;
  bool baseline_timed_ = false;
};

// A proposer's reply (or a serve request) whose source says what the judge makes of it.
inline std::string candidate(const std::string& says, const std::string& hypothesis,
                             const std::vector<std::string>& tags = {}) {
  return nlohmann::json{
      {"source", "/* blaster {} */\n// " + says + "\n"}, {"hypothesis", hypothesis}, {"tags", tags}}
      .dump();
}

}  // namespace blaster
