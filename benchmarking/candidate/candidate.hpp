#pragma once

// candidate/: a candidate file read, checked and compiled into its variants (candidate),
// and each variant's launch plan bound to a task's buffers and symbols (kernel_binding).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/candidate_frontend.hpp"
#include "core/compile_sandbox.hpp"
#include "core/launch_plan.hpp"
#include "core/nvrtc_compiler.hpp"
#include "profiling/resource_report.hpp"

namespace blaster {

class compile_cache;
struct task_spec;

// One configuration of a candidate: its params fixed, compiled for one architecture.
struct candidate_variant {
  std::string candidate;  // the file's stem: "init", "rmsnorm_vec_regs"
  std::string label;      // "rmsnorm_vec_regs[VEC=4,BLOCK=128]", or the stem without params
  std::map<std::string, std::string> params;
  std::vector<std::string> kernels;  // per launch step, params substituted: "rows<4>"
  compile_output compiled;
  std::vector<kernel_resources> resources;  // per kernel, from the ptxas report
};

// A candidate file: its source, its plan (or why the file was refused) and its variants.
struct candidate_file {
  std::filesystem::path file;
  std::string name;
  candidate_kind kind = candidate_kind::cuda;  // by the file's extension: its frontend
  std::string source;  // empty when the file is over the source size limit: it was not read
  std::optional<launch_plan> plan;  // none when the file was refused before any compile
  std::string plan_error;  // "file:line:col: ..." when the plan did not parse or is over a limit
  // Why the source was refused before NVRTC ran: over the size limit, or an include that the
  // include policy does not allow ("file:line:col: ...").
  std::string compile_error;
  // Its frontend's companions (frontend_plan): the kernels/common headers a .cu includes, the
  // plan beside a precompiled image, the function a Triton plan takes from another file.
  std::vector<header_file> headers;
  // SHA-256 of the source and those headers, by name and content (nvrtc_compiler.hpp); empty
  // when the source was not read.
  std::string sources_sha256;
  std::vector<candidate_variant> variants;
};

// The project's shared headers, which a candidate includes as "common/NAME": kernels/common/.
std::filesystem::path common_headers_folder(const std::filesystem::path& root);

// Candidate files of kernels/<task>/ that a scan of the folder left out, and why: this machine
// cannot compile their kind (candidate_frontend::unavailable, whose reason names the flag that
// changes it, such as --python for Triton files).
struct left_out_candidates {
  std::vector<std::filesystem::path> files;
  std::string why;
};

// The candidate files of a run, the baseline first, and those a scan left out, by reason.
struct task_candidates {
  std::vector<std::filesystem::path> files;
  std::vector<left_out_candidates> left_out;
};

// init.cu of the task first (the baseline), then the given files (a folder stands for the
// candidate files in it: .cu, .py, .ptx and .cubin) or, when none are given, those of
// kernels/<task>/; folders are listed in name order. A task's folder is the project's own set of
// candidates, scanned wherever blaster runs: its files of a kind this machine cannot compile
// under `limits` (Triton files where the interpreter has no triton) are left out, so that its
// .cu candidates compile and run as on any machine. Files and folders the user names are taken
// whole: a Triton file among them is a compile_error that says why.
task_candidates discover_candidates(const std::filesystem::path& root, const std::string& task,
                                    const std::vector<std::filesystem::path>& given,
                                    const compile_limits& limits);

// One line per reason, the files relative to `root`: "kernels/softmax/softmax_triton.py left
// out: Triton is not installed for python3 (...); ... with --python PATH".
std::string describe(const left_out_candidates& left_out, const std::filesystem::path& root);

// Reads the file, parses its plan, checks the limits and the include policy, and digests the
// sources: everything load_candidate does before it compiles, so no variant is filled in. A file
// that fails a check has no plan and says why (compile_error, plan_error).
candidate_file read_candidate(const std::filesystem::path& file, const compile_limits& limits = {},
                              const std::filesystem::path& common_headers = {});

// read_candidate, then compiles every params configuration in the compile sandbox, on at most one
// thread per hardware thread. Nothing is compiled for a file that fails a check. The limits are
// checked first: a file over the size limit is refused from its size, unread. A refusal, a bad plan
// or a compile error is recorded in the result, not thrown: it is a verdict about the candidate.
// `common_headers` is the kernels/common folder; empty: the candidate may include no shared header.
// `task` types the plan's arguments for a frontend that compiles from them (Triton); without
// it a Triton file's variants are compile errors that say so.
candidate_file load_candidate(const std::filesystem::path& file, const std::string& arch,
                              compile_cache* cache, const compile_limits& limits = {},
                              const std::filesystem::path& common_headers = {},
                              const task_spec* task = nullptr);

}  // namespace blaster
