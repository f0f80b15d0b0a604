#include "optimize/tune.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "benchmarking/candidate/candidate.hpp"
#include "benchmarking/runner/warm_bench.hpp"
#include "benchmarking/tuned/tuned_lookup.hpp"
#include "core/error.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"

namespace blaster {

namespace {

// "reason: evidence" of a rejected variant.
std::string rejection(const variant_result& r) {
  return fmt::format("{}: {}", to_string(r.reason), r.message);
}

// Why a variant has no confirmed time.
std::string unconfirmed_why(const variant_result& r) {
  if (r.status == "rejected") return "rejected, " + rejection(r);
  if (r.screened) return "screened out after the first session";
  return "not timed";
}

}  // namespace

tuned_case best_of(const bench_report& report, const std::string& case_name, std::int64_t size) {
  tuned_case out{.case_name = case_name, .size = size, .run_id = report.run_id};
  const variant_result* best = nullptr;
  const variant_result* first = nullptr;
  for (const variant_result& r : report.results) {
    if (r.status == "rejected") out.rejected.push_back({r.label, r.baseline, rejection(r)});
    if (r.baseline) continue;
    if (first == nullptr) first = &r;
    if (!confirmed_time(r)) continue;
    out.confirmed.emplace_back(r.label, *r.time_us);
    if (best == nullptr || *r.time_us < *best->time_us) best = &r;
  }
  if (first != nullptr) out.default_label = first->label;
  std::sort(out.confirmed.begin(), out.confirmed.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  if (best == nullptr) {
    out.why = first == nullptr ? "the run has no variant of the candidate"
                               : "no variant of the candidate passed and was confirmed";
    return out;
  }
  tuned_entry e{.size = size,
                .params = best->params,
                .time_us = best->time_us,
                .run_id = report.run_id > 0 ? std::optional(report.run_id) : std::nullopt};
  // The speedup's paired-bootstrap interval, over the baseline's time, bounds this time.
  const variant_result* baseline = nullptr;
  for (const variant_result& r : report.results) {
    if (r.baseline && r.time_us) baseline = &r;
  }
  if (best->verdict && baseline != nullptr && best->verdict->speedup.low > 0.0) {
    e.interval_us = std::make_pair(*baseline->time_us / best->verdict->speedup.high,
                                   *baseline->time_us / best->verdict->speedup.low);
  }
  if (first->status == "passed" && first->time_us) e.default_time_us = first->time_us;
  out.label = best->label;
  out.entry = std::move(e);
  return out;
}

std::vector<std::pair<std::string, std::string>> table_key(const task_spec& task,
                                                           const task_case& c,
                                                           const std::string& size_symbol,
                                                           const bench_report& report) {
  std::vector<std::pair<std::string, std::string>> key = shape_key(task, c, size_symbol);
  key.emplace_back("device_name", report.device ? device_name_key(report.device->name) : "none");
  key.emplace_back("dtype", report.dtype);
  for (auto& pair : toolchain_key(report)) key.push_back(std::move(pair));
  return key;
}

namespace {

// The task whose cases are tuned, with the symbol its tables are keyed by.
task_spec task_to_tune(const tune_options& options) {
  task_spec task = load_task(options.bench.root / "tasks" / options.bench.task);
  if (task.find_symbol(options.size_symbol) == nullptr) {
    BLASTER_INPUT_ERROR(
        "task {} has no symbol {} to key the table by; give --size one of its "
        "symbols",
        task.name, options.size_symbol);
  }
  return task;
}

// Puts a case's entry into the table of its shape, device and toolchain, a new one where none of
// `out` has that key yet.
void put_entry(tune_result& out, const task_spec& task, const tune_options& options,
               const task_case& c, const bench_report& report, const tuned_entry& entry) {
  const auto key = table_key(task, c, options.size_symbol, report);
  auto table = std::find_if(out.tables.begin(), out.tables.end(),
                            [&](const tuned_table& t) { return t.key == key; });
  if (table == out.tables.end()) {
    out.tables.push_back(
        {.key = key,
         .about = {{"task", task.name},
                   {"candidate", options.bench.candidates.front().filename().string()},
                   {"blaster_revision", report.blaster_revision}},
         .entries = {}});
    table = std::prev(out.tables.end());
  }
  table->put(entry);  // two cases of one size in one shape: the later one is the entry
}

// Why a run's report does not hold tune's measurement of `candidate` at its case; empty where
// it does: two sessions or more, and every configuration of the file as it is now timed in the
// first of them, none chosen by a table.
std::string not_a_tune(const bench_report& report, const candidate_file& candidate,
                       const std::vector<std::map<std::string, std::string>>& configurations) {
  if (report.sessions < 2) return "timed one session, which confirms nothing";
  std::vector<std::map<std::string, std::string>> timed;
  for (const variant_result& r : report.results) {
    if (r.baseline || r.candidate != candidate.name) continue;
    if (r.sources_sha256 != candidate.sources_sha256) {
      return fmt::format("measured another version of {} (its sources' digest {}, now {})",
                         candidate.file.filename().string(), r.sources_sha256.substr(0, 12),
                         candidate.sources_sha256.substr(0, 12));
    }
    if (r.tuned) return fmt::format("timed only the configuration that {} chose", r.tuned->file);
    timed.push_back(r.params);
  }
  if (timed.empty()) return fmt::format("has no variant of {}", candidate.file.filename().string());
  std::sort(timed.begin(), timed.end());
  auto all = configurations;
  std::sort(all.begin(), all.end());
  if (timed != all) {
    return fmt::format("timed {} of the {} configurations of {}", timed.size(), all.size(),
                       candidate.file.filename().string());
  }
  return {};
}

}  // namespace

tune_result run_tune(const tune_options& options, store& records) {
  const task_spec task = task_to_tune(options);
  tune_result out;
  // One series over the cases: every configuration is gated once, on data that holds them all.
  warm_bench series(/*keep_worker=*/false);
  for (const auto& c : options.cases) series.cases.push_back(task.find_case(c.name).name);
  for (std::size_t k = 0; k < options.cases.size(); ++k) {
    const task_case& c = task.find_case(options.cases[k].name);
    bench_options b = options.bench;
    b.timed_case = c.name;
    b.command =
        fmt::format("{} (case {} of {})", options.bench.command, k + 1, options.cases.size());
    spdlog::info("case {} ({} of {})", c.name, k + 1, options.cases.size());
    const bench_report report = run_bench(b, records, &series);
    if (!report.gpu) {
      out.gpu = false;
      out.gpu_unavailable = report.gpu_unavailable;
      out.compiled = report;
      return out;
    }
    const auto size = static_cast<std::int64_t>(task.value(c, options.size_symbol));
    tuned_case tc = best_of(report, c.name, size);
    if (tc.entry) put_entry(out, task, options, c, report, *tc.entry);
    out.cases.push_back(std::move(tc));
  }
  return out;
}

tune_result tune_from_runs(const tune_options& options, store& records) {
  const task_spec task = task_to_tune(options);
  const std::filesystem::path& file = options.bench.candidates.front();
  const candidate_file candidate =
      read_candidate(file, options.bench.compile, common_headers_folder(options.bench.root));
  if (!candidate.plan) {
    BLASTER_INPUT_ERROR(
        "{}", !candidate.plan_error.empty() ? candidate.plan_error : candidate.compile_error);
  }
  const auto configurations = expand_params(*candidate.plan);
  std::set<std::string> wanted;
  for (const auto& c : options.cases) wanted.insert(task.find_case(c.name).name);

  // Newest run first: the first that counts for a case, device and toolchain is their entry.
  std::vector<std::pair<tuned_case, bench_report>> found;
  std::set<std::pair<std::string, std::string>> taken;  // (table file name, case)
  std::map<std::string, std::string> why_not;           // case -> the newest run's refusal
  const run_catalog catalog(records);
  for (const run_summary& s : catalog.runs({.task = task.name, .status = "completed"})) {
    if (s.run.report_sha256.empty()) continue;
    const std::optional<std::string> text = records.cas().get(s.run.report_sha256);
    if (!text) continue;
    bench_report report;
    try {
      report = bench_report_from_json(nlohmann::json::parse(*text));
    } catch (const nlohmann::json::exception& e) {
      spdlog::warn("run {}: its report cannot be read ({}); left out", s.run.id, e.what());
      continue;
    }
    if (report.task != task.name || !wanted.contains(report.timed_case)) continue;
    const std::string why = not_a_tune(report, candidate, configurations);
    if (!why.empty()) {
      why_not.try_emplace(report.timed_case, fmt::format("run {} {}", s.run.id, why));
      continue;
    }
    const task_case& c = task.find_case(report.timed_case);
    if (!taken.emplace(tuned_file_name(table_key(task, c, options.size_symbol, report)), c.name)
             .second) {
      continue;
    }
    // The entry is the candidate's: another file's variants beside it are not its rivals.
    bench_report own = report;
    std::erase_if(own.results, [&](const variant_result& r) {
      return !r.baseline && r.candidate != candidate.name;
    });
    tuned_case tc =
        best_of(own, c.name, static_cast<std::int64_t>(task.value(c, options.size_symbol)));
    tc.device = report.device ? report.device->name : std::string();
    found.emplace_back(std::move(tc), std::move(report));
  }

  // In the order of --cases, as tune puts them (two cases of one size and shape: the later one
  // is the entry), each case's devices in the order met; a case with no run says why.
  tune_result out;
  for (const auto& named : options.cases) {
    const task_case& c = task.find_case(named.name);
    const auto before = out.cases.size();
    for (auto& [tc, report] : found) {
      if (tc.case_name != c.name) continue;
      if (tc.entry) put_entry(out, task, options, c, report, *tc.entry);
      out.cases.push_back(std::move(tc));
    }
    if (out.cases.size() > before) continue;
    const auto it = why_not.find(c.name);
    out.cases.push_back({.case_name = c.name,
                         .size = static_cast<std::int64_t>(task.value(c, options.size_symbol)),
                         .why = it != why_not.end()
                                    ? it->second
                                    : fmt::format("no completed run of {} at case {} in this home",
                                                  task.name, c.name)});
  }
  return out;
}

tuned_table with_earlier_entries(const tuned_table& table, const std::filesystem::path& folder,
                                 std::vector<std::int64_t>& kept) {
  const std::filesystem::path file = folder / tuned_file_name(table.key);
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return table;
  const tuned_table earlier = read_tuned_table(file);
  const auto candidate = [](const tuned_table& t) {
    const auto it = t.about.find("candidate");
    return it == t.about.end() ? std::string() : it->second;
  };
  if (candidate(earlier) != candidate(table)) {
    BLASTER_INPUT_ERROR(
        "{}: holds the table of {}, not of {}; give --out a folder of {}'s own tables",
        file.string(), candidate(earlier).empty() ? "no named candidate" : candidate(earlier),
        candidate(table), candidate(table));
  }
  // Both ascending by size: one pass, the new entry where both have a size.
  tuned_table merged = table;
  merged.entries.clear();
  auto now = table.entries.begin();
  for (const auto& e : earlier.entries) {
    while (now != table.entries.end() && now->size < e.size) merged.entries.push_back(*now++);
    if (now != table.entries.end() && now->size == e.size) continue;
    merged.entries.push_back(e);
    kept.push_back(e.size);
  }
  merged.entries.insert(merged.entries.end(), now, table.entries.end());
  return merged;
}

void require_table_of(const tune_options& options, const tuned_table& table,
                      const std::filesystem::path& file) {
  const auto stated = [&](const char* key) {
    const auto it = table.about.find(key);
    return it == table.about.end() ? std::string() : it->second;
  };
  const std::string candidate = options.bench.candidates.front().filename().string();
  if (!stated("task").empty() && stated("task") != options.bench.task) {
    BLASTER_INPUT_ERROR(
        "{}: a table of task {}, not of {}; check it with --task {} and its candidate, or give "
        "a table of {}",
        file.string(), stated("task"), options.bench.task, stated("task"), options.bench.task);
  }
  if (!stated("candidate").empty() && stated("candidate") != candidate) {
    BLASTER_INPUT_ERROR(
        "{}: a table of candidate {}, not of {}; check it with --candidate naming {}, or give a "
        "table of {}",
        file.string(), stated("candidate"), candidate, stated("candidate"), candidate);
  }
}

std::string case_of(const task_spec& task, const tuned_table& table, const std::string& size_symbol,
                    std::int64_t size) {
  for (const auto& c : task.cases) {
    if (static_cast<std::int64_t>(task.value(c, size_symbol)) != size) continue;
    const auto shape = shape_key(task, c, size_symbol);
    // A symbol the table's name leaves out (an engine's names only E and N of fused_moe) is the
    // task's own value of it, not any.
    const auto matches = [&](const std::pair<std::string, std::string>& pair) {
      const std::string named = table.key_value(pair.first);
      if (!named.empty()) return named == pair.second;
      const symbol_spec* symbol = task.find_symbol(pair.first);
      return symbol != nullptr && symbol->value &&
             fmt::format("{}", static_cast<std::int64_t>(*symbol->value)) == pair.second;
    };
    if (std::all_of(shape.begin(), shape.end(), matches)) return c.name;
  }
  return {};
}

checked_entry judge_entry(const bench_report& report, const tuned_table& table,
                          const tuned_entry& entry, const std::string& case_name) {
  checked_entry out{.size = entry.size, .case_name = case_name};
  out.now = best_of(report, case_name, entry.size);
  const auto of_params = [&](const std::map<std::string, std::string>& params) {
    const auto it =
        std::find_if(report.results.begin(), report.results.end(),
                     [&](const variant_result& r) { return !r.baseline && r.params == params; });
    return it == report.results.end() ? nullptr : &*it;
  };
  const variant_result* mine = of_params(entry.params);
  if (mine == nullptr) {
    out.why = "the table's configuration is not among the candidate's params";
    return out;
  }
  out.table_label = mine->label;
  if (mine->status == "passed") out.table_time_us = mine->time_us;
  out.table_screened = mine->screened;
  for (const tuned_entry& other : table.entries) {
    const variant_result* r = of_params(other.params);
    if (r == nullptr || r == mine) continue;
    const auto rival = std::find_if(out.rivals.begin(), out.rivals.end(),
                                    [&](const rival_time& t) { return t.label == r->label; });
    if (rival != out.rivals.end()) {
      rival->sizes.push_back(other.size);
    } else {
      const std::optional<double> time_us = confirmed_time(*r);
      out.rivals.push_back({.sizes = {other.size},
                            .label = r->label,
                            .time_us = time_us,
                            .why = time_us ? std::string() : unconfirmed_why(*r)});
    }
  }
  if (!out.now.entry) return out;
  if (out.now.entry->params == entry.params) {
    out.still_best = true;
    return out;
  }
  // Another configuration was the fastest: by more than the noise of these sessions?
  const variant_result* fastest = of_params(out.now.entry->params);
  if (confirmed_time(*mine) && fastest != nullptr && !mine->session_medians_us.empty() &&
      mine->session_medians_us.size() == fastest->session_medians_us.size()) {
    out.best_over_table = bootstrap_speedup(mine->session_medians_us, fastest->session_medians_us,
                                            report.bootstrap_seed);
    out.within_noise = out.best_over_table->low <= 1.0;
    out.still_best = out.within_noise;
  }
  return out;
}

check_result check_tuned_table(const tune_options& options, const tuned_table& table,
                               store& records) {
  const task_spec task = load_task(options.bench.root / "tasks" / options.bench.task);
  check_result out;
  bool key_compared = false;                 // with the first run's device and toolchain
  warm_bench series(/*keep_worker=*/false);  // as tune gates: once, over every entry's case
  // Each configuration of the table is confirmed at every entry's size, beside the fastest: an
  // entry is then compared with the others' configurations in the same sessions.
  std::vector<std::map<std::string, std::string>> configurations;
  for (const tuned_entry& entry : table.entries) {
    if (std::find(configurations.begin(), configurations.end(), entry.params) ==
        configurations.end()) {
      configurations.push_back(entry.params);
    }
  }
  for (const tuned_entry& entry : table.entries) {
    const std::string c = case_of(task, table, options.size_symbol, entry.size);
    if (!c.empty()) series.cases.push_back(c);
  }
  for (const tuned_entry& entry : table.entries) {
    checked_entry checked{.size = entry.size};
    checked.case_name = case_of(task, table, options.size_symbol, entry.size);
    if (checked.case_name.empty()) {
      checked.why = fmt::format("task {} has no case of {}={} in this table's shape", task.name,
                                options.size_symbol, entry.size);
      out.entries.push_back(std::move(checked));
      continue;
    }
    bench_options b = options.bench;
    b.timed_case = checked.case_name;
    b.command = fmt::format("{} (entry {})", options.bench.command, entry.size);
    b.always_confirm = configurations;
    spdlog::info("entry {} (case {})", entry.size, checked.case_name);
    const bench_report report = run_bench(b, records, &series);
    if (!report.gpu) {
      out.gpu = false;
      out.gpu_unavailable = report.gpu_unavailable;
      out.compiled = report;
      return out;
    }
    if (!key_compared) {
      key_compared = true;
      const task_case& c = task.find_case(checked.case_name);
      for (const auto& [name, value] : table_key(task, c, options.size_symbol, report)) {
        if (table.key_value(name) != value) {
          out.mismatches.push_back(fmt::format("{}: the table's {}, this machine's {}", name,
                                               table.key_value(name), value));
        }
      }
    }
    out.entries.push_back(judge_entry(report, table, entry, checked.case_name));
  }
  return out;
}

}  // namespace blaster
