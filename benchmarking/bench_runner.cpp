#include "benchmarking/bench_runner.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "benchmarking/candidate.hpp"
#include "benchmarking/kernel_binding.hpp"
#include "benchmarking/result_printer.hpp"
#include "core/cas_store.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_module.hpp"
#include "core/cuda_stream.hpp"
#include "core/device_buffer.hpp"
#include "core/error.hpp"
#include "core/nvrtc_compiler.hpp"
#include "core/store.hpp"
#include "tasks/input_generator.hpp"
#include "tasks/reference.hpp"

namespace blaster {
namespace {

// Errors after which the context is unusable: every later call in this process fails.
bool is_sticky(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return true;
    default:
      return false;
  }
}

// One case's inputs and the reference's answer for them, computed once and shared by every
// variant.
struct case_data {
  const task_case* which = nullptr;
  std::map<std::string, host_tensor, std::less<>> inputs;
  std::map<std::string, std::vector<double>, std::less<>> expected;
};

case_data prepare_case(const task_spec& task, const task_case& c, reference_fn reference,
                       std::uint64_t seed) {
  case_data data;
  data.which = &c;
  reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
  for (const auto& b : task.buffers) {
    const std::int64_t n = task.elements(b, c);
    if (b.role == buffer_role::input) {
      data.inputs[b.name] = generate_input(b, n, derive_seed(seed, c.name, b.name));
    } else {
      data.expected[b.name].assign(static_cast<std::size_t>(n), 0.0);
    }
  }
  for (const auto& [name, t] : data.inputs) io.inputs[name] = t.values;
  for (auto& [name, values] : data.expected) io.outputs[name] = values;
  reference(io);
  return data;
}

// Device buffers for one check: inputs uploaded, outputs and scratch poisoned.
struct device_buffers {
  std::map<std::string, cuda::device_buffer, std::less<>> owned;
  std::map<std::string, CUdeviceptr, std::less<>> pointers;
};

device_buffers allocate(const task_spec& task, const case_data& data, const resolved_plan& plan) {
  device_buffers d;
  auto add = [&](const std::string& name, std::size_t bytes) -> cuda::device_buffer& {
    auto [it, inserted] = d.owned.emplace(name, cuda::device_buffer(bytes));
    d.pointers[name] = it->second.get();
    return it->second;
  };
  for (const auto& b : task.buffers) {
    const auto bytes = static_cast<std::size_t>(task.elements(b, *data.which)) * size_of(b.type);
    cuda::device_buffer& buffer = add(b.name, bytes);
    if (b.role == buffer_role::input) {
      buffer.upload(data.inputs.find(b.name)->second.bytes);
    } else if (size_of(b.type) == 2) {
      buffer.fill_u16(static_cast<unsigned short>(poison_pattern(b.type) & 0xFFFFU));
    } else {
      buffer.fill_u32(poison_pattern(b.type));
    }
  }
  for (const auto& [name, bytes] : plan.scratch) {
    add(name, static_cast<std::size_t>(bytes)).fill_u8(0xA5);
  }
  return d;
}

std::string device_json(const bench_report& report) {
  nlohmann::json j;
  if (report.device) {
    const auto& p = *report.device;
    j = {{"name", p.name},
         {"uuid", p.uuid},
         {"arch", p.arch()},
         {"sm_count", p.sm_count},
         {"sm_clock_khz", p.sm_clock_khz},
         {"memory_clock_khz", p.memory_clock_khz},
         {"l2_bytes", p.l2_bytes},
         {"total_memory_bytes", p.total_memory_bytes},
         {"driver_version", p.driver_version}};
  }
  j["nvrtc"] = report.nvrtc;
  if (report.copy) j["copy_bandwidth_gbs"] = report.copy->bytes_per_second / 1e9;
  return j.dump();
}

void reject(variant_result& r, std::string reason, std::string message) {
  r.status = "rejected";
  r.reason = std::move(reason);
  r.message = std::move(message);
}

void record_results(store& records, std::int64_t run_id, const bench_report& report) {
  for (const auto& r : report.results) {
    nlohmann::json detail = {{"message", r.message},
                             {"params", r.params},
                             {"compile_ms", r.compile_ms},
                             {"seed", report.seed}};
    records.add_result(run_id,
                       result_record{
                           .candidate = r.candidate,
                           .variant = r.label,
                           .case_name = report.canonical_case,
                           .status = r.status,
                           .reason = r.reason,
                           .time_us = r.timing ? std::optional(r.timing->median_us) : std::nullopt,
                           .speedup = r.speedup,
                           .bandwidth_gbs = r.bandwidth_gbs,
                           .roofline_pct = r.roofline_pct,
                           .source_sha256 = r.source_sha256,
                           .cubin_sha256 = r.cubin_sha256,
                           .samples_sha256 = r.samples_sha256,
                           .detail_json = detail.dump(),
                       });
  }
}

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
    if (!module) module.emplace(v.compiled.cubin);
    out.push_back(query_kernel_resources(module->function(lowered), lowered));
  }
  return out;
}

