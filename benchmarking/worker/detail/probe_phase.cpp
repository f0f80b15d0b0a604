// The probe: what GPU there is and what blaster measures on it (its memory ceilings, matrix rate
// and launch floors).
#include "benchmarking/ceilings/launch_floor.hpp"
#include "benchmarking/ceilings/matrix_rate.hpp"
#include "benchmarking/ceilings/memory_ceilings.hpp"
#include "benchmarking/worker/detail/phase_handler.hpp"

namespace blaster::worker {
namespace {

class probe_handler final : public phase_handler {
 public:
  [[nodiscard]] bool needs_variant() const override { return false; }

 private:
  void do_run(worker_context& w, worker_result& result,
              std::optional<std::size_t>& /*current*/) const override {
    result.probe = device_probe{.device = w.context.properties(),
                                .memory = measure_memory_ceilings(w.context, w.stream, nullptr),
                                .matrix = measure_matrix_rate(w.context, w.stream, nullptr),
                                .floors = measure_launch_floors(w.context, w.stream, nullptr)};
  }
};

}  // namespace

const phase_handler& probe_phase() {
  static const probe_handler handler;
  return handler;
}

}  // namespace blaster::worker
