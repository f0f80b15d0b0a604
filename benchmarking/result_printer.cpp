#include "benchmarking/result_printer.hpp"

#include <algorithm>

#include <fmt/ostream.h>

namespace blaster {
namespace {

std::string optional_number(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::size_t label_width(const bench_report& report) {
  std::size_t width = 9;
  for (const auto& r : report.results) width = std::max(width, r.label.size());
  return width;
}

// The first lines of a long NVRTC log; the full log is in --json and in the store.
std::string head(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos == 0 ? 0 : pos + 1);
  }
  return pos == std::string::npos ? text : text.substr(0, pos) + "\n    ...";
}

nlohmann::json metrics_json(const error_metrics& m) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : m.worst) {
    worst.push_back(
        {{"index", w.index},
         {"candidate", w.candidate},
         {"reference", w.reference},
         {"normalized_error", std::isfinite(w.normalized_error) ? nlohmann::json(w.normalized_error)
                                                                : nlohmann::json("inf")}});
  }
  return {{"buffer", m.buffer},         {"elements", m.elements},
          {"mismatches", m.mismatches}, {"nonfinite", m.nonfinite},
          {"unwritten", m.unwritten},   {"max_abs", m.max_abs},
          {"max_rel", m.max_rel},       {"worst", worst}};
}

}  // namespace

void print_bench_table(const bench_report& report, std::ostream& out) {
  fmt::print(out, "task {}: {}\n", report.task, report.title);
  fmt::print(
      out,
      "case {} ({}), {} · timing: hot, CUDA events, median per launch over {} samples of ~{} ms\n",
      report.canonical_case, report.canonical_shape, report.dtype, report.timing.samples,
      report.timing.target_sample_ms);
  if (report.device) {
    fmt::print(out, "GPU {} ({}, {} SMs, driver {}.{}) · NVRTC {}\n", report.device->name,
               report.device->arch(), report.device->sm_count, report.device->driver_version / 1000,
               report.device->driver_version % 1000 / 10, report.nvrtc);
  }
  if (report.copy) {
    fmt::print(out, "copy bandwidth measured by blaster: {:.1f} GB/s ({}) · roofline bytes {}\n",
               report.copy->bytes_per_second / 1e9, report.copy->config, report.roofline_bytes);
  }
  const std::size_t w = label_width(report);
  fmt::print(out, "\n{:<{}}  {:<8}  {:>10}  {:>8}  {:>8}  {:>9}\n", "candidate", w, "status",
             "time us", "speedup", "GB/s", "% copy BW");
  for (const auto& r : report.results) {
    const std::string label = r.baseline ? r.label + " *" : r.label;
    if (r.status == "passed") {
      fmt::print(out, "{:<{}}  {:<8}  {:>10.2f}  {:>8}  {:>8.1f}  {:>8.1f}%\n", label, w, r.status,
                 r.timing->median_us, optional_number(r.speedup, "{:.2f}x"), *r.bandwidth_gbs,
                 *r.roofline_pct);
    } else {
      fmt::print(out, "{:<{}}  {:<8}  {}\n", label, w, r.status, r.reason);
      if (!r.message.empty()) fmt::print(out, "    {}\n", r.message);
      if (r.reason == "compile_error") fmt::print(out, "    {}\n", head(r.log, 6));
    }
  }
  fmt::print(out, "\n* baseline (the task's init.cu). Run {} recorded in {} (seed {}, {:.1f} s).\n",
             report.run_id, report.home, report.seed, report.wall_ms / 1000.0);
}

void print_compile_table(const bench_report& report, std::ostream& out) {
  fmt::print(out, "task {}: compiled for {} with NVRTC {}\n\n", report.task, report.arch,
             report.nvrtc);
  const std::size_t w = label_width(report);
  fmt::print(out, "{:<{}}  {:<14}  {:>4}  {:>5}  {:>6}  {:>6}  {:>5}  {:>8}\n", "candidate", w,
             "status", "regs", "stack", "spill", "smem", "bars", "ms");
  for (const auto& r : report.results) {
    const std::string status = r.reason.empty() ? std::string("compiled") : r.reason;
    if (r.resources.empty()) {
      fmt::print(out, "{:<{}}  {:<14}\n", r.label, w, status);
    }
    for (const auto& k : r.resources) {
      // -1 is what the report did not say: the driver, where it stands in for ptxas, does not
      // count spills or barriers.
      auto known = [](int v) { return v < 0 ? std::string("-") : std::to_string(v); };
      const int spill = k.spill_store_bytes < 0 ? -1 : k.spill_store_bytes + k.spill_load_bytes;
      fmt::print(out, "{:<{}}  {:<14}  {:>4}  {:>5}  {:>6}  {:>6}  {:>5}  {:>8.1f}{}\n", r.label, w,
                 status, known(k.registers), known(k.stack_bytes), known(spill),
                 known(k.shared_bytes), known(k.barriers), r.compile_ms,
                 r.cache_hit ? " (cached)" : "");
    }
    if (!r.message.empty()) fmt::print(out, "    {}\n", r.message);
    if (r.reason == "compile_error") fmt::print(out, "{}\n", r.log);
  }
}

