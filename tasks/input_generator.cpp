#include "tasks/input_generator.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_map>

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

// `count` different integers of [low, low + range), in the order a Fisher-Yates shuffle of the
// range draws them, each handed to store(i, value): only the swapped positions are kept in
// `moved`, so a range of millions costs what the elements do.
template <class Store>
void shuffle_draw(std::mt19937_64& rng, std::int64_t low, std::int64_t range, std::int64_t count,
                  std::unordered_map<std::int64_t, std::int64_t>& moved, Store&& store) {
  moved.clear();  // position -> what the shuffle put there
  auto at = [&](std::int64_t i) {
    const auto it = moved.find(i);
    return it == moved.end() ? i : it->second;
  };
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t j = std::uniform_int_distribution<std::int64_t>(i, range - 1)(rng);
    const std::int64_t drawn = at(j);
    moved[j] = at(i);
    store(i, low + drawn);
  }
}

// Stores `value` as element i of t, and the value the device receives beside it.
void put_integer(host_tensor& t, std::int64_t i, std::int64_t value) {
  std::byte* element = t.bytes.data() + static_cast<std::size_t>(i) * size_of(t.type);
  store_from_double(t.type, static_cast<double>(value), element);
  t.values[static_cast<std::size_t>(i)] = load_as_double(t.type, element);
}

host_tensor integers_of(dtype type, std::int64_t elements) {
  host_tensor t;
  t.type = type;
  t.bytes.resize(static_cast<std::size_t>(elements) * size_of(type));
  t.values.resize(static_cast<std::size_t>(elements));
  return t;
}

// `elements` different integers of [low, high], in the order a shuffle of the range draws them.
host_tensor distinct_integers(dtype type, const distribution& d, std::int64_t elements,
                              std::uint64_t seed) {
  const auto low = static_cast<std::int64_t>(d.low);
  const auto range = static_cast<std::int64_t>(d.high) - low + 1;
  if (range < elements) {
    BLASTER_INPUT_ERROR("{} distinct integers do not fit in [{}, {}]", elements, d.low, d.high);
  }
  host_tensor t = integers_of(type, elements);
  std::mt19937_64 rng(mix(seed));
  std::unordered_map<std::int64_t, std::int64_t> moved;
  shuffle_draw(rng, low, range, elements, moved,
               [&](std::int64_t i, std::int64_t value) { put_integer(t, i, value); });
  return t;
}

// Rows of d.row different integers of [low, high], each row its own shuffle of the range: a
// token's top-k experts, uniform over the ordered choices. Rows are drawn in chunks of about
// chunk_elements, each chunk with its own generator, so that the result depends on the seed
// alone and not on the thread count.
host_tensor distinct_rows(dtype type, const distribution& d, std::int64_t elements,
                          std::uint64_t seed) {
  if (elements == 0) return integers_of(type, 0);
  const std::int64_t row = d.row;
  if (row <= 0 || elements % row != 0) {
    BLASTER_THROW(
        "distinct_rows draws rows of the buffer's last dimension ({} here) and {} elements are "
        "no whole number of them; draw through task_spec::input_distribution",
        row, elements);
  }
  const auto low = static_cast<std::int64_t>(d.low);
  const auto range = static_cast<std::int64_t>(d.high) - low + 1;
  if (range < row) {
    BLASTER_INPUT_ERROR("rows of {} distinct integers do not fit in [{}, {}]", row, d.low, d.high);
  }
  host_tensor t = integers_of(type, elements);
  const std::int64_t rows = elements / row;
  const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, chunk_elements / row);
  const std::int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
  parallel_for(chunks, [&](std::int64_t first, std::int64_t last) {
    std::unordered_map<std::int64_t, std::int64_t> moved;
    for (std::int64_t chunk = first; chunk < last; ++chunk) {
      std::mt19937_64 rng(mix(seed ^ mix(static_cast<std::uint64_t>(chunk))));
      const std::int64_t end = std::min(rows, (chunk + 1) * rows_per_chunk);
      for (std::int64_t r = chunk * rows_per_chunk; r < end; ++r) {
        shuffle_draw(rng, low, range, row, moved, [&](std::int64_t i, std::int64_t value) {
          put_integer(t, r * row + i, value);
        });
      }
    }
  });
  return t;
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

