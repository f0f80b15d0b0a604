#include "portfolio/portfolio_tables.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace blaster {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// "B=1 QH=32 ...", a report's shape, as its pairs.
std::map<std::string, std::string> shape_pairs(const std::string& shape) {
  std::map<std::string, std::string> pairs;
  std::istringstream words(shape);
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    if (equals != std::string::npos) pairs[word.substr(0, equals)] = word.substr(equals + 1);
  }
  return pairs;
}

std::string params_text(const std::map<std::string, std::string>& params) {
  std::vector<std::string> pairs;
  for (const auto& [k, v] : params) pairs.push_back(k + "=" + v);
  return fmt::format("[{}]", fmt::join(pairs, ","));
}

// Why `run` does not bear out `entry`; empty where it does.
std::string entry_problem(const tuned_table& table, const std::string& task,
                          const std::string& candidate, const tuned_entry& entry,
                          const bench_report& run) {
  const std::int64_t id = *entry.run_id;
  if (run.task != task) return fmt::format("run {} is of task {}, not {}", id, run.task, task);
  const std::string device = run.device ? device_name_key(run.device->name) : "none";
  if (table.key_value("device_name") != device) {
    return fmt::format("the table is of {} but run {} ran on {}", table.key_value("device_name"),
                       id, device);
  }
  // The table's shape is the run's, and the run's size is the entry's.
  const auto shape = shape_pairs(run.timed_shape);
  bool size_found = false;
  for (const auto& [symbol, value] : shape) {
    const std::string keyed = table.key_value(symbol);
    if (keyed.empty()) {
      size_found = size_found || value == std::to_string(entry.size);
    } else if (keyed != value) {
      return fmt::format("run {} timed {}={}, the table's shape has {}", id, symbol, value, keyed);
    }
  }
  if (!size_found)
    return fmt::format("run {} timed {}, not size {}", id, run.timed_shape, entry.size);
  // The entry's configuration is the fastest of the candidate's that the run confirmed.
  const variant_result* mine = nullptr;
  const variant_result* fastest = nullptr;
  for (const variant_result& r : run.results) {
    if (r.baseline || r.candidate != candidate) continue;
    if (r.params == entry.params) mine = &r;
    if (confirmed_time(r) && (fastest == nullptr || *r.time_us < *fastest->time_us)) fastest = &r;
  }
  if (mine == nullptr) {
    return fmt::format("run {} has no variant of {} with {}", id, candidate,
                       params_text(entry.params));
  }
  if (!confirmed_time(*mine)) {
    return fmt::format("run {} did not confirm {} ({})", id, mine->label,
                       mine->status != "passed" ? mine->status : "screened out");
  }
  if (entry.time_us != mine->time_us) {
    return fmt::format("its time is {} us but run {} timed {} at {} us",
                       entry.time_us ? fmt::format("{}", *entry.time_us) : "not stated", id,
                       mine->label, *mine->time_us);
  }
  if (fastest != mine) {
    return fmt::format("run {} confirmed {} faster, at {} us", id, fastest->label,
                       *fastest->time_us);
  }
  return {};
}

// Why a table does not belong in the folder of candidate `folder`; empty where it does.
std::string folder_problem(const tuned_table& table, const std::string& folder) {
  const auto about = table.about.find("candidate");
  if (about == table.about.end() || fs::path(about->second).stem() == folder) return {};
  return fmt::format("is the table of {}, in the folder of {}", about->second, folder);
}

}  // namespace

std::vector<std::string> table_claim_problems(
    const tuned_table& table, const std::string& task,
    const std::map<std::int64_t, const bench_report*>& runs) {
  std::vector<std::string> problems;
  const auto about = table.about.find("candidate");
  const std::string candidate =
      about == table.about.end() ? std::string() : fs::path(about->second).stem().string();
  if (candidate.empty()) {
    problems.emplace_back("names no candidate (its \"candidate\" fact)");
    return problems;
  }
  for (const tuned_entry& entry : table.entries) {
    std::string why;
    if (!entry.run_id) {
      why = "names no run (run_id); `blaster tune --from-runs` in the portfolio's home writes it";
    } else if (const auto run = runs.find(*entry.run_id); run == runs.end()) {
      why = fmt::format("run {} is not one of this portfolio's", *entry.run_id);
    } else {
      why = entry_problem(table, task, candidate, entry, *run->second);
    }
    if (!why.empty()) problems.push_back(fmt::format("entry {}: {}", entry.size, why));
  }
  return problems;
}

