#include "benchmarking/candidate/candidate.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "core/compile_cache.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace blaster {

namespace {

std::string over_size_limit(const std::filesystem::path& file, std::string_view size,
                            std::uint64_t limit) {
  return fmt::format(
      "{}: the source is {} bytes, over the limit of {} bytes; "
      "--max-source-bytes raises the limit",
      file.string(), size, limit);
}

// The file's bytes into `source`, or why it is refused: its size is read first, so that a huge
// file is refused unread, and the read stops one byte past the limit, since the file may have
// grown in between.
std::string read_source(const std::filesystem::path& file, std::uint64_t limit,
                        std::string& source) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > limit) return over_size_limit(file, std::to_string(size), limit);
  std::ifstream in(file, std::ios::binary);
  if (!in) BLASTER_INPUT_ERROR("{}: cannot read: {}", file.string(), std::strerror(errno));
  char chunk[65536];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    source.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (source.size() > limit) {
      source.clear();
      return over_size_limit(file, fmt::format("more than {}", limit), limit);
    }
  }
  return {};
}

// Length of the UTF-8 sequence at s[i], or 0 where the bytes there are not UTF-8.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

// Why the source is not text NVRTC reads as its author meant, or an empty string: a byte-order
// mark and stray bytes otherwise surface as a hundred compiler errors far from their cause.
std::string check_text(std::string_view source, const std::filesystem::path& file) {
  if (source.starts_with("\xEF\xBB\xBF")) {
    return fmt::format(
        "{}:1:1: the file begins with a UTF-8 byte-order mark, which NVRTC does not accept; "
        "save it as UTF-8 without a BOM",
        file.string());
  }
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < source.size();) {
    const std::size_t length = utf8_length(source, i);
    if (length == 0) {
      return fmt::format(
          "{}:{}:{}: byte 0x{:02X} is not UTF-8 text; remove it or save the file "
          "as UTF-8",
          file.string(), line, i - line_start + 1, static_cast<unsigned char>(source[i]));
    }
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += length;
  }
  return {};
}

// Why the plan is over a limit, or an empty string. Both are checked before anything compiles:
// every launch is a step of every check, and every combination a compile and a gate of its own.
std::string check_plan_limits(const launch_plan& plan, const std::filesystem::path& file,
                              const compile_limits& limits) {
  if (plan.launch.size() > limits.max_launches) {
    const source_position& first_over = plan.launch[limits.max_launches].where;
    return fmt::format(
        "{}:{}:{}: the plan has {} launches, over the limit of {}; "
        "--max-launches raises the limit",
        file.string(), first_over.line, first_over.column, plan.launch.size(), limits.max_launches);
  }
  std::size_t combinations = 1;
  std::vector<std::string> factors;
  for (const auto& [name, values] : plan.params) {
    if (__builtin_mul_overflow(combinations, values.size(), &combinations)) {
      combinations = std::numeric_limits<std::size_t>::max();
    }
    factors.push_back(fmt::format("{} {}", name, values.size()));
  }
  if (combinations > limits.max_variants) {
    return fmt::format(
        "{}:{}:{}: \"params\" expand to {} combinations ({}), over the limit of "
        "{}; --max-variants raises the limit",
        file.string(), plan.params_where.line, plan.params_where.column, combinations,
        fmt::join(factors, " x "), limits.max_variants);
  }
  return {};
}

// Compiles every request on at most one thread per hardware thread; the sandbox bounds the
// compiling children of all threads together the same way.
// Fewer variants compile in seconds; more get progress lines.
constexpr std::size_t min_variants_to_report = 16;

