#include "portfolio/portfolio_tables.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace blaster {

namespace fs = std::filesystem;

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
    if (r.status == "passed" && !r.screened && r.time_us &&
        (fastest == nullptr || *r.time_us < *fastest->time_us)) {
      fastest = &r;
    }
  }
  if (mine == nullptr) {
    return fmt::format("run {} has no variant of {} with {}", id, candidate,
                       params_text(entry.params));
  }
  if (mine->status != "passed" || mine->screened || !mine->time_us) {
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
  for (const std::string& task : tasks) {
    const fs::path tuned = folder / task / "tuned";
    if (!fs::is_directory(tuned)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(tuned)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      const fs::path relative = file.lexically_relative(folder / task);  // tuned/<candidate>/..
      if (std::distance(relative.begin(), relative.end()) != 3) {
        BLASTER_INPUT_ERROR("{}: not where a tuned table goes; tables lie in {}/<candidate>/",
                            file.string(), tuned.string());
      }
      tuned_table table = read_tuned_table(file);
      if (!devices.contains(table.key_value("device_name"))) continue;
      auto problems = table_claim_problems(table, task, runs);
      if (auto why = folder_problem(table, std::next(relative.begin())->string()); !why.empty()) {
        problems.insert(problems.begin(), std::move(why));
      }
      if (!problems.empty()) {
        BLASTER_INPUT_ERROR(
            "{}: {}; a bundle carries only tables that its own runs measured (`blaster tune "
            "--task {} --candidate F --cases all --from-runs --out DIR` in this home)",
            file.string(), problems.front(), task);
      }
      out.push_back({.source = file,
                     .path = ("kernels" / fs::path(task) / relative).generic_string(),
                     .task = task,
                     .table = std::move(table)});
    }
  }
  return out;
}

void check_bundle_tables(bundle_verification& v,
                         const std::map<std::int64_t, const bench_report*>& runs) {
  const fs::path kernels = v.dir / "kernels";
  if (!fs::is_directory(kernels)) return;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kernels)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const std::string path = file.lexically_relative(v.dir).generic_string();
    auto claim = [&](std::string detail) {
      v.problems.push_back({bundle_problem_kind::claim, path, std::move(detail), "", ""});
    };
    // kernels/<task>/tuned/<candidate>/<table>.json, as the bundle writes it.
    const fs::path relative = file.lexically_relative(kernels);
    const std::vector<fs::path> parts(relative.begin(), relative.end());
    if (parts.size() != 4 || parts[1] != "tuned" || file.extension() != ".json") {
      claim("is not a tuned table (kernels/<task>/tuned/<candidate>/<table>.json)");
      continue;
    }
    tuned_table table;
    try {
      table = read_tuned_table(file);
    } catch (const input_error& e) {
      claim(e.what());
      continue;
    }
    if (std::string why = folder_problem(table, parts[2].string()); !why.empty()) {
      claim(std::move(why));
    }
    for (std::string& problem : table_claim_problems(table, parts[0].string(), runs)) {
      claim(std::move(problem));
    }
  }
}

}  // namespace blaster
