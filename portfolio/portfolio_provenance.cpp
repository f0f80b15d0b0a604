#include "portfolio/portfolio_provenance.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/file_io.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// The first row of a table of the rows, or an empty object.
json first_row(const json& rows, const char* table) {
  if (!rows.is_object() || !rows.contains(table) || !rows[table].is_array() ||
      rows[table].empty() || !rows[table][0].is_object()) {
    return json::object();
  }
  return rows[table][0];
}

json text_or_null(const json& row, const char* key) {
  return row.contains(key) && row[key].is_string() && !row[key].get<std::string>().empty()
             ? row[key]
             : json();
}

std::string text(const json& j, const char* key, const char* missing = "-") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string(missing);
}

// One session of the report's section: its first row's provenance and every case it measured.
struct session_cases {
  std::string key;
  json provenance;
  std::string first_start;
  std::string last_finish;
  std::vector<std::string> cases;
};

std::optional<json> read_json_file(const std::filesystem::path& file) {
  const std::optional<std::string> bytes = read_file_if_exists(file);
  if (!bytes) return std::nullopt;
  json j = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

json run_provenance(const json& run_rows, const std::string& revision) {
  const json run = first_row(run_rows, "runs");
  const json device = first_row(run_rows, "device_fingerprints");
  const json session = text_or_null(run, "owner");
  json host;
  if (session.is_string()) {
    std::istringstream parts(session.get<std::string>());
    std::string first;
    if (parts >> first) host = first;
  }
  return {{"session", session},
          {"host", host},
          {"device_fingerprint", text_or_null(device, "fingerprint_sha256")},
          {"gpu", text_or_null(device, "name")},
          {"gpu_uuid", text_or_null(device, "uuid")},
          {"blaster_revision", revision.empty() ? json("unrecorded") : json(revision)},
          {"started_at", text_or_null(run, "started_at")},
          {"finished_at", text_or_null(run, "finished_at")}};
}

std::map<std::int64_t, json> portfolio_provenance(store& records,
                                                  const std::vector<portfolio_outcome>& outcomes) {
  const run_catalog catalog(records);
  std::map<std::int64_t, json> out;
  for (const auto& o : outcomes) {
    out[o.run_id] = run_provenance(catalog.records_of(o.run_id), o.report.blaster_revision);
  }
  return out;
}

std::string provenance_markdown(const json& summary) {
  std::vector<session_cases> sessions;
  for (const json& row : summary.value("rows", json::array())) {
    if (!row.contains("measured_by") || !row["measured_by"].is_object()) continue;
    const json& p = row["measured_by"];
    // Runs that kept no process are told apart by their machine and harness at least.
    const std::string key =
        p["session"].is_string()
            ? p["session"].get<std::string>()
            : fmt::format("unrecorded {} {}", text(p, "gpu_uuid"), text(p, "blaster_revision"));
    auto it = std::find_if(sessions.begin(), sessions.end(),
                           [&key](const session_cases& s) { return s.key == key; });
    if (it == sessions.end()) {
      sessions.push_back({.key = key,
                          .provenance = p,
                          .first_start = text(p, "started_at"),
                          .last_finish = text(p, "finished_at"),
                          .cases = {}});
      it = std::prev(sessions.end());
    }
    it->first_start = std::min(it->first_start, text(p, "started_at"));
    it->last_finish = std::max(it->last_finish, text(p, "finished_at"));
    it->cases.push_back(
        fmt::format("{} {} {}", text(row, "id", ""), text(row, "task", ""), text(row, "case", "")));
  }
  if (sessions.empty()) return {};
  std::string md = fmt::format(
      "\n## Who measured each case\n\n{} session{} (a session is the process that ran the "
      "cases: its host, as a digest of the host's name, its process id and its start; each "
      "row's `measured_by` in results.json, which `blaster verify` holds to its run's "
      "run.json).\n\n",
      sessions.size(), sessions.size() == 1 ? "" : "s");
  md += "| session | process | host | GPU | device fingerprint | blaster | from | to | cases |\n";
  md += "|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const session_cases& s = sessions[i];
    const json& p = s.provenance;
    std::string process = "unrecorded (the runs kept no process then)";
    if (p["session"].is_string()) {
      std::istringstream parts(p["session"].get<std::string>());
      std::string host;
      std::string pid;
      std::string start;
      parts >> host >> pid >> start;
      process = fmt::format("pid {}, started at tick {}", pid, start);
    }
    md += fmt::format("| {} | {} | {} | {} {} | {} | {} | {} | {} | {} |\n", i + 1,
                      markdown_cell(process), markdown_cell(text(p, "host")),
                      markdown_cell(text(p, "gpu")), markdown_cell(text(p, "gpu_uuid")),
                      markdown_cell(text(p, "device_fingerprint").substr(0, 16)),
                      markdown_cell(text(p, "blaster_revision")), markdown_cell(s.first_start),
                      markdown_cell(s.last_finish),
                      markdown_cell(fmt::format("{}", fmt::join(s.cases, ", "))));
  }
  return md;
}

void check_provenance_claims(bundle_verification& v, const json& summary) {
  const json rows = summary.value("rows", json::array());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    if (!row.is_object() || !row.contains("measured_by")) continue;
    const std::string folder = row.value("run_bundle", "");
    if (folder.empty() || folder.find("..") != std::string::npos) continue;  // claimed elsewhere
    const std::optional<json> run_rows = read_json_file(v.dir / folder / "run.json");
    const std::optional<json> report = read_json_file(v.dir / folder / "results.json");
    const std::string revision =
        report && report->is_object() ? report->value("blaster_revision", std::string()) : "";
    const json source = run_rows ? run_provenance(*run_rows, revision) : json();
    if (row["measured_by"] != source) {
      v.problems.push_back({bundle_problem_kind::claim, fmt::format("results.json rows[{}]", i),
                            fmt::format("measured_by is {} but {}/run.json says {}",
                                        row["measured_by"].dump(), folder, source.dump()),
                            "", ""});
    }
  }
}

}  // namespace blaster
