#include "benchmarking/worker/detail/dependence_pairs.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "benchmarking/timing/l2_flush.hpp"
#include "benchmarking/worker/detail/launch_timer.hpp"
#include "core/device_buffer.hpp"

namespace blaster::worker {
namespace {

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

// What poison() writes of a set (its outputs and scratch, and its inout buffers, whose poison is
// their drawn bytes) laid end to end, each at a 256-byte boundary, in two images of that size:
// the run's poison, and the stage that each side of the output comparison copies from.
struct output_images {
  std::vector<std::pair<std::string, std::size_t>> at;  // buffer, offset in an image
  std::size_t bytes = 0;
  std::optional<cuda::device_buffer> poison;  // the run's poison, written once
  std::optional<cuda::device_buffer> stage;   // what the next launch's buffers get
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
  images.poison.emplace(bytes);
  images.stage.emplace(bytes);
  poison(w, set, fill);
  for (const auto& [name, offset] : images.at) {
    copy(images.poison->get() + offset, set.buffers.at(name).data(), set.buffers.at(name).bytes(),
         w.stream.get());
  }
  launch.enqueue(w.stream.get());
  settle(w);
  return images;
}

// Before one side's launch on `set`, the stage gets what the buffers poison() writes hold now
// (control) or the poison (poisoned); then the sweep writes back and drops every line of the L2,
// a launch of `launch` (whose outputs are the same on both sides) caches what it reads and
// writes, and the same copy kernel writes the stage over those buffers: the same bytes to the
// same addresses in the same order on both sides, which leave the L2 holding the same lines, as
// a hot timing's launch finds them after the launch before it. Only what the outputs hold
// differs. (Copies that differed in their sources' addresses left the L2's lines in another order
// of age and dirtiness: on an H100, honest kernels of about 10 us ran 2 to 6% slower on the
// poisoned side, which evicted dirty lines first. A sweep after the copies left every line a
// launch touches out of the L2 on both sides, where a kernel that skips only when a line it
// touched is still cached and its outputs hold its last answer would skip on neither.)
void rewrite_outputs(worker_context& w, check_buffers& set, const launch_sequence& launch,
                     const output_images& images, const buffer_copy& copy, l2_flush& sweep,
                     bool poisoned) {
  const CUstream s = w.stream.get();
  const CUdeviceptr stage = images.stage->get();
  for (const auto& [name, offset] : images.at) {
    const cuda::guarded_buffer& buffer = set.buffers.at(name);
    copy(stage + offset, poisoned ? images.poison->get() + offset : buffer.data(), buffer.bytes(),
         s);
  }
  sweep.evict_and_drop(s, w.context.properties().sm_count);
  launch.enqueue(s);
  for (const auto& [name, offset] : images.at) {
    copy(set.buffers.at(name).data(), stage + offset, set.buffers.at(name).bytes(), s);
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

// One pair of launches of `alone`, back to back and after a pause, the pair's order set by its
// index `i` (the pause first in odd pairs).
void time_pause_pair(launch_timer& alone, const stream_hold& hold, int i,
                     const launch_run& back_to_back, const launch_run& paused,
                     std::vector<double>& back_to_back_us, std::vector<double>& paused_us) {
  for (const bool after_pause : {i % 2 == 1, i % 2 == 0}) {
    (after_pause ? paused_us : back_to_back_us)
        .push_back(alone.after(hold, after_pause ? paused : back_to_back));
  }
}

}  // namespace

poisoned_launches time_dependence_pairs(
    worker_context& w, std::vector<check_buffers>& sets,
    const std::vector<launch_sequence>& launches, std::size_t planned, double hot_us,
    kernel_recorder& recorder, const pattern_fill& fill, const buffer_copy& copy,
    const stream_hold& hold,
    const std::function<std::optional<stale_output>(std::size_t)>& stale_set,
    std::optional<stale_output>& stale) {
  const output_images images = image_outputs(w, sets.front(), launches.front(), fill, copy);
  l2_flush sweep(w.context.properties().l2_bytes, w.request.arch, &*w.cache);
  sweep(w.stream.get());  // fills the sweep's buffer, which each evict_and_drop() then only reads
  launch_timer alone(w, recorder, planned);
  poisoned_launches p{.source = alone.source(), .hot_us = hot_us};
  for (int i = 0; i < output_pairs(p.hot_us); ++i) {
    const std::size_t k = static_cast<std::size_t>(i) % sets.size();
    for (const bool poisoned : {i % 2 == 1, i % 2 == 0}) {
      rewrite_outputs(w, sets[k], launches[k], images, copy, sweep, poisoned);
      alone.drop_records();  // the launch that cached the lines is not the one timed
      if (poisoned) {
        p.poisoned_us.push_back(alone(launches[k], &p.poisoned_event_us));
        if (!stale) stale = stale_set(k);
      } else {
        p.control_us.push_back(alone(launches[k], &p.control_event_us));
      }
    }
  }
  // Then the same buffers and inputs as the launches before, back to back or a pause later: the
  // caches hold the same, so an honest launch takes as long, but for what a pause costs the
  // device, which the reference's pairs measure.
  if (!alone.recorded() || p.hot_us <= 0.0) return p;
  p.pause_us = pause_us_for(p.hot_us);
  const auto pause = [&](CUstream s) { hold(p.pause_us, s); };
  for (int i = 0; i < pause_pairs(p.hot_us); ++i) {
    const launch_sequence& same = launches[static_cast<std::size_t>(i) % sets.size()];
    const launch_run back_to_back(w.stream, same, {}, same, {}, false);
    const launch_run paused(w.stream, same, pause, same, {}, false);
    time_pause_pair(alone, hold, i, back_to_back, paused, p.back_to_back_us, p.paused_us);
  }
  const pause_reference reference = reference_for(copy, hold, p.hot_us, alone);
  p.reference_bytes = reference.bytes;
  const CUdeviceptr from = reference.from->get();
  const CUdeviceptr to = reference.to->get();
  const auto copy_once = [&](CUstream s) { copy.reference(to, from, reference.bytes, s); };
  const launch_run back_to_back(copy_once, 1, {});
  const launch_run paused(copy_once, 1, pause);
  for (int i = 0; i < pause_pairs(p.hot_us); ++i) {
    time_pause_pair(alone, hold, i, back_to_back, paused, p.reference_back_to_back_us,
                    p.reference_paused_us);
  }
  return p;
}

}  // namespace blaster::worker
