#include "core/dtype.hpp"

#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace blaster {

std::size_t size_of(dtype type) {
  switch (type) {
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
  }
  return "?";
}

std::optional<dtype> parse_dtype(std::string_view name) {
  for (dtype t : {dtype::f16, dtype::bf16, dtype::f32, dtype::f64, dtype::i32, dtype::i64}) {
    if (name_of(t) == name) return t;
  }
  return std::nullopt;
}

bool is_floating(dtype type) { return type != dtype::i32 && type != dtype::i64; }

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
  }
}

std::uint32_t poison_pattern(dtype type) {
  switch (type) {
    case dtype::f16:
      return 0x7D5B7D5BU;  // NaN, payload 0x15B
    case dtype::bf16:
      return 0x7FA57FA5U;  // NaN, payload 0x25
    case dtype::f32:
      return 0x7FA5A5A5U;  // signalling NaN
    case dtype::f64:
      return 0x7FF4A5A5U;  // high word of a NaN, repeated
    case dtype::i32:
    case dtype::i64:
      return 0xA5A5A5A5U;
  }
  return 0;
}

bool is_poison(dtype type, const std::byte* element) {
  const std::uint32_t pattern = poison_pattern(type);
  std::byte expected[8];
  std::memcpy(expected, &pattern, 4);
  std::memcpy(expected + 4, &pattern, 4);
  return std::memcmp(element, expected, size_of(type)) == 0;
}

}  // namespace blaster
