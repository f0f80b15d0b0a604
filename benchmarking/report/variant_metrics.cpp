#include "benchmarking/report/variant_metrics.hpp"

#include <array>

namespace blaster {
namespace {

using value_fn = std::optional<double> (*)(const bench_report&, const variant_result&);

// A quantity of the timing, read only where the variant was timed.
template <typename Read>
std::optional<double> timed(const variant_result& r, Read read) {
  if (!r.timing || !r.time_us) return std::nullopt;
  return static_cast<double>(read(*r.timing));
}

std::optional<double> percent(const std::optional<double>& fraction) {
  return fraction ? std::optional<double>(100.0 * *fraction) : std::nullopt;
}

// The plan's value of a hardware counter, where the variant was profiled.
template <const std::string_view& Name>
std::optional<double> counted(const bench_report&, const variant_result& r) {
  if (!r.profile || r.profile->counters.kernels.empty()) return std::nullopt;
  const auto counters = plan_counters(r.profile->counters);
  const auto it = counters.find(std::string(Name));
  return it == counters.end() ? std::nullopt : std::optional<double>(it->second);
}

// The tensor pipe's share of the cycles; a run recorded before every kind of tensor instruction
// was counted has its hmma share.
std::optional<double> tensor_pipe(const bench_report& report, const variant_result& r) {
  const auto all = counted<counter::tensor_pipe_pct>(report, r);
  return all ? all : counted<counter::tensor_pipe_hmma_pct>(report, r);
}

// A quantity of the diagnosis.
template <typename Read>
std::optional<double> diagnosed(const variant_result& r, Read read) {
  if (!r.profile || !r.profile->diagnosis) return std::nullopt;
  return read(*r.profile->diagnosis);
}

const std::array metrics{
    variant_metric{.info = {.tag = "time_us",
                            .name = "time us",
                            .unit = "us",
                            .description = "the median of the session medians, per launch",
                            .format = "{:.2f}"},
                   .value = [](const bench_report&, const variant_result& r) { return r.time_us; },
                   .width = 10,
                   .console = true},
    variant_metric{
        .info = {.tag = "kernel_us",
                 .name = "kernel us",
                 .unit = "us",
                 .description = "the kernels' own time on the device per launch, from CUPTI (the "
                                "first session)",
                 .format = "{:.2f}"},
        .value =
            [](const bench_report&, const variant_result& r) {
              return timed(r, [](const timing_samples& t) { return t.cupti.kernel_us; });
            },
        .width = 9,
        .console = true},
    variant_metric{.info = {.tag = "noise",
                            .name = "noise",
                            .unit = "%",
                            .description = "the noisiest session's stddev over mean",
                            .format = "{:.2f}%"},
                   .value =
                       [](const bench_report&, const variant_result& r) {
                         return percent(
                             timed(r, [&r](const timing_samples&) { return r.max_noise; }));
                       },
                   .width = 6,
                   .console = true},
    variant_metric{.info = {.tag = "spread",
                            .name = "spread",
                            .unit = "%",
                            .description = "max/min - 1 of the session medians",
                            .format = "{:.2f}%"},
                   .value =
                       [](const bench_report&, const variant_result& r) {
                         return percent(
                             timed(r, [&r](const timing_samples&) { return r.session_spread; }));
                       },
                   .width = 6,
                   .console = true},
    variant_metric{.info = {.tag = "speedup",
                            .name = "speedup",
                            .unit = "x",
                            .description = "the baseline's time over this one, in the same run",
                            .format = "{:.2f}x"},
                   .value = [](const bench_report&, const variant_result& r) { return r.speedup; },
                   .width = 8,
                   .console = true},
    variant_metric{
        .info = {.tag = "bandwidth_gbs",
                 .name = "GB/s",
                 .unit = "GB/s",
                 .description = "the task's roofline bytes over the time",
                 .format = "{:.1f}"},
        .value = [](const bench_report&, const variant_result& r) { return r.bandwidth_gbs; },
        .width = 8,
        .console = true},
    variant_metric{
        .info = {.tag = "roofline_pct",
                 .name = "% roof",
                 .unit = "%",
                 .description = "the roofline floor over the time: the task's bytes read and "
                                "written at the measured ceilings of that mix, from the L2 as far "
                                "as the data fits there",
                 .format = "{:.1f}%"},
        .value = [](const bench_report&, const variant_result& r) -> std::optional<double> {
          if (!r.time_over_floor || *r.time_over_floor <= 0.0) return std::nullopt;
          return 100.0 / *r.time_over_floor;
        },
        .width = 9,
        .console = true},
    variant_metric{
        .info = {.tag = "discarded_samples",
                 .name = "drop",
                 .unit = "",
                 .description = "samples discarded because the SM clock ran below the run's "
                                "share of its rated clock",
                 .format = "{:.0f}"},
        .value =
            [](const bench_report&, const variant_result& r) {
              return timed(r, [](const timing_samples& t) { return t.discarded_samples; });
            },
        .width = 4,
        .console = true},
    variant_metric{.info = {.tag = "mean_clock_mhz",
                            .name = "MHz",
                            .unit = "MHz",
                            .description = "the mean SM clock of the first session's kept samples",
                            .format = "{:.0f}"},
                   .value =
                       [](const bench_report&, const variant_result& r) {
                         return timed(r, [](const timing_samples& t) { return t.mean_clock_mhz; });
                       },
                   .width = 5,
                   .console = true},
    variant_metric{
        .info = {.tag = "copy_bandwidth_pct",
                 .name = "% copy BW",
                 .unit = "%",
                 .description = "GB/s against the device's measured copy bandwidth",
                 .format = "{:.1f}%"},
        .value = [](const bench_report&, const variant_result& r) { return r.copy_bandwidth_pct; }},
    variant_metric{
        .info = {.tag = "time_over_floor",
                 .name = "x floor",
                 .unit = "x",
                 .description = "the time over the roofline floor",
                 .format = "{:.3f}x"},
        .value = [](const bench_report&, const variant_result& r) { return r.time_over_floor; }},
    variant_metric{
        .info = {.tag = "time_over_launch_floor",
                 .name = "x launch",
                 .unit = "x",
                 .description = "the time over an empty kernel's in the same timing mode: near 1, "
                                "the time is the launch's, not the kernel's",
                 .format = "{:.2f}x"},
        .value = [](const bench_report& report, const variant_result& r) -> std::optional<double> {
          if (!r.time_us || !report.floors) return std::nullopt;
          const double floor_us = report.floors->us[report.timing.mode];
          if (floor_us <= 0.0) return std::nullopt;
          return *r.time_us / floor_us;
        }},
    variant_metric{
        .info = {.tag = "flops_per_second",
                 .name = "FLOP/s",
                 .unit = "FLOP/s",
                 .description = "the task's flops over the time",
                 .format = "{:.4g}"},
        .value = [](const bench_report&, const variant_result& r) { return r.flops_per_second; }},
    variant_metric{
        .info = {.tag = "matrix_rate_pct",
                 .name = "% matrix",
                 .unit = "%",
                 .description = "the flops against the device's measured matrix rate",
                 .format = "{:.1f}%"},
        .value = [](const bench_report&, const variant_result& r) { return r.matrix_rate_pct; }},
    variant_metric{
        .info = {.tag = "counted_us",
                 .name = "counted us",
                 .unit = "us",
                 .description = "the kernels' time under the range profiler, one run on a "
                                "flushed L2 (counters)",
                 .format = "{:.2f}"},
        .value = [](const bench_report& report, const variant_result& r) {
          const auto ns = counted<counter::duration_ns>(report, r);
          return ns ? std::optional<double>(*ns / 1000.0) : std::nullopt;
        },
        .width = 10,
        .counter = true},
    variant_metric{
        .info = {.tag = "dram_read_over_minimal",
                 .name = "DRAM read",
                 .unit = "x",
                 .description = "the DRAM bytes read over the task's minimal read bytes (counters)",
                 .format = "{:.2f}x"},
        .value =
            [](const bench_report&, const variant_result& r) {
              return diagnosed(r, [](const counter_diagnosis& d) { return d.read_over_minimal; });
            },
        .width = 9,
        .counter = true},
    variant_metric{
        .info = {.tag = "dram_written_over_minimal",
                 .name = "DRAM write",
                 .unit = "x",
                 .description = "the DRAM bytes written, with what the L2 wrote back after the "
                                "kernel, over the task's minimal write bytes (counters)",
                 .format = "{:.2f}x"},
        .value =
            [](const bench_report&, const variant_result& r) {
              return diagnosed(r,
                               [](const counter_diagnosis& d) { return d.written_over_minimal; });
            },
        .width = 10,
        .counter = true},
    variant_metric{.info = {.tag = "dram_throughput_pct",
                            .name = "DRAM %",
                            .unit = "%",
                            .description = "DRAM throughput against its peak (counters)",
                            .format = "{:.1f}%"},
                   .value = &counted<counter::dram_throughput_pct>,
                   .width = 7,
                   .counter = true},
    variant_metric{.info = {.tag = "l2_throughput_pct",
                            .name = "L2 %",
                            .unit = "%",
                            .description = "L2 throughput against its peak (counters)",
                            .format = "{:.1f}%"},
                   .value = &counted<counter::l2_throughput_pct>,
                   .width = 6,
                   .counter = true},
    variant_metric{.info = {.tag = "sm_throughput_pct",
                            .name = "SM %",
                            .unit = "%",
                            .description = "the busiest SM unit against its peak (counters)",
                            .format = "{:.1f}%"},
                   .value = &counted<counter::sm_throughput_pct>,
                   .width = 6,
                   .counter = true},
    variant_metric{.info = {.tag = "tensor_pipe_pct",
                            .name = "tensor %",
                            .unit = "%",
                            .description = "the tensor pipe's active cycles (counters)",
                            .format = "{:.1f}%"},
                   .value = &tensor_pipe,
                   .width = 8,
                   .counter = true},
    variant_metric{.info = {.tag = "achieved_occupancy_pct",
                            .name = "occupancy",
                            .unit = "%",
                            .description = "the warps active per SM against its most (counters)",
                            .format = "{:.1f}%"},
                   .value = &counted<counter::achieved_occupancy_pct>,
                   .width = 9,
                   .counter = true},
    variant_metric{.info = {.tag = "l2_hit_pct",
                            .name = "L2 hit",
                            .unit = "%",
                            .description = "the L2's sector hit rate (counters)",
                            .format = "{:.1f}%"},
                   .value = &counted<counter::l2_hit_pct>,
                   .width = 6,
                   .counter = true},
    variant_metric{.info = {.tag = "l1_hit_pct",
                            .name = "L1 hit",
                            .unit = "%",
                            .description = "the L1's sector hit rate (counters)",
                            .format = "{:.1f}%"},
                   .value = &counted<counter::l1_hit_pct>,
                   .width = 6,
                   .counter = true},
    variant_metric{.info = {.tag = "instructions",
                            .name = "instructions",
                            .unit = "",
                            .description = "warp instructions executed (counters)",
                            .format = "{:.4g}"},
                   .value = &counted<counter::instructions>,
                   .width = 12,
                   .counter = true},
};

}  // namespace

std::span<const variant_metric> variant_metrics() { return metrics; }

const variant_metric* find_variant_metric(std::string_view tag) {
  for (const auto& m : metrics) {
    if (m.info.tag == tag) return &m;
  }
  return nullptr;
}

nlohmann::json metric_values(const bench_report& report, const variant_result& result) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& m : metrics) {
    if (const auto v = m.value(report, result)) out[std::string(m.info.tag)] = *v;
  }
  return out;
}

}  // namespace blaster