// What compiling the candidates produced: the report so far and the variants that can run.
struct compiled_candidates {
  task_spec task;
  std::vector<candidate_file> loaded;
  struct runnable_variant {
    const candidate_file* file;
    const candidate_variant* variant;
    std::size_t result;  // index into report.results
  };
  std::vector<runnable_variant> runnable;
};

// Loads the task, compiles every candidate for the report's architecture and resolves every
// plan on every case. This much works on any machine.
void compile_stage(const bench_options& options, store& records, compile_cache& cache,
                   bool device_present, bench_report& report, compiled_candidates& out) {
  const task_spec& task = out.task;
  auto files = discover_candidates(options.root, task.name, options.candidates);
  if (options.skip_baseline) files.erase(files.begin());
  report.task = task.name;
  report.title = task.title;
  report.canonical_case = task.canonical_case;
  report.canonical_shape = task.describe(task.canonical());
  report.roofline_bytes = task.bytes.evaluate(task.integer_symbols(task.canonical()));
  for (const auto& b : task.buffers) {
    if (b.role == buffer_role::input) {
      report.dtype = std::string(name_of(b.type));
      break;
    }
  }
  report.nvrtc = nvrtc_version();
  report.home = records.home().string();
  spdlog::info("compiling {} candidate files of task {} for {}", files.size(), task.name,
               report.arch);
  out.loaded.reserve(files.size());  // runnable entries point into it
  for (const auto& file : files) out.loaded.push_back(load_candidate(file, report.arch, &cache));
  for (const auto& f : out.loaded) {
    const bool is_baseline = !options.skip_baseline && &f == &out.loaded.front();
    const std::string source_sha256 = records.cas().put(f.source);
    if (!f.plan) {
      variant_result r;
      r.candidate = f.name;
      r.label = f.name;
      r.file = f.file.string();
      r.baseline = is_baseline;
      r.source_sha256 = source_sha256;
      reject(r, "plan_error", f.plan_error);
      report.results.push_back(std::move(r));
      continue;
    }
    for (const auto& v : f.variants) {
      variant_result r;
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
      if (!v.compiled.ok) {
        reject(r, "compile_error",
               fmt::format("{} does not compile for {}", f.file.string(), report.arch));
      } else {
        r.cubin_sha256 = records.cas().put(v.compiled.cubin);
        r.status = "compiled";
        try {
          // Every case must resolve before anything runs: a plan that breaks on an edge case
          // is wrong everywhere.
          for (const auto& c : task.cases) static_cast<void>(resolve_plan(*f.plan, v, task, c));
        } catch (const input_error& e) {
          reject(r, "plan_error", e.what());
        }
      }
      report.results.push_back(std::move(r));
      if (report.results.back().status == "compiled") {
        out.runnable.push_back({&f, &v, report.results.size() - 1});
      }
    }
  }
}

