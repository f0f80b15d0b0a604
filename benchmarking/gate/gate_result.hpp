#pragma once

// What the correctness gate found for one variant: per check (a case with a seed) the worker's
// evidence of what the kernels did beside their outputs, and the judge's verdict with the error
// metrics of every output. Each type has one JSON form: the worker sends it, the report keeps
// it, and the store keeps the evidence as a CAS object.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/gate/correctness_check.hpp"
#include "benchmarking/gate/reason_code.hpp"

namespace blaster {

// A canary that changed: the byte of `buffer` (of `bytes` bytes) that the kernels wrote, negative
// before its start.
struct canary_hit {
  std::string buffer;
  long long byte_offset = 0;
  std::size_t bytes = 0;
};

// An input, compared bit for bit with what was uploaded; the digest after is computed only when
// it changed, and then the first changed element and the count are known.
struct input_check {
  std::string buffer{};
  std::string sha256_before{};
  std::string sha256_after{};
  std::optional<std::size_t> first_index{};
  std::size_t differing_elements = 0;
};

// A repeated run on the same inputs whose output differs from the first run's.
struct run_difference {
  std::string buffer;
  int run = 0;  // 2 to runs
  std::size_t first_index = 0;
  std::size_t differing_elements = 0;
};

// The worker's report of one check.
struct check_evidence {
  std::size_t check = 0;  // its index in the run's checks
  std::string case_name{};
  std::uint64_t seed = 0;
  int runs = 1;
  std::vector<canary_hit> canaries{};
  std::vector<input_check> inputs{};
  std::optional<run_difference> nondeterministic{};
};

// One check's verdict and its evidence.
struct case_check {
  std::string case_name;
  std::uint64_t seed = 0;
  reason_code reason = reason_code::none;
  std::string message;
  std::vector<error_metrics> outputs;
  check_evidence evidence;
};

nlohmann::json to_json(const check_evidence& e);
check_evidence check_evidence_from_json(const nlohmann::json& j);
nlohmann::json to_json(const case_check& c);
case_check case_check_from_json(const nlohmann::json& j);

}  // namespace blaster
