#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace blaster {

// An object a bundle carries, and which rows cite it.
struct bundle_object {
  std::string sha256;
  std::uint64_t size_bytes = 0;
  std::vector<std::string> cited_by;  // "results 3 cubin_sha256 (init)"
};

// report.md of an evidence bundle: the run (task, device, protocol), one line per candidate
// (status, time, speedup, % copy bandwidth), the objects, and how to check it all. `records` is
// run_catalog::records_of; `report` the run's report JSON (null when the run recorded none).
// Tolerates any JSON: what is missing prints as '-'.
std::string render_run_markdown(const nlohmann::json& records, const nlohmann::json& report,
                                const std::vector<bundle_object>& objects, bool is_signed);

}  // namespace blaster
