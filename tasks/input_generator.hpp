#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tasks/task_spec.hpp"

namespace blaster {

// One input on the host: the bytes uploaded to the device and the same values as float64 for
// the reference, so that the reference sees exactly what the kernel sees.
struct host_tensor {
  dtype type = dtype::f32;
  std::vector<std::byte> bytes;
  std::vector<double> values;
};

// Draws `elements` values of `type` from `d`, whose case-dependent bounds must already be
// evaluated (task_spec::input_distribution). The result depends only on the seed (not on the
// thread count): each fixed-size chunk has its own generator seeded from it.
host_tensor generate_input(dtype type, const distribution& d, std::int64_t elements,
                           std::uint64_t seed);

// The buffer's own distribution, for buffers whose draw does not depend on the case.
host_tensor generate_input(const buffer_spec& buffer, std::int64_t elements, std::uint64_t seed);

// What a check draws for input `buffer` in case `c`: the case's distribution and element count.
host_tensor generate_input(const task_spec& task, const buffer_spec& buffer, const task_case& c,
                           std::uint64_t seed);

// A seed for one buffer of one case of one run, from the run's seed and the names.
std::uint64_t derive_seed(std::uint64_t seed, std::string_view case_name,
                          std::string_view buffer_name);

}  // namespace blaster
