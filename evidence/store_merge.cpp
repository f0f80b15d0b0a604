#include "evidence/store_merge.hpp"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;

// How the rows of a table of the source home enter the home merged into.
enum class merge_kind {
  named,    // a row names a thing (a device, a task): it maps onto the row of the same name
  kept,     // the runs: their ids are what reports and bundles cite, and stay
  shifted,  // the rows a merged run owns: their ids move past the home's own
};

struct cited_table {
  const char* column;
  const char* table;  // whose id the column holds
};

struct merged_table {
  const char* name;
  merge_kind kind;
  std::vector<const char*> key;    // named: the columns that name a row
  std::vector<cited_table> cites;  // columns that hold another table's id
  const char* owner = nullptr;     // shifted: the cited column that ties a row to its run
};

// Every table of the schema, each after the tables it cites. A table the schema gains must be
// added here: merge_home refuses a home with a table it does not know.
const std::vector<merged_table>& merged_tables() {
  using enum merge_kind;
  static const std::vector<merged_table> tables = {
      {"device_fingerprints", named, {"fingerprint_sha256"}, {}},
      {"tasks", named, {"name", "spec_sha256"}, {}},
      {"task_cases", named, {"task_id", "name"}, {{"task_id", "tasks"}}},
      {"sources", named, {"sha256", "file_name"}, {}},
      {"metric_definitions", named, {"tag"}, {}},
      {"runs", kept, {}, {{"device_id", "device_fingerprints"}, {"task_id", "tasks"}}},
      {"compilations", shifted, {}, {{"run_id", "runs"}, {"source_id", "sources"}}, "run_id"},
      {"compiled_kernels", shifted, {}, {{"compilation_id", "compilations"}}, "compilation_id"},
      {"gate_results", shifted, {}, {{"compilation_id", "compilations"}}, "compilation_id"},
      {"measurements", shifted, {}, {{"compilation_id", "compilations"}}, "compilation_id"},
      {"verdicts",
       shifted,
       {},
       {{"run_id", "runs"},
        {"measurement_id", "measurements"},
        {"baseline_measurement_id", "measurements"}},
       "run_id"},
      {"artifacts", shifted, {}, {{"run_id", "runs"}}, "run_id"},
      {"variant_results",
       shifted,
       {},
       {{"run_id", "runs"}, {"compilation_id", "compilations"}, {"measurement_id", "measurements"}},
       "run_id"},
      {"variant_metrics",
       shifted,
       {},
       {{"variant_result_id", "variant_results"}},
       "variant_result_id"},
      {"variant_diagnostics",
       shifted,
       {},
       {{"variant_result_id", "variant_results"}},
       "variant_result_id"},
      {"optimize_steps", shifted, {}, {{"run_id", "runs"}, {"bench_run_id", "runs"}}, "run_id"},
  };
  return tables;
}

std::vector<std::string> column_names(database& db, const std::string& schema,
                                      const std::string& table) {
  std::vector<std::string> names;
  statement info = db.prepare(fmt::format("PRAGMA {}.table_info({})", schema, table));
  while (info.step()) names.push_back(info.column_text(1));
  return names;
}

std::set<std::string> table_names(database& db, const std::string& schema) {
  std::set<std::string> names;
  statement list = db.prepare(
      fmt::format("SELECT name FROM {}.sqlite_master WHERE type = 'table' AND name NOT LIKE "
                  "'sqlite_%'",
                  schema));
  while (list.step()) names.insert(list.column_text(0));
  return names;
}

const cited_table* cited(const merged_table& t, const std::string& column) {
  for (const auto& c : t.cites) {
    if (column == c.column) return &c;
  }
  return nullptr;
}

// The source row's value of `column` as the merged home names it: a cited id through its
// table's map (NULL where the source's row did not come over), anything else as it is.
std::string value_of(const merged_table& t, const std::string& column) {
  if (const cited_table* c = cited(t, column)) {
    return fmt::format("(SELECT new FROM temp.merge_map_{} WHERE old = x.{})", c->table, column);
  }
  return "x." + column;
}

