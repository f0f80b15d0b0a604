#pragma once

#include <string>

namespace blaster {

class compile_cache;

namespace cuda {
class context;
class stream;
}  // namespace cuda

// The device's fp16 matrix rate (fp32 accumulation) as blaster's own tensor-core kernel reaches
// it: the compute ceiling of the roofline for tasks whose work is matrix products.
struct matrix_rate {
  double flops_per_second = 0.0;
  double time_us = 0.0;  // [microseconds] median per launch, best configuration
  std::string config;    // "mma.sync m16n8k16, grid 264 x 256, 8 chains per warp"
};

// Runs chains of independent register-only mma.sync m16n8k16 instructions on every SM in a
// few launch configurations and keeps the fastest. Hopper's wgmma can go faster still; this is
// the rate a kernel written with mma.sync can reach.
matrix_rate measure_matrix_rate(const cuda::context& context, const cuda::stream& stream,
                                compile_cache* cache);

}  // namespace blaster
