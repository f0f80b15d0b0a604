#include "benchmarking/worker/detail/phase_handler.hpp"

#include "benchmarking/worker/detail/result_channel.hpp"

namespace blaster::worker {

void phase_handler::send_load_steps(worker_context& w) {
  send_step("load");
  load_variant(w);
  send_step("map");
  map_data(w);
}

const phase_handler& handler_for(worker_phase phase) {
  switch (phase) {
    case worker_phase::probe:
      return probe_phase();
    case worker_phase::gate:
      return gate_phase();
    case worker_phase::time:
      return time_phase();
    case worker_phase::locate:
      return locate_phase();
    case worker_phase::profile:
      return profile_phase();
    case worker_phase::devices:
      return devices_phase();
  }
  return gate_phase();
}

}  // namespace blaster::worker
