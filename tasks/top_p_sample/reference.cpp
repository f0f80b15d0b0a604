// Nucleus (top-p) sampling with the random number given: the tokens sorted by probability, highest
// first (by logit, equal logits in id order); the nucleus is the shortest prefix whose probability
// sums to at least p; the token is the first of the nucleus at which the running sum exceeds u
// times the nucleus's sum (the nucleus's last token if none does, as with u = 1).
//
// A kernel sums probabilities in fp32, in its own order: where u, or p, lies within `boundary` of
// a running sum, the float64 answer and the token across the nearest such boundary are both
// right. The other one is the row's alternative.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/parallel_for.hpp"
#include "tasks/reference.hpp"

namespace blaster {
namespace {

// [probability] How near each other a threshold and a running sum must lie to be a tie: 2^-14,
// some 500 fp32 rounding steps of 1, far above what summing 128256 probabilities in fp32 loses.
// It is not below every token's probability: at the end of a 128256-token nucleus tokens of
// 2^-16 are common, and the nearest boundary, not the first, is the one a kernel crosses.
constexpr double boundary = 1.0 / 16384.0;

// The position in the nucleus order[0, n) of the sample for threshold u * (the nucleus's sum).
std::size_t sample(const std::vector<double>& running, std::size_t n, double u) {
  const double threshold = u * running[n - 1];
  const auto at =
      std::upper_bound(running.begin(), running.begin() + static_cast<long>(n), threshold);
  return std::min(static_cast<std::size_t>(at - running.begin()), n - 1);
}

}  // namespace

void top_p_sample_reference(const reference_context& io) {
  const std::int64_t rows = io.dim("T");
  const auto vocabulary = static_cast<std::size_t>(io.dim("V"));
  const double p = io.value("p");
  const auto logits = io.input("logits");
  const auto u = io.input("u");
  const auto token = io.output("token");
  const auto alternative = io.alternative("token");
  parallel_for(rows, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::size_t> order(vocabulary);
    std::vector<double> running(vocabulary);
    for (std::int64_t t = begin; t < end; ++t) {
      const auto row = logits.subspan(static_cast<std::size_t>(t) * vocabulary, vocabulary);
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
      const double top = row[order[0]];
      double total = 0.0;
      for (std::size_t i = 0; i < vocabulary; ++i) total += std::exp(row[i] - top);
      double sum = 0.0;
      for (std::size_t k = 0; k < vocabulary; ++k) {
        sum += std::exp(row[order[k]] - top) / total;
        running[k] = sum;
      }
      // The nucleus: n tokens, the first whose running sum reaches p.
      const auto reaches = std::lower_bound(running.begin(), running.end(), p);
      const std::size_t n =
          std::min(static_cast<std::size_t>(reaches - running.begin()) + 1, vocabulary);
      const double draw = u[static_cast<std::size_t>(t)];
      const std::size_t k = sample(running, n, draw);
      const auto out = static_cast<std::size_t>(t);
      token[out] = static_cast<double>(order[k]);
      // The token across the nearest boundary within reach of a kernel's rounding: the
      // threshold's between two running sums, or p's, which makes the nucleus one token shorter
      // or longer. Near the end of a large vocabulary's nucleus several running sums lie within
      // `boundary`; a kernel's sum strays across the nearest one.
      const double threshold = draw * running[n - 1];
      std::size_t other = k;
      double nearest = boundary;
      auto consider = [&](double distance, std::size_t position) {
        if (position != k && distance < nearest) {
          nearest = distance;
          other = position;
        }
      };
      // Summed a little short, a kernel steps past k; a little over, it stops before.
      if (k + 1 < n) consider(running[k] - threshold, k + 1);
      if (k > 0) consider(threshold - running[k - 1], k - 1);
      if (n > 1) consider(p - running[n - 2], sample(running, n - 1, draw));
      if (n < vocabulary) consider(running[n - 1] - p, sample(running, n + 1, draw));
      if (other != k) alternative[out] = static_cast<double>(order[other]);
    }
  });
}

}  // namespace blaster
