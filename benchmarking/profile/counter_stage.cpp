#include "benchmarking/profile/counter_stage.hpp"

#include <unistd.h>

#include <atomic>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "benchmarking/profile/instruction_flush.hpp"
#include "benchmarking/timing/l2_flush.hpp"
#include "core/cas_store.hpp"
#include "core/cuda_tools.hpp"
#include "core/file_io.hpp"
#include "core/worker_process.hpp"
#include "profiling/counters.hpp"
#include "profiling/ncu_report.hpp"

namespace blaster {
namespace {

using std::chrono::milliseconds;

// ncu runs the worker once per pass, and each run counts the plan several times.
constexpr int ncu_slowdown = 20;
constexpr milliseconds ncu_import_deadline{120'000};

counter_profile counters_of(const worker_answer& answer) {
  counter_profile p;
  if (!answer.result) {
    p.unavailable = "the profile worker gave no answer: " + answer.why;
  } else if (const auto& f = answer.result->failure) {
    p.unavailable = "the profile worker failed: " + f->message;
  } else if (!answer.result->profile) {
    p.unavailable = "the profile worker answered without counters";
  } else {
    p = *answer.result->profile;
  }
  return p;
}

// ncu's first error line, which names the cause (ERR_NVGPUCTRPERM, an unknown metric).
std::string first_error(const std::filesystem::path& log) {
  const std::string text = read_file_if_exists(log).value_or("");
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = std::string_view(text).substr(start, end - start);
    if (line.find("==ERROR==") != std::string_view::npos) return std::string(line);
    start = end + 1;
  }
  return "it wrote no report and no error";
}

void add_ncu(const gate_data& data, worker_request request, const worker_launcher& launcher,
             milliseconds deadline, const std::filesystem::path& ncu, cas_store& cas,
             diagnostics& d) {
  static std::atomic<int> reports{0};
  const std::filesystem::path base = launcher.dir / fmt::format("ncu-{}-{}", ::getpid(), reports++);
  const std::filesystem::path report = base.string() + ".ncu-rep";
  const std::filesystem::path log = base.string() + ".log";
  const std::filesystem::path csv = base.string() + ".csv";
  // ncu is asked only for what the chip has, or it refuses them all.
  std::vector<std::string> metrics;
  for (const auto& m : profiled_counters()) {
    if (std::find(d.counters.missing.begin(), d.counters.missing.end(), m) ==
        d.counters.missing.end()) {
      metrics.push_back(m);
    }
  }
  std::vector<std::string> wrapper{ncu.string()};
  for (auto& a : ncu_profile_arguments(base.string(), log.string(), metrics,
                                       {l2_flush::kernel_name, instruction_flush::kernel_name})) {
    wrapper.push_back(std::move(a));
  }
  request.wrapped_profiler = true;
  const worker_answer answer =
      launcher.run(with_data(std::move(request), data, worker_phase::profile, launcher.lane),
                   deadline * ncu_slowdown, wrapper);
  auto cleanup = [&] {
    std::error_code ignored;
    for (const auto& f : {report, log, csv}) std::filesystem::remove(f, ignored);
  };
  if (!std::filesystem::exists(report)) {
    d.ncu_unavailable = "Nsight Compute: " + first_error(log);
    if (!answer.result) d.ncu_unavailable += "; the worker under it: " + answer.why;
    cleanup();
    return;
  }
  d.ncu_report_sha256 = cas.put(read_file(report));
  std::vector<std::string> import{ncu.string()};
  for (auto& a : ncu_import_arguments(report.string(), csv.string(), metrics)) {
    import.push_back(std::move(a));
  }
  const worker_outcome read = run_worker(import, ncu_import_deadline);
  try {
    if (!read.clean_exit()) throw std::invalid_argument("ncu --import " + read.describe());
    counter_profile p = parse_ncu_csv(read_file(csv), metrics);
    // The worker under ncu ran its plan several times; each launch's counters are their median.
    if (answer.result && answer.result->profile) {
      const counter_profile& ran = *answer.result->profile;
      p.kernels = median_by_launch(p.kernels, ran.kernels.size(), ran.runs);
      p.runs = ran.runs;
    }
    p.chip = d.counters.chip;
    p.case_name = d.counters.case_name;
    d.ncu = std::move(p);
  } catch (const std::exception& e) {
    d.ncu_unavailable =
        fmt::format("the report is stored, but its counters could not be read: {}", e.what());
  }
  cleanup();
}

}  // namespace

std::optional<std::filesystem::path> find_ncu() { return find_cuda_tool("ncu"); }

diagnostics profile_variant(const gate_data& data, worker_request request,
                            const worker_launcher& launcher, milliseconds deadline,
                            const std::optional<std::filesystem::path>& ncu, cas_store& cas) {
  diagnostics d;
  // Every pass restores the inputs and poisons the outputs again, and each kernel is followed by
  // a sweep of twice the L2: a few dozen runs of the plan.
  const worker_answer counted = launcher.run(
      with_data(request, data, worker_phase::profile, launcher.lane), deadline * ncu_slowdown);
  d.counters = counters_of(counted);
  d.profile_ms = counted.profile;
  if (!d.counters.unavailable.empty()) {
    spdlog::warn("{}: no counters: {}", request.variant, d.counters.unavailable);
  }
  if (ncu) add_ncu(data, std::move(request), launcher, deadline, *ncu, cas, d);
  return d;
}

void profile_variants(const gate_data& data,
                      const std::vector<std::pair<std::size_t, worker_request>>& survivors,
                      const worker_launcher& launcher, milliseconds deadline, bool ncu,
                      bool baseline, cas_store& cas, bench_report& report) {
  const std::optional<std::filesystem::path> tool = ncu ? find_ncu() : std::nullopt;
  if (ncu && !tool) {
    spdlog::warn("--ncu: Nsight Compute (ncu) is not installed here; CUPTI's alone");
  }
  for (const auto& [index, request] : survivors) {
    variant_result& r = report.results[index];
    // A variant screened out is slower than the ones confirmed: its diagnosis explains a
    // configuration nobody runs, at the cost of a replayed profile each.
    if (r.status == "rejected" || r.screened || (r.baseline && !baseline)) continue;
    spdlog::info("{}: counters", r.label);
    r.profile = profile_variant(data, request, launcher, deadline, tool, cas);
    if (ncu && !tool) r.profile->ncu_unavailable = "Nsight Compute (ncu) is not installed";
  }
}

void diagnose_variant(const bench_report& report, variant_result& r) {
  if (!r.profile || !r.profile->counters.unavailable.empty() ||
      r.profile->counters.kernels.empty()) {
    return;
  }
  const std::map<std::string, double> counters = plan_counters(r.profile->counters);
  double time_us = r.time_us.value_or(0);
  if (time_us == 0) {
    const auto duration = counters.find(std::string(counter::duration_ns));
    if (duration != counters.end()) time_us = duration->second / 1000.0;
  }
  const double floor_us = report.floors ? report.floors->us[report.timing.mode] : 0.0;
  // A task that states only the sum of its bytes has no minimum for either way.
  const minimal_bytes minimal =
      report.roofline_mix_known
          ? minimal_bytes{.read = static_cast<double>(report.roofline_read_bytes),
                          .written = static_cast<double>(report.roofline_write_bytes)}
          : minimal_bytes{};
  r.profile->diagnosis = diagnose(counters, minimal, time_us, floor_us);
}

}  // namespace blaster
