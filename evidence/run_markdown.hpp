#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/metric.hpp"
#include "evidence/run_catalog.hpp"

namespace blaster {

// An object a bundle carries, and which rows cite it.
struct bundle_object {
  std::string sha256;
  std::uint64_t size_bytes = 0;
  std::vector<std::string> cited_by;  // "results 3 cubin_sha256 (init)"
};

struct run_markdown_input {
  const nlohmann::json& records;               // run_catalog::records_of
  const std::vector<stored_result>& results;   // run_catalog::results_of
  const std::vector<metric_definition>& metrics;  // run_catalog::metric_definitions
  const nlohmann::json& report;  // the run's report (null when none): its dtype, seed, no-GPU note
  const std::vector<bundle_object>& objects;
  std::string objects_folder = "objects/";  // where they are, from the run's folder
  bool is_signed = false;
};

// report.md of an evidence bundle, rendered from the run's rows: the run (task, device,
// protocol), a row per candidate with its metrics by their recorded definitions, the objects,
// and how to check it all. What is missing prints as '-'.
std::string render_run_markdown(const run_markdown_input& input);

}  // namespace blaster
