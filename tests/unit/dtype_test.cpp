#include "core/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace blaster {
namespace {

const std::vector<dtype> all_types = {dtype::f16, dtype::bf16, dtype::f32,
                                      dtype::f64, dtype::i32,  dtype::i64};

// The value a `type` element holds after storing `value`.
double round_trip(dtype type, double value) {
  std::byte element[8] = {};
  store_from_double(type, value, element);
  return load_as_double(type, element);
}

std::uint16_t bits16(dtype type, double value) {
  std::byte element[2];
  store_from_double(type, value, element);
  std::uint16_t bits = 0;
  std::memcpy(&bits, element, 2);
  return bits;
}

// A NaN made by arithmetic at run time, as a kernel's 0/0 would make it.
double runtime_nan() {
  volatile double zero = 0.0;
  return zero / zero;
}

TEST(Dtype, SizesNamesAndParse) {
  EXPECT_EQ(size_of(dtype::f16), 2u);
  EXPECT_EQ(size_of(dtype::bf16), 2u);
  EXPECT_EQ(size_of(dtype::f32), 4u);
  EXPECT_EQ(size_of(dtype::f64), 8u);
  EXPECT_EQ(size_of(dtype::i32), 4u);
  EXPECT_EQ(size_of(dtype::i64), 8u);
  const std::vector<std::string_view> names = {"f16", "bf16", "f32", "f64", "i32", "i64"};
  for (std::size_t i = 0; i < all_types.size(); ++i) {
    EXPECT_EQ(name_of(all_types[i]), names[i]);
    EXPECT_EQ(parse_dtype(names[i]), all_types[i]);  // task.json spells types this way
  }
  EXPECT_EQ(parse_dtype("f17"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
  EXPECT_EQ(parse_dtype("half"), std::nullopt);
  EXPECT_TRUE(is_floating(dtype::f16));
  EXPECT_TRUE(is_floating(dtype::bf16));
  EXPECT_TRUE(is_floating(dtype::f32));
  EXPECT_TRUE(is_floating(dtype::f64));
  EXPECT_FALSE(is_floating(dtype::i32));
  EXPECT_FALSE(is_floating(dtype::i64));
}

TEST(Dtype, F16RoundsToNearest) {
  // 1/3 lies between 0x3555 (0.333251953125) and 0x3556 (0.33349609375); the first is nearer.
  EXPECT_EQ(bits16(dtype::f16, 1.0 / 3.0), 0x3555);
  EXPECT_EQ(round_trip(dtype::f16, 1.0 / 3.0), 0.333251953125);
  EXPECT_EQ(round_trip(dtype::f16, -1.0 / 3.0), -0.333251953125);
  // Exact values survive.
  for (double v : {0.0, 1.0, -2.5, 65504.0, 0.000060975551605224609375}) {
    EXPECT_EQ(round_trip(dtype::f16, v), v) << v;
  }
}

TEST(Dtype, F16TiesGoToEven) {
  const double ulp = std::ldexp(1.0, -10);  // spacing of f16 in [1, 2)
  EXPECT_EQ(round_trip(dtype::f16, 1.0 + ulp / 2), 1.0);
  EXPECT_EQ(round_trip(dtype::f16, 1.0 + 3 * ulp / 2), 1.0 + 2 * ulp);
  // Just above the tie rounds up; a detour through float would lose the 2^-40 and round down.
  EXPECT_EQ(round_trip(dtype::f16, 1.0 + ulp / 2 + std::ldexp(1.0, -40)), 1.0 + ulp);
  // 65520 is halfway between 65504 and the next step, 65536, which is out of range.
  EXPECT_EQ(round_trip(dtype::f16, 65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(round_trip(dtype::f16, 65520.0)));
}

TEST(Dtype, Bf16AndWiderTypes) {
  // bf16 keeps float's exponent and 8 bits of mantissa: 1/3 is 0x3EAB = 0.333984375.
  EXPECT_EQ(bits16(dtype::bf16, 1.0 / 3.0), 0x3EAB);
  EXPECT_EQ(round_trip(dtype::bf16, 1.0 / 3.0), 0.333984375);
  EXPECT_EQ(round_trip(dtype::f32, 1.0 / 3.0), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(round_trip(dtype::f64, 1.0 / 3.0), 1.0 / 3.0);
  EXPECT_EQ(round_trip(dtype::i32, -7.0), -7.0);
  EXPECT_EQ(round_trip(dtype::i64, 4294967296.0 * 3), 4294967296.0 * 3);
}

// The bytes of an element that holds the 32-bit pattern, repeated as the device's fill does.
void fill(std::byte* element, std::uint32_t pattern) {
  std::memcpy(element, &pattern, 4);
  std::memcpy(element + 4, &pattern, 4);
}

TEST(Dtype, PoisonIsRecognizedAndIsNaNForFloats) {
  for (std::uint64_t seed : {0ULL, 1ULL, 0xFFFFFFFFFFFFFFFFULL, 0x0B1A57E5EED00001ULL}) {
    for (dtype type : all_types) {
      SCOPED_TRACE(std::string(name_of(type)) + " seed " + std::to_string(seed));
      const std::uint32_t pattern = poison_pattern(type, seed);
      EXPECT_EQ(pattern, poison_pattern(type, seed));  // the parent and the worker agree
      std::byte element[8];
      fill(element, pattern);
      EXPECT_TRUE(is_poison(type, pattern, element));
      // An unwritten float output must also fail any finite comparison.
      if (is_floating(type)) {
        EXPECT_TRUE(std::isnan(load_as_double(type, element)));
      }

      std::byte zero[8] = {};
      EXPECT_FALSE(is_poison(type, pattern, zero));
      std::byte value[8] = {};
      store_from_double(type, 1.0, value);
      EXPECT_FALSE(is_poison(type, pattern, value));
    }
  }
}

TEST(Dtype, PoisonIsDrawnPerRun) {
  // A kernel that tests for the pattern must guess it: every seed draws its own, for every type.
  for (dtype type : all_types) {
    SCOPED_TRACE(name_of(type));
    std::set<std::uint32_t> seen;
    for (std::uint64_t seed = 0; seed < 200; ++seed) seen.insert(poison_pattern(type, seed));
    // bf16 has 7 payload bits and a sign: 2 * 125 patterns, so some of 200 draws repeat.
    EXPECT_GE(seen.size(), type == dtype::bf16 ? 100U : 190U);
  }
  EXPECT_NE(poison_pattern(dtype::f16, 7), poison_pattern(dtype::f32, 7) & 0xFFFFU);
}

TEST(Dtype, NoComputedNaNIsEverThePoison) {
  // The NaNs arithmetic makes (the device's canonical ones, the host's default ones, either
  // sign) are no seed's poison: an element that holds one was written.
  for (std::uint64_t seed = 0; seed < 5000; ++seed) {
    for (dtype type : {dtype::f16, dtype::bf16, dtype::f32, dtype::f64}) {
      const std::uint32_t pattern = poison_pattern(type, seed);
      for (double nan : {runtime_nan(), -runtime_nan()}) {
        std::byte element[8] = {};
        store_from_double(type, nan, element);
        ASSERT_FALSE(is_poison(type, pattern, element)) << name_of(type) << " seed " << seed;
      }
    }
    ASSERT_NE(poison_pattern(dtype::f16, seed) & 0x7FFFU, 0x7FFFU);  // the device's f16 NaN
    ASSERT_NE(poison_pattern(dtype::bf16, seed) & 0x7FFFU, 0x7FFFU);
    ASSERT_NE(poison_pattern(dtype::f32, seed) & 0x7FFFFFFFU, 0x7FFFFFFFU);
  }
}

TEST(Dtype, PoisonLooksOnlyAtItsOwnElement) {
  // An f16 poison followed by a written element: the neighbour's bytes play no part.
  std::byte two[4];
  const std::uint32_t pattern = poison_pattern(dtype::f16, 3);
  std::memcpy(two, &pattern, 4);
  store_from_double(dtype::f16, 2.0, two + 2);
  EXPECT_TRUE(is_poison(dtype::f16, pattern, two));
  EXPECT_FALSE(is_poison(dtype::f16, pattern, two + 2));
}

// The quantization formats, on values worked out by hand from their bit layouts: fp8_e4m3 is
// S.EEEE.MMM with bias 7 and no infinity (S.1111.111 is NaN, 448 the largest), fp8_e5m2 is
// S.EEEEE.MM with bias 15 (57344 the largest finite value).
std::uint8_t byte_of(dtype type, double value) {
  std::byte element[1];
  store_from_double(type, value, element);
  return std::to_integer<std::uint8_t>(element[0]);
}

TEST(Dtype, QuantizationFormatsAreBytesNamedAsTheIssueSpellsThem) {
  for (dtype t : {dtype::fp8_e4m3, dtype::fp8_e5m2, dtype::i8}) {
    EXPECT_EQ(size_of(t), 1U);
    EXPECT_TRUE(is_quantized(t));
    EXPECT_EQ(parse_dtype(name_of(t)), t);
  }
  EXPECT_EQ(name_of(dtype::fp8_e4m3), "fp8_e4m3");
  EXPECT_EQ(name_of(dtype::fp8_e5m2), "fp8_e5m2");
  EXPECT_EQ(name_of(dtype::i8), "i8");
  EXPECT_TRUE(is_floating(dtype::fp8_e4m3));
  EXPECT_FALSE(is_floating(dtype::i8));
  EXPECT_FALSE(is_quantized(dtype::f16));
  EXPECT_FALSE(is_quantized(dtype::i32));
}

TEST(Dtype, Fp8E4m3RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, 1.0), 0x38);  // 0.0111.000
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, -1.0), 0xB8);
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, 448.0), 0x7E);  // 0.1111.110, the largest
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, 1000.0), 0x7E) << "saturates, no infinity";
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, -1e300), 0xFE);
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, 0.001953125), 0x01);  // 2^-9, the smallest subnormal
  // Steps of 1/8 between 1 and 2: halfway rounds to the even mantissa.
  EXPECT_EQ(stored_value(dtype::fp8_e4m3, 1.0625), 1.0);    // 1.000 | 1.001 -> 1.000
  EXPECT_EQ(stored_value(dtype::fp8_e4m3, 1.1875), 1.25);   // 1.001 | 1.010 -> 1.010
  EXPECT_EQ(stored_value(dtype::fp8_e4m3, 1.0626), 1.125);  // past halfway
  EXPECT_TRUE(std::isnan(stored_value(dtype::fp8_e4m3, runtime_nan())));
  EXPECT_EQ(byte_of(dtype::fp8_e4m3, runtime_nan()) & 0x7FU, 0x7FU);
}

