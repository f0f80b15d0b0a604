#include "benchmarking/gate/correctness_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace blaster {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// A NaN made by arithmetic at run time, as a kernel's 0/0 would make it.
double runtime_nan() {
  volatile double zero = 0.0;
  return zero / zero;
}
const tolerance tol{.profile = "test", .atol = 0.01, .rtol = 0.01};
// The run's poison seed: any; each run of the harness draws its own.
constexpr std::uint64_t seed = 0x5EEDF00DULL;

// The device's bytes for `values`, rounded to `type` as a kernel's store would round them.
std::vector<std::byte> bytes_of(dtype type, const std::vector<double>& values) {
  std::vector<std::byte> bytes(values.size() * size_of(type));
  for (std::size_t i = 0; i < values.size(); ++i) {
    store_from_double(type, values[i], bytes.data() + i * size_of(type));
  }
  return bytes;
}

// What an element holds when the kernel never wrote it.
void poison(dtype type, std::vector<std::byte>& bytes, std::size_t index) {
  const std::uint32_t pattern = poison_pattern(type, seed);
  std::byte repeated[8];
  std::memcpy(repeated, &pattern, 4);
  std::memcpy(repeated + 4, &pattern, 4);
  std::memcpy(bytes.data() + index * size_of(type), repeated, size_of(type));
}

error_metrics compare(dtype type, const std::vector<std::byte>& candidate,
                      const std::vector<double>& reference, const tolerance& t = tol) {
  return compare_output("out", type, poison_pattern(type, seed), candidate, reference, t);
}

class CorrectnessCheck : public ::testing::TestWithParam<dtype> {};

TEST_P(CorrectnessCheck, ExactCopyPasses) {
  // Values every tested type holds exactly, so the copy is bit-identical to the reference.
  const std::vector<double> reference = {0.0, 0.5, -1.25, 3.0, 1024.0, -0.0078125};
  const error_metrics m = compare(GetParam(), bytes_of(GetParam(), reference), reference);
  EXPECT_EQ(m.buffer, "out");
  EXPECT_EQ(m.elements, 6);
  EXPECT_EQ(m.mismatches, 0);
  EXPECT_EQ(m.nonfinite, 0);
  EXPECT_EQ(m.unwritten, 0);
  EXPECT_EQ(m.max_abs, 0.0);
  EXPECT_EQ(m.max_rel, 0.0);
  EXPECT_EQ(to_string(failure_reason(m)), "");
  EXPECT_EQ(describe_failure(m), "");
}

