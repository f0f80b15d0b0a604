#include "tasks/input_generator.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace blaster {
namespace {

buffer_spec buffer(dtype type, distribution init) {
  return buffer_spec{
      .name = "x", .type = type, .shape = {}, .role = buffer_role::input, .init = std::move(init)};
}

const distribution standard_normal{};  // normal, mean 0, stddev 1

struct moments {
  double mean = 0.0;
  double stddev = 0.0;
};

moments moments_of(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / static_cast<double>(values.size()))};
}

TEST(InputGenerator, SameSeedSameBytesOtherSeedOtherBytes) {
  // Spans several chunks, so chunk seeding is part of what is compared.
  const auto b = buffer(dtype::f16, standard_normal);
  const host_tensor first = generate_input(b, 200000, 42);
  const host_tensor again = generate_input(b, 200000, 42);
  const host_tensor other = generate_input(b, 200000, 43);
  EXPECT_EQ(first.type, dtype::f16);
  ASSERT_EQ(first.bytes.size(), 400000u);
  ASSERT_EQ(first.values.size(), 200000u);
  EXPECT_EQ(first.bytes, again.bytes);
  EXPECT_EQ(first.values, again.values);
  EXPECT_NE(first.bytes, other.bytes);
  // Not just one differing element: the other seed is a different stream everywhere.
  std::size_t same = 0;
  for (std::size_t i = 0; i < first.values.size(); ++i) same += first.values[i] == other.values[i];
  EXPECT_LT(same, first.values.size() / 100);
}

TEST(InputGenerator, ChunksAreNotCopiesOfEachOther) {
  // Each 65536-element chunk seeds its own generator; equal seeds would repeat the data.
  const host_tensor t = generate_input(buffer(dtype::f32, standard_normal), 3 << 16, 7);
  const std::vector<double> a(t.values.begin(), t.values.begin() + 1000);
  const std::vector<double> b(t.values.begin() + (1 << 16), t.values.begin() + (1 << 16) + 1000);
  const std::vector<double> c(t.values.begin() + (2 << 16), t.values.begin() + (2 << 16) + 1000);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
}

TEST(InputGenerator, ValuesAreTheRoundedBytes) {
  // The reference must see exactly what the device receives.
  for (dtype type : {dtype::f16, dtype::bf16, dtype::f32}) {
    SCOPED_TRACE(std::string(name_of(type)));
    const host_tensor t = generate_input(buffer(type, standard_normal), 100000, 1);
    std::size_t inexact_in_f16 = 0;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
      ASSERT_EQ(t.values[i], load_as_double(type, t.bytes.data() + i * size_of(type))) << i;
      std::byte element[2];
      store_from_double(dtype::f16, t.values[i], element);
      inexact_in_f16 += load_as_double(dtype::f16, element) != t.values[i];
    }
    // f16 values are f16 already; f32 draws are finer than f16 almost always.
    if (type == dtype::f16) {
      EXPECT_EQ(inexact_in_f16, 0u);
    } else if (type == dtype::f32) {
      EXPECT_GT(inexact_in_f16, t.values.size() / 2);
    }
  }
}

TEST(InputGenerator, NormalHasTheDeclaredMoments) {
  const host_tensor t = generate_input(buffer(dtype::f16, standard_normal), 1 << 20, 2024);
  const moments m = moments_of(t.values);
  EXPECT_NEAR(m.mean, 0.0, 0.01);
  EXPECT_NEAR(m.stddev, 1.0, 0.01);

  const distribution shifted{.kind = "normal", .mean = 3.0, .stddev = 0.5};
  const moments s = moments_of(generate_input(buffer(dtype::f32, shifted), 1 << 20, 5).values);
  EXPECT_NEAR(s.mean, 3.0, 0.01);
  EXPECT_NEAR(s.stddev, 0.5, 0.005);
}

