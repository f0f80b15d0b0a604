#include "benchmarking/result_printer.hpp"

#include "benchmarking/gate_protocol.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

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

std::string_view clock_of(timing_mode mode) { return traits_of(mode).clock; }

nlohmann::json timing_json(const timing_options& o) {
  nlohmann::json j = to_json(o);
  j["clock"] = clock_of(o.mode);
  return j;
}

nlohmann::json finite_or_text(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf");
}

nlohmann::json metrics_json(const error_metrics& m) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : m.worst) {
    worst.push_back({{"index", w.index},
                     {"candidate", w.candidate},
                     {"reference", w.reference},
                     {"normalized_error", finite_or_text(w.normalized_error)}});
  }
  return {{"buffer", m.buffer},
          {"elements", m.elements},
          {"mismatches", m.mismatches},
          {"nonfinite", m.nonfinite},
          {"unwritten", m.unwritten},
          {"max_abs", m.max_abs},
          {"max_rel", m.max_rel},
          {"worst", worst},
          {"normalized_error_quantiles",
           {{"p50", finite_or_text(m.p50)},
            {"p90", finite_or_text(m.p90)},
            {"p99", finite_or_text(m.p99)},
            {"p999", finite_or_text(m.p999)}}}};
}

// "_Z15layernorm_applyILi512ELi4EEv..." -> "layernorm_apply<512, 4>": the name with its template
// arguments, without return type and parameters. A name that does not demangle stays as it is.
std::string readable_kernel(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || text == nullptr) return mangled;
  std::string name(text.get());
  // The parameter list: from the final ')' back to its '('.
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        name.resize(i);
        break;
      }
    }
  }
  // The return type ends at the last space outside template arguments.
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == '>') ++depth;
    if (name[i] == '<') --depth;
    if (name[i] == ' ' && depth == 0) return name.substr(i + 1);
  }
  return name;
}

}  // namespace

