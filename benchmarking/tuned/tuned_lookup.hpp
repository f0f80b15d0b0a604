#pragma once

// Which configuration of a candidate bench runs where a tuned table exists: the table of the
// candidate, device, dtype and shape, and its entry nearest the timed case's size, as an engine
// picks it (tuned_table.hpp).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/tuned/tuned_table.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {

// Where a task's tuned tables live: kernels/<task>/tuned/ under the root, each candidate's in a
// folder of its own named by its file's stem (kernels/<task>/tuned/<stem>/), as an engine keeps
// each kernel's tables apart: two candidates of a task tuned at one shape write one file name.
std::filesystem::path tuned_folder(const std::filesystem::path& root, const std::string& task);
std::filesystem::path tuned_folder(const std::filesystem::path& root, const std::string& task,
                                   const std::filesystem::path& candidate);

// The case's shape as a table names it: every integer symbol but the size, at its value.
std::vector<std::pair<std::string, std::string>> shape_key(const task_spec& task,
                                                           const task_case& c,
                                                           const std::string& size_symbol);

// What a run is: the candidate's file name, the device as the tables name it, the dtype, and
// the toolchain pairs (nvrtc, driver).
struct tuned_target {
  std::string candidate;
  std::string device_name;
  std::string dtype;
  std::vector<std::pair<std::string, std::string>> toolchain;
};

// The toolchain pairs of a run's tables: the NVRTC and driver versions.
std::vector<std::pair<std::string, std::string>> toolchain_key(const bench_report& report);

// Every *.json table in `folder`'s folder of `target`'s candidate, or in `folder` itself (an
// engine's table dropped in; one that names another candidate is not this one's), written for
// its device and dtype whose shape is case `c`'s, and its entry nearest the case's size; none
// where no table fits. The size
// symbol is the one integer symbol of the task the table's name leaves out. A table that does
// not parse is an input_error naming it.
std::optional<tuned_choice> find_tuned(const std::filesystem::path& folder, const task_spec& task,
                                       const task_case& c, const tuned_target& target);

// "the entry T=1 of kernels/rms_norm/tuned/H=4096,....json" plus any toolchain difference.
std::string describe(const tuned_choice& choice);

}  // namespace blaster