namespace {

// Every file under `root`, in path order, so that problems are reported in a stable order.
std::vector<fs::path> files_under(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A file under `root` (laid out as kernels/ is) read as a tuned table and held to `runs`: none
// where it does not lie where a table goes, and what of it does not hold. A table that cannot be
// read is an input_error that names the file.
struct held_table {
  std::optional<tuned_table> table;
  std::vector<std::string> problems;
};

held_table hold_table(const fs::path& root, const fs::path& file,
                      const std::map<std::int64_t, const bench_report*>& runs) {
  const fs::path relative = file.lexically_relative(root);
  const std::vector<fs::path> parts(relative.begin(), relative.end());
  if (parts.size() != 4 || parts[1] != "tuned" || file.extension() != ".json") {
    return {.table = std::nullopt,
            .problems = {"is not a tuned table (<task>/tuned/<candidate>/<table>.json)"}};
  }
  held_table out{.table = read_tuned_table(file), .problems = {}};
  if (std::string why = folder_problem(*out.table, parts[2].string()); !why.empty()) {
    out.problems.push_back(std::move(why));
  }
  for (std::string& problem : table_claim_problems(*out.table, parts[0].string(), runs)) {
    out.problems.push_back(std::move(problem));
  }
  return out;
}

}  // namespace

std::vector<bundle_table> tables_for_bundle(const fs::path& folder,
                                            const std::vector<portfolio_outcome>& outcomes) {
  if (!fs::is_directory(folder)) {
    BLASTER_INPUT_ERROR(
        "--tables {}: no such folder; give the folder `blaster tune --from-runs --out` wrote "
        "into, laid out as kernels/ is (<task>/tuned/<candidate>/<table>.json)",
        folder.string());
  }
  std::map<std::int64_t, const bench_report*> runs;
  std::set<std::string> tasks;
  std::set<std::string> devices;
  for (const auto& o : outcomes) {
    runs[o.run_id] = &o.report;
    tasks.insert(o.item.task);
    devices.insert(o.report.device ? device_name_key(o.report.device->name) : "none");
  }
  std::vector<bundle_table> out;
  for (const fs::path& file : files_under(folder)) {
    const fs::path relative = file.lexically_relative(folder);
    const std::vector<fs::path> parts(relative.begin(), relative.end());
    const std::string task = parts.front().string();
    // What lies outside a task's tuned/ folder is not a table this portfolio is given.
    if (!tasks.contains(task) || parts.size() < 2 || parts[1] != "tuned" ||
        file.extension() != ".json") {
      continue;
    }
    held_table held = hold_table(folder, file, runs);
    if (held.table && !devices.contains(held.table->key_value("device_name"))) continue;
    if (!held.problems.empty()) {
      BLASTER_INPUT_ERROR(
          "{}: {}; a bundle carries only tables that its own runs measured (`blaster tune "
          "--task {} --candidate F --cases all --from-runs --out DIR/{}/tuned/C` in this home)",
          file.string(), held.problems.front(), task, task);
    }
    out.push_back({.source = file,
                   .path = ("kernels" / relative).generic_string(),
                   .task = task,
                   .table = std::move(*held.table)});
  }
  return out;
}

void check_bundle_tables(bundle_verification& v,
                         const std::map<std::int64_t, const bench_report*>& runs) {
  const fs::path kernels = v.dir / "kernels";
  if (!fs::is_directory(kernels)) return;
  for (const fs::path& file : files_under(kernels)) {
    const std::string path = file.lexically_relative(v.dir).generic_string();
    auto claim = [&](std::string detail) {
      v.problems.push_back({bundle_problem_kind::claim, path, std::move(detail), "", ""});
    };
    try {
      for (std::string& problem : hold_table(kernels, file, runs).problems) {
        claim(std::move(problem));
      }
    } catch (const input_error& e) {
      claim(e.what());
    }
  }
}

json tuned_tables_json(const std::vector<bundle_table>& tables) {
  json out = json::array();
  for (const bundle_table& t : tables) {
    json entries = json::array();
    for (const tuned_entry& e : t.table.entries) {
      entries.push_back({{"size", e.size},
                         {"params", e.params},
                         {"time_us", e.time_us ? json(*e.time_us) : json()},
                         {"default_time_us", e.default_time_us ? json(*e.default_time_us) : json()},
                         {"run_id", e.run_id ? json(*e.run_id) : json()}});
    }
    out.push_back({{"path", t.path}, {"task", t.task}, {"entries", std::move(entries)}});
  }
  return out;
}

std::string tuned_tables_markdown(const json& summary) {
  const auto it = summary.find("tuned_tables");
  if (it == summary.end() || it->empty()) return {};
  const auto us = [](const json& e, const char* key) {
    return e.contains(key) && e[key].is_number() ? fmt::format("{:.2f}", e[key].get<double>())
                                                 : std::string("-");
  };
  std::string md =
      "\n## Tuned tables\n\nEach entry is the fastest configuration of its candidate that a run "
      "of this bundle confirmed at that size (`blaster tune --from-runs`), and `blaster verify` "
      "holds it to that run. Copied into a checkout's kernels/, they are what bench runs on this "
      "GPU.\n\n";
  for (const auto& t : *it) {
    std::vector<std::string> entries;
    for (const auto& e : t.at("entries")) {
      std::vector<std::string> params;
      for (const auto& [k, v] : e.at("params").items())
        params.push_back(k + "=" + v.get<std::string>());
      entries.push_back(fmt::format("{}: {} {} us (default {} us; run {})",
                                    e.value("size", std::int64_t{0}), fmt::join(params, ","),
                                    us(e, "time_us"), us(e, "default_time_us"),
                                    e.value("run_id", std::int64_t{0})));
    }
    md += fmt::format("- `{}`: {}\n", t.value("path", ""), fmt::join(entries, "; "));
  }
  return md;
}

}  // namespace blaster
