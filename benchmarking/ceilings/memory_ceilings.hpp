#pragma once

#include <cstdint>
#include <string>

namespace blaster {

class compile_cache;

namespace cuda {
class context;
class stream;
struct device_properties;
}  // namespace cuda

// One bandwidth ceiling as blaster's own kernels reach it on the device: the best of several
// kernels and launch shapes, so that the ceiling is not understated.
struct bandwidth_ceiling {
  double bytes_per_second = 0.0;
  std::int64_t bytes_moved = 0;  // [bytes] per launch, read + written
  double time_us = 0.0;          // [microseconds] median per launch of the best kernel
  std::string config;            // "copy uint4 grid-stride, grid 1056 x 256"
  // The ceiling's own uncertainty: the best kernel's slowest kept sample over its fastest,
  // minus 1. A time beyond the ceiling by less than this is not evidence of anything.
  double spread = 0.0;
};

// The memory ceilings of the roofline. Reads alone go faster than a copy on HBM (no turnarounds
// between reading and writing), so a kernel is judged against the ceiling of its own mix of
// bytes read and written; data that fits in the L2 has a ceiling of its own.
struct memory_ceilings {
  bandwidth_ceiling copy{};   // DRAM, as many bytes read as written
  bandwidth_ceiling read{};   // DRAM, bytes read only
  bandwidth_ceiling write{};  // DRAM, bytes written only
  bandwidth_ceiling l2{};     // data resident in the L2: the best of a copy and a read there
  // [bytes/s] the memory's clock times its bus width (the datasheet's number): no kernel moves
  // bytes through DRAM faster. 0 when the device does not say.
  double peak_bytes_per_second = 0.0;

  // [bytes/s] the DRAM ceiling for a kernel that reads `read` and writes `written` bytes:
  // between the write-only, copy and read-only ceilings by the share of bytes read.
  [[nodiscard]] double dram_for(std::int64_t read, std::int64_t written) const;
  // [bytes/s] the hard upper bound of any DRAM rate: the peak, or a measured ceiling where one
  // exceeds it (then the device's clock or bus width is not what it says).
  [[nodiscard]] double dram_bound() const;
  // The relative uncertainty of dram_for's answer: the larger spread of the two ceilings
  // it interpolates between.
  [[nodiscard]] double dram_spread_for(std::int64_t read, std::int64_t written) const;
};

// [bytes/s] the memory's theoretical peak from the device's memory clock and bus width.
double peak_memory_bandwidth(const cuda::device_properties& device);

// Copies, reads and writes 2 GiB buffers (far beyond the L2; an eighth of the memory at most)
// with grid-stride and one-pass kernels of 8- and 16-byte vectors in several launch shapes, and
// copies and reads buffers that fit in the L2 (many passes a launch), keeping the fastest of each.
memory_ceilings measure_memory_ceilings(const cuda::context& context, const cuda::stream& stream,
                                        compile_cache* cache);

}  // namespace blaster
