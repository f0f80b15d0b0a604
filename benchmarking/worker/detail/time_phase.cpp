// The timing of one check's inputs, and the checks that the timed launches did the work: their
// outputs against the output the gate checked, their device time on freshly poisoned outputs
// against the time on outputs that already hold the answer, and launches on the case's other
// draws against what the gate gave there and against the timed draw's time.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/timing/buffer_copy.hpp"
#include "benchmarking/timing/device_compare.hpp"
#include "benchmarking/timing/kernel_timer.hpp"
#include "benchmarking/timing/l2_flush.hpp"
#include "benchmarking/timing/pattern_fill.hpp"
#include "benchmarking/timing/sm_clock_probe.hpp"
#include "benchmarking/timing/stream_hold.hpp"
#include "benchmarking/worker/detail/check_buffers.hpp"
#include "benchmarking/worker/detail/launch_timer.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"
#include "benchmarking/worker/detail/result_channel.hpp"
#include "core/device_buffer.hpp"
#include "core/sha256.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster::worker {
namespace {

// Which kernels CUPTI saw and how often, and how they differ from the plan's, if they do.
void account(const kernel_recorder& recorder, const resolved_plan& plan, timing_samples& t) {
  cupti_account& a = t.cupti;
  if (a.runs == 0) {
    a.error = "CUPTI is unavailable (" + recorder.unavailable() + "): nothing was recorded";
    return;
  }
  const std::map<std::string, int>& seen = recorder.seen();
  std::map<std::string, int> expected;
  for (const auto& l : plan.launches) expected[l.lowered] += a.runs;
  int executions = 0;
  for (const auto& [name, count] : seen) {
    a.kernels.push_back(
        {.kernel = name, .count = count, .us = recorder.seen_us().at(name) / a.runs});
    executions += count;
  }
  a.matches_plan = seen == expected;
  // Kernels cannot take longer on the device than the events around them; the bound allows
  // for the two clocks' granularity.
  if (!a.matches_plan) {
    a.error = fmt::format(
        "CUPTI saw {} kernel executions of {} names; the plan launches {} kernels {} times",
        executions, seen.size(), expected.size(), a.runs);
  } else if (a.kernel_us > a.event_us * 1.02 + 0.5) {
    a.error = fmt::format(
        "the kernels took {:.2f} us on the device but the events around them only {:.2f} us",
        a.kernel_us, a.event_us);
  }
}

// How many buffer sets a rotating timing needs so that the sets of one sample span twice the
// L2: a launch then finds none of its inputs left in the cache by the launches before it. The
// task's buffers alone count: scratch a candidate declares and never touches would otherwise
// shrink the rotation to one set and leave its inputs in the L2.
int rotation_copies(const check_buffers& one, std::int64_t l2_bytes) {
  const std::size_t bytes = footprint_bytes(one);
  const auto wanted =
      (2 * static_cast<std::size_t>(l2_bytes) + bytes - 1) / std::max<std::size_t>(bytes, 1);
  // Beyond this the sets are tiny and launches dominate; and each buffer maps at least one
  // allocation granule of its own.
  constexpr std::size_t most = 256;
  return static_cast<int>(std::clamp<std::size_t>(wanted, 1, most));
}

// Launches after a pause, each after launches on the same buffers, and how long the pause is:
// longer than the timing's gaps between launches by far, and than the device copy of the inputs
// that the in-place run puts before its launch. A kernel no faster than its roofline floor takes
// at least half as long as that copy (which reads and writes the inputs once; the kernel reads
// them and writes its outputs), so four times its hot time exceeds it, and a kernel keyed on the
// time since its last launch is caught by the one or the other whatever its window.
double pause_us_for(double hot_us) { return std::max(hold_us, 4.0 * hot_us); }

// Pairs of each comparison of launch times (output_dependence.hpp): enough for an interval at
// dependence_confidence that a skip of a few percent lies outside (at 32 pairs and 99.9%, the
// 7th and 26th of the sorted ratios). A launch of a millisecond or more varies less from one to
// the next, and its pairs cost the most: half as many (at 16, the 2nd and 15th).
int output_pairs(double hot_us) { return hot_us < 1000.0 ? 32 : 16; }
int pause_pairs(double hot_us) { return hot_us < 1000.0 ? 24 : 12; }

// Launches on the timed check's inputs uploaded again before each, to time the unseen ones against.
constexpr int seen_launches = 3;

// Launches on inputs the kernel has not been timed on, each the last of a run of launches queued
// behind a hold of the stream, so that they run back to back as a timing's do: a kernel keeping
// a shortcut for launches in a run takes it here too. Each other draw of the case meets two runs:
//  - in place: launches of the timed draw on the timed buffers, then the other draw copied over
//    their inputs on the device, then the launch: the same buffers as the launch before it,
//    a copy's time later;
//  - elsewhere: the other draw uploaded to the timed buffers and poisoned, then launches of the
//    timed draw on a set of their own, then the launch; the timed draw itself, uploaded the same
//    way, is timed against it (seen).
// A kernel that keeps what it derived from its inputs, keyed by anything but their values (an
// address, a launch count, the time since its last launch, the buffers its last launch used,
// the state of the caches), answers an unseen draw from what it kept of the timed one: its
// outputs' digests differ from those of the gate's run of that draw. One that keys by their
// values does the work again there, and is slower. Every launch of a run follows what the mode
// puts before each launch of a sample: the outputs poisoned, where the mode poisons before every
// launch (a kernel that skips its work on written outputs finds poison here as it does there),
// then `flush`, where the mode flushes the L2. It leaves `set` another draw's.
void time_unseen_inputs(worker_context& w, const resolved_plan& plan,
                        const timing_mode_traits& mode, const enqueue_fn& flush,
                        const pattern_fill& fill, const stream_hold& hold, const gate_check& timed,
                        check_buffers& set, const launch_sequence& launch,
                        kernel_recorder& recorder, timing_checks& checks) {
  std::vector<std::size_t> others;
  for (std::size_t k = 0; k < w.request.checks.size(); ++k) {
    const gate_check& c = w.request.checks[k];
    if (c.case_name == timed.case_name && &c != &timed) others.push_back(k);
  }
  if (others.empty()) return;
  send_step("unseen inputs");
  auto load = [&](const gate_check& c) {
    assign_inputs(w, c, set);
    poison(w, set, fill);
    settle(w);
  };
  check_buffers runway_set = allocate_check(w, timed, plan);
  poison(w, runway_set);
  const launch_sequence runway(plan, *w.module, runway_set.pointers);
  settle(w);
  enqueue_fn each;
  if (mode.checks_every_sample || flush) {
    each = [&](CUstream s) {
      if (mode.checks_every_sample) {
        poison_outputs(w, set, fill, s);
        poison_outputs(w, runway_set, fill, s);
      }
      if (flush) flush(s);
    };
  }
  launch_timer timer(w, recorder, launch.size());
  const bool as_graph = mode.replays_graph && timer.recorded();
  const launch_run elsewhere(w.stream, runway, {}, launch, each, as_graph);
  unseen_inputs u{.source = timer.source()};
  // Do the outputs of the last launch, on `other` (check k), have the gate's digests?
  auto compare = [&](std::size_t k, std::string_view how) {
    const gate_check& other = w.request.checks[k];
    const auto gated = w.request.other_draws_sha256.find(k);
    if (gated == w.request.other_draws_sha256.end()) return;  // nothing to compare with
    for (std::size_t o = 0; o < other.outputs.size() && o < gated->second.size(); ++o) {
      const buffer_slot& slot = other.outputs[o];
      const std::span<std::byte> bytes = w.host_bytes(slot.bytes);
      set.buffers.at(slot.buffer).download(bytes);
      if (piecewise_sha256_hex(bytes) != gated->second[o]) {
        u.differing.push_back(
            fmt::format("{} on the draw of seed {:#x} {}", slot.buffer, other.seed, how));
      }
    }
  };
  for (int i = 0; i < seen_launches; ++i) {
    load(timed);
    u.seen_us.push_back(timer.after(hold, elsewhere));
  }
  for (const std::size_t k : others) {
    const gate_check& other = w.request.checks[k];
    std::vector<cuda::device_buffer> staged;
    for (const auto& slot : other.inputs) {
      staged.emplace_back(slot.bytes);
      staged.back().upload_async(w.inputs->slice(slot.offset, slot.bytes), w.stream.get());
    }
    load(timed);
    const launch_run in_place(
        w.stream, launch,
        [&](CUstream s) {
          for (std::size_t i = 0; i < staged.size(); ++i)
            staged[i].copy_to_async(set.buffers.at(other.inputs[i].buffer).data(), s);
        },
        launch, each, as_graph);
    u.in_place_us.push_back(timer.after(hold, in_place));
    compare(k, "in place");
    load(other);
    u.unseen_us.push_back(timer.after(hold, elsewhere));
    compare(k, "after launches elsewhere");
  }
  checks.unseen = std::move(u);
}

// What poison() writes of a set (its outputs and scratch, and its inout buffers, whose poison is
// their drawn bytes) laid end to end, each at a 256-byte boundary, in three images of that size:
// what the two sides of the output comparison copy from, to and through.
struct output_images {
  std::vector<std::pair<std::string, std::size_t>> at;  // buffer, offset in an image
  std::size_t bytes = 0;
  std::optional<cuda::device_buffer> last;    // what the last launch left, copied out
  std::optional<cuda::device_buffer> poison;  // the run's poison, written once
  std::optional<cuda::device_buffer> sink;    // where the other image's read goes
};

// The images of `set`, whose buffers get the poison on the way; a launch of `launch` then puts
// back what a launch leaves there.
output_images image_outputs(worker_context& w, check_buffers& set, const launch_sequence& launch,
                            const pattern_fill& fill, const buffer_copy& copy) {
  output_images images;
  auto place = [&](const std::string& name) {
    images.at.emplace_back(name, images.bytes);
    images.bytes += (set.buffers.at(name).bytes() + 255) / 256 * 256;
  };
  for (const auto& [name, type] : set.output_types) place(name);
  for (const auto& [name, drawn] : set.restore) place(name);
  const std::size_t bytes = std::max<std::size_t>(images.bytes, 256);
  images.last.emplace(bytes);
  images.poison.emplace(bytes);
  images.sink.emplace(bytes);
  poison(w, set, fill);
  for (const auto& [name, offset] : images.at) {
    copy(images.poison->get() + offset, set.buffers.at(name).data(), set.buffers.at(name).bytes(),
         w.stream.get());
  }
  launch.enqueue(w.stream.get());
  settle(w);
  return images;
}

// Before one side's launch on `set`: three copies of what poison() writes, the same on both
// sides but for the image those buffers get:
//   both:     buffers -> last
//   control:  poison  -> sink,  last   -> buffers   (they get what they held)
//   poisoned: last    -> sink,  poison -> buffers   (they get the poison, as poison() writes it)
// Each side reads both images and writes the sink and the buffers, in the same order of kinds.
void rewrite_outputs(worker_context& w, check_buffers& set, const output_images& images,
                     const buffer_copy& copy, bool poisoned) {
  const CUstream s = w.stream.get();
  const CUdeviceptr last = images.last->get();
  const CUdeviceptr poison = images.poison->get();
  const CUdeviceptr sink = images.sink->get();
  for (const auto& [name, offset] : images.at) {
    copy(last + offset, set.buffers.at(name).data(), set.buffers.at(name).bytes(), s);
  }
  for (const auto& [name, offset] : images.at) {
    const std::size_t size = set.buffers.at(name).bytes();
    copy(sink + offset, (poisoned ? last : poison) + offset, size, s);
    copy(set.buffers.at(name).data(), (poisoned ? poison : last) + offset, size, s);
  }
  settle(w);
}

// The harness's reference for the pause comparison: its copy kernel between two buffers of its
// own, sized to take about the candidate's hot time (at most 256 MiB each way), so that the
// device's cost of a pause weighs on it as on the candidate.
struct pause_reference {
  std::size_t bytes = 0;
  std::optional<cuda::device_buffer> from;
  std::optional<cuda::device_buffer> to;
};

pause_reference reference_for(const buffer_copy& copy, const stream_hold& hold, double hot_us,
                              launch_timer& timer) {
  constexpr std::size_t most = std::size_t{256} << 20;
  constexpr std::size_t probe = std::size_t{16} << 20;
  pause_reference r;
  r.from.emplace(probe);
  r.to.emplace(probe);
  // One probe of 16 MiB, then the size that takes the hot time at the probe's rate.
  const launch_run probe_run(
      [&](CUstream s) { copy.reference(r.to->get(), r.from->get(), probe, s); }, 1, {});
  timer.after(hold, probe_run);  // the first launch of the kernel pays for its loading
  const double probe_us = timer.after(hold, probe_run);
  const double wanted = probe_us > 0.0 ? static_cast<double>(probe) * hot_us / probe_us : 0.0;
  r.bytes = std::clamp<std::size_t>(static_cast<std::size_t>(wanted) / 256 * 256, 4096, most);
  if (r.bytes > probe) {
    r.from.emplace(r.bytes);
    r.to.emplace(r.bytes);
  }
  return r;
}

timing_answer run_timing(worker_context& w) {
  const std::size_t index = w.request.timed_check;
  const gate_check& check = w.request.checks.at(index);
  const task_case& c = w.task.find_case(check.case_name);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  const auto& device = w.context.properties();
  const timing_mode_traits& mode = traits_of(w.request.timing.mode);
  std::vector<check_buffers> sets;
  sets.push_back(allocate_check(w, check, plan));
  const bool rotate = w.request.timing.rotate_buffers && mode.rotates_buffers;
  const int copies = rotate ? rotation_copies(sets.front(), device.l2_bytes) : 1;
  while (static_cast<int>(sets.size()) < copies) sets.push_back(allocate_check(w, check, plan));
  std::vector<launch_sequence> launches;
  for (auto& set : sets) {
    poison(w, set);
    launches.emplace_back(plan, *w.module, set.pointers);
  }
  settle(w);
  auto enqueue = [&](CUstream s, int i) {
    launches[static_cast<std::size_t>(i) % sets.size()].enqueue(s);
  };

  // The output the gate checked goes to the device once; each stale check compares there, so a
  // case of gigabytes costs milliseconds per check rather than a download and a host pass.
  device_compare compare(w.request.arch, &*w.cache);
  std::map<std::string, cuda::device_buffer, std::less<>> gated;
  for (const auto& slot : check.outputs) {
    auto [it, inserted] = gated.try_emplace(slot.buffer, slot.bytes);
    it->second.upload_async(w.outputs->slice(slot.offset - w.request.outputs_base, slot.bytes),
                            w.stream.get());
  }
  settle(w);

  // Does the last launch on set k reproduce the output the gate checked?
  auto stale_set = [&](std::size_t k) -> std::optional<stale_output> {
    for (const auto& slot : check.outputs) {
      if (auto d = compare(sets[k].buffers.at(slot.buffer).data(), gated.at(slot.buffer).get(),
                           slot.bytes, w.width_of(slot.buffer), w.stream)) {
        return stale_output{.buffer = slot.buffer,
                            .buffer_copy = k,
                            .first_index = d->first,
                            .differing_elements = d->count};
      }
    }
    return std::nullopt;
  };
  // ... and on each of the first `used` sets?
  auto stale = [&](std::size_t used) -> std::optional<stale_output> {
    for (std::size_t k = 0; k < std::min(used, sets.size()); ++k) {
      if (auto d = stale_set(k)) return d;
    }
    return std::nullopt;
  };
  auto poison_all = [&] {
    for (auto& set : sets) poison(w, set);
  };
  // A mode that checks every sample poisons the outputs before every launch and checks every
  // launch's output: a single launch has nothing of its own to find there. The others check one
  // sample, drawn from a seed the kernel cannot see, among the samples that always run (the budget
  // may stop the rest); its outputs are poisoned first, outside the timed region, so that only its
  // own launches can fill them.
  timing_checks checks{.spot_every_sample = mode.checks_every_sample};
  const int always =
      std::max(1, std::min(w.request.timing.max_samples, w.request.timing.min_samples));
  const int spot_sample =
      checks.spot_every_sample
          ? 0
          : static_cast<int>(w.request.spot_seed % static_cast<std::uint64_t>(always));
  int spot_failed_sample = -1;
  const spot_check spot{.sample = spot_sample,
                        .every_sample = checks.spot_every_sample,
                        .before = poison_all,
                        .after = [&](int inner) {
                          ++checks.checked_samples;
                          if (checks.spot_stale) return;
                          checks.spot_stale = stale(static_cast<std::size_t>(inner));
                          if (checks.spot_stale) spot_failed_sample = checks.checked_samples - 1;
                        }};
  std::optional<l2_flush> flush;
  if (mode.flushes_l2) flush.emplace(device.l2_bytes, w.request.arch, &*w.cache);
  const sm_clock_probe clock(w.request.arch, &*w.cache);
  kernel_recorder recorder(
      {std::string(sm_clock_probe::kernel_name), std::string(l2_flush::kernel_name),
       std::string(device_compare::kernel_name), std::string(pattern_fill::kernel_name),
       std::string(buffer_copy::kernel_name), std::string(stream_hold::kernel_name)});
  // The harness's kernels of the checks after the samples, which the recorder leaves out.
  const pattern_fill fill(w.request.arch, &*w.cache);
  const buffer_copy copy(w.request.arch, &*w.cache);
  const stream_hold hold(w.request.arch, &*w.cache);
  enqueue_fn flush_l2;
  if (flush) flush_l2 = [&](CUstream s) { (*flush)(s); };
  timing_environment environment{.flush_l2 = flush_l2,
                                 .clock = &clock,
                                 .rated_clock_mhz = device.sm_clock_khz / 1000.0,
                                 .record = {},
                                 .recorded_us = {}};
  record_through(recorder, environment);
  send_step("timing");
  timing_samples timing = time_kernel(enqueue, w.stream, w.request.timing, environment, &spot);
  timing.buffer_copies = copies;
  account(recorder, plan, timing);
  checks.spot_sample = checks.spot_every_sample ? spot_failed_sample : spot_sample;

  // Pairs of launches whose sides differ in one thing only, each launch timed alone on the device
  // and each side's order alternating: what the outputs hold, then the time since the last
  // launch, beside the harness's reference timed the same way.
  if (mode.checks_output_dependence) {
    send_step("poisoned launches");
    const output_images images = image_outputs(w, sets.front(), launches.front(), fill, copy);
    launch_timer alone(w, recorder, plan.launches.size());
    poisoned_launches p{.source = alone.source(), .hot_us = timing.cupti.kernel_us};
    for (int i = 0; i < output_pairs(p.hot_us); ++i) {
      const std::size_t k = static_cast<std::size_t>(i) % sets.size();
      for (const bool poisoned : {i % 2 == 1, i % 2 == 0}) {
        rewrite_outputs(w, sets[k], images, copy, poisoned);
        if (poisoned) {
          p.poisoned_us.push_back(alone(launches[k], &p.poisoned_event_us));
          if (!checks.poisoned_stale) checks.poisoned_stale = stale_set(k);
        } else {
          p.control_us.push_back(alone(launches[k], &p.control_event_us));
        }
      }
    }
    // Then the same buffers and inputs as the launches before, back to back or a pause later:
    // the caches hold the same, so an honest launch takes as long, but for what a pause costs
    // the device, which the reference's pairs measure.
    if (alone.recorded() && p.hot_us > 0.0) {
      p.pause_us = pause_us_for(p.hot_us);
      const auto pause = [&](CUstream s) { hold(p.pause_us, s); };
      for (int i = 0; i < pause_pairs(p.hot_us); ++i) {
        const launch_sequence& same = launches[static_cast<std::size_t>(i) % sets.size()];
        const launch_run back_to_back(w.stream, same, {}, same, {}, false);
        const launch_run paused(w.stream, same, pause, same, {}, false);
        for (const bool after_pause : {i % 2 == 1, i % 2 == 0}) {
          (after_pause ? p.paused_us : p.back_to_back_us)
              .push_back(alone.after(hold, after_pause ? paused : back_to_back));
        }
      }
      const pause_reference reference = reference_for(copy, hold, p.hot_us, alone);
      p.reference_bytes = reference.bytes;
      const CUdeviceptr from = reference.from->get();
      const CUdeviceptr to = reference.to->get();
      const auto copy_once = [&](CUstream s) { copy.reference(to, from, reference.bytes, s); };
      const launch_run back_to_back(copy_once, 1, {});
      const launch_run paused(copy_once, 1, pause);
      for (int i = 0; i < pause_pairs(p.hot_us); ++i) {
        for (const bool after_pause : {i % 2 == 1, i % 2 == 0}) {
          (after_pause ? p.reference_paused_us : p.reference_back_to_back_us)
              .push_back(alone.after(hold, after_pause ? paused : back_to_back));
        }
      }
    }
    checks.poisoned = std::move(p);
  }
  // And once more after the last sample, one launch on poisoned outputs.
  poison_all();
  enqueue(w.stream.get(), 0);
  checks.final_stale = stale(1);
  time_unseen_inputs(w, plan, mode, flush_l2, fill, hold, check, sets.front(), launches.front(),
                     recorder, checks);
  return {.samples = std::move(timing), .checks = std::move(checks)};
}

class time_handler final : public phase_handler {
  void do_run(worker_context& w, worker_result& result,
              std::optional<std::size_t>& current) const override {
    current = w.request.timed_check;
    result.timing = run_timing(w);
  }
};

}  // namespace

const phase_handler& time_phase() {
  static const time_handler handler;
  return handler;
}

}  // namespace blaster::worker
