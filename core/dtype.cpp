#include "core/dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace blaster {

std::size_t size_of(dtype type) {
  switch (type) {
    case dtype::fp8_e4m3:
    case dtype::fp8_e5m2:
    case dtype::i8:
      return 1;
    case dtype::f16:
    case dtype::bf16:
      return 2;
    case dtype::f32:
    case dtype::i32:
      return 4;
    case dtype::f64:
    case dtype::i64:
      return 8;
  }
  return 0;
}

std::string_view name_of(dtype type) {
  switch (type) {
    case dtype::f16:
      return "f16";
    case dtype::bf16:
      return "bf16";
    case dtype::f32:
      return "f32";
    case dtype::f64:
      return "f64";
    case dtype::i32:
      return "i32";
    case dtype::i64:
      return "i64";
    case dtype::fp8_e4m3:
      return "fp8_e4m3";
    case dtype::fp8_e5m2:
      return "fp8_e5m2";
    case dtype::i8:
      return "i8";
  }
  return "?";
}

std::optional<dtype> parse_dtype(std::string_view name) {
  for (dtype t : all_dtypes) {
    if (name_of(t) == name) return t;
  }
  return std::nullopt;
}

bool is_floating(dtype type) {
  return type != dtype::i32 && type != dtype::i64 && type != dtype::i8;
}

bool is_quantized(dtype type) {
  return type == dtype::fp8_e4m3 || type == dtype::fp8_e5m2 || type == dtype::i8;
}

namespace {
template <class T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}
template <class T>
void store(T value, std::byte* p) {
  std::memcpy(p, &value, sizeof(T));
}

__nv_fp8_interpretation_t fp8_kind(dtype type) {
  return type == dtype::fp8_e4m3 ? __NV_E4M3 : __NV_E5M2;
}

double load_fp8(dtype type, const std::byte* p) {
  return static_cast<double>(
      __half2float(__half(__nv_cvt_fp8_to_halfraw(load<__nv_fp8_storage_t>(p), fp8_kind(type)))));
}

std::int8_t saturated_i8(double value) {
  if (std::isnan(value)) return 0;
  return static_cast<std::int8_t>(std::clamp(std::nearbyint(value), -128.0, 127.0));
}
}  // namespace

double load_as_double(dtype type, const std::byte* element) {
  switch (type) {
    case dtype::f16:
      return static_cast<double>(__half2float(load<__half>(element)));
    case dtype::bf16:
      return static_cast<double>(__bfloat162float(load<__nv_bfloat16>(element)));
    case dtype::f32:
      return static_cast<double>(load<float>(element));
    case dtype::f64:
      return load<double>(element);
    case dtype::i32:
      return static_cast<double>(load<std::int32_t>(element));
    case dtype::i64:
      return static_cast<double>(load<std::int64_t>(element));
    case dtype::fp8_e4m3:
    case dtype::fp8_e5m2:
      return load_fp8(type, element);
    case dtype::i8:
      return static_cast<double>(load<std::int8_t>(element));
  }
  return 0.0;
}

void store_from_double(dtype type, double value, std::byte* element) {
  switch (type) {
    case dtype::f16:
      store(__double2half(value), element);
      return;
    case dtype::bf16:
      store(__double2bfloat16(value), element);
      return;
    case dtype::f32:
      store(static_cast<float>(value), element);
      return;
    case dtype::f64:
      store(value, element);
      return;
    case dtype::i32:
      store(static_cast<std::int32_t>(value), element);
      return;
    case dtype::i64:
      store(static_cast<std::int64_t>(value), element);
      return;
    case dtype::fp8_e4m3:
    case dtype::fp8_e5m2:
      store(__nv_cvt_double_to_fp8(value, __NV_SATFINITE, fp8_kind(type)), element);
      return;
    case dtype::i8:
      store(saturated_i8(value), element);
      return;
  }
}

double stored_value(dtype type, double value) {
  std::byte element[8] = {};
  store_from_double(type, value, element);
  return load_as_double(type, element);
}

namespace {

// splitmix64: one well-mixed 64-bit value per seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

// A NaN: a random sign, an exponent of all ones and a random payload, avoiding the payloads
// arithmetic produces: zero (that is infinity), the quiet bit alone (the host's default NaN) and
// all ones (the device's canonical NaN).
std::uint32_t random_nan(std::uint64_t r, int payload_bits, int exponent_bits) {
  const std::uint32_t all = (1U << payload_bits) - 1U;
  const std::uint32_t quiet = 1U << (payload_bits - 1);
  std::uint32_t payload = static_cast<std::uint32_t>(r) & all;
  for (std::uint64_t next = r; payload == 0 || payload == quiet || payload == all;) {
    next = mix(next);
    payload = static_cast<std::uint32_t>(next) & all;
  }
  const std::uint32_t sign = static_cast<std::uint32_t>(r >> 40U) & 1U;
  const std::uint32_t exponent = (1U << exponent_bits) - 1U;
  return (sign << (payload_bits + exponent_bits)) | (exponent << payload_bits) | payload;
}

std::uint32_t twice(std::uint32_t half) { return (half << 16U) | half; }
std::uint32_t four_times(std::uint32_t byte) { return byte * 0x01010101U; }

}  // namespace

std::uint32_t poison_pattern(dtype type, std::uint64_t seed) {
  // Each type its own draw from the one seed.
  const std::uint64_t r =
      mix(seed ^ (0xD1B54A32D192ED03ULL * (static_cast<std::uint64_t>(type) + 1)));
  switch (type) {
    case dtype::f16:
      return twice(random_nan(r, 10, 5));
    case dtype::bf16:
      return twice(random_nan(r, 7, 8));
    case dtype::f32:
      return random_nan(r, 23, 8);
    case dtype::f64: {
      // The same word in both halves: the high one, with the exponent's 11 ones and a nonzero
      // part of the payload, makes the 64-bit element a NaN.
      std::uint32_t payload = static_cast<std::uint32_t>(r) & 0xFFFFFU;
      if (payload == 0 || payload == 0x80000U || payload == 0xFFFFFU) payload = 0x5A5A5U;
      return (static_cast<std::uint32_t>(r >> 40U) & 1U) << 31U | 0x7FF00000U | payload;
    }
    case dtype::i32:
    case dtype::i64:
      return 0x80000000U | static_cast<std::uint32_t>(r);
    case dtype::fp8_e4m3:  // S.1111.111, the format's only NaN
      return four_times((static_cast<std::uint32_t>(r >> 40U) & 1U) << 7U | 0x7FU);
    case dtype::fp8_e5m2:  // S.11111.01: a NaN, but not the 0x7F its conversions make
      return four_times((static_cast<std::uint32_t>(r >> 40U) & 1U) << 7U | 0x7DU);
    case dtype::i8:
      return four_times(0x80U | (static_cast<std::uint32_t>(r) & 0x7FU));
  }
  return 0;
}

bool is_poison(dtype type, std::uint32_t pattern, const std::byte* element) {
  std::byte expected[8];
  std::memcpy(expected, &pattern, 4);
  std::memcpy(expected + 4, &pattern, 4);
  return std::memcmp(element, expected, size_of(type)) == 0;
}

}  // namespace blaster
