#include "portfolio/detail/card_ceilings.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace blaster::detail {
namespace {

std::optional<bound_by> counted_bound(const variant_result& r) {
  if (!r.profile || !r.profile->diagnosis) return std::nullopt;
  const bound_by b = r.profile->diagnosis->bound;
  // Latency names no ceiling: the roofline decides such a case.
  if (b == bound_by::latency) return std::nullopt;
  return b;
}

// How near the case is to its memory floor and to the matrix rate, as shares of each.
double memory_share(const variant_result& r) {
  if (r.time_over_floor && *r.time_over_floor > 0) return 1.0 / *r.time_over_floor;
  return r.copy_bandwidth_pct.value_or(0.0) / 100.0;
}
double compute_share(const variant_result& r) { return r.matrix_rate_pct.value_or(0.0) / 100.0; }

// The DRAM ceiling's name for the case's mix of bytes read and written.
std::string mix_name(const bench_report& r) {
  if (!r.roofline_mix_known) return "copy bandwidth";
  const double total =
      static_cast<double>(r.roofline_read_bytes) + static_cast<double>(r.roofline_write_bytes);
  const double share = total > 0 ? static_cast<double>(r.roofline_read_bytes) / total : 0.5;
  if (share == 0.5) return "copy bandwidth";
  if (share == 1.0) return "read bandwidth";
  if (share == 0.0) return "write bandwidth";
  return fmt::format("read/write bandwidth ({:.0f}% read)", 100.0 * share);
}

}  // namespace

bound_choice choose_bound(const bench_report& ra, const variant_result& a, const bench_report& rb,
                          const variant_result& b, const std::string& a_card,
                          const std::string& b_card) {
  if (a.launch_bound || b.launch_bound || ra.timing.mode == timing_mode::graph) {
    return {bound_by::launch, "launch floor", {}};
  }
  const std::optional<bound_by> da = counted_bound(a);
  const std::optional<bound_by> db = counted_bound(b);
  std::string note;
  if (da && db && *da == *db) return {*da, "counters", {}};
  if (da && db) {
    note = fmt::format("the counters disagree: {} on the {}, {} on the {}", to_string(*da), a_card,
                       to_string(*db), b_card);
  } else if (da || db) {
    return {da ? *da : *db, fmt::format("counters on the {}", da ? a_card : b_card), {}};
  }
  const bool rates =
      ra.matrix && rb.matrix && ra.matrix->flops_per_second > 0 && rb.matrix->flops_per_second > 0;
  const double compute = std::max(compute_share(a), compute_share(b));
  const double memory = std::max(memory_share(a), memory_share(b));
  return {rates && compute > memory ? bound_by::compute : bound_by::bandwidth, "roofline", note};
}

std::optional<case_ceiling> ceiling_for(const bench_report& r, const variant_result& v,
                                        bound_by b) {
  if (b == bound_by::launch) {
    if (!r.floors || !(r.floors->us[r.timing.mode] > 0)) return std::nullopt;
    return case_ceiling{fmt::format("{} launch floor", to_string(r.timing.mode)),
                        r.floors->us[r.timing.mode], 0.0};
  }
  if (b == bound_by::compute) {
    if (!r.matrix || !(r.matrix->flops_per_second > 0)) return std::nullopt;
    return case_ceiling{"matrix rate", r.matrix->flops_per_second, 0.0};
  }
  // Where the case's roofline floor was taken: the ceiling of its mix and of where its data lives.
  if (v.floor && v.floor->ceiling_bytes_per_second > 0) {
    const std::string& level = v.floor->level;
    const std::string name = level == "l2"        ? std::string("L2 bandwidth")
                             : level == "l2+dram" ? std::string("L2 and DRAM bandwidth")
                                                  : mix_name(r);
    return case_ceiling{name, v.floor->ceiling_bytes_per_second, v.floor->uncertainty};
  }
  if (!r.memory) return std::nullopt;
  const memory_ceilings& m = *r.memory;
  if (r.roofline_mix_known && m.read.bytes_per_second > 0 && m.write.bytes_per_second > 0 &&
      m.copy.bytes_per_second > 0) {
    return case_ceiling{mix_name(r), m.dram_for(r.roofline_read_bytes, r.roofline_write_bytes),
                        m.dram_spread_for(r.roofline_read_bytes, r.roofline_write_bytes)};
  }
  if (!(m.copy.bytes_per_second > 0)) return std::nullopt;
  return case_ceiling{"copy bandwidth", m.copy.bytes_per_second, m.copy.spread};
}

}  // namespace blaster::detail
