#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "benchmarking/worker/detail/worker_context.hpp"
#include "benchmarking/worker/gate_protocol.hpp"
#include "benchmarking/worker/worker_result.hpp"

namespace blaster::worker {

// One phase of the worker (probe, gate, time, locate, profile, devices): the GPU work a request
// asks for. A new phase is one new handler and its line in handler_for.
class phase_handler {
 public:
  virtual ~phase_handler() = default;

  // Runs the phase and adds its answer to `result`. Throws on failure; `current` then names the
  // check under way, and what the phase added before is kept as evidence.
  void run(worker_context& w, worker_result& result, std::optional<std::size_t>& current) const {
    if (needs_variant()) {
      send_load_steps(w);
    }
    do_run(w, result, current);
  }

  // The phases that run the candidate get its task, compiled variant and the run's data.
  [[nodiscard]] virtual bool needs_variant() const { return true; }

 private:
  static void send_load_steps(worker_context& w);
  virtual void do_run(worker_context& w, worker_result& result,
                      std::optional<std::size_t>& current) const = 0;
};

const phase_handler& handler_for(worker_phase phase);

// Each phase's handler, in its own file.
const phase_handler& probe_phase();
const phase_handler& gate_phase();
const phase_handler& time_phase();
const phase_handler& locate_phase();
const phase_handler& profile_phase();
const phase_handler& devices_phase();

}  // namespace blaster::worker
