#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace blaster {

// What the poisoned launches after a hot or graph timing measured: pairs of single launches,
// one after a write of as many bytes as the outputs hold to a buffer of its own (control), one
// after the run's poison over the outputs themselves (poisoned), each timed alone on the device;
// then launches that follow launches on the same buffers after a pause (paused); beside the hot
// samples' own device time per launch.
struct poisoned_launches {
  std::string source{};               // "CUPTI kernel time" or "CUDA events"
  std::vector<double> control_us{};   // [microseconds] one per launch
  std::vector<double> poisoned_us{};  // [microseconds]
  // [microseconds] the CUDA events around each launch: a CUPTI time is taken only where the
  // record is this launch's alone and fits inside them, the events' otherwise.
  std::vector<double> control_event_us{};
  std::vector<double> poisoned_event_us{};
  double hot_us = 0.0;  // [microseconds] per launch; 0 when CUPTI saw nothing
  // [microseconds] launches each after launches of the plan on the same buffers and inputs and a
  // pause of `pause_us` in which the harness runs nothing but a clock: the caches hold what they
  // held back to back, and only the time since the last launch differs. CUPTI's records only.
  std::vector<double> paused_us{};
  double pause_us = 0.0;
};

nlohmann::json to_json(const poisoned_launches& p);
poisoned_launches poisoned_launches_from_json(const nlohmann::json& j);

// [microseconds] one launch of the plan: CUPTI's kernel time where its records since the launch
// are the plan's kernels alone (`seen` of `planned`) and fit inside the CUDA events around it,
// the events' time otherwise. A record longer than the events cannot be this launch's alone.
double one_launch_us(double event_us, double kernel_us, std::size_t seen, std::size_t planned);

// A kernel whose work depends on what its outputs hold: slower when they hold poison than after
// an equal write elsewhere; or on the time since its last launch: slower after a pause than back
// to back, where nothing but the time differs. The evidence in one line, or nothing.
std::optional<std::string> output_dependence(const poisoned_launches& p);

// Launches on inputs the timing's process has not been timed on, after the timing, each the last
// of a run of launches (worker/time_phase.cpp): first the timed draw of the case uploaded again
// (seen), then each other draw the gate checked twice: copied over the timed buffers' inputs
// right after launches there (in place), and uploaded and poisoned there before launches of the
// timed draw elsewhere (unseen), timed by the device as the poisoned launches are. Only the
// inputs' values differ, so an honest kernel takes as long on the seen and unseen draws, and
// gives on each unseen draw the bytes the gate's run of that draw gave.
struct unseen_inputs {
  std::string source{};               // "CUPTI kernel time" or "CUDA events"
  std::vector<double> seen_us{};      // [microseconds] one per launch
  std::vector<double> unseen_us{};    // [microseconds] one per other draw
  std::vector<double> in_place_us{};  // [microseconds] one per other draw, after its copy
  // The outputs of unseen launches whose digest (piecewise_sha256_hex) is not that of the gate's
  // run of their draw, each as "out on the draw of seed 0x... in place".
  std::vector<std::string> differing{};
};

nlohmann::json to_json(const unseen_inputs& u);
unseen_inputs unseen_inputs_from_json(const nlohmann::json& j);

// A kernel that answers a draw from what it kept of another: outputs of unseen launches that
// differ from the gate's. The evidence in one line, or nothing.
std::optional<std::string> kept_answers(const unseen_inputs& u);

// A kernel whose work depends on whether it has met its inputs before (it keeps what it derived
// from them, keyed by their values, and skips that work when they come again): every launch on
// unseen inputs slower than the launches on the timed ones. The evidence in one line, or nothing.
std::optional<std::string> input_dependence(const unseen_inputs& u);

}  // namespace blaster