TEST(Dtype, Fp8E5m2RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(byte_of(dtype::fp8_e5m2, 1.0), 0x3C);      // 0.01111.00
  EXPECT_EQ(byte_of(dtype::fp8_e5m2, 57344.0), 0x7B);  // 0.11110.11, the largest finite
  EXPECT_EQ(byte_of(dtype::fp8_e5m2, 1e6), 0x7B) << "saturates rather than become infinity";
  EXPECT_EQ(stored_value(dtype::fp8_e5m2, 1.125), 1.0);  // 1.00 | 1.01 -> 1.00
  EXPECT_EQ(stored_value(dtype::fp8_e5m2, 1.375), 1.5);  // 1.01 | 1.10 -> 1.10
  EXPECT_EQ(stored_value(dtype::fp8_e5m2, 0.0000152587890625), 0.0000152587890625);  // 2^-16
}

TEST(Dtype, I8RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(stored_value(dtype::i8, 2.5), 2.0);
  EXPECT_EQ(stored_value(dtype::i8, 3.5), 4.0);
  EXPECT_EQ(stored_value(dtype::i8, -2.5), -2.0);
  EXPECT_EQ(stored_value(dtype::i8, 2.51), 3.0);
  EXPECT_EQ(stored_value(dtype::i8, 200.0), 127.0);
  EXPECT_EQ(stored_value(dtype::i8, -300.0), -128.0);
  EXPECT_EQ(stored_value(dtype::i8, runtime_nan()), 0.0);
}

