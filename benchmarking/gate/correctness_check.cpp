#include "benchmarking/gate/correctness_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "benchmarking/gate/detail/error_histogram.hpp"
#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace blaster {
namespace {

void keep_worst(std::vector<worst_element>& worst, const worst_element& e) {
  auto larger = [](const worst_element& a, const worst_element& b) {
    return a.normalized_error > b.normalized_error;
  };
  if (worst.size() == error_metrics::worst_kept && !larger(e, worst.back())) return;
  worst.insert(std::upper_bound(worst.begin(), worst.end(), e, larger), e);
  if (worst.size() > error_metrics::worst_kept) worst.pop_back();
}

// What one element holds: the poison pattern (never written), or a value.
struct decoded {
  bool poison;
  double value;
};

// f16 is what most outputs are: decode it through a table of all 65536 patterns, not through
// a conversion and a byte compare per element.
double decode_f16_bits(std::uint16_t bits) {
  static const std::vector<double> table = [] {
    std::vector<double> t(65536);
    for (std::uint32_t b = 0; b < t.size(); ++b) {
      const auto half = static_cast<std::uint16_t>(b);
      t[b] = load_as_double(dtype::f16, reinterpret_cast<const std::byte*>(&half));
    }
    return t;
  }();
  return table[bits];
}

// x / y where y may be 0: an exact element is 0, any other infinitely far.
double ratio(double x, double y) {
  if (x == 0.0) return 0.0;
  return y > 0.0 ? x / y : INFINITY;
}

// A finite element's error in units of the tolerance: right at most 1. A quantized format's
// element is right when some value within the tolerance of the reference stores as it: the
// next step is right only where the reference lies within the tolerance of the rounding boundary
// (storing is monotonic, so those values are the steps from the store of r - tol to that of
// r + tol).
double tolerance_units(dtype type, double c, double r, const tolerance& tol) {
  const double allowed = tol.atol + tol.rtol * std::fabs(r);
  if (!is_quantized(type)) return ratio(std::fabs(c - r), allowed);
  const double above = std::max(stored_value(type, r + allowed) - r, 0.0);
  const double below = std::max(r - stored_value(type, r - allowed), 0.0);
  return c >= r ? ratio(c - r, above) : ratio(r - c, below);
}

// Where the reference itself overflowed or is undefined, the element must hold the same non-finite
// value, or what a quantization format stores for it (its largest finite value, for infinity).
bool same_non_finite(dtype type, double c, double r) {
  const double want = is_quantized(type) ? stored_value(type, r) : r;
  return (std::isnan(want) && std::isnan(c)) || want == c;
}

template <class Decode>
error_metrics compare_elements(std::string buffer, dtype type, std::span<const std::byte> candidate,
                               std::span<const double> reference, const tolerance& tol,
                               std::span<const double> alternative, Decode decode) {
  const std::size_t width = size_of(type);
  const bool integer = !is_floating(type);
  const bool quantized = is_quantized(type);
  // A poison that is a value an honest kernel may write there: an integer, or fp8_e4m3's NaN.
  const bool poison_is_a_value = integer || type == dtype::fp8_e4m3;
  error_metrics total;
  total.buffer = std::move(buffer);
  total.elements = static_cast<std::int64_t>(reference.size());
  std::mutex merge;
  error_histogram histogram;
  parallel_for(total.elements, [&](std::int64_t begin, std::int64_t end) {
    error_metrics part;
    error_histogram errors;
    for (std::int64_t i = begin; i < end; ++i) {
      const decoded d = decode(candidate.data() + static_cast<std::size_t>(i) * width);
      const double r = reference[static_cast<std::size_t>(i)];
      const double c = d.value;
      if (!alternative.empty() && c == alternative[static_cast<std::size_t>(i)] &&
          (!d.poison || poison_is_a_value)) {
        errors.add(0.0);  // the other side of a boundary the reference lies on
        continue;
      }
      if (d.poison) {
        // Where such a poison is the right answer, the element is right whether it was written
        // or not.
        const bool right = !quantized          ? c == r
                           : !std::isfinite(r) ? same_non_finite(type, c, r)
                                               : tolerance_units(type, c, r, tol) <= 1.0;
        if (!(poison_is_a_value && right)) {
          ++part.unwritten;
          continue;
        }
      }
      if (!std::isfinite(r)) {
        const bool same = same_non_finite(type, c, r);
        errors.add(same ? 0.0 : INFINITY);
        if (!same) {
          ++part.mismatches;
          keep_worst(part.worst, {i, c, r, INFINITY});
        }
        continue;
      }
      if (!std::isfinite(c)) {
        ++part.nonfinite;
        errors.add(INFINITY);
        keep_worst(part.worst, {i, c, r, INFINITY});
        continue;
      }
      const double abs_error = std::fabs(c - r);
      const double normalized = tolerance_units(type, c, r, tol);
      part.max_abs = std::max(part.max_abs, abs_error);
      if (r != 0.0) part.max_rel = std::max(part.max_rel, abs_error / std::fabs(r));
      errors.add(normalized);
      if (normalized > 1.0) ++part.mismatches;
      // Only an element that could enter the list pays for the insertion.
      if (part.worst.size() < error_metrics::worst_kept ||
          normalized > part.worst.back().normalized_error) {
        keep_worst(part.worst, {i, c, r, normalized});
      }
    }
    const std::lock_guard lock(merge);
    histogram.merge(errors);
    total.mismatches += part.mismatches;
    total.nonfinite += part.nonfinite;
    total.unwritten += part.unwritten;
    total.max_abs = std::max(total.max_abs, part.max_abs);
    total.max_rel = std::max(total.max_rel, part.max_rel);
    for (const auto& e : part.worst) keep_worst(total.worst, e);
  });
  total.p50 = histogram.quantile(0.5);
  total.p90 = histogram.quantile(0.9);
  total.p99 = histogram.quantile(0.99);
  total.p999 = histogram.quantile(0.999);
  return total;
}

}  // namespace

