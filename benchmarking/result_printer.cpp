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
                 r.timing->buffer_copies);
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
                 label, w, r.status, *r.time_us, t.cupti.kernel_us, 100.0 * r.max_noise, 100.0 * r.session_spread,
                 optional_number(r.speedup, "{:.2f}x"), *r.bandwidth_gbs,
                 100.0 / *r.time_over_floor, t.discarded_samples, t.mean_clock_mhz, verdict);
      // A plan of several kernels: which of them the time goes to.
      if (t.cupti.kernels.size() > 1) {
        std::vector<std::string> parts;
        for (const auto& k : t.cupti.kernels) {
          parts.push_back(fmt::format("{} {:.2f}", readable_kernel(k.kernel), k.us));
        }
        fmt::print(out, "    kernel us by kernel: {}\n", fmt::join(parts, ", "));
      }
      if (!t.cupti.error.empty()) fmt::print(out, "    error (CUPTI): {}\n", t.cupti.error);
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

}  // namespace blaster
