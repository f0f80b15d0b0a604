#include "benchmarking/ceilings/roofline.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace blaster {

namespace {

// Whatever the ceilings' spread, a margin below this is within what launch shapes the ceiling
// kernels did not try could reach.
constexpr double least_margin = 0.02;

}  // namespace

roofline_floor memory_floor(const memory_ceilings& ceilings, const roofline_traffic& traffic) {
  roofline_floor f;
  f.bytes = traffic.read_bytes + traffic.written_bytes;
  // A task that states only the sum is judged as if it only read: the fastest mix.
  const std::int64_t read = traffic.mix_known ? traffic.read_bytes : f.bytes;
  const std::int64_t written = traffic.mix_known ? traffic.written_bytes : 0;
  double dram = ceilings.dram_for(read, written);
  double spread = ceilings.dram_spread_for(read, written);
  const std::int64_t copies = std::max(traffic.buffer_copies, 1);
  const std::int64_t span = copies * std::min(traffic.footprint_bytes, f.bytes);
  // One set no larger than twice the L2 may stay there; rotated sets are as many as make twice
  // the L2, unless their count reached its cap first.
  const bool fits = copies == 1 ? span <= 2 * traffic.l2_bytes : span < 2 * traffic.l2_bytes;
  if (traffic.l2_may_hold && fits) {
    f.l2_resident_bytes = std::min(f.bytes, traffic.l2_bytes / copies);
    spread = std::max(spread, ceilings.l2.spread);
    f.level = span <= traffic.l2_bytes ? "l2" : "l2+dram";
  } else if (!traffic.l2_may_hold && written > 0) {
    // A flushed L2 is empty, and it writes back: what a launch writes, up to the L2's size, may
    // still be there when the launch ends and reach DRAM only after it. (On an H100,
    // fused_add_rms_norm at 1024 tokens read 17 MB and wrote 17 MB in 9.9 us cold: 3.39 TB/s
    // over its bytes, beyond the HBM's 3.35 TB/s peak.) DRAM carries the reads and the rest.
    f.l2_resident_bytes = std::min(written, traffic.l2_bytes);
    dram = ceilings.dram_for(read, written - f.l2_resident_bytes);
    spread = std::max(ceilings.dram_spread_for(read, written - f.l2_resident_bytes),
                      ceilings.l2.spread);
    f.level = f.l2_resident_bytes == f.bytes ? "l2" : "l2+dram";
  }
  if (f.l2_resident_bytes == 0) f.level = "dram";
  const double l2_rate = std::max(ceilings.l2.bytes_per_second, dram);
  const double seconds =
      static_cast<double>(f.bytes - f.l2_resident_bytes) / dram +
      (f.l2_resident_bytes > 0 ? static_cast<double>(f.l2_resident_bytes) / l2_rate : 0.0);
  f.floor_us = seconds * 1e6;
  f.ceiling_bytes_per_second = seconds > 0.0 ? static_cast<double>(f.bytes) / seconds : 0.0;
  f.uncertainty = spread;
  return f;
}

std::optional<std::string> impossible_speed(const roofline_floor& floor,
                                            const memory_ceilings& ceilings, double time_us,
                                            double noise) {
  if (floor.bytes <= 0 || time_us <= 0.0 || floor.floor_us <= 0.0) return std::nullopt;
  const double margin = std::max(least_margin, floor.uncertainty) + noise;
  const double rate = static_cast<double>(floor.bytes) / (time_us * 1e-6);
  const bool below_floor = time_us * (1.0 + margin) < floor.floor_us;
  // The peak is physics, not a measurement: the ceilings' spread does not widen it. It bounds
  // the bytes that must cross DRAM during the launch, those the L2 could not hold.
  const double dram_rate =
      static_cast<double>(floor.bytes - floor.l2_resident_bytes) / (time_us * 1e-6);
  const bool beyond_bound =
      ceilings.dram_bound() > 0.0 && dram_rate > ceilings.dram_bound() * (1.0 + least_margin);
  if (!below_floor && !beyond_bound) return std::nullopt;
  return fmt::format(
      "{} bytes in {:.3f} us is {:.1f} GB/s; the {} ceiling for this mix is {:.1f} GB/s "
      "(a floor of {:.3f} us, uncertainty {:.1f}%)",
      floor.bytes, time_us, rate / 1e9, floor.level, floor.ceiling_bytes_per_second / 1e9,
      floor.floor_us, 100.0 * margin);
}

nlohmann::json to_json(const roofline_floor& f) {
  return {{"level", f.level},
          {"bytes", f.bytes},
          {"l2_resident_bytes", f.l2_resident_bytes},
          {"ceiling_bytes_per_second", f.ceiling_bytes_per_second},
          {"floor_us", f.floor_us},
          {"uncertainty", f.uncertainty}};
}

roofline_floor roofline_floor_from_json(const nlohmann::json& j) {
  return {.level = j.at("level").get<std::string>(),
          .bytes = j.at("bytes").get<std::int64_t>(),
          .l2_resident_bytes = j.at("l2_resident_bytes").get<std::int64_t>(),
          .ceiling_bytes_per_second = j.at("ceiling_bytes_per_second").get<double>(),
          .floor_us = j.at("floor_us").get<double>(),
          .uncertainty = j.at("uncertainty").get<double>()};
}

}  // namespace blaster