TEST(InputGenerator, UniformStaysInItsHalfOpenRange) {
  const distribution d{.kind = "uniform", .low = -2.0, .high = 3.0};
  const host_tensor t = generate_input(buffer(dtype::f32, d), 1 << 20, 11);
  const auto [lo, hi] = std::minmax_element(t.values.begin(), t.values.end());
  EXPECT_GE(*lo, -2.0);
  EXPECT_LT(*hi, 3.0);
  // It covers the range rather than a corner of it.
  EXPECT_LT(*lo, -1.99);
  EXPECT_GT(*hi, 2.99);
  EXPECT_NEAR(moments_of(t.values).mean, 0.5, 0.01);
}

TEST(InputGenerator, UniformRoundedToF16StaysBelowHigh) {
  // [0, 1) in f16: draws above 1 - 2^-12 round up to 1.0 unless the generator prevents it.
  const distribution d{.kind = "uniform", .low = 0.0, .high = 1.0};
  const host_tensor t = generate_input(buffer(dtype::f16, d), 1 << 20, 11);
  const std::size_t at_high = std::count(t.values.begin(), t.values.end(), 1.0);
  EXPECT_EQ(at_high, 0u) << "values equal to high";
  EXPECT_GE(*std::min_element(t.values.begin(), t.values.end()), 0.0);
}

TEST(InputGenerator, IntRangeDrawsEveryIntegerInItsClosedRange) {
  const distribution d{.kind = "int_range", .low = -3.0, .high = 5.0};
  for (dtype type : {dtype::i32, dtype::f16}) {
    SCOPED_TRACE(std::string(name_of(type)));
    const host_tensor t = generate_input(buffer(type, d), 100000, 3);
    std::set<double> seen;
    for (double v : t.values) {
      ASSERT_EQ(v, std::floor(v));
      ASSERT_GE(v, -3.0);
      ASSERT_LE(v, 5.0);
      seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 9u);  // -3..5, both ends included
  }
}

TEST(InputGenerator, HeavyTailedHasHeavierTailsThanNormal) {
  // Student's t with 3 degrees of freedom: |x| > 4 about 2.9% of the time, normal ~0.006%.
  const distribution d{.kind = "heavy_tailed", .dof = 3.0, .scale = 1.0};
  const host_tensor t = generate_input(buffer(dtype::f32, d), 1 << 18, 9);
  const auto far =
      std::count_if(t.values.begin(), t.values.end(), [](double v) { return std::fabs(v) > 4.0; });
  EXPECT_GT(far, (1 << 18) / 50);
  EXPECT_LT(far, (1 << 18) / 25);
}

TEST(InputGenerator, NoElementsIsEmpty) {
  const host_tensor t = generate_input(buffer(dtype::f16, standard_normal), 0, 1);
  EXPECT_TRUE(t.bytes.empty());
  EXPECT_TRUE(t.values.empty());
}

TEST(InputGenerator, DeriveSeedSeparatesRunsCasesAndBuffers) {
  const std::uint64_t base = derive_seed(1, "canonical", "x");
  EXPECT_EQ(derive_seed(1, "canonical", "x"), base);
  EXPECT_NE(derive_seed(2, "canonical", "x"), base);
  EXPECT_NE(derive_seed(1, "odd", "x"), base);
  EXPECT_NE(derive_seed(1, "canonical", "y"), base);
  // Where one name ends and the next begins matters.
  EXPECT_NE(derive_seed(1, "ab", "c"), derive_seed(1, "a", "bc"));
  EXPECT_NE(derive_seed(1, "", "x"), derive_seed(1, "x", ""));
  // Every case and buffer of a task gets its own seed.
  std::set<std::uint64_t> seeds;
  for (const char* c : {"canonical", "odd", "single", "ragged", "wide"}) {
    for (const char* b : {"x", "w", "bias", "out"}) seeds.insert(derive_seed(7, c, b));
  }
  EXPECT_EQ(seeds.size(), 20u);
}

}  // namespace
}  // namespace blaster

