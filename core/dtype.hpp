#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace blaster {

// Element types a task may declare for its buffers and symbols.
enum class dtype { f16, bf16, f32, f64, i32, i64 };

std::size_t size_of(dtype type);
std::string_view name_of(dtype type);  // "f16"
std::optional<dtype> parse_dtype(std::string_view name);
bool is_floating(dtype type);

// Host conversions; storing rounds to nearest even, as the device's default conversions do.
double load_as_double(dtype type, const std::byte* element);
void store_from_double(dtype type, double value, std::byte* element);

// The pattern outputs and scratch are filled with before a run: a NaN with a payload that no
// arithmetic produces for floats, 0xA5 bytes for integers. An element that still holds it was
// never written. The 32-bit pattern repeats through wider elements; 16-bit types use the low half.
std::uint32_t poison_pattern(dtype type);
bool is_poison(dtype type, const std::byte* element);

}  // namespace blaster
