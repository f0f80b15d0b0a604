#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/cas_store.hpp"
#include "core/database.hpp"

namespace blaster {

// The home folder: the flag if given, else $BLASTER_HOME if set and non-empty, else ./.blaster.
// An empty flag throws blaster::input_error.
std::filesystem::path resolve_home(const std::optional<std::filesystem::path>& flag);

// One row of `results`. An empty string is stored as NULL in the nullable text columns
// (case_name, reason, the digests, detail_json); nullopt is NULL in the REAL columns. Members
// default to empty so that designated initializers may name only what they set.
struct result_record {
  std::string candidate{};
  std::string variant{};
  std::string case_name{};
  std::string status{};
  std::string reason{};
  std::optional<double> time_us{};
  std::optional<double> speedup{};
  std::optional<double> bandwidth_gbs{};
  std::optional<double> roofline_pct{};
  std::string source_sha256{};
  std::string cubin_sha256{};
  std::string samples_sha256{};
  std::string detail_json{};
};

// The harness's record of every run: <home>/blaster.db (runs and results, holding digests) and
// <home>/cas/ (the bytes those digests name). Several store objects, in one process or many, may
// share a home.
class store {
 public:
  // Creates the home, the database and the object store as needed and brings the schema up to
  // date.
  explicit store(std::filesystem::path home);

  cas_store& cas() { return cas_; }
  database& db() { return db_; }
  const std::filesystem::path& home() const { return home_; }

  // Records a run as 'running', started now; returns its id. An empty task or device_json is NULL.
  std::int64_t begin_run(std::string_view command, std::string_view task,
                         std::string_view device_json);
  // The digests must be empty or 64 lowercase hex digits (blaster::error otherwise).
  void add_result(std::int64_t run_id, const result_record& result);
  // Sets the final status and the finish time; an empty report_sha256 is NULL.
  void finish_run(std::int64_t run_id, std::string_view status, std::string_view report_sha256);

 private:
  std::filesystem::path home_;
  cas_store cas_;
  database db_;
};

}  // namespace blaster
