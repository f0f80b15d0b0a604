#pragma once

// A bundle's numbers measured again (`blaster verify BUNDLE --remeasure N`). The hashes say that
// nobody changed the files since they were signed; they cannot say that the signer measured what
// the files state. On a GPU of the bundle's model, N claims drawn at random (a candidate's time
// and speedup in one of the bundle's runs: a bench row, a portfolio case, a loop's step) are
// judged again from the bundle's own sources, through the same gate, in the same case, mode and
// protocol, and each is held to its recorded interval.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarking/compare/run_comparison.hpp"
#include "benchmarking/statistics/statistics.hpp"

namespace blaster {

// The rule in words, for --help and the output's legend.
inline constexpr std::string_view remeasure_rule =
    "A claim holds when the fresh run passes the gate and its time's interval overlaps the "
    "recorded one (each time is its median of session medians t, with the interval "
    "[t(1-u), t(1+u)] that `blaster compare` gives it: u is the largest of its noise, its "
    "sessions' spread and its run's A/A check), and, where both runs have two sessions or more, "
    "its speedup's 95% interval overlaps the recorded one. A claim whose source, shared headers, "
    "task or baseline differ from the checkout's is not remeasured, and says which.";

enum class claim_status {
  holds,           // the fresh interval overlaps the recorded one
  does_not_hold,   // rejected here, or an interval that lies apart from the recorded one
  not_remeasured,  // the checkout cannot run it as recorded (task, headers, baseline, GPU)
};
std::string_view to_string(claim_status status);  // "HOLDS", "DOES NOT HOLD", ...

// One claim and what measuring it again gave.
struct remeasured_claim {
  std::string run{};      // the run bundle's folder, as the bundle names it
  std::string command{};  // the recorded run's command: which step or case it was
  std::string task{};
  std::string case_name{};
  std::string variant{};
  double recorded_us = 0.0;  // [microseconds] the median of its session medians
  double recorded_uncertainty = 0.0;
  std::optional<interval> recorded_speedup{};  // the verdict's interval, from two sessions on
  std::optional<double> fresh_us{};
  double fresh_uncertainty = 0.0;
  std::optional<interval> fresh_speedup{};
  std::optional<ratio_interval> time_ratio{};  // fresh over recorded
  claim_status status = claim_status::not_remeasured;
  std::string note{};  // why it does not hold or was not remeasured
  std::int64_t fresh_run_id = 0;
};

// Members default to empty so that designated initializers may name only what they set.
struct remeasure_options {
  std::filesystem::path bundle{};
  std::filesystem::path root{};         // the checkout: its tasks, baselines and shared headers
  std::size_t claims = 0;               // how many to draw
  std::optional<std::uint64_t> seed{};  // none: drawn, and reported so that a draw can be repeated
  std::filesystem::path worker_executable{};  // empty: this executable
};

struct bundle_remeasure {
  std::uint64_t seed = 0;
  std::string gpu;                   // this machine's GPU, the model every drawn claim is from
  std::size_t claims_available = 0;  // timed candidates of that model in the bundle
  std::vector<remeasured_claim> claims;
  // Every drawn claim holds.
  [[nodiscard]] bool ok() const;
};

// The timed candidates of the bundle's runs, as (run index, result index) pairs in the bundle's
// order: a variant that passed and was confirmed, not the baseline.
struct claim_ref {
  std::size_t run = 0;
  std::size_t result = 0;
};
std::vector<claim_ref> claims_of(const std::vector<loaded_run>& runs);

// `count` of `available` claims drawn without replacement by `seed`, in drawing order.
std::vector<std::size_t> draw_claims(std::size_t available, std::size_t count, std::uint64_t seed);

// Holds one claim to its fresh run: the status, note and intervals of `claim` from the recorded
// run's report and result and the fresh run's. Pure: what `remeasure_bundle` concludes once the
// fresh run is done.
void judge_claim(const bench_report& recorded, const variant_result& result,
                 const bench_report& fresh, remeasured_claim& claim);

// Draws `options.claims` claims of the bundle (which must verify; see load_runs) among those
// timed on this machine's GPU model, judges each again in a store of its own that is removed
// afterwards, and returns what each came to. No GPU is cuda::gpu_unavailable; a bundle with no
// claim from this GPU's model, or none at all, is an input_error that names the models it holds.
bundle_remeasure remeasure_bundle(const remeasure_options& options);

}  // namespace blaster
