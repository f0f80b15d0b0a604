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

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/statistics/statistics.hpp"
#include "benchmarking/statistics/verdict.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/optimize_loop.hpp"

namespace blaster {

// Judges by what the source says of itself: "COMPILE_ERROR", "WRONG", "HANGS", "FAST <x>" (a
// passing candidate x times faster than the baseline's 100 us; bandwidth-bound, or latency-bound
// where the source says "LATENCY"), "SLOW <ms>" (takes that long to be judged, then timed out),
// "WAIT <ms>" (takes that long, then as the rest says), "NO_GPU" (compiles, and no GPU is there
// to judge it), "FAILS" (the machine fails: the evaluation throws, while `machine_fails`; once
// repaired, the rest of the source says). Its device is an H200 (or `gpu`), and it times the
// baseline before the first step at 100 us, latency-bound, unless `baseline_on_gpu` is false (no
// GPU to time it on).
//
// Given a store, it judges as bench_evaluator does instead: each step is a bench run of its own
// in the store, whose report holds the device, the baseline's and the candidate's session medians
// (as many sessions as the reply asks for, and at least `reward_sessions`), and the step is what
// fill_outcome makes of that report, so that `blaster verify` can recompute it; the baseline is
// timed alone in a run of its own too, and a step taken up after an interruption is recovered from
// its run where that completed, as bench_evaluator::recover does.
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
    if (machine_fails && source.find("FAILS") != std::string::npos) {
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
  bool recover(const std::filesystem::path& source_file, std::int64_t session,
               attempt& a) override {
    if (records_ == nullptr) return false;
    statement s = records_->db().prepare(
        "SELECT report_sha256 FROM runs WHERE command = ?1 AND status = 'completed' ORDER BY id "
        "DESC LIMIT 1");
    s.bind(1, judging_command(source_file, session, a));
    if (!s.step()) return false;
    ++recovered;
    const bench_report report = bench_report_from_json(
        nlohmann::json::parse(records_->cas().get(s.column_text(0)).value()));
    fill_outcome(report, a, read_file(source_file), reward_sessions_);
    return true;
  }
  std::optional<baseline_timing> time_baseline(std::int64_t session) override {
    ++baselines;
    if (records_ != nullptr) return time_baseline_as_bench(session);
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
  int recovered = 0;            // steps recovered from their judging runs
  bool baseline_on_gpu = true;
  bool machine_fails = true;  // "FAILS" throws
  std::string gpu = "NVIDIA H200";

 private:
  // The command of a step's judging run, by which recover finds it again.
  std::string judging_command(const std::filesystem::path& source_file, std::int64_t session,
                              const attempt& a) const {
    return fmt::format(
        "blaster bench --task rmsnorm --candidate {} --sessions {} (step {} of run {})",
        source_file.filename().string(),
        std::max(a.sessions > 0 ? a.sessions : 3, reward_sessions_), a.step, session);
  }

  cuda::device_properties device_properties() const {
    cuda::device_properties d;
    d.name = gpu;
    d.uuid = "GPU-00000000-0000-0000-0000-000000000000";
    d.compute_major = 9;
    d.compute_minor = 0;
    d.sm_count = 132;
    d.total_memory_bytes = 150754820096;
    return d;
  }

  // The baseline's sessions drift, as real ones do: the more of them, the narrower the interval.
  static double drift(int i) { return 1.0 + 0.03 * std::sin(1.7 * i + 0.4); }

  variant_result baseline_variant(int sessions) const {
    variant_result baseline;
    baseline.candidate = baseline.label = "init";
    baseline.file = "init.cu";
    baseline.baseline = true;
    baseline.status = "passed";
    for (int i = 0; i < sessions; ++i) baseline.session_medians_us.push_back(100.0 * drift(i));
    baseline.time_us = median(baseline.session_medians_us);
    return baseline;
  }

  std::optional<baseline_timing> time_baseline_as_bench(std::int64_t session) {
    bench_report report;
    report.task = "rmsnorm";
    report.timed_case = "canonical";
    report.gpu = baseline_on_gpu;
    report.sessions = 3;
    if (report.gpu) {
      report.device = device_properties();
      baseline_timed_ = true;
      report.results = {baseline_variant(report.sessions)};
    } else {
      report.gpu_unavailable = "no CUDA driver on this machine";
    }
    report.run_id = records_->begin_run(
        fmt::format("blaster bench --task rmsnorm --sessions 3 (the baseline of run {})", session),
        "rmsnorm", "");
    records_->finish_run(report.run_id, report.gpu ? "completed" : "no_gpu",
                         records_->cas().put(stored_report_bytes(report)));
    return baseline_timing_of(report);
  }

  void judge_as_bench(const std::filesystem::path& source_file, std::int64_t session,
                      attempt& a) {
    const std::string source = read_file(source_file);
    ++evaluations;
    ++started;
    if (const auto wait = source.find("WAIT "); wait != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(source.substr(wait + 5))));
    }
    if (machine_fails && source.find("FAILS") != std::string::npos) {
      throw error("the machine failed");
    }
    bench_report report;
    report.task = "rmsnorm";
    report.timed_case = "canonical";
    report.gpu = source.find("NO_GPU") == std::string::npos;
    if (!report.gpu) report.gpu_unavailable = cannot_judge_ = "no CUDA driver on this machine";
    if (report.gpu) report.device = device_properties();
    report.sessions = std::max(a.sessions > 0 ? a.sessions : 3, reward_sessions_);
    report.bootstrap_seed = 1000;  // one per run, as bench draws it; here the same for each
    variant_result baseline = baseline_variant(report.sessions);
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
    report.run_id = records_->begin_run(judging_command(source_file, session, a), "rmsnorm", "");
    records_->finish_run(report.run_id, report.gpu ? "completed" : "no_gpu",
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
