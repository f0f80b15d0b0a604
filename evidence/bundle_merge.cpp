#include "evidence/bundle_merge.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/database.hpp"
#include "evidence/evidence_bundle.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"
#include "evidence/store_schema.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A run bundle inside the bundle: its folder ("" for the bundle itself) and its rows.
struct bundle_run {
  std::string folder;
  json records;
};

// The temporary home the bundle's rows are recorded into, removed with this object.
class scratch_home {
 public:
  scratch_home() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            fmt::format("blaster-bundle-merge-{}-{}", ::getpid(), counter++);
    std::error_code ignored;
    fs::remove_all(path_, ignored);
    fs::create_directories(path_);
  }
  ~scratch_home() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  scratch_home(const scratch_home&) = delete;
  scratch_home& operator=(const scratch_home&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

bool is_plain_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(path, ec));
}

std::vector<bundle_run> read_runs(const fs::path& dir) {
  std::vector<bundle_run> runs;
  for (const std::string& folder : run_bundle_folders(dir)) {
    const fs::path file = dir / folder / "run.json";
    json records = json::parse(read_file(file), nullptr, /*allow_exceptions=*/false);
    if (!records.is_object() || !records.contains("runs")) {
      BLASTER_INPUT_ERROR("{}: not a run's records (the rows of each table, as export writes them)",
                          file.string());
    }
    runs.push_back({folder, std::move(records)});
  }
  return runs;
}

// The tables of the database and the columns of each.
using table_columns = std::map<std::string, std::set<std::string>>;

table_columns schema_of(database& db) {
  table_columns out;
  statement tables = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  while (tables.step()) {
    std::set<std::string>& columns = out[tables.column_text(0)];
    statement info = db.prepare(fmt::format("PRAGMA table_info(\"{}\")", tables.column_text(0)));
    while (info.step()) columns.insert(info.column_text(1));
  }
  return out;
}

// Whether every table and column the rows name is in the schema. records_of selects every
// column of every table, so the first version a run.json fits is the one that wrote it; only
// names found here are ever put into SQL.
bool fits(const json& records, const table_columns& schema) {
  for (const auto& [table, rows] : records.items()) {
    const auto columns = schema.find(table);
    if (columns == schema.end() || !rows.is_array()) return false;
    for (const auto& row : rows) {
      if (!row.is_object()) return false;
      for (const auto& [column, value] : row.items()) {
        if (!columns->second.contains(column)) return false;
      }
    }
  }
  return true;
}

