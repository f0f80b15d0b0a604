// blaster runs, blaster show RUN, blaster history --task T: what the store recorded.
#include <algorithm>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "cli/store_access.hpp"
#include "core/error.hpp"
#include "evidence/stored_results_table.hpp"
#include "evidence/table_renderer.hpp"

namespace blaster::cli {
namespace {

constexpr const char* read_exit_codes =
    "Exit status: 0 success; 1 the store could not be read (I/O, SQLite); 2 bad input: no such "
    "run, no store at --home, or a blaster.db that is damaged or not blaster's (the message "
    "names the file).";

nlohmann::json to_json(const run_summary& s) {
  const run_record& r = s.run;
  auto text = [](const std::string& t) { return t.empty() ? nlohmann::json() : nlohmann::json(t); };
  return {{"id", r.id},
          {"started_at", r.started_at},
          {"finished_at", text(r.finished_at)},
          {"command", r.command},
          {"task", text(r.task)},
          {"status", r.status},
          {"device", text(s.device_name)},
          {"results", s.results},
          {"passed", s.passed},
          {"best_speedup", s.best_speedup ? nlohmann::json(*s.best_speedup) : nlohmann::json()},
          {"report_sha256", text(r.report_sha256)}};
}

// "2025-01-31T12:34:56.789Z" as "2025-01-31 12:34:56": the table's width, UTC still.
std::string short_time(const std::string& iso) {
  if (iso.size() < 19) return iso.empty() ? "-" : iso;
  std::string out = iso.substr(0, 19);
  out[10] = ' ';
  return out;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

}  // namespace

command_fn add_runs_command(CLI::App& app, const global_options& global) {
  auto filter = std::make_shared<run_filter>();
  filter->limit = 20;
  CLI::App* cmd = app.add_subcommand(
      "runs", "List the recorded runs, newest first: when, what task, on what, with what result.");
  cmd->footer(std::string("Examples:\n  blaster runs\n  blaster runs --task rmsnorm --limit 0 "
                          "--json\n\n") +
              read_exit_codes);
  cmd->add_option("--task", filter->task, "only runs of this task");
  cmd->add_option(
      "--status", filter->status,
      "only runs with this status (completed, no_gpu, failed, running, interrupted: its "
      "process ended before it finished)");
  cmd->add_option("--limit", filter->limit, "at most this many runs; 0: all (default 20)")
      ->check(whole_number_at_least(0));
  return [filter, &global]() {
    const std::unique_ptr<store> records = open_existing_store(global);
    std::vector<run_summary> runs;
    if (records) runs = run_catalog(*records).runs(*filter);
    if (global.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : runs) j.push_back(to_json(r));
      std::cout << j.dump(2) << '\n';
      return static_cast<int>(exit_ok);
    }
    if (runs.empty()) {
      fmt::print("no runs recorded in {}\n", resolve_home(global.home).string());
      return static_cast<int>(exit_ok);
    }
    std::size_t task_width = 4;
    std::size_t device_width = 6;
    for (const auto& r : runs) {
      task_width = std::max(task_width, or_dash(r.run.task).size());
      device_width = std::max(device_width, or_dash(r.device_name).size());
    }
    fmt::print("{:>5}  {:<19}  {:<9}  {:<{}}  {:<{}}  {:>7}  {:>7}  {}\n", "run", "started (UTC)",
               "status", "task", task_width, "device", device_width, "passed", "best", "command");
    for (const auto& r : runs) {
      fmt::print("{:>5}  {:<19}  {:<9}  {:<{}}  {:<{}}  {:>7}  {:>7}  {}\n", r.run.id,
                 short_time(r.run.started_at), r.run.status, or_dash(r.run.task), task_width,
                 or_dash(r.device_name), device_width, fmt::format("{}/{}", r.passed, r.results),
                 format_optional(r.best_speedup, "{:.2f}x"), r.run.command);
    }
    return static_cast<int>(exit_ok);
  };
}

command_fn add_show_command(CLI::App& app, const global_options& global) {
  auto reference = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "show",
      "Show one run: its command, device, status, every candidate's verdict and the "
      "digests of its evidence.");
  cmd->footer(std::string("--json prints every database row of the run, by table (runs, "
                          "results, compilations, measurements, ...), and its report.\n\n"
                          "Examples:\n  blaster show 12\n  blaster show latest --json\n\n") +
              read_exit_codes);
  cmd->add_option("run", *reference, "a run id (see blaster runs) or 'latest'")->required();
  return [reference, &global]() {
    const std::unique_ptr<store> records = require_store(global);
    const run_catalog catalog(*records);
    const std::int64_t run_id = catalog.resolve(*reference);
    const run_record run = *catalog.find_run(run_id);
    nlohmann::json report = nullptr;
    if (!run.report_sha256.empty()) {
      if (auto bytes = records->cas().get(run.report_sha256)) {
        report = nlohmann::json::parse(*bytes, nullptr, false);
        if (report.is_discarded()) report = nullptr;
      }
    }
    if (global.json) {
      nlohmann::json j = catalog.records_of(run_id);
      j["report"] = report;
      std::cout << j.dump(2) << '\n';
      return static_cast<int>(exit_ok);
    }
    const auto results = catalog.results_of(run_id);
    const auto summary = catalog.runs(run_filter{.run_id = run_id});
    const std::string device = summary.empty() ? "" : summary.front().device_name;
    fmt::print("run {}{} · {}\n", run.id, run.task.empty() ? "" : ": " + run.task, run.status);
    fmt::print("command   {}\n", run.command);
    fmt::print("started   {}\nfinished  {}\n", or_dash(run.started_at), or_dash(run.finished_at));
    fmt::print("device    {}\n", device.empty() ? "none recorded" : device);
    fmt::print("report    {}\n\n", run.report_sha256.empty() ? "none recorded" : run.report_sha256);
    if (results.empty()) {
      fmt::print("no results recorded\n");
    } else {
      const bool console = global.format == "table";
      make_renderer(global.format)
          ->render(stored_results_table(results, catalog.metric_definitions(), console), std::cout);
    }
    std::set<std::string> objects;
    for (const auto& c : catalog.cited_objects(run_id)) objects.insert(c.sha256);
    fmt::print(
        "\n{} evidence objects. blaster export {} --out DIR writes them, with report.md and "
        "SHA256SUMS.\n",
        objects.size(), run.id);
    return static_cast<int>(exit_ok);
  };
}

