// The hardware counters of one check's inputs, kernel by kernel, through CUPTI's range profiler.
// The counters take several passes; before each one the inputs are restored and the outputs
// poisoned again, so that every pass counts the real work on the real data rather than a kernel
// finding its answer already in place. Each kernel meets an empty L2 and SMs holding none of its
// code or parameters (as under Nsight Compute's cache control), and a read-only sweep after it,
// counted as a range of its own, shows the dirty lines it left in the L2: writes that reach DRAM
// after it ends. A sweep before the first kernel measures what a sweep writes with no kernel
// before it (the profiler's own records), which each kernel's write-back leaves out. The whole
// count runs several times and each counter is the median: stall counts vary from one count to
// the next.
#include <algorithm>

#include <fmt/format.h>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/profile/instruction_flush.hpp"
#include "benchmarking/timing/l2_flush.hpp"
#include "benchmarking/worker/detail/check_buffers.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "benchmarking/worker/detail/result_channel.hpp"
#include "core/cuda_driver.hpp"
#include "profiling/counters.hpp"
#include "profiling/range_profiler.hpp"

namespace blaster::worker {
namespace {

int attribute(CUdevice device, CUdevice_attribute a) {
  int value = 0;
  cuda::check(cuda::driver().cuDeviceGetAttribute(&value, a, device), "cuDeviceGetAttribute");
  return value;
}

sm_resources sm_of(CUdevice device) {
  sm_resources sm;
  sm.max_warps = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / 32;
  sm.max_blocks = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  sm.registers = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  sm.shared_bytes = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  sm.reserved_shared_per_block =
      attribute(device, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  return sm;
}

occupancy_estimate occupancy_of(const resolved_launch& launch, CUfunction function,
                                const sm_resources& sm) {
  const cuda::driver_api& api = cuda::driver();
  int registers = 0;
  int shared = 0;
  cuda::check(api.cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function),
              "cuFuncGetAttribute");
  cuda::check(api.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
              "cuFuncGetAttribute");
  const int threads = static_cast<int>(launch.block[0] * launch.block[1] * launch.block[2]);
  occupancy_estimate o =
      estimate_occupancy({.threads = threads,
                          .registers_per_thread = registers,
                          .shared_bytes = shared + static_cast<int>(launch.shared_bytes)},
                         sm);
  int blocks = 0;
  if (api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, threads,
                                                      launch.shared_bytes) == CUDA_SUCCESS) {
    o.driver_blocks_per_sm = blocks;
  }
  return o;
}

// The kernels of one pass, in launch order: two sweeps alone (the second, after a sweep like
// every later one, measures what a sweep writes of its own), then for each launch of the plan the
// instruction flush, the launch and the sweep after it.
constexpr std::size_t lead_sweeps = 2;
constexpr std::size_t background_range = 1;
constexpr std::size_t ranges_per_launch = 3;
std::size_t kernel_range(std::size_t launch) {
  return ranges_per_launch * launch + lead_sweeps + 1;
}
std::size_t sweep_range(std::size_t launch) { return kernel_range(launch) + 1; }

counter_profile run_profile(worker_context& w) {
  // Counts of the whole plan, each with every pass it needs.
  const int counted_runs = std::max(1, w.request.counted_runs);
  const gate_check& check = w.request.checks.at(w.request.timed_check);
  const task_case& c = w.task.find_case(check.case_name);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  counter_profile p;
  p.source = "CUPTI range profiler";
  p.case_name = check.case_name;
  const sm_resources sm = sm_of(w.context.device());

  send_step("allocate");
  check_buffers set = allocate_check(w, check, plan);
  const kept_inputs kept(w, check);
  const launch_sequence launches(plan, *w.module, set.pointers);
  // After the launches are bound: they raise each kernel's dynamic shared memory limit, which the
  // driver's occupancy counts.
  for (std::size_t i = 0; i < plan.launches.size(); ++i) {
    const resolved_launch& l = plan.launches[i];
    p.kernels.push_back({.launch = i,
                         .kernel = l.lowered,
                         .counters = {},
                         .occupancy = occupancy_of(l, w.module->function(l.lowered), sm),
                         .resolution = {},
                         .range = {}});
  }
  l2_flush sweep(w.context.properties().l2_bytes, w.request.arch, &*w.cache);
  const int sms = w.context.properties().sm_count;
  instruction_flush instructions(sms, w.request.arch, &*w.cache);
  sweep(w.stream.get());  // fills the sweep's buffer, which each evict() then only reads
  settle(w);
  // Before a pass: the real inputs, the outputs poisoned, an empty L2.
  auto reset = [&] {
    kept.restore(w, set);
    poison_outputs(w, set);
    sweep.evict_and_drop(w.stream.get(), sms);
    settle(w);
  };
  // The plan, each kernel on cold instruction caches and followed by a sweep that shows, and then
  // drops, what it left in the L2.
  auto run_plan = [&] {
    for (std::size_t i = 0; i < launches.size(); ++i) {
      instructions(w.stream.get());
      launches.enqueue(w.stream.get(), i);
      sweep.evict_and_drop(w.stream.get(), sms);
    }
    settle(w);
  };
  if (w.request.wrapped_profiler) {
    // ncu runs this worker once per pass and counts the plan's kernels as they run, between the
    // same sweeps as CUPTI's count below: both tools count a kernel on the same L2 and the same
    // cold instruction caches. The median of the runs is taken where its report is read.
    p.source = "Nsight Compute";
    p.runs = counted_runs;
    send_step("counters");
    for (int run = 0; run < counted_runs; ++run) {
      reset();
      run_plan();
    }
    return p;
  }
  const std::size_t ranges_per_pass = ranges_per_launch * launches.size() + lead_sweeps;
  try {
    std::vector<std::vector<range_values>> runs;
    for (int run = 0; run < counted_runs; ++run) {
      // The steps of each pass, so that a run's record says where the phase's time went.
      send_step("profiler");
      range_profiler profiler(w.context.get(), w.context.properties().ordinal, profiled_counters(),
                              ranges_per_pass);
      p.chip = profiler.chip();
      p.passes = profiler.passes();
      p.missing = profiler.missing();
      bool done = false;
      // A profiler that never says it is done must not loop forever.
      for (int pass = 0; !done && pass <= profiler.passes() + 1; ++pass) {
        send_step("restore");
        reset();
        send_step("count");
        profiler.begin_pass();
        for (std::size_t i = 0; i < lead_sweeps; ++i) sweep.evict_and_drop(w.stream.get(), sms);
        run_plan();
        done = profiler.end_pass();
      }
      if (!done) throw std::runtime_error("the range profiler asked for more passes than it said");
      send_step("decode");
      runs.push_back(profiler.results());
      if (runs.back().size() != ranges_per_pass) {
        throw std::runtime_error(
            fmt::format("the range profiler counted {} kernels of the {} a "
                        "pass launched",
                        runs.back().size(), ranges_per_pass));
      }
    }
    p.runs = counted_runs;
    auto counts_of = [&](std::size_t range) {
      std::vector<std::map<std::string, double>> counts;
      for (const auto& r : runs) counts.push_back(r[range].values);
      return counts;
    };
    auto median_of = [&](std::size_t range) { return median_counters(counts_of(range)); };
    const std::string written(counter::dram_bytes_written);
    auto written_by = [&](std::size_t range) {
      const auto values = median_of(range);
      const auto it = values.find(written);
      return it == values.end() ? 0.0 : it->second;
    };
    p.sweep_dram_bytes_written = written_by(background_range);
    for (auto& k : p.kernels) {
      k.counters = median_of(kernel_range(k.launch));
      k.range = counter_ranges(counts_of(kernel_range(k.launch)));
      k.counters[std::string(counter::dram_bytes_written_back)] =
          std::max(0.0, written_by(sweep_range(k.launch)) - p.sweep_dram_bytes_written);
    }
  } catch (const counters_unavailable& e) {
    p.unavailable = e.what();
  }
  return p;
}

class profile_handler final : public phase_handler {
  void do_run(worker_context& w, worker_result& result,
              std::optional<std::size_t>& current) const override {
    current = w.request.timed_check;
    result.profile = run_profile(w);
  }
};

}  // namespace

const phase_handler& profile_phase() {
  static const profile_handler handler;
  return handler;
}

}  // namespace blaster::worker