void print_bench_table(const bench_report& report, std::ostream& out) {
  fmt::print(out, "task {}: {}\n", report.task, report.title);
  fmt::print(out,
             "case {} ({}), {} · timing: {}, {}, median per launch, samples of ~{} ms "
             "until the noise is at most {:.2g}% ({} to {} samples)\n",
             report.timed_case, report.timed_shape, report.dtype, to_string(report.timing.mode),
             clock_of(report.timing.mode), report.timing.target_sample_ms,
             100.0 * report.timing.max_noise, report.timing.min_samples, report.timing.max_samples);
  if (report.device) {
    fmt::print(out, "GPU {} ({}, {} SMs, driver {}.{}) · NVRTC {} · blaster {}\n",
               report.device->name, report.device->arch(), report.device->sm_count,
               report.device->driver_version / 1000, report.device->driver_version % 1000 / 10,
               report.nvrtc, report.blaster_revision);
  }
  if (report.memory) {
    const memory_ceilings& m = *report.memory;
    fmt::print(out,
               "memory ceilings measured by blaster: copy {:.1f} GB/s, read {:.1f}, write {:.1f}, "
               "L2 {:.1f} (peak {:.1f}) · roofline bytes {} ({})\n",
               m.copy.bytes_per_second / 1e9, m.read.bytes_per_second / 1e9,
               m.write.bytes_per_second / 1e9, m.l2.bytes_per_second / 1e9,
               m.peak_bytes_per_second / 1e9, report.roofline_bytes,
               report.roofline_mix_known
                   ? fmt::format("{} read, {} written", report.roofline_read_bytes,
                                 report.roofline_write_bytes)
                   : std::string("read and written not stated apart"));
  }
  if (report.matrix) {
    fmt::print(out, "matrix rate measured by blaster: {:.1f} TFLOP/s ({}) · roofline flops {}\n",
               report.matrix->flops_per_second / 1e12, report.matrix->config,
               report.roofline_flops);
  }
  if (report.timing.rotate_buffers && traits_of(report.timing.mode).rotates_buffers) {
    for (const auto& r : report.results) {
      if (!r.timing) continue;
      fmt::print(out, "buffers rotated over {} copies, so that one sample's data exceeds the L2\n",
                 r.timing->copies);
      break;
    }
  }
  if (report.sanitize) {
    fmt::print(out, "compute-sanitizer on the small cases of every variant that passed: {}\n",
               report.sanitizer.empty() ? std::string("not run") : report.sanitizer);
  }
  if (report.floors) {
    std::vector<std::string> floors;
    for (const auto& mode : timing_modes()) {
      floors.push_back(fmt::format("{} {:.2f} us", mode.name, report.floors->us[mode.mode]));
    }
    fmt::print(out, "launch floors (an empty kernel): {}\n", fmt::join(floors, ", "));
  }
  const std::size_t w = label_width(report);
  fmt::print(
      out, "\n{:<{}}  {:<8}  {:>10}  {:>9}  {:>6}  {:>6}  {:>8}  {:>8}  {:>9}  {:>4}  {:>5}  {}\n",
      "candidate", w, "status", "time us", "kernel us", "noise", "spread", "speedup", "GB/s",
      "% roof", "drop", "MHz", "verdict (95% interval of the speedup)");
  for (const auto& r : report.results) {
    const std::string label = r.baseline ? r.label + " *" : r.label;
    if (r.status == "passed") {
      const timing_samples& t = *r.timing;
      std::string verdict = r.launch_bound ? "launch-bound; " : "";
      if (r.screened) verdict += "screened out after session 1";
      if (r.verdict) {
        verdict += fmt::format("{} [{:.3f}, {:.3f}]", to_string(r.verdict->v),
                               r.verdict->speedup.low, r.verdict->speedup.high);
      }
      fmt::print(out,
                 "{:<{}}  {:<8}  {:>10.2f}  {:>9.2f}  {:>5.2f}%  {:>5.2f}%  {:>8}  {:>8.1f}  "
                 "{:>8.1f}%  {:>4}  {:>5.0f}  {}\n",
                 label, w, r.status, *r.time_us, t.kernel_us, 100.0 * r.max_noise, 100.0 * r.spread,
                 optional_number(r.speedup, "{:.2f}x"), *r.bandwidth_gbs,
                 100.0 / *r.time_over_floor, t.discarded, t.mean_clock_mhz, verdict);
      // A plan of several kernels: which of them the time goes to.
      if (t.kernel_us_by_name.size() > 1) {
        std::vector<std::string> parts;
        for (const auto& [name, us] : t.kernel_us_by_name) {
          parts.push_back(fmt::format("{} {:.2f}", readable_kernel(name), us));
        }
        fmt::print(out, "    kernel us by kernel: {}\n", fmt::join(parts, ", "));
      }
      if (!t.activity_error.empty()) fmt::print(out, "    error (CUPTI): {}\n", t.activity_error);
    } else {
      fmt::print(out, "{:<{}}  {:<8}  {}\n", label, w, r.status, to_string(r.reason));
      if (!r.message.empty()) fmt::print(out, "    {}\n", r.message);
      if (r.reason == reason_code::compile_error) fmt::print(out, "    {}\n", head(r.log, 6));
    }
  }
  fmt::print(out,
             "\ntime: the median over {} session(s) of each session's median per launch, {}; "
             "kernel us: the kernels' own time on the device per launch, from CUPTI over {} (the "
             "first session); noise: "
             "the noisiest session's stddev over mean; spread: max/min - 1 of the session "
             "medians; % roof: the roofline floor over the time, the floor being the task's bytes "
             "read and written at the ceilings of that mix, from the L2 as far as the data fits "
             "there; drop: samples discarded because the SM clock ran below {:.0f}% of its rated "
             "{} MHz; MHz: the mean SM clock of the first session's kept samples. Verdicts need at "
             "least 5 sessions (--confirm); the interval is a paired bootstrap over sessions "
             "(seed {}).",
             report.sessions,
             traits_of(report.timing.mode).clock_legend,
             traits_of(report.timing.mode).kernel_legend,
             100.0 * report.timing.min_clock_fraction,
             report.device ? report.device->sm_clock_khz / 1000 : 0, report.bootstrap_seed);
  if (report.aa) {
    fmt::print(out, "\nA/A self-check: the baseline against itself {:.4f} ({}within {:.0f}%){}",
               report.aa->ratio, report.aa->within ? "" : "NOT ", 100.0 * report.aa->bound,
               report.aa->within ? "" : ": the machine is too noisy for these numbers");
  }
  for (const auto& warning : report.warnings) {
    fmt::print(out, "\nwarning (task design): {}", warning);
  }
  fmt::print(out,
             "\n* baseline (the task's init.cu). Every case checked with {} seeds (run seed {}; a "
             "large case only when it is timed, with the run seed); each evaluation in its own "
             "process, deadline {:.1f} s.\nRun {} recorded in {} "
             "({:.1f} s).\n",
             report.seeds.size(), report.seed, report.deadline_s, report.run_id, report.home,
             report.wall_ms / 1000.0);
}

