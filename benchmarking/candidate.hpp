#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/launch_plan.hpp"
#include "core/nvrtc_compiler.hpp"
#include "profiling/resource_report.hpp"

namespace blaster {

class compile_cache;

// One configuration of a candidate: its params fixed, compiled for one architecture.
struct candidate_variant {
  std::string candidate;  // the file's stem: "init", "rmsnorm_vec_regs"
  std::string label;      // "rmsnorm_vec_regs[VEC=4,BLOCK=128]", or the stem without params
  std::map<std::string, std::string> params;
  std::vector<std::string> kernels;  // per launch step, params substituted: "rows<4>"
  compile_output compiled;
  std::vector<kernel_resources> resources;  // per kernel, from the ptxas report
};

// A candidate file: its source, its plan (or why the plan is unusable) and its variants.
struct candidate_file {
  std::filesystem::path file;
  std::string name;
  std::string source;
  std::optional<launch_plan> plan;
  std::string plan_error;  // "file:line:col: ..." when the plan did not parse
  std::vector<candidate_variant> variants;
};

// init.cu of the task first (the baseline), then the given files (a folder stands for the .cu
// files in it) or, when none are given, kernels/<task>/*.cu; folders are listed in name order.
std::vector<std::filesystem::path> discover_candidates(
    const std::filesystem::path& root, const std::string& task,
    const std::vector<std::filesystem::path>& given);

// Reads the file, parses its plan and compiles every params configuration. A bad plan or a
// compile error is recorded in the result, not thrown: it is a verdict about the candidate.
candidate_file load_candidate(const std::filesystem::path& file, const std::string& arch,
                              compile_cache* cache);

}  // namespace blaster
