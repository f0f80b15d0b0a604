#pragma once

// The comparison of two cards as a table (`blaster compare --across-cards`) and as the section
// of a portfolio's report (`blaster portfolio --across-cards OTHER`).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/bundle_verifier.hpp"
#include "evidence/result_table.hpp"
#include "portfolio/card_comparison.hpp"
#include "portfolio/portfolio_runner.hpp"

namespace blaster {

// One row per case: bound, both times, the time ratio and the ceilings' ratio with their
// intervals, the status and the note; the flagged cases' diagnoses and hints under their rows.
result_table card_comparison_table(const card_comparison& c);

// The portfolio report's section: the table in Markdown and each flagged case explained.
std::string card_comparison_markdown(const card_comparison& c);

// results.json's "across_cards": the outcomes' cases (A, each named by its run folder in the
// bundle) against another card's runs of the same cases (B, as load_case_runs reads
// `other_source`), by compare_cards; beside it the SHA-256 of the other bundle's SHA256SUMS,
// which ties the section to the bundle it was read from.
nlohmann::json across_cards_summary(const std::vector<portfolio_outcome>& outcomes,
                                    const std::vector<loaded_run>& other,
                                    const std::string& other_source);

// The report's section from results.json's "across_cards"; empty where it has none.
std::string across_cards_markdown(const nlohmann::json& summary);

// For a portfolio bundle's "across_cards" (blaster verify): a claim problem for each case whose
// side of this bundle does not name a run bundle that a row cites, or states another card,
// variant or time than that run's best candidate. The other card's numbers come from another
// bundle, which `compare --across-cards` reads and verifies again.
void check_across_cards_claims(bundle_verification& verification, const nlohmann::json& summary);

}  // namespace blaster
