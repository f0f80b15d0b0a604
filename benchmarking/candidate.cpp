#include "benchmarking/candidate.hpp"

#include <algorithm>
#include <future>

#include <fmt/ranges.h>

#include "core/compile_cache.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace blaster {

namespace {

std::vector<std::filesystem::path> cu_files_in(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".cu") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<std::filesystem::path> discover_candidates(
    const std::filesystem::path& root, const std::string& task,
    const std::vector<std::filesystem::path>& given) {
  const auto baseline = root / "tasks" / task / "init.cu";
  if (!std::filesystem::exists(baseline)) {
    BLASTER_INPUT_ERROR("{}: missing; every task has a baseline kernel init.cu", baseline.string());
  }
  std::vector<std::filesystem::path> files = {baseline};
  auto add_all = [&](const std::vector<std::filesystem::path>& more) {
    files.insert(files.end(), more.begin(), more.end());
  };
  if (given.empty()) {
    if (const auto kernels = root / "kernels" / task; std::filesystem::is_directory(kernels)) {
      add_all(cu_files_in(kernels));
    }
    return files;
  }
  for (const auto& path : given) {
    if (std::filesystem::is_directory(path)) {
      add_all(cu_files_in(path));
    } else if (std::filesystem::is_regular_file(path)) {
      files.push_back(path);
    } else {
      BLASTER_INPUT_ERROR("{}: no such candidate file or folder", path.string());
    }
  }
  return files;
}

candidate_file load_candidate(const std::filesystem::path& file, const std::string& arch,
                              compile_cache* cache) {
  candidate_file result;
  result.file = file;
  result.name = file.stem().string();
  result.source = read_file(file);
  try {
    result.plan = parse_launch_plan(result.source, file.string());
  } catch (const input_error& e) {
    result.plan_error = e.what();
    return result;
  }
  std::vector<compile_request> requests;  // one per variant, in order
  for (const auto& params : expand_params(*result.plan)) {
    candidate_variant v;
    v.candidate = result.name;
    v.params = params;
    std::vector<std::string> assignments;
    compile_request request;
    request.source = result.source;
    request.file_name = file.filename().string();
    request.arch = arch;
    for (const auto& [name, values] : result.plan->params) {  // declaration order
      const std::string& value = params.at(name);
      assignments.push_back(fmt::format("{}={}", name, value));
      // A param the kernel name mentions is a template argument; any other is a -D define.
      const bool template_argument = std::any_of(
          result.plan->launch.begin(), result.plan->launch.end(), [&](const launch_step& step) {
            return instantiate_kernel_name(step.kernel, {{name, "\x01"}}) != step.kernel;
          });
      if (!template_argument) request.defines.push_back(fmt::format("{}={}", name, value));
    }
    v.label = assignments.empty() ? result.name
                                  : fmt::format("{}[{}]", result.name, fmt::join(assignments, ","));
    for (const auto& step : result.plan->launch) {
      v.kernels.push_back(instantiate_kernel_name(step.kernel, params));
    }
    request.name_expressions = v.kernels;
    std::sort(request.name_expressions.begin(), request.name_expressions.end());
    request.name_expressions.erase(
        std::unique(request.name_expressions.begin(), request.name_expressions.end()),
        request.name_expressions.end());
    requests.push_back(std::move(request));
    result.variants.push_back(std::move(v));
  }
  // NVRTC compiles separate programs on separate threads; the variants of a file are
  // independent, so a cold compile takes about as long as its slowest variant.
  std::vector<std::future<compile_output>> compiled;
  compiled.reserve(requests.size());
  for (const auto& request : requests) {
    compiled.push_back(std::async(std::launch::async,
                                  [&request, cache] { return compile_cached(request, cache); }));
  }
  for (std::size_t i = 0; i < result.variants.size(); ++i) {
    candidate_variant& v = result.variants[i];
    v.compiled = compiled[i].get();
    if (v.compiled.ok) {
      // Keep the report of the kernels the plan launches, in plan order.
      const auto all = parse_ptxas_log(v.compiled.log);
      for (const auto& kernel : v.kernels) {
        const std::string& lowered = v.compiled.lowered_names.at(kernel);
        auto it = std::find_if(all.begin(), all.end(), [&](const kernel_resources& k) {
          return k.lowered_name == lowered;
        });
        if (it != all.end() &&
            std::none_of(v.resources.begin(), v.resources.end(),
                         [&](const kernel_resources& k) { return k.lowered_name == lowered; })) {
          v.resources.push_back(*it);
        }
      }
    }
  }
  return result;
}

}  // namespace blaster