std::int64_t scalar(database& db, const std::string& sql) {
  statement s = db.prepare(sql);
  return s.step() && !s.column_is_null(0) ? s.column_int64(0) : 0;
}

// Copies the objects `into` lacks, each checked against its name on the way.
int merge_objects(store& into, const fs::path& source_cas) {
  int added = 0;
  if (!fs::is_directory(source_cas)) return added;
  for (const auto& entry : fs::recursive_directory_iterator(source_cas)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.size() != 64 || name.find('.') != std::string::npos) {
      continue;  // a write in flight (*.tmp.*) or not an object
    }
    if (into.cas().contains(name)) continue;
    const std::string bytes = read_file(entry.path());
    if (sha256_hex(bytes) != name) {
      BLASTER_INPUT_ERROR("{}: its bytes do not hash to its name; the source home is damaged",
                          entry.path().string());
    }
    into.cas().put(bytes);
    ++added;
  }
  return added;
}

void merge_rows(database& db, merge_outcome& out) {
  // The tables of both homes must be the ones this merge knows, so that no row is left behind.
  std::set<std::string> known;
  for (const auto& t : merged_tables()) known.insert(t.name);
  for (const char* schema : {"main", "src"}) {
    for (const auto& name : table_names(db, schema)) {
      if (!known.contains(name)) {
        BLASTER_THROW("merge does not know table {} of the {} home", name,
                      std::string(schema) == "main" ? "merged" : "source");
      }
    }
  }
  for (const auto& t : merged_tables()) {
    db.exec(fmt::format(
        "CREATE TEMP TABLE merge_map_{0}(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
        "CREATE TEMP TABLE merge_added_{0}(id INTEGER PRIMARY KEY)",
        t.name));
  }

  // A source run r is the home's run m of its id when it started, ran and reported the same.
  const std::string same_run =
      "m.started_at IS r.started_at AND m.command IS r.command AND m.report_sha256 IS "
      "r.report_sha256 AND m.status IS r.status";
  {
    statement conflicts = db.prepare(fmt::format(
        "SELECT r.id, r.command FROM src.runs r JOIN main.runs m ON m.id = r.id WHERE NOT ({}) "
        "ORDER BY r.id",
        same_run));
    while (conflicts.step()) {
      out.conflicts.push_back(fmt::format("run {} ({}) names another run of this home",
                                          conflicts.column_int64(0), conflicts.column_text(1)));
    }
  }

  for (const auto& t : merged_tables()) {
    const std::vector<std::string> columns = column_names(db, "main", t.name);
    if (columns != column_names(db, "src", t.name)) {
      BLASTER_THROW("table {} has other columns in the source home", t.name);
    }
    // A shifted row's id: past every id of the home's own rows of the table.
    const std::int64_t offset = scalar(db, fmt::format("SELECT max(id) FROM main.{}", t.name));
    std::vector<std::string> names;
    std::vector<std::string> values;
    for (const auto& c : columns) {
      if (c == "id" && t.kind == merge_kind::named) continue;  // the home numbers its own
      names.push_back(c);
      values.push_back(c == "id" && t.kind == merge_kind::shifted ? fmt::format("x.id + {}", offset)
                                                                  : value_of(t, c));
    }
    switch (t.kind) {
      case merge_kind::named: {
        db.exec(fmt::format("INSERT OR IGNORE INTO main.{0}({1}) SELECT {2} FROM src.{0} x", t.name,
                            fmt::join(names, ", "), fmt::join(values, ", ")));
        std::vector<std::string> same;
        for (const char* k : t.key) same.push_back(fmt::format("m.{} IS {}", k, value_of(t, k)));
        db.exec(
            fmt::format("INSERT INTO temp.merge_map_{0}(old, new) SELECT x.id, m.id FROM src.{0} x "
                        "JOIN main.{0} m ON {1}",
                        t.name, fmt::join(same, " AND ")));
        break;
      }
      case merge_kind::kept: {
        db.exec(
            "INSERT INTO temp.merge_added_runs(id) SELECT id FROM src.runs "
            "WHERE id NOT IN (SELECT id FROM main.runs)");
        // The runs already here map onto themselves, so that a merged row may cite them.
        db.exec(fmt::format(
            "INSERT INTO temp.merge_map_runs(old, new) SELECT r.id, r.id FROM src.runs r "
            "JOIN main.runs m ON m.id = r.id AND {}",
            same_run));
        out.runs_present = static_cast<int>(scalar(db, "SELECT count(*) FROM temp.merge_map_runs"));
        db.exec(
            fmt::format("INSERT INTO main.runs({0}) SELECT {1} FROM src.runs x "
                        "WHERE x.id IN (SELECT id FROM temp.merge_added_runs)",
                        fmt::join(names, ", "), fmt::join(values, ", ")));
        db.exec(
            "INSERT INTO temp.merge_map_runs(old, new) SELECT id, id FROM temp.merge_added_runs");
        out.runs_added = static_cast<int>(scalar(db, "SELECT count(*) FROM temp.merge_added_runs"));
        break;
      }
      case merge_kind::shifted: {
        const cited_table* owner = cited(t, t.owner);
        const std::string mine =
            fmt::format("x.{} IN (SELECT id FROM temp.merge_added_{})", t.owner, owner->table);
        db.exec(fmt::format(
            "INSERT INTO temp.merge_map_{0}(old, new) SELECT x.id, x.id + {1} FROM src.{0} x "
            "WHERE {2}",
            t.name, offset, mine));
        db.exec(fmt::format(
            "INSERT INTO temp.merge_added_{0}(id) SELECT old FROM temp.merge_map_{0}", t.name));
        db.exec(fmt::format("INSERT INTO main.{0}({1}) SELECT {2} FROM src.{0} x WHERE {3}", t.name,
                            fmt::join(names, ", "), fmt::join(values, ", "), mine));
        break;
      }
    }
  }
  for (const auto& t : merged_tables()) {
    db.exec(fmt::format("DROP TABLE temp.merge_map_{0}; DROP TABLE temp.merge_added_{0}", t.name));
  }
}