std::vector<compile_output> compile_all(const std::vector<compile_request>& requests,
                                        compile_cache* cache, const compile_limits& limits) {
  std::vector<compile_output> out(requests.size());
  std::atomic<std::size_t> next{0};
  // A large params space compiles for minutes: say how far it got at each quarter.
  std::atomic<std::size_t> done{0};
  const std::size_t quarter = (requests.size() + 3) / 4;
  const auto started = std::chrono::steady_clock::now();
  auto report_progress = [&] {
    const std::size_t finished = ++done;
    if (requests.size() < min_variants_to_report || finished % quarter != 0 ||
        finished == requests.size()) {
      return;
    }
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
    spdlog::info("{}: compiled {} of {} variants in {:.0f} s", requests.front().file_name, finished,
                 requests.size(), elapsed.count());
  };

  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < requests.size(); i = next++) {
      try {
        out[i] = compile_sandboxed_cached(requests[i], cache, limits);
        report_progress();
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(requests.size(), std::max(1U, std::thread::hardware_concurrency()));
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  }  // joins
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::vector<std::filesystem::path> candidate_files_in(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file() && candidate_kind_of(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

task_candidates discover_candidates(const std::filesystem::path& root, const std::string& task,
                                    const std::vector<std::filesystem::path>& given,
                                    const compile_limits& limits) {
  const auto baseline = root / "tasks" / task / "init.cu";
  if (!std::filesystem::exists(baseline)) {
    BLASTER_INPUT_ERROR("{}: missing; every task has a baseline kernel init.cu", baseline.string());
  }
  task_candidates out;
  out.files = {baseline};
  auto add_all = [&](const std::vector<std::filesystem::path>& more) {
    out.files.insert(out.files.end(), more.begin(), more.end());
  };
  if (given.empty()) {
    const auto kernels = root / "kernels" / task;
    if (!std::filesystem::is_directory(kernels)) return out;
    // Each kind's frontend is asked once, and only for a kind the folder holds: a folder of .cu
    // files never starts an interpreter.
    std::map<candidate_kind, std::string> why_not;
    for (auto& file : candidate_files_in(kernels)) {
      const candidate_kind kind = *candidate_kind_of(file);
      auto it = why_not.find(kind);
      if (it == why_not.end())
        it = why_not.emplace(kind, frontend_for(kind).unavailable(limits)).first;
      if (it->second.empty()) {
        out.files.push_back(std::move(file));
        continue;
      }
      auto group = std::find_if(out.left_out.begin(), out.left_out.end(),
                                [&](const left_out_candidates& l) { return l.why == it->second; });
      if (group == out.left_out.end()) group = out.left_out.insert(group, {{}, it->second});
      group->files.push_back(std::move(file));
    }
    return out;
  }
  for (const auto& path : given) {
    if (std::filesystem::is_directory(path)) {
      const auto found = candidate_files_in(path);
      if (found.empty()) {
        BLASTER_INPUT_ERROR(
            "{}: no candidate files (.cu, .py, .ptx, .cubin) in this folder; name a candidate "
            "file or a folder that holds some",
            path.string());
      }
      add_all(found);
    } else if (std::filesystem::is_regular_file(path)) {
      out.files.push_back(path);
    } else {
      BLASTER_INPUT_ERROR("{}: no such candidate file or folder", path.string());
    }
  }
  return out;
}

std::string describe(const left_out_candidates& left_out, const std::filesystem::path& root) {
  std::vector<std::string> names;
  for (const auto& file : left_out.files) {
    const std::filesystem::path relative = file.lexically_relative(root);
    const bool inside = !relative.empty() && *relative.begin() != "..";
    names.push_back((inside ? relative : file).generic_string());
  }
  return fmt::format("{} left out: {}", fmt::join(names, ", "), left_out.why);
}

std::filesystem::path common_headers_folder(const std::filesystem::path& root) {
  return root / "kernels" / "common";
}

candidate_file read_candidate(const std::filesystem::path& file, const compile_limits& limits,
                              const std::filesystem::path& common_headers) {
  candidate_file result;
  result.file = file;
  result.name = file.stem().string();
  result.kind = candidate_kind_of(file).value_or(candidate_kind::cuda);
  result.compile_error = read_source(file, limits.max_source_bytes, result.source);
  // A cubin is machine code; every other kind is text that its compiler reads.
  if (result.compile_error.empty() && result.kind != candidate_kind::cubin) {
    result.compile_error = check_text(result.source, file);
  }
  if (!result.compile_error.empty()) return result;
  compile_request sources;  // what the sources digest covers: the source, then its companions
  sources.source = result.source;
  result.sources_sha256 = sources_sha256(sources);
  frontend_plan read;
  try {
    read = frontend_for(result.kind)
               .read_plan(file, result.source,
                          {.limits = limits, .common_headers = common_headers});
  } catch (const input_error& e) {
    result.plan_error = e.what();
    return result;
  }
  result.plan = std::move(read.plan);
  result.plan_error = check_plan_limits(*result.plan, result.plan->file, limits);
  if (result.plan_error.empty()) result.compile_error = read.compile_error;
  if (!result.plan_error.empty() || !result.compile_error.empty()) {
    result.plan.reset();
    return result;
  }
  result.headers = std::move(read.companions);
  sources.headers = result.headers;
  result.sources_sha256 = sources_sha256(sources);
  return result;
}

candidate_file load_candidate(const std::filesystem::path& file, const std::string& arch,
                              compile_cache* cache, const compile_limits& limits,
                              const std::filesystem::path& common_headers, const task_spec* task) {
  candidate_file result = read_candidate(file, limits, common_headers);
  if (!result.plan) return result;
  const candidate_frontend& frontend = frontend_for(result.kind);
  frontend_plan plan;
  plan.plan = *result.plan;
  plan.companions = result.headers;
  std::vector<std::vector<kernel_argument>> arguments;
  if (task != nullptr && result.kind == candidate_kind::triton) {
    try {
      arguments = plan_argument_types(*result.plan, *task);
    } catch (const input_error& e) {
      result.plan_error = e.what();
      result.plan.reset();
      return result;
    }
  }
  std::vector<compile_request> requests;  // one per variant, in order
  for (const auto& params : expand_params(*result.plan)) {
    candidate_variant v;
    v.candidate = result.name;
    v.params = params;
    std::vector<std::string> assignments;
    for (const auto& [name, values] : result.plan->params) {  // declaration order
      assignments.push_back(fmt::format("{}={}", name, params.at(name)));
    }
    v.label = assignments.empty() ? result.name
                                  : fmt::format("{}[{}]", result.name, fmt::join(assignments, ","));
    for (const auto& step : result.plan->launch) {
      v.kernels.push_back(instantiate_kernel_name(step.kernel, params));
    }
    requests.push_back(frontend.request({.file = file,
                                         .source = result.source,
                                         .plan = plan,
                                         .params = v.params,
                                         .kernels = v.kernels,
                                         .arch = arch,
                                         .arguments = arguments,
                                         .limits = limits}));
    result.variants.push_back(std::move(v));
  }
  // The variants of a file are independent: they compile side by side.
  std::vector<compile_output> compiled = compile_all(requests, cache, limits);
  for (std::size_t i = 0; i < result.variants.size(); ++i) {
    candidate_variant& v = result.variants[i];
    v.compiled = std::move(compiled[i]);
    if (!v.compiled.refusal.empty()) {
      v.compiled.refusal = fmt::format("{}: {}", file.string(), v.compiled.refusal);
    }
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
