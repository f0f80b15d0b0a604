// The first grouped matrix product of a mixture-of-experts layer, as vLLM's and SGLang's
// fused_moe run it for Mixtral's w1 (each expert's gate and up projections stacked, 2N rows of
// K), without the routing weights, which the second product applies:
//   C[m, j, n] = sum over k of A[m, k] * W[topk_ids[m, j], n, k]
// Each slot m * TOPK + j is one token against one of its experts. How a kernel groups the slots
// (sorted by expert and padded to its block, as the engines do) is the kernel's own business.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {
namespace {

// Weight rows per item of work: an expert's tile of them, 128 rows by one block of K, stays in
// a core's L2 (1 MiB) while every token routed to the expert passes over it, so that A is read
// from memory once per 128 rows rather than once per row.
constexpr std::int64_t tile_rows = 128;
constexpr std::int64_t block_depth = 1024;

// Tokens and rows per step: 16 sums that do not wait on each other, so the adds overlap.
constexpr std::size_t step = 4;
using step_sums = std::array<std::array<double, step>, step>;

// sums[t][r] = sum over k < depth of x[t][k] * y[r][k].
void dot_products(const std::array<const double*, step>& x,
                  const std::array<const double*, step>& y, std::int64_t depth, step_sums& sums) {
  sums = {};
  for (std::int64_t k = 0; k < depth; ++k) {
    std::array<double, step> xs{};
    std::array<double, step> ys{};
    for (std::size_t i = 0; i < step; ++i) {
      xs[i] = x[i][k];
      ys[i] = y[i][k];
    }
    for (std::size_t t = 0; t < step; ++t) {
      for (std::size_t r = 0; r < step; ++r) sums[t][r] += xs[t] * ys[r];
    }
  }
}

// The task's arrays and sizes, as the reference reads them.
struct product {
  const double* a;  // [M, K]
  const double* w;  // [E, rows, K]
  double* c;        // [M * TOPK, rows]
  std::int64_t topk;
  std::int64_t rows;   // 2N
  std::int64_t depth;  // K
};

// C's rows [row_begin, row_end) of the slots one expert serves, over K's block [k0, k0 + span):
// written by the first block, added to by the others.
void expert_tile(const product& p, const std::vector<std::int64_t>& slots, std::int64_t expert,
                 std::int64_t row_begin, std::int64_t row_end, std::int64_t k0, std::int64_t span) {
  const double* expert_w = p.w + expert * p.rows * p.depth;
  const auto count = static_cast<std::int64_t>(slots.size());
  step_sums sums{};
  for (std::int64_t i = 0; i < count; i += step) {
    // A short step repeats its last token or row, and keeps only the sums it owns.
    const auto tokens_here = static_cast<std::size_t>(std::min<std::int64_t>(step, count - i));
    std::array<const double*, step> x{};
    for (std::size_t t = 0; t < step; ++t) {
      const std::int64_t slot = slots[static_cast<std::size_t>(i) + std::min(t, tokens_here - 1)];
      x[t] = p.a + slot / p.topk * p.depth + k0;
    }
    for (std::int64_t n = row_begin; n < row_end; n += step) {
      const auto rows_here = static_cast<std::size_t>(std::min<std::int64_t>(step, row_end - n));
      std::array<const double*, step> y{};
      for (std::size_t r = 0; r < step; ++r) {
        const std::int64_t row = n + static_cast<std::int64_t>(std::min(r, rows_here - 1));
        y[r] = expert_w + row * p.depth + k0;
      }
      dot_products(x, y, span, sums);
      for (std::size_t t = 0; t < tokens_here; ++t) {
        double* out = p.c + slots[static_cast<std::size_t>(i) + t] * p.rows + n;
        for (std::size_t r = 0; r < rows_here; ++r) {
          out[r] = k0 == 0 ? sums[t][r] : out[r] + sums[t][r];
        }
      }
    }
  }
}

}  // namespace

void fused_moe_reference(const reference_context& io) {
  const std::int64_t tokens = io.dim("M");
  const std::int64_t experts = io.dim("E");
  const std::int64_t topk = io.dim("TOPK");
  const std::int64_t rows = 2 * io.dim("N");
  const std::int64_t depth = io.dim("K");
  const auto a = io.input("A");
  const auto w = io.input("W");
  const auto ids = io.input("topk_ids");
  const auto c = io.output("C");

  // The slots each expert serves, in order.
  std::vector<std::vector<std::int64_t>> served(static_cast<std::size_t>(experts));
  for (std::int64_t s = 0; s < tokens * topk; ++s) {
    const double e = ids[static_cast<std::size_t>(s)];
    if (!(e >= 0.0 && e < static_cast<double>(experts)) || e != std::floor(e)) {
      BLASTER_INPUT_ERROR("fused_moe: topk_ids[{}] is {}, not an expert of [0, {})", s, e, experts);
    }
    served[static_cast<std::size_t>(e)].push_back(s);
  }

  const product p{
      .a = a.data(), .w = w.data(), .c = c.data(), .topk = topk, .rows = rows, .depth = depth};
  const std::int64_t tiles = (rows + tile_rows - 1) / tile_rows;
  parallel_for(tiles, [&](std::int64_t first_tile, std::int64_t end_tile) {
    for (std::int64_t tile = first_tile; tile < end_tile; ++tile) {
      const std::int64_t row_begin = tile * tile_rows;
      const std::int64_t row_end = std::min(rows, row_begin + tile_rows);
      for (std::int64_t e = 0; e < experts; ++e) {
        for (std::int64_t k0 = 0; k0 < depth; k0 += block_depth) {
          expert_tile(p, served[static_cast<std::size_t>(e)], e, row_begin, row_end, k0,
                      std::min(block_depth, depth - k0));
        }
      }
    }
  });
}

}  // namespace blaster
