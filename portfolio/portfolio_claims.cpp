// The check of a portfolio bundle's claims against the runs they cite (blaster verify).
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/statistics/statistics.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/bundle_verifier.hpp"
#include "portfolio/card_comparison_report.hpp"
#include "portfolio/detail/report_rows.hpp"
#include "portfolio/portfolio_provenance.hpp"
#include "portfolio/portfolio_report.hpp"
#include "portfolio/portfolio_tables.hpp"

namespace blaster {

using json = nlohmann::json;
using detail::best_result;
using detail::optional_number;

namespace {

std::string text_of(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// The bundle's progress.json, which a home that merges the bundle takes for its items' progress:
// for each row's item, the row's run and the report of its run bundle, and nothing else.
void check_progress(bundle_verification& v, const json& summary) {
  const std::string name(bundle_progress_name);
  const std::optional<std::string> text = read_file_if_exists(v.dir / name);
  if (!text) return;  // a bundle written before bundles carried it
  auto claim = [&](std::string detail) {
    v.problems.push_back({bundle_problem_kind::claim, name, std::move(detail), "", ""});
  };
  const json progress = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!progress.is_object() || !progress.contains("identity") ||
      !progress["identity"].is_object() || !progress.contains("done") ||
      !progress["done"].is_object()) {
    claim("not a portfolio's progress: its identity and its done items");
    return;
  }
  const json& identity = progress["identity"];
  const json protocol = summary.value("protocol", json::object());
  if (!identity.contains("suite") || identity["suite"] != summary.value("suite", json()) ||
      !protocol.is_object() || !identity.contains("suite_sha256") ||
      identity["suite_sha256"] != protocol.value("suite_sha256", json())) {
    claim(fmt::format("its identity {} is not of the suite results.json names", identity.dump()));
  }
  const json& done = progress["done"];
  std::set<std::string> items;
  for (const json& row : summary["rows"]) {
    const std::string key = text_of(row, "task") + "/" + text_of(row, "case");
    items.insert(key);
    const std::string folder = text_of(row, "run_bundle");
    std::string report;
    try {
      if (!folder.empty() && folder.find("..") == std::string::npos) {
        report = sha256_file_hex(v.dir / folder / "results.json");
      }
    } catch (const std::exception&) {
      report.clear();  // missing or unreadable: the run bundle's own check names it
    }
    const json entry = done.contains(key) ? done[key] : json();
    if (!entry.is_object() || !entry.contains("run_id") ||
        entry["run_id"] != row.value("run_id", json()) || report.empty() ||
        entry.value("report_sha256", json()) != json(report)) {
      claim(fmt::format("{} is {}, not run {} with the report {}/results.json", key,
                        entry.is_null() ? std::string("missing") : entry.dump(),
                        row.value("run_id", json()).dump(), folder));
    }
  }
  for (const auto& [key, entry] : done.items()) {
    if (!items.contains(key)) claim(fmt::format("{}: no row of results.json is that item", key));
  }
}

}  // namespace

bundle_verification verify_evidence_bundle(const std::filesystem::path& dir,
                                           const ed25519_key* public_key,
                                           bool allow_unchecked_signature,
                                           std::uint64_t max_file_bytes) {
  bundle_verification v = verify_bundle(dir, public_key, allow_unchecked_signature, max_file_bytes);
  check_run_records(v, max_file_bytes);
  check_portfolio_claims(v);
  return v;
}

void check_portfolio_claims(bundle_verification& v) {
  const std::optional<std::string> text = read_file_if_exists(v.dir / "results.json");
  if (!text) return;
  const json summary = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object() || !summary.contains("rows") || !summary["rows"].is_array()) return;
  auto claim = [&](const std::string& path, std::string detail) {
    v.problems.push_back({bundle_problem_kind::claim, path, std::move(detail), "", ""});
  };
  std::vector<double> speedups;
  std::map<std::int64_t, bench_report> cited;  // the rows' runs, for the tuned tables' entries
  for (std::size_t i = 0; i < summary["rows"].size(); ++i) {
    const json& row = summary["rows"][i];
    const std::string where = fmt::format("results.json rows[{}]", i);
    const std::string folder = row.value("run_bundle", "");
    if (folder.empty() || folder.find("..") != std::string::npos) {
      claim(where, "names no run bundle inside this one");
      continue;
    }
    // The run's own bundle must hold before its numbers can vouch for anything.
    for (auto& p :
         verify_bundle(v.dir / folder, nullptr, /*allow_unchecked_signature=*/true).problems) {
      p.path = folder + "/" + p.path;
      v.problems.push_back(std::move(p));
    }
    const std::optional<std::string> run_text =
        read_file_if_exists(v.dir / folder / "results.json");
    const json source =
        run_text ? json::parse(*run_text, nullptr, /*allow_exceptions=*/false) : json();
    std::optional<bench_report> parsed;
    if (source.is_object() && source.contains("results")) {
      try {
        parsed = bench_report_from_json(source);
      } catch (const std::exception&) {
        parsed.reset();
      }
    }
    if (!parsed) {
      claim(where,
            fmt::format("its source {}/results.json is missing or not a run's report", folder));
      continue;
    }
    const std::int64_t run_id = parsed->run_id;
    const bench_report& report = cited.insert_or_assign(run_id, std::move(*parsed)).first->second;
    auto same = [&](const char* what, const json& stated, const json& source) {
      if (stated != source) {
        claim(where, fmt::format("{} is {} but {}/results.json says {}", what, stated.dump(),
                                 folder, source.dump()));
      }
    };
    same("run_id", row.value("run_id", json()), json(report.run_id));
    same("case", row.value("case", json()), json(report.timed_case));
    same("task", row.value("task", json()), json(report.task));
    same("mode", row.value("mode", json()), json(to_string(report.timing.mode)));
    if (const variant_result* base = baseline_result(report); base != nullptr) {
      same("baseline_us", row.value("baseline_us", json()), optional_number(base->time_us));
    }
    const variant_result* best = best_result(report);
    const json& stated = row.value("best", json());
    if (best == nullptr || stated.is_null()) {
      if ((best == nullptr) != stated.is_null()) {
        claim(where, "names a best candidate where its run has none, or none where it has one");
      }
      continue;
    }
    same("best.variant", stated.value("variant", json()), json(best->label));
    same("best.time_us", stated.value("time_us", json()), optional_number(best->time_us));
    same("best.speedup", stated.value("speedup", json()), optional_number(best->speedup));
    same("best.copy_bandwidth_pct", stated.value("copy_bandwidth_pct", json()),
         optional_number(best->copy_bandwidth_pct));
    const std::optional<verdict_result>& verdict = best->verdict;
    same("best.verdict", stated.value("verdict", json()),
         json(verdict ? std::string(to_string(verdict->v)) : std::string()));
    same("best.speedup_low", stated.value("speedup_low", json()),
         verdict ? json(verdict->speedup.low) : json());
    same("best.speedup_high", stated.value("speedup_high", json()),
         verdict ? json(verdict->speedup.high) : json());
    if (stated.contains("speedup") && stated["speedup"].is_number()) {
      speedups.push_back(stated["speedup"].get<double>());
    }
  }
  const json stated_mean =
      summary.value("geometric_means", json::object()).value("speedup_over_baseline", json());
  const double mean = geometric_mean(speedups);
  if (!speedups.empty() &&
      (!stated_mean.is_number() || std::fabs(stated_mean.get<double>() - mean) > 1e-9 * mean)) {
    claim("results.json geometric_means",
          fmt::format("speedup_over_baseline is {} but the rows' speedups give {}",
                      stated_mean.dump(), mean));
  }
  check_progress(v, summary);
  check_provenance_claims(v, summary);
  check_across_cards_claims(v, summary);
  std::map<std::int64_t, const bench_report*> runs;
  for (const auto& [id, report] : cited) runs.emplace(id, &report);
  check_bundle_tables(v, runs);
}

}  // namespace blaster
