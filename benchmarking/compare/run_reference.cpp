#include "benchmarking/compare/run_reference.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr std::string_view what_to_give =
    "give a run id or 'latest' (of --home), a store folder (DIR or DIR@RUN) or an evidence "
    "bundle folder";

// Deep enough for a portfolio's runs/<id>-<task>-<case>/, shallow enough that a bundle's objects
// are never walked.
constexpr int max_bundle_depth = 2;

bool is_run_id(std::string_view s) {
  return s == "latest" || (!s.empty() && std::all_of(s.begin(), s.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; }));
}

bool is_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_there(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A run's report, as bench_report defines it: the task and the results.
bool is_run_report(const json& j) {
  return j.is_object() && j.contains("task") && j.contains("results") && j["results"].is_array();
}

bench_report parse_report(const json& j, const std::string& where) {
  try {
    return bench_report_from_json(j);
  } catch (const json::exception& e) {
    BLASTER_INPUT_ERROR("{}: not a run's report that blaster can read ({}); {}", where, e.what(),
                        what_to_give);
  }
}

std::optional<json> read_json(const fs::path& file) {
  const std::optional<std::string> text = read_file_if_exists(file);
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    BLASTER_INPUT_ERROR(
        "{}: not JSON; an evidence bundle's results.json is written by blaster "
        "export or blaster portfolio, and blaster verify checks one",
        file.string());
  }
  return j;
}

std::vector<loaded_run> load_store_run(const fs::path& home, std::string_view run) {
  check_home_layout(home);
  if (!is_there(home / "blaster.db")) {
    BLASTER_INPUT_ERROR(
        "no blaster store at {} (no blaster.db there); pass --home DIR or set BLASTER_HOME to "
        "the folder blaster bench recorded into, or {}",
        home.string(), what_to_give);
  }
  store records(home);
  const run_catalog catalog(records);
  const std::int64_t id = catalog.resolve(run);
  const run_record row = *catalog.find_run(id);
  const std::string where = fmt::format("run {} of {}", id, home.string());
  if (row.report_sha256.empty()) {
    BLASTER_INPUT_ERROR(
        "{} recorded no report (its status is {}); compare runs that completed, which blaster "
        "runs --home {} lists",
        where, row.status, home.string());
  }
  const std::optional<std::string> bytes = records.cas().get(row.report_sha256, /*verify=*/true);
  if (!bytes) {
    BLASTER_INPUT_ERROR(
        "{}: its report {} is not in {}; the store is damaged, compare another "
        "run or an exported bundle of this one",
        where, row.report_sha256, records.cas().root().string());
  }
  const json j = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!is_run_report(j)) {
    BLASTER_INPUT_ERROR("{}: its report {} is not a run's report; {}", where, row.report_sha256,
                        what_to_give);
  }
  return {loaded_run{.source = fmt::format("{} run {}", home.string(), id),
                     .report = parse_report(j, where)}};
}

// A bundle's results are read only once it verifies as `blaster verify` verifies its files and
// its runs' records: an edited results.json is not a measurement to compare. Its signature is
// not checked (compare takes no key; `blaster verify --pubkey` does that).
void require_verified(const fs::path& dir) {
  bundle_verification v = verify_bundle(dir, nullptr, /*allow_unchecked_signature=*/true);
  check_run_records(v);
  if (v.ok()) return;
  constexpr std::size_t named = 8;
  std::string problems;
  for (std::size_t k = 0; k < v.problems.size(); ++k) {
    if (k == named) {
      problems += fmt::format(", and {} more", v.problems.size() - named);
      break;
    }
    problems +=
        fmt::format("{}{} {}", k == 0 ? "" : ", ", name_of(v.problems[k].kind), v.problems[k].path);
  }
  BLASTER_INPUT_ERROR(
      "{}: the bundle does not verify ({}), so its results were not compared; blaster verify {} "
      "says what is wrong with each file",
      dir.string(), problems, dir.string());
}