void require_home(const fs::path& source) {
  if (!fs::is_regular_file(source / "blaster.db")) {
    BLASTER_INPUT_ERROR(
        "{} is not a blaster home (no blaster.db there); name the --home of the "
        "run or shard to merge",
        source.string());
  }
}

// Every object that a run of `from` cites is in its CAS, or already in that of `into` (where a
// bundle's objects are put before its rows are merged).
void require_cited_objects(store& from, store* into) {
  const run_catalog catalog(from);
  for (const run_summary& s : catalog.runs({})) {
    for (const object_citation& c : catalog.cited_objects(s.run.id)) {
      if (from.cas().contains(c.sha256)) continue;
      if (into != nullptr && into->cas().contains(c.sha256)) continue;
      BLASTER_INPUT_ERROR(
          "{}: run {} ({}) cites object {} ({} row {}, column {}), which its cas/ lacks, so "
          "nothing was merged; the home is damaged: put the object back (from another copy of "
          "the home, or a bundle of the run), or merge a whole copy",
          from.home().string(), s.run.id, s.run.command, c.sha256, c.table, c.row_id, c.column);
    }
  }
}

}  // namespace

void require_whole_home(const fs::path& source) {
  require_home(source);
  store from(source);
  require_cited_objects(from, nullptr);
}

merge_outcome merge_home(store& into, const fs::path& source) {
  merge_outcome out;
  out.source = source;
  require_home(source);
  if (fs::equivalent(source, into.home())) {
    BLASTER_INPUT_ERROR("{} is the home being merged into", source.string());
  }
  // Opening it brings its schema to this blaster's, as opening any home does.
  store from(source);
  require_cited_objects(from, &into);
  // The bytes first, then the rows that cite them: a failure between leaves objects no row cites.
  out.objects_added = merge_objects(into, from.cas().root());

  database& db = into.db();
  {
    statement attach = db.prepare("ATTACH DATABASE ?1 AS src");
    attach.bind(1, from.db().path().string());
    attach.step();
  }
  try {
    transaction guard(db);
    merge_rows(db, out);
    guard.commit();
  } catch (...) {
    db.exec("DETACH DATABASE src");
    throw;
  }
  db.exec("DETACH DATABASE src");
  return out;
}

}  // namespace blaster