error_metrics compare_output(std::string buffer, dtype type, std::uint32_t poison,
                             std::span<const std::byte> candidate,
                             std::span<const double> reference, const tolerance& tol,
                             std::span<const double> alternative) {
  if (!alternative.empty() && alternative.size() != reference.size()) {
    BLASTER_THROW("{}: {} alternatives for {} elements", buffer, alternative.size(),
                  reference.size());
  }
  if (type == dtype::f16) {
    const auto poison16 = static_cast<std::uint16_t>(poison & 0xFFFFU);
    return compare_elements(std::move(buffer), type, candidate, reference, tol, alternative,
                            [poison16](const std::byte* element) {
                              std::uint16_t bits;
                              std::memcpy(&bits, element, sizeof bits);
                              return decoded{bits == poison16, decode_f16_bits(bits)};
                            });
  }
  return compare_elements(
      std::move(buffer), type, candidate, reference, tol, alternative,
      [type, poison](const std::byte* element) {
        return decoded{is_poison(type, poison, element), load_as_double(type, element)};
      });
}

reason_code failure_reason(const error_metrics& m) {
  if (m.unwritten > 0) return reason_code::unwritten_output;
  if (m.nonfinite > 0) return reason_code::nonfinite;
  if (m.mismatches > 0) return reason_code::wrong_result;
  return reason_code::none;
}

std::string describe_failure(const error_metrics& m) {
  const reason_code reason = failure_reason(m);
  if (reason == reason_code::none) return "";
  if (reason == reason_code::unwritten_output) {
    return fmt::format("{}: {} of {} elements never written", m.buffer, m.unwritten, m.elements);
  }
  std::string text =
      reason == reason_code::nonfinite
          ? fmt::format("{}: {} of {} elements are NaN or Inf", m.buffer, m.nonfinite, m.elements)
          : fmt::format("{}: {} of {} elements outside tolerance", m.buffer, m.mismatches,
                        m.elements);
  if (!m.worst.empty()) {
    const auto& w = m.worst.front();
    text += fmt::format("; worst at [{}]: {:.6g} vs reference {:.6g}", w.index, w.candidate,
                        w.reference);
    if (std::isfinite(w.normalized_error))
      text += fmt::format(" ({:.3g}x tolerance)", w.normalized_error);
  }
  return text;
}

namespace {

nlohmann::json finite_or_text(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json("inf");
}

double number_from(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string() && j.get<std::string>() == "inf") return INFINITY;
  return NAN;  // null: a value JSON cannot hold
}

}  // namespace

nlohmann::json to_json(const error_metrics& m) {
  nlohmann::json worst = nlohmann::json::array();
  for (const auto& w : m.worst) {
    worst.push_back({{"index", w.index},
                     {"candidate", w.candidate},
                     {"reference", w.reference},
                     {"normalized_error", finite_or_text(w.normalized_error)}});
  }
  return {{"buffer", m.buffer},
          {"elements", m.elements},
          {"mismatches", m.mismatches},
          {"nonfinite", m.nonfinite},
          {"unwritten", m.unwritten},
          {"max_abs", m.max_abs},
          {"max_rel", m.max_rel},
          {"worst", worst},
          {"normalized_error_quantiles",
           {{"p50", finite_or_text(m.p50)},
            {"p90", finite_or_text(m.p90)},
            {"p99", finite_or_text(m.p99)},
            {"p999", finite_or_text(m.p999)}}}};
}

error_metrics error_metrics_from_json(const nlohmann::json& j) {
  const nlohmann::json& q = j.at("normalized_error_quantiles");
  error_metrics m{.buffer = j.at("buffer").get<std::string>(),
                  .elements = j.at("elements").get<std::int64_t>(),
                  .mismatches = j.at("mismatches").get<std::int64_t>(),
                  .nonfinite = j.at("nonfinite").get<std::int64_t>(),
                  .unwritten = j.at("unwritten").get<std::int64_t>(),
                  .max_abs = number_from(j.at("max_abs")),
                  .max_rel = number_from(j.at("max_rel")),
                  .p50 = number_from(q.at("p50")),
                  .p90 = number_from(q.at("p90")),
                  .p99 = number_from(q.at("p99")),
                  .p999 = number_from(q.at("p999")),
                  .worst = {}};
  for (const auto& w : j.value("worst", nlohmann::json::array())) {
    m.worst.push_back({.index = w.at("index").get<std::int64_t>(),
                       .candidate = number_from(w.at("candidate")),
                       .reference = number_from(w.at("reference")),
                       .normalized_error = number_from(w.at("normalized_error"))});
  }
  return m;
}

}  // namespace blaster
