#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/statistics/statistics.hpp"

namespace blaster {

// The confidence of the intervals the timing's checks of launch times compare: at 99.9% an honest
// kernel's interval leaves out the reference's on one run in two thousand.
inline constexpr double dependence_confidence = 0.999;

// What the poisoned launches after a hot or graph timing measured, pairs of launches whose two
// sides differ in one thing only, each timed alone on the device, with the pairs' ratio taken
// against what the same pairs of the harness's own reference give:
// - output: before each launch the outputs, scratch and inout buffers are rewritten with what
//   the last launch left there (control) or with what poisoning writes (poisoned: the run's
//   poison, and an inout buffer's drawn bytes), staged first; a sweep then writes back and drops
//   every line of the L2, a launch of the plan caches what it touches, and the harness's copy
//   kernel writes the stage over the buffers: each side's launch finds the same lines cached,
//   as a hot timing's launch finds them after the one before it, and only those buffers' bytes
//   differ. Reference: 1.
// - time: launches after launches of the plan on the same buffers, back to back
//   (back_to_back_us) or after a pause of `pause_us` in which the harness runs nothing but a
//   clock (paused_us): the caches hold the same, only the time since the last launch differs.
//   Reference: the same pairs of the harness's copy kernel over `reference_bytes`, which has no
//   memory of its last launch, so that its ratio is the device's own cost of a pause.
// Each side's order alternates from pair to pair.
struct poisoned_launches {
  std::string source{};               // "CUPTI kernel time" or "CUDA events"
  std::vector<double> control_us{};   // [microseconds] one per pair
  std::vector<double> poisoned_us{};  // [microseconds]
  // [microseconds] the CUDA events around each launch: a CUPTI time is taken only where the
  // record is this launch's alone and fits inside them, the events' otherwise.
  std::vector<double> control_event_us{};
  std::vector<double> poisoned_event_us{};
  double hot_us = 0.0;  // [microseconds] per launch in the timing's samples; 0 when CUPTI saw nothing
  std::vector<double> back_to_back_us{};  // [microseconds] one per pair, CUPTI's records only
  std::vector<double> paused_us{};        // [microseconds]
  double pause_us = 0.0;
  std::vector<double> reference_back_to_back_us{};  // [microseconds] the harness's copy kernel
  std::vector<double> reference_paused_us{};
  std::size_t reference_bytes = 0;  // [bytes] what the reference copies
};

nlohmann::json to_json(const poisoned_launches& p);
poisoned_launches poisoned_launches_from_json(const nlohmann::json& j);

// The interval of poisoned over control (output) and that of paused over back to back for the
// candidate and for the reference (time), at dependence_confidence; nullopt where the pairs are
// too few or not paired.
std::optional<interval> output_ratio(const poisoned_launches& p);
std::optional<interval> pause_ratio(const poisoned_launches& p);
std::optional<interval> reference_pause_ratio(const poisoned_launches& p);

// [microseconds] one launch of the plan: CUPTI's kernel time where its records since the launch
// are the plan's kernels alone (`seen` of `planned`) and fit inside the CUDA events around it,
// the events' time otherwise. A record longer than the events cannot be this launch's alone.
double one_launch_us(double event_us, double kernel_us, std::size_t seen, std::size_t planned);

// A kernel whose work depends on what its outputs hold: the interval of its poisoned over control
// ratio lies above 1; or on the time since its last launch: the interval of its paused over back
// to back ratio lies above the reference's. The evidence in one line (both sides' medians, the
// ratio with its interval, the reference's), or nothing. No fixed slack: the intervals are the
// measured noise.
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
