#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/gate/reason_code.hpp"
#include "core/dtype.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

// One element the candidate got most wrong: the evidence printed with a rejection.
struct worst_element {
  std::int64_t index = 0;
  double candidate = 0.0;
  double reference = 0.0;
  double normalized_error = 0.0;  // |c - r| / (atol + rtol*|r|); above 1 is a mismatch
};

// How one output buffer compares with the float64 reference.
struct error_metrics {
  std::string buffer;
  std::int64_t elements = 0;
  std::int64_t mismatches = 0;  // normalized error above 1
  std::int64_t nonfinite = 0;   // NaN or Inf where the reference is finite
  std::int64_t unwritten = 0;   // still holding the poison pattern
  double max_abs = 0.0;
  double max_rel = 0.0;  // over elements whose reference is not zero
  // Quantiles of the normalized error over the written elements (non-finite ones count as
  // infinite), each an upper bound within 3.2% (see error_histogram).
  double p50 = 0.0;
  double p90 = 0.0;
  double p99 = 0.0;
  double p999 = 0.0;
  std::vector<worst_element> worst;  // up to worst_kept, largest normalized error first

  static constexpr std::size_t worst_kept = 5;
};

// Compares on all cores. Elements that still hold the run's poison pattern (poison_pattern of
// the type and the run's seed) count as unwritten, not as NaN. An element of a quantization
// format is right when some value within the tolerance of the reference stores as it (the next
// step only near a rounding boundary); others are right within the tolerance of the reference.
// An element that holds its `alternative` (the reference's second acceptable value; NaN or an
// empty span: none) is right too.
error_metrics compare_output(std::string buffer, dtype type, std::uint32_t poison,
                             std::span<const std::byte> candidate,
                             std::span<const double> reference, const tolerance& tol,
                             std::span<const double> alternative = {});

// The reason code of the first failure, in order of precedence (unwritten_output, nonfinite,
// wrong_result), or none when the output passes.
reason_code failure_reason(const error_metrics& m);

// Infinite quantiles are written as "inf" and a candidate's non-finite values as null: JSON has
// neither.
nlohmann::json to_json(const error_metrics& m);
error_metrics error_metrics_from_json(const nlohmann::json& j);

// "12 of 67108864 elements differ; worst at 4711: 0.5012 vs 0.4980 (3.1x tolerance)"
std::string describe_failure(const error_metrics& m);

}  // namespace blaster
