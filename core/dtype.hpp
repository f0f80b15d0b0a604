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

// The pattern outputs and scratch are filled with before a run, drawn from a seed the harness
// draws per run, so that no kernel can know it in advance and test for it. For floats it is a
// NaN of random sign and payload, never the payloads arithmetic produces (the canonical quiet
// NaNs of the device and the host), so the unwritten check stays exact: no computed value can
// equal it. For integers it is a random value with the top bit set; an element that holds it
// counts as unwritten only where the reference differs from it. The 32-bit pattern repeats
// through wider elements; 16-bit types use the low half (repeated in the high half).
std::uint32_t poison_pattern(dtype type, std::uint64_t seed);
bool is_poison(dtype type, std::uint32_t pattern, const std::byte* element);

}  // namespace blaster
