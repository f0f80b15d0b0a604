#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace blaster {

// Element types a task may declare for its buffers and symbols. The 8-bit ones are the storage
// formats of quantized data: buffers only.
enum class dtype { f16, bf16, f32, f64, i32, i64, fp8_e4m3, fp8_e5m2, i8 };
inline constexpr std::array<dtype, 9> all_dtypes = {dtype::f16,      dtype::bf16,     dtype::f32,
                                                    dtype::f64,      dtype::i32,      dtype::i64,
                                                    dtype::fp8_e4m3, dtype::fp8_e5m2, dtype::i8};

std::size_t size_of(dtype type);
std::string_view name_of(dtype type);  // "f16"
std::optional<dtype> parse_dtype(std::string_view name);
bool is_floating(dtype type);
// The quantization formats (fp8_e4m3, fp8_e5m2, i8): an output in one is judged in the format's
// own steps (correctness_check.hpp), not by a tolerance on its decoded value alone.
bool is_quantized(dtype type);

// Host conversions; storing rounds to nearest even, as the device's default conversions do. The
// quantization formats saturate: a value beyond the largest finite one stores as it (the
// device's __NV_SATFINITE conversions, which quantizing kernels use), and i8 rounds to nearest
// even first. NaN stores as NaN in the fp8 formats, as 0 in i8.
double load_as_double(dtype type, const std::byte* element);
void store_from_double(dtype type, double value, std::byte* element);
// The value `value` has once stored as `type`.
double stored_value(dtype type, double value);

// The pattern outputs and scratch are filled with before a run, drawn from a seed the harness
// draws per run, so that no kernel can know it in advance and test for it. For floats it is a
// NaN of random sign and payload, never the payloads arithmetic produces (the canonical quiet
// NaNs of the device and the host), so the unwritten check stays exact: no computed value can
// equal it. For integers it is a random value with the top bit set; an element that holds it
// counts as unwritten only where the reference differs from it. fp8_e4m3 has one NaN per sign,
// the one its conversions produce: its poison is that NaN, which an element may hold only where
// the reference is NaN too. The 32-bit pattern repeats through wider elements; 16-bit types use
// the low half (repeated in the high half), 8-bit types the low byte (repeated in each).
std::uint32_t poison_pattern(dtype type, std::uint64_t seed);
bool is_poison(dtype type, std::uint32_t pattern, const std::byte* element);

}  // namespace blaster