namespace blaster {
namespace {

TEST(InputGenerator, DistinctDrawsEveryValueOnceAndSpreadsOverTheRange) {
  const distribution d{.kind = "distinct", .low = 10.0, .high = 10.0 + 16383.0};
  const host_tensor t = generate_input(buffer(dtype::i32, d), 8192, 5);
  const std::set<double> seen(t.values.begin(), t.values.end());
  EXPECT_EQ(seen.size(), 8192U) << "no slot twice";
  EXPECT_GE(*seen.begin(), 10.0);
  EXPECT_LE(*seen.rbegin(), 10.0 + 16383.0);
  EXPECT_NEAR(moments_of(t.values).mean, 10.0 + 16383.0 / 2.0, 300.0) << "not the range's start";
  EXPECT_FALSE(std::is_sorted(t.values.begin(), t.values.end())) << "shuffled, not in order";
  // The whole range: a permutation of it. The same seed gives the same one.
  const host_tensor all = generate_input(buffer(dtype::i32, d), 16384, 5);
  EXPECT_EQ(std::set<double>(all.values.begin(), all.values.end()).size(), 16384U);
  EXPECT_EQ(generate_input(buffer(dtype::i32, d), 16384, 5).bytes, all.bytes);
  EXPECT_NE(generate_input(buffer(dtype::i32, d), 16384, 6).bytes, all.bytes);
  EXPECT_THROW(static_cast<void>(generate_input(buffer(dtype::i32, d), 16385, 5)), input_error);
}

// A token's top-2 of 8 experts: rows of 2 different values of [0, 7], every ordered pair about
// equally often, across chunks of the draw.
TEST(InputGenerator, DistinctRowsHoldNoValueTwiceAndDrawEveryChoiceAlike) {
  const distribution d{.kind = "distinct_rows", .low = 0.0, .high = 7.0, .row = 2};
  const std::int64_t rows = 100000;  // 200000 elements: several chunks
  const host_tensor t = generate_input(buffer(dtype::i32, d), 2 * rows, 5);
  std::map<std::pair<double, double>, int> pairs;
  for (std::int64_t r = 0; r < rows; ++r) {
    const double first = t.values[static_cast<std::size_t>(2 * r)];
    const double second = t.values[static_cast<std::size_t>(2 * r + 1)];
    ASSERT_NE(first, second) << "row " << r;
    for (double v : {first, second}) {
      ASSERT_GE(v, 0.0);
      ASSERT_LE(v, 7.0);
      ASSERT_EQ(v, std::floor(v));
    }
    ++pairs[{first, second}];
  }
  EXPECT_EQ(pairs.size(), 56U) << "every ordered pair of different experts";
  for (const auto& [pair, count] : pairs) {
    EXPECT_NEAR(count, rows / 56, rows / 56 / 5) << pair.first << ", " << pair.second;
  }
  EXPECT_EQ(generate_input(buffer(dtype::i32, d), 2 * rows, 5).bytes, t.bytes);
  EXPECT_NE(generate_input(buffer(dtype::i32, d), 2 * rows, 6).bytes, t.bytes);
  // A row as long as the range is a permutation of it; a longer one does not fit.
  distribution whole = d;
  whole.row = 8;
  const host_tensor permutations = generate_input(buffer(dtype::i32, whole), 8 * 100, 3);
  for (std::size_t r = 0; r < 100; ++r) {
    const std::set<double> row(
        permutations.values.begin() + static_cast<std::ptrdiff_t>(8 * r),
        permutations.values.begin() + static_cast<std::ptrdiff_t>(8 * r + 8));
    EXPECT_EQ(row.size(), 8U);
  }
  distribution longer = d;
  longer.row = 9;
  EXPECT_THROW(static_cast<void>(generate_input(buffer(dtype::i32, longer), 9, 3)), input_error);
  // Without its row, from a buffer's own distribution rather than a case's, it cannot be drawn.
  distribution unset = d;
  unset.row = 0;
  EXPECT_THROW(static_cast<void>(generate_input(buffer(dtype::i32, unset), 4, 3)), error);
}

}  // namespace
}  // namespace blaster
