// Dynamic per-token fp8 quantization, as vLLM's dynamic_per_token_scaled_fp8_quant computes it:
//   scale[t] = max(max_j |x[t, j]| / 448, 1 / (448 * 512))
//   q[t, j]  = x[t, j] / scale[t], stored as fp8_e4m3 (the gate rounds and saturates it)
// 448 is fp8_e4m3's largest finite value; the floor keeps an all-zero token finite.
#include <algorithm>
#include <cmath>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {

void per_token_quant_reference(const reference_context& io) {
  constexpr double fp8_max = 448.0;
  constexpr double min_scale = 1.0 / (fp8_max * 512.0);
  const std::int64_t tokens = io.dim("T");
  const std::int64_t hidden = io.dim("H");
  const auto x = io.input("x");
  const auto q = io.output("q");
  const auto scale = io.output("scale");
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = static_cast<std::size_t>(t * hidden);
      double absmax = 0.0;
      for (std::int64_t j = 0; j < hidden; ++j) {
        absmax = std::max(absmax, std::fabs(x[row + static_cast<std::size_t>(j)]));
      }
      const double s = std::max(absmax / fp8_max, min_scale);
      scale[static_cast<std::size_t>(t)] = s;
      for (std::int64_t j = 0; j < hidden; ++j) {
        const auto i = row + static_cast<std::size_t>(j);
        q[i] = x[i] / s;
      }
    }
  });
}

}  // namespace blaster
