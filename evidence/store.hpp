#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cas_store.hpp"
#include "evidence/database.hpp"
#include "evidence/metric.hpp"
#include "evidence/store_records.hpp"

namespace blaster {

// The home folder: the flag if given, else $BLASTER_HOME if set and non-empty, else ./.blaster.
// An empty flag throws blaster::input_error.
std::filesystem::path resolve_home(const std::optional<std::filesystem::path>& flag);

// Throws an input_error when the home, its cas/ or its blaster.db exists as the wrong kind of
// file (a home that is a file, a database that is a folder); absent parts are fine.
void check_home_layout(const std::filesystem::path& home);

// The harness's record of every run: <home>/blaster.db (runs and results, holding digests) and
// <home>/cas/ (the bytes those digests name). Several store objects, in one process or many, may
// share a home.
//
// A row never cites an object the CAS lacks: every method that takes a digest checks that the
// object is there and throws blaster::error otherwise. So put the bytes first, then the row; a
// crash between the two leaves an unreferenced object, never a dangling row.
class store {
 public:
  // Creates the home, the database and the object store as needed and brings the schema up to
  // date (migrating an older database in place, keeping its rows). A home that cannot be written
  // (blaster writes even to read, for SQLite's WAL) and a blaster.db that is not blaster's or is
  // damaged throw blaster::input_error naming the path, and so does a new or emptied database
  // beside a CAS that holds objects: the database was lost, and reusing its run ids would lie.
  explicit store(std::filesystem::path home);

  cas_store& cas() { return cas_; }
  database& db() { return db_; }
  const std::filesystem::path& home() const { return home_; }

  // Records a run as 'running', started now, owned by this process; returns its id. An empty
  // task or device_json is NULL. Opening the store marks a run 'interrupted' when it is still
  // 'running' and its owner (a process of this host) is gone.
  std::int64_t begin_run(std::string_view command, std::string_view task,
                         std::string_view device_json);
  // Numbers this object's next runs from `first` on where the home's runs end below it: a shard
  // of a portfolio numbers its runs apart from the other shards', so that their homes merge with
  // every run keeping the id its reports cite (merge_home).
  void number_runs_from(std::int64_t first) { first_run_id_ = first; }
  [[nodiscard]] std::int64_t first_run_id() const { return first_run_id_; }
  // The newest run's id; 0 where the home has none.
  [[nodiscard]] std::int64_t last_run_id();
  // Sets the final status and the finish time; an empty report_sha256 is NULL, any other must
  // name an object already in the CAS.
  void finish_run(std::int64_t run_id, std::string_view status, std::string_view report_sha256);
  // Takes a run that ended (or was interrupted) up again: 'running', owned by this process, with
  // no finish time nor report until finish_run; its rows stay. What `optimize --resume` does.
  void reopen_run(std::int64_t run_id);

  // --- The fuller record (schema version 2): each call is one transaction; record_* return the
  // id of their row. Unknown ids (runs, compilations, measurements) throw blaster::error.

  // The device's row; the same fingerprint recorded twice is one row.
  std::int64_t record_device(const device_fingerprint& device);
  void set_run_device(std::int64_t run_id, std::int64_t device_id);
  // The task's row (one per name and task.json digest) with its cases.
  std::int64_t record_task(const task_record& task);
  void set_run_task(std::int64_t run_id, std::int64_t task_id);
  // One compilation of a variant in this run, with its source and per-kernel resources.
  std::int64_t record_compilation(std::int64_t run_id, const compilation_record& compilation);
  std::int64_t record_gate_result(std::int64_t compilation_id, const gate_result_record& gate);
  std::int64_t record_measurement(std::int64_t compilation_id,
                                  const measurement_record& measurement);
  // Both measurements must belong to compilations of this run.
  std::int64_t record_verdict(std::int64_t run_id, const verdict_record& verdict);
  std::int64_t record_artifact(std::int64_t run_id, const artifact_record& artifact);
  // What one variant came to, with its metrics (schema version 4): the compilation and
  // measurement it cites must belong to this run. The results view reads these rows.
  std::int64_t record_variant_result(std::int64_t run_id, const variant_result_record& result);
  // What the metrics' tags mean, as this harness describes them; a tag already known takes the
  // new description.
  void record_metric_definitions(const std::vector<metric_definition>& definitions);

  // Throws unless the digest is empty, or well formed and in the CAS: a row never cites what is
  // not there. `column` names the citing column in the message.
  void require_object(std::string_view column, std::string_view digest) const;

 private:
  std::filesystem::path home_;
  cas_store cas_;
  database db_;
  std::int64_t first_run_id_ = 1;
};

}  // namespace blaster
