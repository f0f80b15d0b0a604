// Rotary position embedding in the rotate-half (GPT-NeoX) form that Llama applies, to q and k
// (vLLM's rotary_embedding with is_neox_style, writing outputs of their own): with p the token's
// position, c = cos_sin[p][i] and s = cos_sin[p][D/2 + i] for i < D/2,
//   out[i]       = x[i] * c - x[D/2 + i] * s
//   out[D/2 + i] = x[D/2 + i] * c + x[i] * s
#include "tasks/reference.hpp"
#include "core/parallel_for.hpp"

namespace blaster {
namespace {

void rotate(std::span<const double> x, std::span<double> out, std::span<const double> positions,
            std::span<const double> cos_sin, std::int64_t tokens, std::int64_t heads,
            std::int64_t dim) {
  const std::int64_t half = dim / 2;
  parallel_for(tokens, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const auto cache = static_cast<std::size_t>(
          static_cast<std::int64_t>(positions[static_cast<std::size_t>(t)]) * dim);
      for (std::int64_t h = 0; h < heads; ++h) {
        const auto row = static_cast<std::size_t>((t * heads + h) * dim);
        for (std::int64_t i = 0; i < half; ++i) {
          const double c = cos_sin[cache + static_cast<std::size_t>(i)];
          const double s = cos_sin[cache + static_cast<std::size_t>(half + i)];
          const double a = x[row + static_cast<std::size_t>(i)];
          const double b = x[row + static_cast<std::size_t>(half + i)];
          out[row + static_cast<std::size_t>(i)] = a * c - b * s;
          out[row + static_cast<std::size_t>(half + i)] = b * c + a * s;
        }
      }
    }
  });
}

}  // namespace

void rope_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("T");
  const std::int64_t dim = io.dim("D");
  const auto positions = io.input("positions");
  const auto cos_sin = io.input("cos_sin");
  rotate(io.input("q"), io.output("q_out"), positions, cos_sin, tokens, io.dim("QH"), dim);
  rotate(io.input("k"), io.output("k_out"), positions, cos_sin, tokens, io.dim("KH"), dim);
}

}  // namespace blaster
