#include "benchmarking/worker/detail/launch_timer.hpp"

#include <utility>

#include "benchmarking/timing/output_dependence.hpp"

namespace blaster::worker {

launch_run::launch_run(const cuda::stream& stream, const launch_sequence& before,
                       enqueue_fn between, const launch_sequence& timed, enqueue_fn each,
                       bool as_graph)
    : before_([&before](CUstream s) { before.enqueue(s); }),
      before_kernels_(before.size()),
      between_(std::move(between)),
      timed_([&timed](CUstream s) { timed.enqueue(s); }),
      timed_kernels_(timed.size()),
      each_(std::move(each)) {
  if (as_graph) {
    graph_.emplace(stream, [this](CUstream s) {
      enqueue_before(s);
      timed_(s);
    });
  }
}

launch_run::launch_run(enqueue_fn launch, std::size_t kernels, enqueue_fn between)
    : before_(launch),
      before_kernels_(kernels),
      between_(std::move(between)),
      timed_(std::move(launch)),
      timed_kernels_(kernels) {}

void launch_run::enqueue_before(CUstream s) const {
  for (int i = 0; i < runway_launches; ++i) {
    if (each_) each_(s);
    before_(s);
  }
  if (between_) between_(s);
  if (each_) each_(s);
}

double launch_timer::operator()(const launch_sequence& sequence, std::vector<double>* events) {
  return timed([&] { sequence.enqueue(w_.stream.get()); }, 0, planned_, events);
}

double launch_timer::after(const stream_hold& hold, const launch_run& run) {
  hold(hold_us, w_.stream.get());
  if (const auto& graph = run.graph()) {
    return timed([&] { graph->launch(w_.stream); }, run.earlier(), run.planned(), nullptr);
  }
  run.enqueue_before(w_.stream.get());
  return timed([&] { run.enqueue_timed(w_.stream.get()); }, run.earlier(), run.planned(),
               nullptr);
}

void launch_timer::drop_records() {
  if (recorded_) recorder_.take_records();
}

double launch_timer::timed(const std::function<void()>& enqueue, std::size_t earlier,
                           std::size_t planned, std::vector<double>* events) {
  start_.record(w_.stream);
  enqueue();
  stop_.record(w_.stream);
  const double event_us = 1000.0 * static_cast<double>(cuda::elapsed_ms(start_, stop_));
  if (events != nullptr) events->push_back(event_us);
  if (!recorded_) return event_us;
  w_.stream.synchronize();
  const std::vector<kernel_record> records = recorder_.take_records();
  if (records.size() < earlier) return event_us;
  double ns = 0.0;
  for (std::size_t i = earlier; i < records.size(); ++i)
    ns += static_cast<double>(records[i].end_ns - records[i].start_ns);
  return one_launch_us(event_us, ns / 1000.0, records.size() - earlier, planned);
}

}  // namespace blaster::worker