TEST(Dtype, QuantizationPoisonsFillEveryByteAndAvoidWhatConversionsMake) {
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    for (dtype t : {dtype::fp8_e4m3, dtype::fp8_e5m2, dtype::i8}) {
      const std::uint32_t pattern = poison_pattern(t, seed);
      EXPECT_EQ(pattern, (pattern & 0xFFU) * 0x01010101U) << name_of(t);
      std::byte element[1] = {static_cast<std::byte>(pattern & 0xFFU)};
      EXPECT_TRUE(is_poison(t, pattern, element));
    }
    // fp8_e4m3 has one NaN per sign; fp8_e5m2's poison is a NaN its conversions never make.
    const auto e4m3 = poison_pattern(dtype::fp8_e4m3, seed) & 0xFFU;
    EXPECT_EQ(e4m3 & 0x7FU, 0x7FU);
    const auto e5m2 = poison_pattern(dtype::fp8_e5m2, seed) & 0xFFU;
    std::byte poisoned[1] = {static_cast<std::byte>(e5m2)};
    EXPECT_TRUE(std::isnan(load_as_double(dtype::fp8_e5m2, poisoned)));
    EXPECT_NE(e5m2, byte_of(dtype::fp8_e5m2, runtime_nan()));
    EXPECT_NE(e5m2, byte_of(dtype::fp8_e5m2, -runtime_nan()));
    EXPECT_GE(poison_pattern(dtype::i8, seed) & 0xFFU, 0x80U) << "a negative i8";
  }
}

}  // namespace
}  // namespace blaster