nlohmann::json to_json(const bench_report& report) {
  nlohmann::json j = {
      {"task", report.task},
      {"title", report.title},
      {"case", report.canonical_case},
      {"shape", report.canonical_shape},
      {"dtype", report.dtype},
      {"roofline_bytes", report.roofline_bytes},
      {"arch", report.arch},
      {"nvrtc", report.nvrtc},
      {"seed", report.seed},
      {"gpu", report.gpu},
      {"run_id", report.run_id},
      {"home", report.home},
      {"wall_ms", report.wall_ms},
      {"timing",
       {{"mode", "hot"},
        {"clock", "CUDA events"},
        {"target_sample_ms", report.timing.target_sample_ms},
        {"samples", report.timing.samples},
        {"warmup_launches", report.timing.warmup_launches}}},
  };
  if (!report.gpu_unavailable.empty()) j["gpu_unavailable"] = report.gpu_unavailable;
  if (report.device) {
    const auto& d = *report.device;
    j["device"] = {{"name", d.name},
                   {"uuid", d.uuid},
                   {"arch", d.arch()},
                   {"sm_count", d.sm_count},
                   {"sm_clock_khz", d.sm_clock_khz},
                   {"memory_clock_khz", d.memory_clock_khz},
                   {"l2_bytes", d.l2_bytes},
                   {"total_memory_bytes", d.total_memory_bytes},
                   {"driver_version", d.driver_version}};
  }
  if (report.copy) {
    j["copy_bandwidth"] = {{"bytes_per_second", report.copy->bytes_per_second},
                           {"bytes_moved", report.copy->bytes_moved},
                           {"time_us", report.copy->time_us},
                           {"config", report.copy->config}};
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : report.results) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : r.resources) {
      kernels.push_back({{"kernel", k.lowered_name},
                         {"registers", k.registers},
                         {"stack_bytes", k.stack_bytes},
                         {"spill_store_bytes", k.spill_store_bytes},
                         {"spill_load_bytes", k.spill_load_bytes},
                         {"shared_bytes", k.shared_bytes},
                         {"barriers", k.barriers}});
    }
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : r.checks) {
      nlohmann::json outputs = nlohmann::json::array();
      for (const auto& m : c.outputs) outputs.push_back(metrics_json(m));
      checks.push_back({{"case", c.case_name},
                        {"passed", c.reason.empty()},
                        {"reason", c.reason},
                        {"message", c.message},
                        {"outputs", outputs}});
    }
    nlohmann::json item = {{"candidate", r.candidate},
                           {"variant", r.label},
                           {"file", r.file},
                           {"params", r.params},
                           {"baseline", r.baseline},
                           {"status", r.status},
                           {"reason", r.reason},
                           {"message", r.message},
                           {"compile_ms", r.compile_ms},
                           {"cache_hit", r.cache_hit},
                           {"kernels", kernels},
                           {"checks", checks},
                           {"source_sha256", r.source_sha256},
                           {"cubin_sha256", r.cubin_sha256}};
    if (r.reason == "compile_error") item["nvrtc_log"] = r.log;
    if (r.timing) {
      item["time_us"] = r.timing->median_us;
      item["timing"] = {{"mode", r.timing->mode},
                        {"inner", r.timing->inner},
                        {"samples", r.timing->sample_us.size()},
                        {"samples_sha256", r.samples_sha256}};
      item["bandwidth_gbs"] = *r.bandwidth_gbs;
      item["copy_bandwidth_pct"] = *r.roofline_pct;
      item["speedup"] = r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json(nullptr);
    }
    results.push_back(std::move(item));
  }
  j["results"] = std::move(results);
  return j;
}

}  // namespace blaster
