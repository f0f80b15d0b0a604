#include "tasks/input_generator.hpp"

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace blaster {
namespace {

constexpr std::int64_t chunk_elements = 1 << 16;

// SplitMix64's finalizer: spreads nearby seeds across the whole state space.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t seed, std::string_view case_name,
                          std::string_view buffer_name) {
  std::uint64_t h = mix(seed);
  for (std::string_view part : {case_name, buffer_name}) {
    for (char ch : part) h = mix(h ^ static_cast<unsigned char>(ch));
    h = mix(h ^ 0xFFU);
  }
  return h;
}

host_tensor generate_input(const buffer_spec& buffer, std::int64_t elements, std::uint64_t seed) {
  host_tensor t;
  t.type = buffer.type;
  const std::size_t width = size_of(buffer.type);
  t.bytes.resize(static_cast<std::size_t>(elements) * width);
  t.values.resize(static_cast<std::size_t>(elements));
  const distribution& d = buffer.init;
  const std::int64_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  parallel_for(chunks, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t chunk = first; chunk < last; ++chunk) {
      std::mt19937_64 rng(mix(seed ^ mix(static_cast<std::uint64_t>(chunk))));
      std::normal_distribution<double> normal(d.mean, d.stddev);
      std::uniform_real_distribution<double> uniform(d.low, d.high);
      std::student_t_distribution<double> student(d.dof);
      std::uniform_int_distribution<std::int64_t> integer(static_cast<std::int64_t>(d.low),
                                                          static_cast<std::int64_t>(d.high));
      const std::int64_t end = std::min(elements, (chunk + 1) * chunk_elements);
      for (std::int64_t i = chunk * chunk_elements; i < end; ++i) {
        double v = 0.0;
        if (d.kind == "normal") {
          v = normal(rng);
        } else if (d.kind == "uniform") {
          v = uniform(rng);
        } else if (d.kind == "heavy_tailed") {
          v = d.scale * student(rng);
        } else {
          v = static_cast<double>(integer(rng));
        }
        std::byte* element = t.bytes.data() + static_cast<std::size_t>(i) * width;
        store_from_double(buffer.type, v, element);
        // Rounding to a narrow type can land on `high`; [low, high) is the contract.
        while (d.kind == "uniform" && load_as_double(buffer.type, element) >= d.high) {
          store_from_double(buffer.type, uniform(rng), element);
        }
        // The reference must see the rounded value the device receives, not the draw.
        t.values[static_cast<std::size_t>(i)] = load_as_double(buffer.type, element);
      }
    }
  });
  return t;
}

}  // namespace blaster