TEST_P(CorrectnessCheck, OneElementOutsideToleranceIsOneMismatch) {
  // Element 2 is off by 0.5 where 0.01 + 0.01*4 = 0.05 is allowed: 10x the tolerance.
  // Element 3 is off by 0.0625 where 0.09 is allowed: no mismatch, but second in the worst list.
  const std::vector<double> reference = {1.0, 2.0, 4.0, 8.0};
  const std::vector<double> candidate = {1.0, 2.0, 4.5, 8.0625};
  const error_metrics m = compare(GetParam(), bytes_of(GetParam(), candidate), reference);
  EXPECT_EQ(m.mismatches, 1);
  EXPECT_EQ(m.nonfinite, 0);
  EXPECT_EQ(m.unwritten, 0);
  EXPECT_EQ(m.max_abs, 0.5);
  EXPECT_EQ(m.max_rel, 0.125);
  ASSERT_FALSE(m.worst.empty());
  EXPECT_EQ(m.worst[0].index, 2);
  EXPECT_EQ(m.worst[0].candidate, 4.5);
  EXPECT_EQ(m.worst[0].reference, 4.0);
  EXPECT_DOUBLE_EQ(m.worst[0].normalized_error, 10.0);
  ASSERT_GE(m.worst.size(), 2u);
  EXPECT_EQ(m.worst[1].index, 3);
  EXPECT_EQ(m.worst[1].normalized_error, 0.0625 / (0.01 + 0.01 * 8.0));
  EXPECT_EQ(to_string(failure_reason(m)), "wrong_result");
  const std::string text = describe_failure(m);
  EXPECT_NE(text.find("out"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 4"), std::string::npos) << text;
  EXPECT_NE(text.find("[2]"), std::string::npos) << text;
}

TEST_P(CorrectnessCheck, ErrorExactlyAtToleranceIsNotAMismatch) {
  // |c - r| = atol + rtol*|r| is normalized error 1: the bound itself is allowed.
  const tolerance loose{.profile = "test", .atol = 0.25, .rtol = 0.0};
  const error_metrics m = compare(GetParam(), bytes_of(GetParam(), {2.25, 2.5}), {2.0, 2.0}, loose);
  EXPECT_EQ(m.mismatches, 1);  // 2.5 is 2x, 2.25 is exactly 1x
  EXPECT_EQ(m.worst.back().normalized_error, 1.0);
}

TEST_P(CorrectnessCheck, PoisonIsUnwrittenAndTakesPrecedence) {
  const std::vector<double> reference = {1.0, 2.0, 4.0, 8.0};
  auto candidate = bytes_of(GetParam(), {1.0, 2.0, 5.0, 8.0});  // element 2 is wrong too
  poison(GetParam(), candidate, 1);
  const error_metrics m = compare(GetParam(), candidate, reference);
  EXPECT_EQ(m.unwritten, 1);
  EXPECT_EQ(m.nonfinite, 0);  // the poison is a NaN, but it means "never written"
  EXPECT_EQ(m.mismatches, 1);
  EXPECT_EQ(to_string(failure_reason(m)), "unwritten_output");
  const std::string text = describe_failure(m);
  EXPECT_NE(text.find("out"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 4"), std::string::npos) << text;
  EXPECT_NE(text.find("never written"), std::string::npos) << text;
}

TEST_P(CorrectnessCheck, AnotherRunsPoisonIsANaNNotUnwritten) {
  // A kernel that writes a poison it saw in an earlier run wrote a NaN: this run's is another.
  const std::vector<double> reference = {1.0, 2.0, 4.0};
  auto candidate = bytes_of(GetParam(), reference);
  const std::uint32_t earlier = poison_pattern(GetParam(), seed + 1);
  ASSERT_NE(earlier, poison_pattern(GetParam(), seed));
  std::byte repeated[8];
  std::memcpy(repeated, &earlier, 4);
  std::memcpy(repeated + 4, &earlier, 4);
  std::memcpy(candidate.data() + size_of(GetParam()), repeated, size_of(GetParam()));
  const error_metrics m = compare(GetParam(), candidate, reference);
  EXPECT_EQ(m.unwritten, 0);
  EXPECT_EQ(m.nonfinite, 1);
  EXPECT_EQ(to_string(failure_reason(m)), "nonfinite");
}

TEST_P(CorrectnessCheck, NanWhereTheReferenceIsFiniteIsNonfinite) {
  const double nan = runtime_nan();
  const std::vector<double> reference = {1.0, 2.0, 4.0};
  const error_metrics m = compare(GetParam(), bytes_of(GetParam(), {1.0, nan, 3.0}), reference);
  EXPECT_EQ(m.nonfinite, 1);
  EXPECT_EQ(m.unwritten, 0);  // a real NaN is not the poison
  EXPECT_EQ(m.mismatches, 1);
  EXPECT_EQ(to_string(failure_reason(m)), "nonfinite");  // nonfinite outranks wrong_result
  ASSERT_FALSE(m.worst.empty());
  EXPECT_EQ(m.worst[0].index, 1);
  EXPECT_TRUE(std::isnan(m.worst[0].candidate));
  EXPECT_EQ(m.worst[0].normalized_error, inf);
  const std::string text = describe_failure(m);
  EXPECT_NE(text.find("[1]"), std::string::npos) << text;
  EXPECT_NE(text.find("out"), std::string::npos) << text;

  // Inf for a finite reference is nonfinite too.
  const error_metrics with_inf = compare(GetParam(), bytes_of(GetParam(), {1.0, inf}), {1.0, 2.0});
  EXPECT_EQ(with_inf.nonfinite, 1);
  EXPECT_EQ(to_string(failure_reason(with_inf)), "nonfinite");
}

TEST_P(CorrectnessCheck, NonfiniteReferenceDemandsTheSameValue) {
  const double nan = runtime_nan();
  const std::vector<double> reference = {inf, -inf, nan};
  const error_metrics same = compare(GetParam(), bytes_of(GetParam(), {inf, -inf, nan}), reference);
  EXPECT_EQ(same.mismatches, 0);
  EXPECT_EQ(same.nonfinite, 0);
  EXPECT_EQ(to_string(failure_reason(same)), "");

  // A finite value, the other infinity, or a number for NaN: each is a mismatch.
  const error_metrics other =
      compare(GetParam(), bytes_of(GetParam(), {1000.0, inf, 0.0}), reference);
  EXPECT_EQ(other.mismatches, 3);
  EXPECT_EQ(other.nonfinite, 0);
  EXPECT_EQ(to_string(failure_reason(other)), "wrong_result");
  ASSERT_EQ(other.worst.size(), 3u);
  for (const auto& w : other.worst) EXPECT_EQ(w.normalized_error, inf);
  EXPECT_EQ(other.worst[0].index + other.worst[1].index + other.worst[2].index, 0 + 1 + 2);
}

TEST_P(CorrectnessCheck, WorstIsSortedAndCapped) {
  // Ten elements whose errors grow with the index: the five largest are 9, 8, 7, 6, 5.
  std::vector<double> reference(10, 1.0);
  std::vector<double> candidate;
  for (int i = 0; i < 10; ++i) candidate.push_back(1.0 + 0.0625 * (i + 1));
  const error_metrics m = compare(GetParam(), bytes_of(GetParam(), candidate), reference);
  EXPECT_EQ(m.mismatches, 10);
  ASSERT_EQ(m.worst.size(), error_metrics::worst_kept);
  for (std::size_t k = 0; k < m.worst.size(); ++k) {
    EXPECT_EQ(m.worst[k].index, 9 - static_cast<std::int64_t>(k));
    EXPECT_DOUBLE_EQ(m.worst[k].normalized_error, 0.0625 * (10 - static_cast<double>(k)) / 0.02);
  }
  EXPECT_EQ(m.max_abs, 0.625);
  EXPECT_EQ(m.max_rel, 0.625);
}

TEST_P(CorrectnessCheck, MaxRelSkipsZeroReferences) {
  // 0.0078125 against 0 is inside atol and has no relative error; 2.5 against 2 is 0.25.
  const std::vector<double> reference = {0.0, 2.0};
  const error_metrics m = compare(GetParam(), bytes_of(GetParam(), {0.0078125, 2.5}), reference);
  EXPECT_EQ(m.max_abs, 0.5);
  EXPECT_EQ(m.max_rel, 0.25);
  EXPECT_EQ(m.mismatches, 1);
}

TEST_P(CorrectnessCheck, ZeroToleranceReportsTheWrongElementAsWorst) {
  // Integer-valued outputs use atol = rtol = 0: exact elements are 0/0 normalized error, and
  // must not crowd the one wrong element out of the evidence.
  const tolerance exact{.profile = "exact", .atol = 0.0, .rtol = 0.0};
  const std::vector<double> reference = {0.0, 3.0, 5.0, 0.0, 7.0, 1.0, 2.0};
  const error_metrics m = compare(
      GetParam(), bytes_of(GetParam(), {0.0, 3.0, 6.0, 0.0, 7.0, 1.0, 2.0}), reference, exact);
  EXPECT_EQ(m.mismatches, 1);
  ASSERT_FALSE(m.worst.empty());
  EXPECT_EQ(m.worst[0].index, 2);
  for (const auto& w : m.worst) EXPECT_FALSE(std::isnan(w.normalized_error)) << w.index;
  const std::string text = describe_failure(m);
  EXPECT_NE(text.find("[2]"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Types, CorrectnessCheck, ::testing::Values(dtype::f16, dtype::f32),
                         [](const auto& info) { return std::string(name_of(info.param)); });

TEST(CorrectnessCheckLarge, ParallelCountsMatchASerialExpectation) {
  // 1<<20 elements run on every core; each category below is counted here one by one.
  constexpr std::size_t n = 1 << 20;
  const dtype type = dtype::f16;
  std::vector<double> reference(n);
  std::vector<double> values(n);
  std::int64_t want_unwritten = 0;
  std::int64_t want_nonfinite = 0;
  std::int64_t want_mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::byte rounded[2];
    store_from_double(type, std::sin(static_cast<double>(i)), rounded);
    reference[i] = load_as_double(type, rounded);
    values[i] = reference[i];
    if (i % 4096 == 2) {
      ++want_unwritten;  // poisoned below
    } else if (i % 10007 == 3) {
      values[i] = runtime_nan();
      ++want_nonfinite;
    } else if (i % 1000 == 1) {
      values[i] = reference[i] + 1.0;  // |r| <= 1 allows at most 0.02
      ++want_mismatches;
    }
  }
  auto candidate = bytes_of(type, values);
  for (std::size_t i = 2; i < n; i += 4096) poison(type, candidate, i);

  // The serial maxima over finite written elements, from the stored bytes.
  double want_max_abs = 0.0;
  double want_max_rel = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double c = load_as_double(type, candidate.data() + 2 * i);
    if (i % 4096 == 2 || std::isnan(c)) continue;
    const double e = std::fabs(c - reference[i]);
    want_max_abs = std::max(want_max_abs, e);
    if (reference[i] != 0.0) want_max_rel = std::max(want_max_rel, e / std::fabs(reference[i]));
  }

  const error_metrics m =
      compare_output("out", type, poison_pattern(type, seed), candidate, reference, tol);
  EXPECT_EQ(m.elements, static_cast<std::int64_t>(n));
  EXPECT_EQ(m.unwritten, want_unwritten);
  EXPECT_EQ(m.nonfinite, want_nonfinite);
  EXPECT_EQ(m.mismatches, want_mismatches);
  EXPECT_EQ(m.max_abs, want_max_abs);
  EXPECT_EQ(m.max_rel, want_max_rel);
  ASSERT_EQ(m.worst.size(), error_metrics::worst_kept);
  for (const auto& w : m.worst) {
    EXPECT_EQ(w.index % 10007, 3) << w.index;  // NaNs are infinitely wrong
    EXPECT_EQ(w.normalized_error, inf);
  }
}

// A quantized output is right when it is what a value within the tolerance of the float64
// reference stores as: the neighbouring step only where the reference is that close to the
// rounding boundary between the two. fp8_e4m3 steps by 1/8 between 1 and 2, so 1.0625 is the
// boundary between 1 and 1.125.
TEST(CorrectnessCheckQuantized, TheNextStepIsRightOnlyNearARoundingBoundary) {
  const tolerance one_percent{.profile = "test", .atol = 0.0, .rtol = 0.01};
  const dtype e4m3 = dtype::fp8_e4m3;
  // 1.06 is within 1% of the boundary: both neighbours are right.
  EXPECT_EQ(compare(e4m3, bytes_of(e4m3, {1.0, 1.125}), {1.06, 1.06}, one_percent).mismatches, 0);
  // 1.02 is not: only 1 is.
  const error_metrics far = compare(e4m3, bytes_of(e4m3, {1.0, 1.125}), {1.02, 1.02}, one_percent);
  EXPECT_EQ(far.mismatches, 1);
  ASSERT_FALSE(far.worst.empty());
  EXPECT_EQ(far.worst[0].index, 1);
  EXPECT_EQ(far.worst[0].normalized_error, INFINITY) << "no value within 1% of 1.02 stores as it";
  // Without a tolerance only the correctly rounded value is right, near the boundary or not.
  const tolerance exact{.profile = "test", .atol = 0.0, .rtol = 0.0};
  EXPECT_EQ(compare(e4m3, bytes_of(e4m3, {1.0, 1.125}), {1.06, 1.06}, exact).mismatches, 1);
  // Two steps off is wrong however near a boundary: 1.25 is not a neighbour of 1.06.
  EXPECT_EQ(compare(e4m3, bytes_of(e4m3, {1.25}), {1.06}, one_percent).mismatches, 1);
  // Saturation: the largest finite value is right for anything beyond it, infinity included.
  EXPECT_EQ(compare(e4m3, bytes_of(e4m3, {448.0, 448.0}), {1000.0, inf}, exact).mismatches, 0);
}

TEST(CorrectnessCheckQuantized, I8RoundsHalfToEvenAndAToleranceWidensOnlyTheBoundary) {
  const tolerance exact{.profile = "test", .atol = 0.0, .rtol = 0.0};
  const tolerance near{.profile = "test", .atol = 0.01, .rtol = 0.0};
  const dtype i8 = dtype::i8;
  EXPECT_EQ(compare(i8, bytes_of(i8, {2.0, 4.0}), {2.5, 3.5}, exact).mismatches, 0);
  EXPECT_EQ(compare(i8, bytes_of(i8, {3.0, 3.0}), {2.5, 3.5}, exact).mismatches, 2);
  EXPECT_EQ(compare(i8, bytes_of(i8, {3.0, 3.0}), {2.5, 3.5}, near).mismatches, 0);
  EXPECT_EQ(compare(i8, bytes_of(i8, {3.0}), {2.4}, near).mismatches, 1);
  EXPECT_EQ(compare(i8, bytes_of(i8, {127.0, -128.0}), {300.0, -1e9}, exact).mismatches, 0);
}

// fp8_e4m3's poison is its NaN: unwritten where the reference is finite, right where it is NaN.
// fp8_e5m2's and i8's follow the rules of floats and integers.
TEST(CorrectnessCheckQuantized, PoisonIsUnwrittenUnlessItIsTheAnswer) {
  for (dtype t : {dtype::fp8_e4m3, dtype::fp8_e5m2, dtype::i8}) {
    auto candidate = bytes_of(t, {1.0, 2.0, 0.0});
    poison(t, candidate, 1);
    const error_metrics m = compare(t, candidate, {1.0, 2.0, 0.0});
    EXPECT_EQ(m.unwritten, 1) << name_of(t);
    EXPECT_EQ(to_string(failure_reason(m)), "unwritten_output") << name_of(t);
  }
  auto e4m3 = bytes_of(dtype::fp8_e4m3, {1.0, 0.0});
  poison(dtype::fp8_e4m3, e4m3, 1);
  const error_metrics nan_wanted = compare(dtype::fp8_e4m3, e4m3, {1.0, runtime_nan()});
  EXPECT_EQ(nan_wanted.unwritten, 0);
  EXPECT_EQ(nan_wanted.mismatches, 0);
  // i8's poison where the reference rounds to it is right.
  const double poison_value =
      static_cast<double>(static_cast<std::int8_t>(poison_pattern(dtype::i8, seed) & 0xFFU));
  auto i8 = bytes_of(dtype::i8, {0.0});
  poison(dtype::i8, i8, 0);
  EXPECT_EQ(compare(dtype::i8, i8, {poison_value + 0.25}).unwritten, 0);
  EXPECT_EQ(compare(dtype::i8, i8, {poison_value + 3.0}).unwritten, 1);
}

TEST(CorrectnessCheckIntegers, APoisonEqualToTheReferenceIsRight) {
  // An integer poison is a value a kernel may write: where the reference is that value the
  // element is right, written or not; elsewhere it is unwritten.
  const dtype type = dtype::i32;
  const std::uint32_t pattern = poison_pattern(type, seed);
  std::int32_t as_value = 0;
  std::memcpy(&as_value, &pattern, 4);
  const std::vector<double> reference = {static_cast<double>(as_value), 5.0, 6.0};
  std::vector<std::byte> candidate = bytes_of(type, {0.0, 0.0, 6.0});
  poison(type, candidate, 0);
  poison(type, candidate, 1);
  const error_metrics m = compare(type, candidate, reference);
  EXPECT_EQ(m.unwritten, 1);
  EXPECT_EQ(m.mismatches, 0);
  EXPECT_EQ(to_string(failure_reason(m)), "unwritten_output");
}

TEST(CorrectnessCheckIntegers, AnElementMayHoldTheReferencesAlternativeAndNothingElse) {
  // Token 7 sampled on the boundary with token 9: either is right; token 8 is not, and an
  // element without an alternative (NaN) is exact.
  const dtype type = dtype::i32;
  const double none = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> reference = {7.0, 3.0, 7.0};
  const std::vector<double> alternative = {9.0, none, 9.0};
  auto check = [&](const std::vector<double>& written) {
    return compare_output("token", type, poison_pattern(type, seed), bytes_of(type, written),
                          reference, {.profile = "exact", .atol = 0.0, .rtol = 0.0}, alternative);
  };
  EXPECT_EQ(check({7.0, 3.0, 7.0}).mismatches, 0);
  EXPECT_EQ(check({9.0, 3.0, 7.0}).mismatches, 0);
  EXPECT_EQ(check({8.0, 3.0, 9.0}).mismatches, 1);
  EXPECT_EQ(check({7.0, 9.0, 7.0}).mismatches, 1) << "NaN is no alternative";
  EXPECT_EQ(compare(type, bytes_of(type, {9.0, 3.0, 7.0}), reference).mismatches, 1)
      << "without alternatives the element is exact";
  EXPECT_THROW(static_cast<void>(compare_output(
                   "token", type, poison_pattern(type, seed), bytes_of(type, reference), reference,
                   {.profile = "exact", .atol = 0.0, .rtol = 0.0}, std::vector<double>{9.0})),
               error);
}

TEST(CorrectnessCheckLarge, ParallelWorstMatchesASerialTopFive) {
  // Distinct errors everywhere, so the five worst are one well-defined set across threads.
  constexpr std::size_t n = 1 << 20;
  const dtype type = dtype::f32;
  std::vector<double> reference(n);
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    reference[i] = static_cast<float>(1.0 + static_cast<double>(i % 7) * 0.125);
    values[i] = i % 1000 == 5 ? reference[i] + 1.0 + static_cast<double>(i) * 1e-6 : reference[i];
  }
  const auto candidate = bytes_of(type, values);
  std::vector<std::pair<double, std::int64_t>> serial;
  for (std::size_t i = 0; i < n; ++i) {
    const double c = load_as_double(type, candidate.data() + 4 * i);
    const double e = std::fabs(c - reference[i]) / (tol.atol + tol.rtol * std::fabs(reference[i]));
    serial.emplace_back(e, static_cast<std::int64_t>(i));
  }
  std::sort(serial.begin(), serial.end(), std::greater<>());

  const error_metrics m =
      compare_output("out", type, poison_pattern(type, seed), candidate, reference, tol);
  EXPECT_EQ(m.mismatches, static_cast<std::int64_t>((n - 5 + 999) / 1000));
  ASSERT_EQ(m.worst.size(), error_metrics::worst_kept);
  for (std::size_t k = 0; k < m.worst.size(); ++k) {
    EXPECT_EQ(m.worst[k].index, serial[k].second) << k;
    EXPECT_EQ(m.worst[k].normalized_error, serial[k].first) << k;
  }
}

}  // namespace
}  // namespace blaster
