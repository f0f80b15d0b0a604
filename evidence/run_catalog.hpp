#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/store.hpp"

namespace blaster {

// A row of `runs`; empty strings and nullopt where the column is NULL.
struct run_record {
  std::int64_t id = 0;
  std::string started_at;
  std::string finished_at;
  std::string command;
  std::string task;
  std::string status;
  std::string device_json;
  std::string report_sha256;
  std::optional<std::int64_t> device_id;
  std::optional<std::int64_t> task_id;
};

// A run with what `blaster runs` shows beside it.
struct run_summary {
  run_record run;
  std::string device_name;  // from the fingerprint, else from device_json, else empty
  std::int64_t results = 0;
  std::int64_t passed = 0;
  std::optional<double> best_speedup;  // over the passed results
};

// A row of the results view (one variant of a run), with every metric recorded for it.
struct stored_result {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string candidate;
  std::string variant;
  std::string case_name;
  std::string status;
  std::string reason;
  std::string message;
  bool baseline = false;
  std::string source_sha256;
  std::string cubin_sha256;
  std::string samples_sha256;
  std::string detail_json;
  std::map<std::string, double> metrics;  // by the metric's tag
  std::string diagnosis;                  // what its hardware counters said, where profiled

  [[nodiscard]] std::optional<double> metric(const std::string& tag) const;
  [[nodiscard]] const std::string& label() const { return variant.empty() ? candidate : variant; }
};

// One result of one run of a task, for `blaster history`.
struct history_entry {
  std::int64_t run_id = 0;
  std::string started_at;
  std::string run_status;
  std::string device_name;
  stored_result result;
};

struct run_filter {
  std::string task{};       // empty: any
  std::string status{};     // empty: any
  std::int64_t run_id = 0;  // 0: any
  std::int64_t limit = 0;   // newest first; 0: all
};

// Where a row cites a CAS object.
struct object_citation {
  std::string table;
  std::int64_t row_id = 0;
  std::string column;
  std::string sha256;
};

// The objects that a run's rows, as records_of returns them (a bundle's run.json), cite, in the
// order of its tables; a row without a string digest in a citing column cites nothing there.
std::vector<object_citation> objects_cited_in(const nlohmann::json& records);

// Reads what a store recorded: the queries behind `blaster runs`, `show`, `history` and
// `export`. Reads only; the store's own methods write.
class run_catalog {
 public:
  explicit run_catalog(store& records) : records_(records) {}

  std::vector<run_summary> runs(const run_filter& filter) const;
  std::optional<run_record> find_run(std::int64_t run_id) const;
  // "latest" or a run id; anything else, or a run that is not there, is an input_error.
  std::int64_t resolve(std::string_view reference) const;
  std::vector<stored_result> results_of(std::int64_t run_id) const;
  // What every recorded metric tag means, in the order the tags were first recorded.
  std::vector<metric_definition> metric_definitions() const;
  // Every result of every run of the task, oldest run first; candidate empty: all candidates.
  std::vector<history_entry> history(std::string_view task, std::string_view candidate) const;

  // Every row that belongs to the run, table by table, as {"table": [{"column": value}...]}:
  // the run, its variant results and their metrics, device, task and cases, compilations and
  // their sources and kernels, gate results, measurements, verdicts, artifacts.
  nlohmann::json records_of(std::int64_t run_id) const;
  // The objects those rows cite (run_id), or that any row of the store cites (nullopt), in the
  // order of the tables above.
  std::vector<object_citation> cited_objects(std::optional<std::int64_t> run_id) const;

 private:
  store& records_;
};

}  // namespace blaster