std::vector<loaded_run> load_bundle(const fs::path& dir) {
  // A folder that holds bundles without being one (no SHA256SUMS) has each of them verified.
  const bool whole = is_there(dir / "SHA256SUMS");
  if (whole) require_verified(dir);
  const std::optional<json> top = read_json(dir / "results.json");
  if (top && is_run_report(*top)) {
    if (!whole) require_verified(dir);  // a run's bundle without its SHA256SUMS
    return {loaded_run{.source = dir.string(),
                       .report = parse_report(*top, (dir / "results.json").string())}};
  }
  // Any other bundle vouches for the run bundles it holds (a portfolio's runs/ folder).
  std::vector<fs::path> folders;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    std::error_code kind;
    if (!it->is_directory(kind)) continue;
    if (is_there(it->path() / "results.json") && is_there(it->path() / "SHA256SUMS")) {
      folders.push_back(it->path());
      it.disable_recursion_pending();
    } else if (it.depth() + 1 >= max_bundle_depth) {
      it.disable_recursion_pending();
    }
  }
  if (ec) BLASTER_THROW("{}: cannot list the folder: {}", dir.string(), ec.message());
  std::sort(folders.begin(), folders.end());
  std::vector<loaded_run> runs;
  for (const fs::path& folder : folders) {
    if (!whole) require_verified(folder);
    const fs::path file = folder / "results.json";
    const std::optional<json> j = read_json(file);
    if (j && is_run_report(*j)) {
      runs.push_back({.source = folder.string(), .report = parse_report(*j, file.string())});
    }
  }
  if (runs.empty()) {
    BLASTER_INPUT_ERROR(
        "{}: {} and no run bundle lies in its sub-folders; give a bundle that blaster export or "
        "blaster portfolio wrote, or a store folder (DIR or DIR@RUN)",
        dir.string(), top ? "its results.json is not a run's report" : "it holds no results.json");
  }
  return runs;
}

// Of each task and case of the store, its latest completed run timed on a GPU.
std::vector<loaded_run> load_store_cases(const fs::path& home) {
  std::vector<std::int64_t> ids;
  {
    store records(home);
    for (const run_summary& s : run_catalog(records).runs({.status = "completed"})) {
      if (!s.run.report_sha256.empty()) ids.push_back(s.run.id);
    }
  }
  std::sort(ids.begin(), ids.end(), std::greater<>());  // newest first
  std::vector<loaded_run> runs;
  std::set<std::string> seen;
  for (const std::int64_t id : ids) {
    std::vector<loaded_run> one = load_store_run(home, std::to_string(id));
    const bench_report& r = one.front().report;
    if (!r.gpu || !r.device) continue;
    if (seen.insert(r.task + '\0' + r.timed_case).second) runs.push_back(std::move(one.front()));
  }
  if (runs.empty()) {
    BLASTER_INPUT_ERROR(
        "{}: the store holds no completed run timed on a GPU; give the home a portfolio or "
        "bench timed on the card, or that portfolio's bundle",
        home.string());
  }
  std::reverse(runs.begin(), runs.end());
  return runs;
}

}  // namespace

std::vector<loaded_run> load_case_runs(std::string_view reference, const fs::path& home) {
  if (!reference.empty() && !is_run_id(reference)) {
    const fs::path path{std::string(reference)};
    if (is_folder(path) && is_there(path / "blaster.db")) {
      check_home_layout(path);
      return load_store_cases(path);
    }
  }
  return load_runs(reference, home);
}

std::vector<loaded_run> load_runs(std::string_view reference, const fs::path& home) {
  if (reference.empty()) BLASTER_INPUT_ERROR("an empty run reference; {}", what_to_give);
  if (is_run_id(reference)) return load_store_run(home, reference);
  const fs::path path{std::string(reference)};
  if (!is_there(path)) {
    // DIR@RUN: a store and one of its runs. A folder whose own name holds an @ was found above.
    const std::size_t at = reference.rfind('@');
    if (at != std::string_view::npos && at > 0) {
      const fs::path dir{std::string(reference.substr(0, at))};
      if (is_folder(dir)) {
        if (!is_there(dir / "blaster.db")) {
          BLASTER_INPUT_ERROR(
              "{}: no blaster store in {} (no blaster.db there); the form DIR@RUN "
              "names a run of a store folder",
              reference, dir.string());
        }
        return load_store_run(dir, reference.substr(at + 1));
      }
    }
    BLASTER_INPUT_ERROR("{}: no such folder; {}", reference, what_to_give);
  }
  if (!is_folder(path)) BLASTER_INPUT_ERROR("{}: not a folder; {}", reference, what_to_give);
  if (is_there(path / "blaster.db")) return load_store_run(path, "latest");
  if (is_there(path / "results.json")) return load_bundle(path);
  BLASTER_INPUT_ERROR(
      "{}: neither a blaster store (no blaster.db) nor an evidence bundle (no results.json); {}",
      reference, what_to_give);
}

}  // namespace blaster