command_fn add_history_command(CLI::App& app, const global_options& global) {
  struct flags {
    std::string task;
    std::string candidate;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd =
      app.add_subcommand("history",
                         "Every recorded result of one task across runs, oldest first: how each "
                         "candidate fared, when and on what device.");
  cmd->footer(std::string("Numbers from different devices, shapes or timing modes are not "
                          "comparable; the device column says which is which.\n\n"
                          "Examples:\n  blaster history --task rmsnorm\n  blaster history "
                          "--task rmsnorm --candidate rmsnorm_vec_regs --json\n\n") +
              read_exit_codes);
  cmd->add_option("--task", f->task, "task name")->required();
  cmd->add_option("--candidate", f->candidate, "only this candidate (its file's name)");
  return [f, &global]() {
    const std::unique_ptr<store> records = open_existing_store(global);
    std::vector<history_entry> entries;
    if (records) entries = run_catalog(*records).history(f->task, f->candidate);
    if (global.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& e : entries) {
        nlohmann::json item = to_json(e.result);
        item["started_at"] = e.started_at;
        item["run_status"] = e.run_status;
        item["device"] = e.device_name.empty() ? nlohmann::json() : nlohmann::json(e.device_name);
        j.push_back(std::move(item));
      }
      std::cout << j.dump(2) << '\n';
      return static_cast<int>(exit_ok);
    }
    if (entries.empty()) {
      fmt::print("no results of task {}{} recorded in {}\n", f->task,
                 f->candidate.empty() ? "" : " for candidate " + f->candidate,
                 resolve_home(global.home).string());
      return static_cast<int>(exit_ok);
    }
    std::vector<stored_result> results;
    for (const auto& e : entries) results.push_back(e.result);
    const bool console = global.format == "table";
    const std::vector<metric_definition> metrics =
        shown_metrics(results, run_catalog(*records).metric_definitions(), console);
    result_table t;
    t.columns = {{.metric = {.tag = "run_id", .name = "run", .format = "{:.0f}"}, .width = 5},
                 {.metric = {.tag = "started_at", .name = "started (UTC)"}, .left = true},
                 {.metric = {.tag = "device", .name = "device"}, .width = 6, .left = true},
                 {.metric = {.tag = "variant", .name = "candidate"}, .width = 9, .left = true},
                 {.metric = {.tag = "status", .name = "status"}, .width = 8, .left = true}};
    t.summary_after = t.columns.size();
    add_metric_columns(t, metrics);
    for (const auto& e : entries) {
      table_row row{.cells = {static_cast<double>(e.run_id), short_time(e.started_at),
                              or_dash(e.device_name), e.result.label(), e.result.status}};
      add_result_cells(row, e.result, metrics);
      t.rows.push_back(std::move(row));
    }
    t.notes.push_back(
        "Numbers from different devices, shapes or timing modes are not comparable; `blaster "
        "compare` refuses them.");
    make_renderer(global.format)->render(t, std::cout);
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