host_tensor generate_input(dtype type, const distribution& d, std::int64_t elements,
                           std::uint64_t seed) {
  if (d.low_bound || d.high_bound) {
    BLASTER_THROW(
        "int_range bounds \"{}\" / \"{}\" depend on the case; draw through "
        "task_spec::input_distribution",
        d.low_bound ? d.low_bound->text() : "", d.high_bound ? d.high_bound->text() : "");
  }
  if (d.kind == "distinct") return distinct_integers(type, d, elements, seed);
  if (d.kind == "distinct_rows") return distinct_rows(type, d, elements, seed);
  host_tensor t;
  t.type = type;
  const std::size_t width = size_of(type);
  t.bytes.resize(static_cast<std::size_t>(elements) * width);
  t.values.resize(static_cast<std::size_t>(elements));
  const std::int64_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  // The kind once, not by its name per element: comparing names was 8% of the cycles that
  // drawing a gigabyte of inputs takes.
  enum class drawn { normal, uniform, heavy_tailed, integer };
  const drawn kind = d.kind == "normal"         ? drawn::normal
                     : d.kind == "uniform"      ? drawn::uniform
                     : d.kind == "heavy_tailed" ? drawn::heavy_tailed
                                                : drawn::integer;
  const bool floating = is_floating(type);
  parallel_for(chunks, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t chunk = first; chunk < last; ++chunk) {
      std::mt19937_64 rng(mix(seed ^ mix(static_cast<std::uint64_t>(chunk))));
      std::normal_distribution<double> normal(d.mean, d.stddev);
      std::uniform_real_distribution<double> uniform(d.low, d.high);
      std::student_t_distribution<double> student(d.dof);
      std::uniform_int_distribution<std::int64_t> integer(static_cast<std::int64_t>(d.low),
                                                          static_cast<std::int64_t>(d.high));
      const std::int64_t end = std::min(elements, (chunk + 1) * chunk_elements);
      auto draw = [&] {
        switch (kind) {
          case drawn::normal:
            return normal(rng);
          case drawn::uniform:
            return uniform(rng);
          case drawn::heavy_tailed:
            return d.scale * student(rng);
          case drawn::integer:
            break;
        }
        return static_cast<double>(integer(rng));
      };
      for (std::int64_t i = chunk * chunk_elements; i < end; ++i) {
        std::byte* element = t.bytes.data() + static_cast<std::size_t>(i) * width;
        store_from_double(type, draw(), element);
        // Rounding to a narrow type can land on `high`; [low, high) is the contract.
        while (kind == drawn::uniform && load_as_double(type, element) >= d.high) {
          store_from_double(type, uniform(rng), element);
        }
        // A draw past the type's range (a heavy tail in f16 beyond 65504) would be an infinite
        // input; the distribution is truncated to the finite values instead.
        for (int tries = 0; floating && !std::isfinite(load_as_double(type, element)); ++tries) {
          if (tries == 1000) {
            BLASTER_INPUT_ERROR("a {} distribution draws almost only values beyond what {} holds",
                                d.kind, name_of(type));
          }
          store_from_double(type, draw(), element);
        }
        // The reference must see the rounded value the device receives, not the draw.
        t.values[static_cast<std::size_t>(i)] = load_as_double(type, element);
      }
    }
  });
  return t;
}

host_tensor generate_input(const buffer_spec& buffer, std::int64_t elements, std::uint64_t seed) {
  return generate_input(buffer.type, buffer.init, elements, seed);
}

host_tensor generate_input(const task_spec& task, const buffer_spec& buffer, const task_case& c,
                           std::uint64_t seed) {
  return generate_input(buffer.type, task.input_distribution(buffer, c), task.elements(buffer, c),
                        seed);
}

}  // namespace blaster