// Checks every runnable variant on every case and times the survivors on the canonical case.
void measure(const bench_options& options, const task_spec& task, reference_fn reference,
             const cuda::context& context, compile_cache& cache, store& records,
             bench_report& report,
             const std::vector<compiled_candidates::runnable_variant>& runnable) {
  cuda::stream stream;
  spdlog::info("measuring the copy bandwidth of {}", context.properties().name);
  report.copy = measure_copy_bandwidth(context, stream, &cache);

  std::map<std::size_t, cuda::module> modules;
  bool context_lost = false;
  // The canonical case goes last so that its buffers are still there for timing.
  std::vector<const task_case*> order;
  for (const auto& c : task.cases) {
    if (c.name != task.canonical_case) order.push_back(&c);
  }
  order.push_back(&task.canonical());

  for (const task_case* c : order) {
    spdlog::info("case {} ({}): computing the float64 reference", c->name, task.describe(*c));
    const case_data data = prepare_case(task, *c, reference, report.seed);
    spdlog::info("case {}: checking {} variants{}", c->name, runnable.size(),
                 c->name == task.canonical_case ? " and timing the correct ones" : "");
    const bool canonical = c->name == task.canonical_case;
    for (const auto& p : runnable) {
      variant_result& r = report.results[p.result];
      if (r.status != "compiled") continue;
      if (context_lost) {
        r.status = "skipped";
        r.message = "not run: an earlier candidate made the GPU context unusable";
        continue;
      }
      case_check check;
      check.case_name = c->name;
      try {
        if (!modules.contains(p.result))
          modules.emplace(p.result, cuda::module(p.variant->compiled.cubin));
        const resolved_plan plan = resolve_plan(*p.file->plan, *p.variant, task, *c);
        device_buffers buffers = allocate(task, data, plan);
        const launch_sequence launches(plan, modules.at(p.result), buffers.pointers);
        launches.enqueue(stream.get());
        stream.synchronize();
        for (const auto& b : task.buffers) {
          if (b.role != buffer_role::output) continue;
          const auto& expected = data.expected.find(b.name)->second;
          std::vector<std::byte> got(buffers.owned.at(b.name).bytes());
          buffers.owned.at(b.name).download(got);
          check.outputs.push_back(compare_output(b.name, b.type, got, expected, task.tol));
          if (check.reason.empty()) {
            check.reason = failure_reason(check.outputs.back());
            check.message = describe_failure(check.outputs.back());
          }
        }
        if (!check.reason.empty()) {
          reject(r, check.reason,
                 fmt::format("case {} ({}): {}", c->name, task.describe(*c), check.message));
        } else if (canonical) {
          r.timing = time_hot([&](CUstream s) { launches.enqueue(s); }, stream, options.timing);
        }
      } catch (const cuda::cuda_error& e) {
        check.reason = "launch_error";
        check.message = e.what();
        reject(r, "launch_error", fmt::format("case {}: {}", c->name, e.what()));
        context_lost = is_sticky(e.code());
      } catch (const input_error& e) {
        check.reason = "plan_error";
        check.message = e.what();
        reject(r, "plan_error", e.what());
      }
      r.checks.push_back(std::move(check));
    }
  }

  const variant_result* baseline = nullptr;
  for (const auto& r : report.results) {
    if (r.baseline && r.timing) baseline = &r;
  }
  const double copy_rate = report.copy->bytes_per_second;
  for (auto& r : report.results) {
    if (!r.timing) continue;
    r.status = "passed";
    const double seconds = r.timing->median_us * 1e-6;
    r.bandwidth_gbs = static_cast<double>(report.roofline_bytes) / seconds / 1e9;
    r.roofline_pct = 100.0 * static_cast<double>(report.roofline_bytes) / seconds / copy_rate;
    if (baseline != nullptr) r.speedup = baseline->timing->median_us / r.timing->median_us;
    nlohmann::json samples = {{"mode", r.timing->mode},
                              {"inner", r.timing->inner},
                              {"sample_us", r.timing->sample_us},
                              {"case", task.canonical_case},
                              {"shape", report.canonical_shape}};
    r.samples_sha256 = records.cas().put(samples.dump());
  }
}

}  // namespace

bench_report compile_task(const bench_options& options, store& records) {
  bench_report report;
  report.arch = options.arch.empty() ? "sm_90a" : options.arch;
  compiled_candidates compiled{
      .task = load_task(options.root / "tasks" / options.task), .loaded = {}, .runnable = {}};
  compile_cache cache(records.home() / "cache", records.cas());
  // A GPU of the target architecture can report what the compiler's log may leave out.
  std::optional<cuda::context> context;
  if (cuda::driver_unavailable_reason().empty()) {
    context.emplace(0);
    if (context->properties().arch() != report.arch) context.reset();
  }
  compile_stage(options, records, cache, context.has_value(), report, compiled);
  return report;
}

bench_report run_bench(const bench_options& options, store& records) {
  const auto started = std::chrono::steady_clock::now();
  compiled_candidates compiled{
      .task = load_task(options.root / "tasks" / options.task), .loaded = {}, .runnable = {}};
  const task_spec& task = compiled.task;
  const reference_fn reference = find_reference(task.reference);

  bench_report report;
  report.timing = options.timing;
  report.gpu_unavailable = cuda::driver_unavailable_reason();
  report.gpu = report.gpu_unavailable.empty();
  std::optional<cuda::context> context;
  if (report.gpu) {
    context.emplace(0);
    report.device = context->properties();
  }
  report.arch = !options.arch.empty() ? options.arch
                : report.device       ? report.device->arch()
                                      : "sm_90a";
  if (options.seed) {
    report.seed = *options.seed;
  } else {
    std::random_device entropy;  // a seed no candidate can predict
    report.seed = (static_cast<std::uint64_t>(entropy()) << 32U) | entropy();
  }
  compile_cache cache(records.home() / "cache", records.cas());
  compile_stage(options, records, cache, report.device && report.device->arch() == report.arch,
                report, compiled);
  const auto& runnable = compiled.runnable;

  const std::int64_t run_id = records.begin_run(options.command, task.name, device_json(report));
  report.run_id = run_id;
  try {
    if (report.gpu) measure(options, task, reference, *context, cache, records, report, runnable);
  } catch (...) {
    // What was learned before the failure is kept; the run says it failed.
    record_results(records, run_id, report);
    records.finish_run(run_id, "failed", "");
    throw;
  }

  record_results(records, run_id, report);
  report.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const std::string report_sha256 = records.cas().put(to_json(report).dump(1));
  records.finish_run(run_id, report.gpu ? "completed" : "no_gpu", report_sha256);
  return report;
}

}  // namespace blaster
