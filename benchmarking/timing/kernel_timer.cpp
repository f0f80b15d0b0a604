#include "benchmarking/timing/kernel_timer.hpp"

#include <array>
#include <chrono>
#include <memory>

#include "benchmarking/statistics/statistics.hpp"
#include "benchmarking/timing/detail/stopping_criterion.hpp"
#include "benchmarking/timing/sm_clock_probe.hpp"
#include "core/cuda_graph.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster {
namespace {

// [milliseconds] between two events around `launches` runs of the plan.
double timed_burst(const plan_enqueue& enqueue, const cuda::stream& stream, cuda::event& start,
                   cuda::event& stop, int launches) {
  start.record(stream);
  for (int i = 0; i < launches; ++i) enqueue(stream.get(), i);
  stop.record(stream);
  return static_cast<double>(cuda::elapsed_ms(start, stop));
}

// What a mode's sampler may use; `inner` is the calibrated launch count of a batching mode.
struct sampler_setup {
  const plan_enqueue& enqueue;
  const cuda::stream& stream;
  const timing_environment& environment;
  int inner;
  cuda::event& start;
  cuda::event& stop;
};

// Takes one sample and returns its events' time [milliseconds]; made once per timing.
using sampler = std::function<double()>;

sampler hot_sampler(sampler_setup& s) {
  return [&s] { return timed_burst(s.enqueue, s.stream, s.start, s.stop, s.inner); };
}

sampler cold_sampler(sampler_setup& s) {
  return [&s] {
    s.environment.flush_l2(s.stream.get());  // before the start event: not timed
    return timed_burst(s.enqueue, s.stream, s.start, s.stop, 1);
  };
}

// The launches of a hot sample, captured once and replayed.
sampler graph_sampler(sampler_setup& s) {
  auto graph = std::make_shared<cuda::graph>(s.stream, [&s](CUstream stream) {
    for (int i = 0; i < s.inner; ++i) s.enqueue(stream, i);
  });
  graph->launch(s.stream);  // the first replay uploads the graph
  s.stream.synchronize();
  return [&s, graph] {
    s.start.record(s.stream);
    graph->launch(s.stream);
    s.stop.record(s.stream);
    return static_cast<double>(cuda::elapsed_ms(s.start, s.stop));
  };
}

sampler single_sampler(sampler_setup& s) {
  return [&s] { return timed_burst(s.enqueue, s.stream, s.start, s.stop, 1); };
}

// One per timing mode, in the order of the enum.
constexpr std::array<sampler (*)(sampler_setup&), timing_mode_count> samplers{
    hot_sampler, cold_sampler, graph_sampler, single_sampler};

}  // namespace

void record_through(kernel_recorder& recorder, timing_environment& environment) {
  environment.record = [&recorder](bool on) {
    if (on) return recorder.start();
    recorder.stop();
    return true;
  };
  environment.recorded_us = [&recorder] { return recorder.take_us(); };
}

timing_samples time_kernel(const plan_enqueue& enqueue, const cuda::stream& stream,
                           const timing_options& options, const timing_environment& environment,
                           const spot_check* spot) {
  if (traits_of(options.mode).flushes_l2 && !environment.flush_l2) {
    BLASTER_THROW("{} timing needs an L2 flush", to_string(options.mode));
  }
  cuda::event start;
  cuda::event stop;
  auto burst = [&](int launches) { return timed_burst(enqueue, stream, start, stop, launches); };

  // Warm-up keeps module load, first touch and the clock's ramp out of the numbers; a short
  // burst then calibrates (one launch alone overstates the per-launch time).
  burst(options.warmup_launches);
  timing_samples out;
  out.mode = options.mode;
  const timing_mode_traits& mode = traits_of(options.mode);
  if (mode.batches_launches) {
    out.inner = calibrated_inner_count(burst(4) / 4.0, options.target_sample_ms);
  }
  sampler_setup setup{.enqueue = enqueue,
                      .stream = stream,
                      .environment = environment,
                      .inner = out.inner,
                      .start = start,
                      .stop = stop};
  const sampler sample_ms = samplers[static_cast<std::size_t>(options.mode)](setup);

  const bool recorded = environment.record && environment.recorded_us;
  const bool device_samples =
      recorded && mode.timed_by_device && environment.record(true);
  if (device_samples) out.source = "CUPTI kernel time";
  relative_noise_criterion criterion(relative_noise_rules{.min_samples = options.min_samples,
                                                          .max_noise = options.max_noise,
                                                          .budget_s = options.budget_ms / 1000.0,
                                                          .max_samples = options.max_samples});
  double clock_sum_mhz = 0.0;
  double device_sum_us = 0.0;
  double event_sum_us = 0.0;
  using steady = std::chrono::steady_clock;
  auto seconds_since = [](steady::time_point t) {
    return std::chrono::duration<double>(steady::now() - t).count();
  };
  for (int s = 0; !criterion.done(); ++s) {
    // The spot check's poisoning and download are the harness's cost, not sampling: they stay
    // out of the budget, or a case of gigabytes would stop after a sample or two.
    const bool spotted = spot != nullptr && (spot->every_sample || spot->sample == s);
    if (spotted && spot->before) spot->before();
    const auto began = steady::now();
    const double event_us = sample_ms() * 1000.0 / out.inner;
    double per_launch_us = event_us;
    if (device_samples) {
      per_launch_us = environment.recorded_us();
      device_sum_us += per_launch_us;
      event_sum_us += event_us;
    }
    double checking_s = 0.0;
    if (spotted && spot->after) {
      const auto checked = steady::now();
      spot->after(out.inner);
      checking_s = seconds_since(checked);
    }
    ++out.taken;
    bool keep = true;
    if (environment.clock != nullptr) {
      const double mhz = environment.clock->measure_mhz(stream);
      if (mhz < options.min_clock_fraction * environment.rated_clock_mhz) {
        keep = false;
        ++out.discarded_samples;
      } else {
        clock_sum_mhz += mhz;
      }
    }
    if (keep) {
      out.sample_us.push_back(per_launch_us);
      if (device_samples) out.event_us.push_back(event_us);
      criterion.add(per_launch_us);
    }
    criterion.add_elapsed(seconds_since(began) - checking_s);
  }
  if (device_samples) {
    environment.record(false);
    out.cupti.runs = out.taken;
    out.cupti.kernel_us = device_sum_us / out.taken;
    out.cupti.event_us = event_sum_us / out.taken;
  } else if (recorded && environment.record(true)) {
    // One more sample, recorded: recording slows the host's launches, so not a timed one. A
    // first, unrecorded one pays for CUPTI's start, which the events would otherwise include.
    sample_ms();
    environment.record(true);
    out.cupti.event_us = sample_ms() * 1000.0 / out.inner;
    stream.synchronize();
    out.cupti.kernel_us = environment.recorded_us() / out.inner;
    environment.record(false);
    out.cupti.runs = out.inner;
  }
  out.median_us = median(out.sample_us);
  out.noise = relative_noise(out.sample_us);
  out.stopped_by = std::string(to_string(criterion.reason()));
  if (!out.sample_us.empty() && environment.clock != nullptr) {
    out.mean_clock_mhz = clock_sum_mhz / static_cast<double>(out.sample_us.size());
  }
  return out;
}

}  // namespace blaster
