#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/bundle_verifier.hpp"
#include "portfolio/portfolio_runner.hpp"
#include "portfolio/portfolio_tables.hpp"

namespace blaster {

class ed25519_key;
class store;

// The goals a portfolio's report checks each case against.
inline constexpr double bandwidth_goal_pct = 85.0;  // of the roofline floor (% roof)
inline constexpr double launch_floor_goal = 1.25;   // graph mode: times the empty kernel's

// The portfolio's results.json: per task and case the baseline, the best candidate (by verdict,
// then speedup) with its interval, the roofline percentages, the ratios to PyTorch eager and
// torch.compile in the same mode (from `pytorch`, scripts/benchmark_pytorch.py's JSON; null
// when not given), each goal met or missed and by how much, the geometric means, the device's
// fingerprint and the protocol. Every row names the run, and the bundle folder, it comes from.
// `not_run`: the suite's cases with no outcome yet (a --recorded bundle), listed as such.
// `measured_by`: each outcome's session and machine by run id (portfolio_provenance), stated in
// its row as "measured_by" and in the report's section "Who measured each case".
nlohmann::json summarize_portfolio(const suite& s, const std::vector<portfolio_outcome>& outcomes,
                                   const nlohmann::json& pytorch,
                                   const std::vector<portfolio_item>& not_run = {},
                                   const std::map<std::int64_t, nlohmann::json>& measured_by = {});

std::string render_portfolio_markdown(const nlohmann::json& summary);

// Writes the bundle into `out` (a new or empty folder), whole or not at all: report.md,
// results.json, figure.svg, suite.json, pytorch.json when given, progress.json (the outcomes'
// entries of the suite's progress in records' home, portfolio_bundle_progress),
// runs/<id>-<task>-<case>/ (each run's own evidence bundle), the tuned tables its runs measured
// (kernels/<task>/tuned/, from tables_for_bundle), SHA256SUMS over every file, and
// SHA256SUMS.sig with a key.
void write_portfolio_bundle(store& records, const suite& s,
                            const std::vector<portfolio_outcome>& outcomes,
                            const nlohmann::json& summary, const nlohmann::json& pytorch,
                            const std::filesystem::path& out, const ed25519_key* signing_key,
                            const std::vector<bundle_table>& tables = {});

// The folder of an outcome's run inside the bundle.
std::string run_folder(const portfolio_item& item);

// For a portfolio bundle (a results.json with rows), checks every claim against its source and
// appends a problem for each that does not hold: each run's own bundle verifies, and each row's
// run, case, mode, baseline time and best candidate (chosen by the same rule, with the same
// time, speedup and interval and roofline percentage) are those of the run it cites; the
// geometric mean of the speedups is that of the rows; each entry of a tuned table under kernels/
// is the fastest configuration that the run it names confirmed, at the stated time (a run cited
// by a row); a progress.json beside the rows (portfolio_bundle_progress) names, for each row's
// item, the row's run and the report of its run bundle, for the suite the bundle names, and no
// other item. A bundle of one run is left alone.
void check_portfolio_claims(bundle_verification& verification);

// Verifies a bundle of any kind as `blaster verify` does: its files against SHA256SUMS and the
// signature (verify_bundle), each run's records against its objects (check_run_records) and a
// portfolio's claims against its runs (check_portfolio_claims).
bundle_verification verify_evidence_bundle(
    const std::filesystem::path& dir, const ed25519_key* public_key,
    bool allow_unchecked_signature = false,
    std::uint64_t max_file_bytes = default_max_bundle_file_bytes);

}  // namespace blaster
