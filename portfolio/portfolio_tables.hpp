#pragma once

// The tuned tables a portfolio bundle carries: each derived from the bundle's own runs
// (`blaster tune --from-runs`), every entry naming the run that measured it, so that verify can
// hold each entry to that run's report.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/tuned/tuned_table.hpp"
#include "evidence/bundle_verifier.hpp"
#include "portfolio/portfolio_runner.hpp"

namespace blaster {

struct bundle_table {
  std::filesystem::path source;  // the file the bytes come from
  std::string path;              // inside the bundle: kernels/<task>/tuned/<candidate>/<name>
  std::string task;
  tuned_table table;
};

// What of `table` (a table of `task`'s candidate) its runs, by run id, do not bear out: one line
// per entry that names no run, a run not among them or of another task or device, or a
// configuration that its run did not confirm at the stated time. Empty where every entry holds.
std::vector<std::string> table_claim_problems(
    const tuned_table& table, const std::string& task,
    const std::map<std::int64_t, const bench_report*>& runs);

// The tables under `folder` (laid out as kernels/ is: <task>/tuned/<candidate>/<table>.json) of
// the outcomes' tasks and GPUs, tables of other GPUs left out. A table that its runs do not bear
// out (table_claim_problems) is an input_error that names the file and the entry.
std::vector<bundle_table> tables_for_bundle(const std::filesystem::path& folder,
                                            const std::vector<portfolio_outcome>& outcomes);

// The tables a bundle holds under kernels/, each checked against the run bundles that its
// results.json rows cite: a problem for each table that cannot be read and each entry that its
// run does not bear out.
void check_bundle_tables(bundle_verification& verification,
                         const std::map<std::int64_t, const bench_report*>& runs);

// results.json's "tuned_tables": each table the bundle carries, its path and its entries.
nlohmann::json tuned_tables_json(const std::vector<bundle_table>& tables);

// The report's section on the tables, from results.json's "tuned_tables"; empty where it has none.
std::string tuned_tables_markdown(const nlohmann::json& summary);

}  // namespace blaster