void print_compile_table(const bench_report& report, std::ostream& out) {
  fmt::print(out, "task {}: compiled for {} with NVRTC {}\n\n", report.task, report.arch,
             report.nvrtc);
  const std::size_t w = label_width(report);
  fmt::print(out, "{:<{}}  {:<14}  {:>4}  {:>5}  {:>6}  {:>6}  {:>5}  {:>8}\n", "candidate", w,
             "status", "regs", "stack", "spill", "smem", "bars", "ms");
  for (const auto& r : report.results) {
    const std::string status =
        r.reason == reason_code::none ? std::string("compiled") : std::string(to_string(r.reason));
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
    if (r.reason == reason_code::compile_error) fmt::print(out, "{}\n", r.log);
  }
}

nlohmann::json to_json(const bench_report& report) {
  nlohmann::json j = {
      {"task", report.task},
      {"title", report.title},
      {"case", report.timed_case},
      {"shape", report.timed_shape},
      {"dtype", report.dtype},
      {"roofline_bytes", report.roofline_bytes},
      {"roofline_flops", report.roofline_flops},
      {"arch", report.arch},
      {"nvrtc", report.nvrtc},
      {"blaster_revision", report.blaster_revision},
      {"seed", report.seed},
      {"seeds", report.seeds},
      {"warnings", report.warnings},
      {"deadline_s", report.deadline_s},
      {"gpu", report.gpu},
      {"run_id", report.run_id},
      {"home", report.home},
      {"wall_ms", report.wall_ms},
      {"timing", timing_json(report.timing)},
  };
  if (!report.gpu_unavailable.empty()) j["gpu_unavailable"] = report.gpu_unavailable;
  if (report.sanitize) j["sanitizer"] = report.sanitizer;
  if (report.device) j["device"] = to_json(*report.device);
  j["sessions"] = report.sessions;
  j["bootstrap_seed"] = report.bootstrap_seed;
  j["aa_medians_us"] = report.aa_medians_us;
  if (report.aa) {
    j["aa_check"] = {
        {"ratio", report.aa->ratio}, {"within", report.aa->within}, {"bound", report.aa->bound}};
  }
  if (report.floors) {
    j["launch_floors"] = to_json(*report.floors);
  }
  if (report.memory) {
    j["copy_bandwidth"] = to_json(report.memory->copy);
    j["memory_ceilings"] = to_json(*report.memory);
  }
  j["roofline_read_bytes"] = report.roofline_read_bytes;
  j["roofline_write_bytes"] = report.roofline_write_bytes;
  j["roofline_mix_known"] = report.roofline_mix_known;
  j["footprint_bytes"] = report.footprint_bytes;
  if (report.matrix) {
    j["matrix_rate"] = to_json(*report.matrix);
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
                        {"seed", c.seed},
                        {"passed", c.reason == reason_code::none},
                        {"reason", to_string(c.reason)},
                        {"message", c.message},
                        {"outputs", outputs},
                        {"worker", c.worker}});
    }
    nlohmann::json item = {{"candidate", r.candidate},
                           {"variant", r.label},
                           {"file", r.file},
                           {"params", r.params},
                           {"baseline", r.baseline},
                           {"status", r.status},
                           {"reason", to_string(r.reason)},
                           {"message", r.message},
                           {"compile_ms", r.compile_ms},
                           {"cache_hit", r.cache_hit},
                           {"kernels", kernels},
                           {"checks", checks},
                           {"source_sha256", r.source_sha256},
                           {"sources_sha256", r.sources_sha256},
                           {"cubin_sha256", r.cubin_sha256}};
    if (r.reason == reason_code::compile_error) item["nvrtc_log"] = r.log;
    if (report.sanitize) {
      nlohmann::json tools = nlohmann::json::array();
      for (const auto& s : r.sanitizer) tools.push_back(to_json(s));
      item["sanitizer"] = tools;
    }
    item["gate_s"] = r.gate_s;
    item["timing_s"] = r.timing_s;
    // One candidate's time to a verdict: its compile (cold unless cache_hit), its gate and its
    // first timing session, each an evaluation of its own.
    const double compile_s = r.compile_ms / 1000.0;
    item["time_to_verdict"] = {{"compile_s", compile_s},
                               {"gate_s", r.gate_s},
                               {"timing_s", r.first_timing_s},
                               {"total_s", compile_s + r.gate_s + r.first_timing_s},
                               {"gate_profile_ms", r.gate_profile},
                               {"timing_profile_ms", r.timing_profile}};
    if (r.timing && r.time_us) {
      item["time_us"] = *r.time_us;
      item["session_medians_us"] = r.session_medians_us;
      item["session_spread"] = r.spread;
      item["launch_bound"] = r.launch_bound;
      item["screened"] = r.screened;
      if (r.verdict) {
        item["verdict"] = {{"verdict", to_string(r.verdict->v)},
                           {"speedup_low", r.verdict->speedup.low},
                           {"speedup_high", r.verdict->speedup.high},
                           {"speedup", r.verdict->speedup.point},
                           {"sessions", r.verdict->sessions},
                           {"every_session_faster", r.verdict->every_session_faster},
                           {"why", r.verdict->why}};
      }
      item["timing"] = {{"mode", to_string(r.timing->mode)},
                        {"source", r.timing->source},
                        {"inner", r.timing->inner},
                        {"buffer_copies", r.timing->copies},
                        {"samples", r.timing->sample_us.size()},
                        {"taken", r.timing->taken},
                        {"noise", r.timing->noise},
                        {"stopped_by", r.timing->stopped_by},
                        {"discarded_samples", r.timing->discarded},
                        {"mean_clock_mhz", r.timing->mean_clock_mhz},
                        {"samples_sha256", r.samples_sha256},
                        {"cupti",
                         {{"kernel_us", r.timing->kernel_us},
                          {"event_us", r.timing->activity_event_us},
                          {"runs", r.timing->observed_runs},
                          {"kernels", r.timing->kernels},
                          {"kernel_us_by_name", r.timing->kernel_us_by_name},
                          {"error", r.timing->activity_error}}}};
      auto optional = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
      };
      item["bandwidth_gbs"] = optional(r.bandwidth_gbs);
      item["copy_bandwidth_pct"] = optional(r.roofline_pct);
      item["flops_per_second"] = optional(r.flops_per_second);
      if (r.matrix_rate_pct) item["matrix_rate_pct"] = *r.matrix_rate_pct;
      item["time_over_floor"] = optional(r.time_over_floor);
      if (r.floor) {
        item["roofline"] = {{"level", r.floor->level},
                            {"bytes", r.floor->bytes},
                            {"l2_resident_bytes", r.floor->l2_resident_bytes},
                            {"ceiling_bytes_per_second", r.floor->ceiling_bytes_per_second},
                            {"floor_us", r.floor->floor_us},
                            {"uncertainty", r.floor->uncertainty},
                            {"pct", 100.0 * r.floor->floor_us / *r.time_us}};
      }
      if (r.poisoned) item["poisoned_launches"] = to_json(*r.poisoned);
      item["speedup"] = r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json(nullptr);
    }
    results.push_back(std::move(item));
  }
  j["results"] = std::move(results);
  return j;
}

}  // namespace blaster
