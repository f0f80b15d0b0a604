#include "benchmarking/runner/detail/compile_stage.hpp"

#include <algorithm>
#include <future>

#include <spdlog/spdlog.h>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/tuned/tuned_lookup.hpp"
#include "core/cuda_module.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/nvrtc_compiler.hpp"
#include "core/revision.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

// NVRTC's log carries the ptxas report on most machines; where it does not, a loaded module
// answers for the kernels it left out.
std::vector<kernel_resources> resources_of(const candidate_variant& v, bool device_present) {
  std::vector<kernel_resources> out = v.resources;
  if (!device_present || !v.compiled.ok) return out;
  std::optional<cuda::module> module;
  for (const auto& kernel : v.kernels) {
    const std::string& lowered = v.compiled.lowered_names.at(kernel);
    if (std::any_of(out.begin(), out.end(),
                    [&](const kernel_resources& k) { return k.lowered_name == lowered; })) {
      continue;
    }
    if (!module) module.emplace(module_image(v.compiled));
    out.push_back(query_kernel_resources(module->function(lowered), lowered));
  }
  return out;
}

// The tuned table entry that chooses `f`'s configuration for the timed case, where one exists
// for this device and the entry names one of the file's variants.
std::optional<tuned_choice> tuned_for(const bench_options& options, const task_spec& task,
                                      const task_case& timed, const candidate_file& f,
                                      store& records, const bench_report& report) {
  if (!options.use_tuned || !report.device || f.variants.size() < 2) return std::nullopt;
  const tuned_target target{.candidate = f.file.filename().string(),
                            .device_name = device_name_key(report.device->name),
                            .dtype = report.dtype,
                            .toolchain = toolchain_key(report)};
  std::optional<tuned_choice> choice =
      find_tuned(tuned_folder(options.root, task.name), task, timed, target);
  if (!choice) return std::nullopt;
  if (std::none_of(f.variants.begin(), f.variants.end(),
                   [&](const candidate_variant& v) { return v.params == choice->params; })) {
    spdlog::warn("{}: {} names a configuration the candidate no longer has; every one runs", f.name,
                 describe(*choice));
    return std::nullopt;
  }
  choice->sha256 = records.cas().put(read_file(choice->file));  // the run cites what chose
  return choice;
}

}  // namespace

void reject(variant_result& r, reason_code reason, std::string message) {
  r.status = "rejected";
  r.reason = reason;
  r.message = std::move(message);
}

void compile_stage(const bench_options& options, store& records, compile_cache& cache,
                   bool device_present, bench_report& report, compiled_candidates& out) {
  const task_spec& task = out.task;
  compile_limits limits = options.compile;
  if (limits.executable.empty()) limits.executable = options.worker_executable;
  task_candidates found = discover_candidates(
      options.root, task.name,
      options.baseline_only ? std::vector<std::filesystem::path>{} : options.candidates, limits);
  std::vector<std::filesystem::path>& files = found.files;
  if (options.baseline_only) {
    files.resize(1);
  } else {
    // Not judged, and said so: on stderr now, and in the report that the run's evidence keeps.
    for (const auto& l : found.left_out) {
      report.left_out.push_back(describe(l, options.root));
      spdlog::warn("{}", report.left_out.back());
    }
  }
  if (options.skip_baseline) files.erase(files.begin());
  report.task = task.name;
  report.title = task.title;
  const task_case& timed =
      task.find_case(options.timed_case.empty() ? task.canonical_case : options.timed_case);
  report.timed_case = timed.name;
  report.timed_shape = task.describe(timed);
  const symbol_table symbols = task.integer_symbols(timed);
  report.roofline_bytes = task.bytes.evaluate(symbols);
  report.roofline_mix_known = task.read_bytes.has_value();
  report.roofline_read_bytes =
      task.read_bytes ? task.read_bytes->evaluate(symbols) : report.roofline_bytes;
  report.roofline_write_bytes = task.write_bytes ? task.write_bytes->evaluate(symbols) : 0;
  report.footprint_bytes = 0;
  for (const auto& b : task.buffers) {
    report.footprint_bytes += task.buffer_bytes(b, timed);
  }
  report.roofline_flops = task.flops.evaluate(symbols);
  report.dtype = task.data_dtype();
  report.nvrtc = nvrtc_version();
  report.blaster_revision = std::string(source_revision());
  report.home = records.home().string();
  spdlog::info("compiling {} candidate files of task {} for {}", files.size(), task.name,
               report.arch);
  const std::filesystem::path common_headers = common_headers_folder(options.root);
  out.loaded.reserve(files.size());                  // runnable entries point into it
  std::vector<std::future<candidate_file>> loading;  // files compile side by side, too
  for (const auto& file : files) {
    loading.push_back(
        std::async(std::launch::async, [&file, &report, &cache, &limits, &common_headers, &task] {
          return load_candidate(file, report.arch, &cache, limits, common_headers, &task);
        }));
  }
  for (auto& f : loading) out.loaded.push_back(f.get());
  for (const auto& f : out.loaded) {
    const bool is_baseline = !options.skip_baseline && &f == &out.loaded.front();
    // The bytes the result cites: the source and the shared headers it includes. A source over
    // the size limit was never read, and nothing of it is stored.
    std::string source_sha256;
    if (!f.sources_sha256.empty()) {
      source_sha256 = records.cas().put(f.source);
      for (const auto& header : f.headers) records.cas().put(header.content);
    }
    if (!f.plan) {
      variant_result r;
      r.candidate = f.name;
      r.label = f.name;
      r.file = f.file.string();
      r.baseline = is_baseline;
      r.source_sha256 = source_sha256;
      r.sources_sha256 = f.sources_sha256;
      if (f.compile_error.empty()) {
        reject(r, reason_code::plan_error, f.plan_error);
      } else {
        reject(r, reason_code::compile_error, f.compile_error);
      }
      report.results.push_back(std::move(r));
      continue;
    }
    const std::optional<tuned_choice> tuned =
        is_baseline ? std::nullopt : tuned_for(options, task, timed, f, records, report);
    for (const auto& v : f.variants) {
      if (tuned && v.params != tuned->params) continue;
      if (!is_baseline && options.only_params && v.params != *options.only_params) continue;
      variant_result r;
      r.tuned = tuned;
      r.candidate = f.name;
      r.label = v.label;
      r.file = f.file.string();
      r.params = v.params;
      r.baseline = is_baseline;
      r.log = v.compiled.log;
      r.compile_ms = v.compiled.compile_ms;
      r.cache_hit = v.compiled.cache_hit;
      r.resources = resources_of(v, device_present);
      r.source_sha256 = source_sha256;
      r.sources_sha256 = f.sources_sha256;
      if (!v.compiled.ok) {
        reject(r, reason_code::compile_error,
               !v.compiled.refusal.empty()
                   ? v.compiled.refusal
                   : fmt::format("{} does not compile for {}", f.file.string(), report.arch));
      } else {
        r.cubin_sha256 = records.cas().put(module_image(v.compiled));
        r.status = "compiled";
        try {
          // Every case must resolve before anything runs: a plan that breaks on an edge case
          // is wrong everywhere.
          for (const auto& c : task.cases) static_cast<void>(resolve_plan(*f.plan, v, task, c));
        } catch (const input_error& e) {
          reject(r, reason_code::plan_error, e.what());
        }
      }
      report.results.push_back(std::move(r));
      if (report.results.back().status == "compiled") {
        out.runnable.push_back({&f, &v, report.results.size() - 1});
      }
    }
  }
}

}  // namespace blaster