void bind_value(statement& insert, int index, const json& value, const std::string& where) {
  switch (value.type()) {
    case json::value_t::null:
      insert.bind_null(index);
      return;
    case json::value_t::number_integer:
      insert.bind(index, value.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      if (value.get<std::uint64_t>() <= std::numeric_limits<std::int64_t>::max()) {
        insert.bind(index, static_cast<std::int64_t>(value.get<std::uint64_t>()));
        return;
      }
      break;
    case json::value_t::number_float:
      insert.bind(index, value.get<double>());
      return;
    case json::value_t::string:
      insert.bind(index, std::string_view(value.get_ref<const std::string&>()));
      return;
    default:
      break;
  }
  BLASTER_INPUT_ERROR("{}: {} is not a value a row holds", where, value.dump().substr(0, 80));
}

// A row already recorded from the bundle, by table and id: a device, a task or a source appears
// in the run.json of every run that cites it, and must be the same row each time.
using recorded_rows = std::map<std::pair<std::string, std::int64_t>, std::pair<json, std::string>>;

void record_rows(database& db, const fs::path& dir, const bundle_run& run, recorded_rows& seen) {
  const std::string file = (dir / run.folder / "run.json").string();
  transaction guard(db);
  for (const auto& [table, rows] : run.records.items()) {
    for (const auto& row : rows) {
      const auto id = row.find("id");
      if (id == row.end() || !id->is_number_integer()) {
        BLASTER_INPUT_ERROR("{}: a row of {} without its id", file, table);
      }
      const std::string where = fmt::format("{}: {} row {}", file, table, id->dump());
      const auto [it, fresh] =
          seen.try_emplace({table, id->get<std::int64_t>()}, std::pair(row, file));
      if (!fresh) {
        if (it->second.first != row) {
          BLASTER_INPUT_ERROR("{} is not the row of that id in {}", where, it->second.second);
        }
        continue;
      }
      std::vector<std::string> columns;
      for (const auto& [column, value] : row.items()) columns.push_back('"' + column + '"');
      // The metric definitions a migration wrote give way to those the bundle's home held.
      statement insert = db.prepare(fmt::format(
          "INSERT {}INTO \"{}\"({}) VALUES({})", table == "metric_definitions" ? "OR REPLACE " : "",
          table, fmt::join(columns, ", "),
          fmt::join(std::vector<std::string>(columns.size(), "?"), ", ")));
      int index = 1;
      for (const auto& [column, value] : row.items()) {
        bind_value(insert, index++, value, where + " " + column);
      }
      try {
        insert.step();
      } catch (const error& e) {
        BLASTER_INPUT_ERROR("{} cannot be recorded: {}", where, e.what());
      }
    }
  }
  guard.commit();
}

// Records every run's rows into the database at `path`, each run.json at the schema version that
// wrote it, then brings it to this blaster's schema, as opening an older home does.
void record_runs(const fs::path& path, const fs::path& dir, const std::vector<bundle_run>& runs) {
  database db(path);
  // Rows go in table by table, whatever they cite; the whole is checked once at the end.
  db.exec("PRAGMA foreign_keys=OFF");
  const std::span<const migration> steps = store_schema();
  std::vector<const bundle_run*> left;
  for (const auto& run : runs) left.push_back(&run);
  recorded_rows seen;
  for (std::size_t k = 1; k <= steps.size() && !left.empty(); ++k) {
    db.migrate(steps.first(k));
    const table_columns schema = schema_of(db);
    std::vector<const bundle_run*> later;
    for (const bundle_run* run : left) {
      if (fits(run->records, schema)) {
        record_rows(db, dir, *run, seen);
      } else {
        later.push_back(run);
      }
    }
    left = std::move(later);
  }
  if (!left.empty()) {
    BLASTER_INPUT_ERROR(
        "{}: its tables and columns are those of no schema version this blaster knows; it was "
        "written by a newer blaster: merge it with that one",
        (dir / left.front()->folder / "run.json").string());
  }
  db.migrate(steps);
  // A step's bench run is a run of its own: the step keeps it where the bundle holds that run
  // too, as merge_home keeps a citation of a run only when it merges that run.
  db.exec(
      "UPDATE optimize_steps SET bench_run_id = NULL "
      "WHERE bench_run_id NOT IN (SELECT id FROM runs)");
  statement dangling = db.prepare("PRAGMA foreign_key_check");
  if (dangling.step()) {
    BLASTER_INPUT_ERROR("{}: a row of {} (rowid {}) cites a row of {} that the bundle lacks",
                        dir.string(), dangling.column_text(0), dangling.column_int64(1),
                        dangling.column_text(2));
  }
}

// Where the bundle keeps an object a run cites: the run's own objects/, else the enclosing
// bundle's (a portfolio's), else, for the run's report, its results.json; the places
// check_run_records looks.
std::optional<fs::path> object_file(const fs::path& dir, const std::string& folder,
                                    const object_citation& c) {
  const fs::path run = dir / folder;
  for (const fs::path& file : {run / "objects" / c.sha256, dir / "objects" / c.sha256}) {
    if (is_plain_file(file)) return file;
  }
  if (c.table == "runs" && c.column == "report_sha256" && is_plain_file(run / "results.json")) {
    return run / "results.json";
  }
  return std::nullopt;
}

// Puts every object the runs cite into the CAS of `into`, each checked against its name; returns
// how many it lacked.
int put_objects(store& into, const fs::path& dir, const std::vector<bundle_run>& runs) {
  int added = 0;
  std::set<std::string> done;
  for (const bundle_run& run : runs) {
    for (const object_citation& c : objects_cited_in(run.records)) {
      const std::string cited_by = fmt::format(
          "{} ({} {} {})", (dir / run.folder / "run.json").string(), c.table, c.row_id, c.column);
      if (!is_sha256_hex(c.sha256)) {
        BLASTER_INPUT_ERROR("{} cites '{}', which is not a SHA-256", cited_by,
                            c.sha256.substr(0, 80));
      }
      if (!done.insert(c.sha256).second || into.cas().contains(c.sha256)) continue;
      const std::optional<fs::path> file = object_file(dir, run.folder, c);
      if (!file) {
        BLASTER_INPUT_ERROR("{} cites object {}, which the bundle lacks", cited_by, c.sha256);
      }
      const std::string bytes = read_file(*file);
      if (sha256_hex(bytes) != c.sha256) {
        BLASTER_INPUT_ERROR(
            "{}: its bytes do not hash to {}, which {} cites; the bundle changed after it was "
            "verified",
            file->string(), c.sha256, cited_by);
      }
      into.cas().put(bytes);
      ++added;
    }
  }
  return added;
}

}  // namespace

