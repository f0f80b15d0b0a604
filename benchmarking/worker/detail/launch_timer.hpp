#pragma once

// Launches of a plan timed one at a time on the device, alone or as the last of a run of
// launches: what the timing's checks after its samples measure.

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "benchmarking/candidate/kernel_binding.hpp"
#include "benchmarking/timing/stream_hold.hpp"
#include "benchmarking/worker/detail/worker_context.hpp"
#include "core/cuda_graph.hpp"
#include "core/cuda_stream.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster::worker {

// [microseconds] how long a stream hold keeps the launches behind it waiting: far longer than the
// host takes to enqueue a few, CUPTI's recording included.
inline constexpr double hold_us = 200.0;

// How many launches of the plan come before the timed one in a run.
inline constexpr int runway_launches = 3;

using enqueue_fn = std::function<void(CUstream)>;

// Launches of the plan in a run that ends with the one timed: `runway_launches` of `before`, then
// what `between` puts on the stream (a copy, a pause), then `timed`; each launch after what
// `each` puts there, as the mode's samples put it before theirs (poison, a flush). Where the
// mode's samples are replays of a CUDA graph the run is captured once as one and replayed, so
// that its launches follow each other as closely as a sample's do: a kernel that tells a graph's
// launches from a stream's by the time between them cannot tell here.
class launch_run {
 public:
  launch_run(const cuda::stream& stream, const launch_sequence& before, enqueue_fn between,
             const launch_sequence& timed, enqueue_fn each, bool as_graph);
  // The same run of any launch, of `kernels` kernels, that `launch` puts on the stream: the
  // harness's reference kernel in place of the plan. On the stream, never as a graph.
  launch_run(enqueue_fn launch, std::size_t kernels, enqueue_fn between);
  launch_run(const launch_run&) = delete;
  launch_run& operator=(const launch_run&) = delete;

  // All but the timed launch.
  void enqueue_before(CUstream s) const;
  void enqueue_timed(CUstream s) const { timed_(s); }
  [[nodiscard]] const std::optional<cuda::graph>& graph() const { return graph_; }
  // How many kernels come before the timed launch's, and how many the timed launch has.
  [[nodiscard]] std::size_t earlier() const { return runway_launches * before_kernels_; }
  [[nodiscard]] std::size_t planned() const { return timed_kernels_; }

 private:
  enqueue_fn before_;
  std::size_t before_kernels_;
  enqueue_fn between_;
  enqueue_fn timed_;
  std::size_t timed_kernels_;
  enqueue_fn each_;
  std::optional<cuda::graph> graph_;
};

// One launch at a time, timed on the device: CUPTI's kernel time where its record since the
// launch is the plan's kernels alone, the CUDA events' around it otherwise (one_launch_us).
class launch_timer {
 public:
  launch_timer(worker_context& w, kernel_recorder& recorder, std::size_t planned)
      : w_(w), recorder_(recorder), planned_(planned), recorded_(recorder.start()) {}
  launch_timer(const launch_timer&) = delete;
  launch_timer& operator=(const launch_timer&) = delete;
  ~launch_timer() { recorder_.stop(); }

  [[nodiscard]] bool recorded() const { return recorded_; }
  [[nodiscard]] std::string source() const {
    return recorded_ ? "CUPTI kernel time" : "CUDA events";
  }

  // [microseconds] the launch of `sequence`; the events' own time goes to `events` if given.
  double operator()(const launch_sequence& sequence, std::vector<double>* events = nullptr);

  // [microseconds] the timed launch of `run`, the whole run back to back behind `hold`: a kernel
  // that tells a launch alone from one in a run of launches (by the time since its last one
  // ended) cannot tell here. A graph's events span the run: only CUPTI times its last launch,
  // and a run is a graph only where CUPTI records.
  double after(const stream_hold& hold, const launch_run& run);

  // Forgets what ran since the last launch timed: launches that only prepare the next one.
  void drop_records();

 private:
  // What `enqueue` puts on the stream, between events, after `earlier` kernels enqueued since the
  // last launch timed: the timed launch's own kernels, `planned` of them, are the records after
  // theirs.
  double timed(const std::function<void()>& enqueue, std::size_t earlier, std::size_t planned,
               std::vector<double>* events);

  worker_context& w_;
  kernel_recorder& recorder_;
  std::size_t planned_;  // the plan's kernels
  bool recorded_;
  cuda::event start_;
  cuda::event stop_;
};

}  // namespace blaster::worker
