#include "evidence/run_catalog.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>

#include "core/error.hpp"

namespace blaster {
namespace {

// The rows of one run in each table: `where` selects them with the run id as ?1.
struct run_table {
  std::string_view table;
  std::string_view where;
  // The columns whose values name CAS objects.
  std::array<std::string_view, 4> cites;
};

constexpr std::string_view of_compilations =
    "compilation_id IN (SELECT id FROM compilations WHERE run_id = ?1)";

constexpr std::array run_tables{
    run_table{"runs", "id = ?1", {"report_sha256"}},
    run_table{
        "variant_results", "run_id = ?1", {"source_sha256", "cubin_sha256", "samples_sha256"}},
    run_table{"variant_metrics",
              "variant_result_id IN (SELECT id FROM variant_results WHERE run_id = ?1)",
              {}},
    run_table{"variant_diagnostics",
              "variant_result_id IN (SELECT id FROM variant_results WHERE run_id = ?1)",
              {"profile_sha256", "ncu_report_sha256"}},
    run_table{"metric_definitions",
              "tag IN (SELECT tag FROM variant_metrics WHERE variant_result_id IN "
              "(SELECT id FROM variant_results WHERE run_id = ?1))",
              {}},
    run_table{"device_fingerprints", "id = (SELECT device_id FROM runs WHERE id = ?1)", {}},
    run_table{"tasks", "id = (SELECT task_id FROM runs WHERE id = ?1)", {"spec_sha256"}},
    run_table{"task_cases", "task_id = (SELECT task_id FROM runs WHERE id = ?1)", {}},
    run_table{
        "sources", "id IN (SELECT source_id FROM compilations WHERE run_id = ?1)", {"sha256"}},
    run_table{"compilations", "run_id = ?1", {"log_sha256", "cubin_sha256"}},
    run_table{"compiled_kernels", of_compilations, {}},
    run_table{"gate_results", of_compilations, {"evidence_sha256"}},
    run_table{"measurements", of_compilations, {"samples_sha256"}},
    run_table{"verdicts", "run_id = ?1", {}},
    run_table{"artifacts", "run_id = ?1", {"sha256"}},
    run_table{"optimize_steps", "run_id = ?1", {"source_sha256", "reply_sha256", "request_sha256", "answer_sha256"}},
};

// The device's name: the fingerprint's, else the name in the run's device_json (version 1
// runs), else NULL. json_valid keeps a malformed device_json from failing the whole query.
constexpr std::string_view device_name_sql =
    "COALESCE(d.name, CASE WHEN json_valid(r.device_json) "
    "THEN json_extract(r.device_json, '$.name') END)";

constexpr std::string_view run_columns =
    "r.id, r.started_at, r.finished_at, r.command, r.task, r.status, r.device_json, "
    "r.report_sha256, r.device_id, r.task_id";

std::optional<double> real_or_null(const statement& row, int column) {
  if (row.column_is_null(column)) return std::nullopt;
  return row.column_double(column);
}

std::optional<std::int64_t> int_or_null(const statement& row, int column) {
  if (row.column_is_null(column)) return std::nullopt;
  return row.column_int64(column);
}

// Reads run_columns starting at `first`.
run_record read_run(const statement& row, int first) {
  return run_record{.id = row.column_int64(first),
                    .started_at = row.column_text(first + 1),
                    .finished_at = row.column_text(first + 2),
                    .command = row.column_text(first + 3),
                    .task = row.column_text(first + 4),
                    .status = row.column_text(first + 5),
                    .device_json = row.column_text(first + 6),
                    .report_sha256 = row.column_text(first + 7),
                    .device_id = int_or_null(row, first + 8),
                    .task_id = int_or_null(row, first + 9)};
}

constexpr std::string_view result_columns =
    "x.id, x.run_id, x.candidate, x.variant, x.case_name, x.status, x.reason, x.message, "
    "x.baseline, x.source_sha256, x.cubin_sha256, x.samples_sha256, x.detail_json";

stored_result read_result(const statement& row, int first) {
  return stored_result{.id = row.column_int64(first),
                       .run_id = row.column_int64(first + 1),
                       .candidate = row.column_text(first + 2),
                       .variant = row.column_text(first + 3),
                       .case_name = row.column_text(first + 4),
                       .status = row.column_text(first + 5),
                       .reason = row.column_text(first + 6),
                       .message = row.column_text(first + 7),
                       .baseline = row.column_int64(first + 8) != 0,
                       .source_sha256 = row.column_text(first + 9),
                       .cubin_sha256 = row.column_text(first + 10),
                       .samples_sha256 = row.column_text(first + 11),
                       .detail_json = row.column_text(first + 12),
                       .metrics = {},
                       .diagnosis = {}};
}

// Every metric and diagnosis of the results the query selects (its ?1 binds `value`), onto them by
// id.
void attach_metrics(database& db, std::string_view which, std::int64_t value,
                    std::vector<stored_result*> results) {
  std::map<std::int64_t, stored_result*> by_id;
  for (stored_result* r : results) by_id[r->id] = r;
  statement query = db.prepare(fmt::format(
      "SELECT variant_result_id, tag, value FROM variant_metrics WHERE variant_result_id IN "
      "(SELECT id FROM variant_results WHERE {})",
      which));
  query.bind(1, value);
  while (query.step()) {
    if (auto it = by_id.find(query.column_int64(0)); it != by_id.end()) {
      it->second->metrics[query.column_text(1)] = query.column_double(2);
    }
  }
  // What their counters said, where they were profiled.
  statement diagnoses = db.prepare(fmt::format(
      "SELECT variant_result_id, COALESCE(diagnosis, 'counters unavailable: ' || unavailable) "
      "FROM variant_diagnostics WHERE variant_result_id IN (SELECT id FROM variant_results "
      "WHERE {})",
      which));
  diagnoses.bind(1, value);
  while (diagnoses.step()) {
    if (auto it = by_id.find(diagnoses.column_int64(0)); it != by_id.end()) {
      if (!diagnoses.column_is_null(1)) it->second->diagnosis = diagnoses.column_text(1);
    }
  }
}

nlohmann::json row_json(const statement& row) {
  nlohmann::json j = nlohmann::json::object();
  for (int c = 0; c < row.column_count(); ++c) {
    switch (row.column_kind(c)) {
      case statement::value_kind::integer:
        j[row.column_name(c)] = row.column_int64(c);
        break;
      case statement::value_kind::real:
        j[row.column_name(c)] = row.column_double(c);
        break;
      case statement::value_kind::null:
        j[row.column_name(c)] = nullptr;
        break;
      default:
        j[row.column_name(c)] = row.column_text(c);
        break;
    }
  }
  return j;
}

statement select_rows(database& db, const run_table& t, std::optional<std::int64_t> run_id) {
  statement query =
      db.prepare(run_id ? fmt::format("SELECT * FROM {} WHERE {} ORDER BY id", t.table, t.where)
                        : fmt::format("SELECT * FROM {} ORDER BY id", t.table));
  if (run_id) query.bind(1, *run_id);
  return query;
}

}  // namespace

std::optional<double> stored_result::metric(const std::string& tag) const {
  const auto it = metrics.find(tag);
  return it == metrics.end() ? std::nullopt : std::optional<double>(it->second);
}

std::vector<metric_definition> run_catalog::metric_definitions() const {
  statement query = records_.db().prepare(
      "SELECT tag, name, unit, description, format, console FROM metric_definitions ORDER BY id");
  std::vector<metric_definition> out;
  while (query.step()) {
    out.push_back({.tag = query.column_text(0),
                   .name = query.column_text(1),
                   .unit = query.column_text(2),
                   .description = query.column_text(3),
                   .format = query.column_text(4),
                   .console = query.column_int64(5) != 0});
  }
  return out;
}

std::vector<run_summary> run_catalog::runs(const run_filter& filter) const {
  statement query = records_.db().prepare(fmt::format(
      "SELECT {}, {}, "
      "(SELECT count(*) FROM results x WHERE x.run_id = r.id), "
      "(SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.status = 'passed'), "
      "(SELECT max(x.speedup) FROM results x WHERE x.run_id = r.id AND x.status = 'passed') "
      "FROM runs r LEFT JOIN device_fingerprints d ON d.id = r.device_id "
      "WHERE (?1 IS NULL OR r.task = ?1) AND (?2 IS NULL OR r.status = ?2) "
      "AND (?4 = 0 OR r.id = ?4) ORDER BY r.id DESC LIMIT ?3",
      run_columns, device_name_sql));
  if (filter.task.empty()) {
    query.bind_null(1);
  } else {
    query.bind(1, filter.task);
  }
  if (filter.status.empty()) {
    query.bind_null(2);
  } else {
    query.bind(2, filter.status);
  }
  query.bind(3, filter.limit > 0 ? filter.limit : std::int64_t{-1});  // -1: no limit
  query.bind(4, filter.run_id);
  std::vector<run_summary> out;
  while (query.step()) {
    out.push_back(run_summary{.run = read_run(query, 0),
                              .device_name = query.column_text(10),
                              .results = query.column_int64(11),
                              .passed = query.column_int64(12),
                              .best_speedup = real_or_null(query, 13)});
  }
  return out;
}

std::optional<run_record> run_catalog::find_run(std::int64_t run_id) const {
  statement query =
      records_.db().prepare(fmt::format("SELECT {} FROM runs r WHERE r.id = ?1", run_columns));
  query.bind(1, run_id);
  if (!query.step()) return std::nullopt;
  return read_run(query, 0);
}

std::int64_t run_catalog::resolve(std::string_view reference) const {
  if (reference == "latest") {
    const std::int64_t latest = records_.last_run_id();
    if (latest == 0) {
      BLASTER_INPUT_ERROR("no runs recorded in {} yet; run blaster bench first",
                          records_.home().string());
    }
    return latest;
  }
  std::int64_t run_id = 0;
  const auto [end, ec] =
      std::from_chars(reference.data(), reference.data() + reference.size(), run_id);
  if (ec != std::errc{} || end != reference.data() + reference.size() || run_id <= 0) {
    BLASTER_INPUT_ERROR("'{}' is not a run: give a run id (see blaster runs) or 'latest'",
                        reference);
  }
  if (!find_run(run_id)) {
    BLASTER_INPUT_ERROR("no run {} in {}; blaster runs lists the runs recorded there", run_id,
                        records_.home().string());
  }
  return run_id;
}

std::vector<stored_result> run_catalog::results_of(std::int64_t run_id) const {
  statement query = records_.db().prepare(
      fmt::format("SELECT {} FROM results x WHERE x.run_id = ?1 ORDER BY x.id", result_columns));
  query.bind(1, run_id);
  std::vector<stored_result> out;
  while (query.step()) out.push_back(read_result(query, 0));
  std::vector<stored_result*> all;
  for (auto& r : out) all.push_back(&r);
  attach_metrics(records_.db(), "run_id = ?1", run_id, all);
  return out;
}

std::vector<history_entry> run_catalog::history(std::string_view task,
                                                std::string_view candidate) const {
  statement query = records_.db().prepare(fmt::format(
      "SELECT r.id, r.started_at, r.status, {}, {} FROM results x "
      "JOIN runs r ON r.id = x.run_id LEFT JOIN device_fingerprints d ON d.id = r.device_id "
      "WHERE r.task = ?1 AND (?2 IS NULL OR x.candidate = ?2) ORDER BY r.id, x.id",
      device_name_sql, result_columns));
  query.bind(1, task);
  if (candidate.empty()) {
    query.bind_null(2);
  } else {
    query.bind(2, candidate);
  }
  std::vector<history_entry> out;
  while (query.step()) {
    out.push_back(history_entry{.run_id = query.column_int64(0),
                                .started_at = query.column_text(1),
                                .run_status = query.column_text(2),
                                .device_name = query.column_text(3),
                                .result = read_result(query, 4)});
  }
  std::map<std::int64_t, std::vector<stored_result*>> by_run;
  for (auto& e : out) by_run[e.run_id].push_back(&e.result);
  for (auto& [run_id, results] : by_run) {
    attach_metrics(records_.db(), "run_id = ?1", run_id, results);
  }
  return out;
}

nlohmann::json run_catalog::records_of(std::int64_t run_id) const {
  nlohmann::json out = nlohmann::json::object();
  for (const run_table& t : run_tables) {
    statement query = select_rows(records_.db(), t, run_id);
    nlohmann::json rows = nlohmann::json::array();
    while (query.step()) rows.push_back(row_json(query));
    out[std::string(t.table)] = std::move(rows);
  }
  return out;
}

std::vector<object_citation> objects_cited_in(const nlohmann::json& records) {
  std::vector<object_citation> out;
  if (!records.is_object()) return out;
  for (const run_table& t : run_tables) {
    const auto rows = records.find(std::string(t.table));
    if (rows == records.end() || !rows->is_array()) continue;
    for (const auto& row : *rows) {
      if (!row.is_object()) continue;
      for (const std::string_view column : t.cites) {
        if (column.empty()) continue;
        const auto digest = row.find(std::string(column));
        if (digest == row.end() || !digest->is_string()) continue;
        const auto id = row.find("id");
        out.push_back(object_citation{
            .table = std::string(t.table),
            .row_id = id != row.end() && id->is_number_integer() ? id->get<std::int64_t>() : 0,
            .column = std::string(column),
            .sha256 = digest->get<std::string>()});
      }
    }
  }
  return out;
}

std::vector<object_citation> run_catalog::cited_objects(std::optional<std::int64_t> run_id) const {
  std::vector<object_citation> out;
  for (const run_table& t : run_tables) {
    if (t.cites[0].empty()) continue;
    statement query = select_rows(records_.db(), t, run_id);
    while (query.step()) {
      for (int c = 0; c < query.column_count(); ++c) {
        const std::string name = query.column_name(c);
        if (query.column_is_null(c) ||
            std::find(t.cites.begin(), t.cites.end(), name) == t.cites.end()) {
          continue;
        }
        out.push_back(object_citation{.table = std::string(t.table),
                                      .row_id = query.column_int64(0),
                                      .column = name,
                                      .sha256 = query.column_text(c)});
      }
    }
  }
  return out;
}

}  // namespace blaster