std::string_view name_of(merge_source_kind kind) {
  switch (kind) {
    case merge_source_kind::home:
      return "home";
    case merge_source_kind::bundle:
      return "bundle";
  }
  return "unknown";
}

merge_source_kind merge_source_kind_of(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path / "blaster.db", ec)) return merge_source_kind::home;
  // A run's bundle holds its run.json, a portfolio's a runs/ folder, a trajectory export its
  // sessions' run.json.
  if (fs::is_regular_file(path / bundle_manifest_name, ec) &&
      (fs::is_directory(path / "runs", ec) || !run_bundle_folders(path).empty())) {
    return merge_source_kind::bundle;
  }
  BLASTER_INPUT_ERROR(
      "{} is neither a blaster home (no blaster.db there) nor an evidence bundle (no SHA256SUMS "
      "beside a run.json or a runs/ folder); name the --home of a run or shard, or a bundle that "
      "blaster export, blaster portfolio --out or blaster trajectories export wrote",
      path.string());
}

void require_verified(const bundle_verification& verified) {
  if (verified.ok()) return;
  constexpr std::size_t named = 8;
  std::vector<std::string> problems;
  for (const bundle_problem& p : verified.problems) {
    if (problems.size() == named) {
      problems.push_back(fmt::format("and {} more", verified.problems.size() - named));
      break;
    }
    problems.push_back(fmt::format("{} {}", name_of(p.kind), p.path));
  }
  const bool signature =
      std::any_of(verified.problems.begin(), verified.problems.end(),
                  [](const bundle_problem& p) { return p.kind == bundle_problem_kind::signature; });
  BLASTER_INPUT_ERROR(
      "{}: the bundle does not verify ({}), so nothing of it was merged; {}", verified.dir.string(),
      fmt::join(problems, ", "),
      signature ? std::string("a signed bundle merges with --pubkey KEY.pub, its signer's key "
                              "(or --allow-unchecked-signature)")
                : fmt::format("blaster verify {} says what is wrong with each file",
                              verified.dir.string()));
}

merge_outcome merge_bundle(store& into, const bundle_verification& verified) {
  require_verified(verified);
  const fs::path& dir = verified.dir;
  const std::vector<bundle_run> runs = read_runs(dir);
  const scratch_home scratch;
  record_runs(scratch.path() / "blaster.db", dir, runs);
  // The bytes first, then the rows that cite them, as merge_home copies a home's.
  const int objects_added = put_objects(into, dir, runs);
  merge_outcome out = merge_home(into, scratch.path());
  out.source = dir;
  out.objects_added = objects_added;
  return out;
}

}  // namespace blaster
