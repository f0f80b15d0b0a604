#include "portfolio/portfolio_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/statistics/statistics.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/evidence_bundle.hpp"
#include "evidence/signature.hpp"
#include "evidence/store.hpp"
#include "evidence/table_renderer.hpp"
#include "portfolio/card_comparison_report.hpp"
#include "portfolio/detail/report_rows.hpp"
#include "portfolio/portfolio_figure.hpp"
#include "portfolio/portfolio_provenance.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
using detail::best_result;
using detail::optional_number;
namespace fs = std::filesystem;

double number_or(const json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

// PyTorch's time for a case in the mode blaster timed it (graph mode: PyTorch's calls captured
// in a CUDA graph, else its hot time where the file has no graph time).
json pytorch_times(const json& pytorch, const std::string& task, const std::string& case_name,
                   const std::string& mode) {
  json out = json::object();
  if (!pytorch.is_object() || !pytorch.contains("cases")) return out;
  for (const auto& c : pytorch["cases"]) {
    if (c.value("task", "") != task || c.value("case", "") != case_name) continue;
    for (const char* method : {"eager", "compile"}) {
      if (!c.contains("methods") || !c["methods"].contains(method)) continue;
      const json& m = c["methods"][method];
      std::string key = mode + "_us";
      if (mode == "graph" && !m.contains(key)) key = "hot_us";
      json entry = {{"status", m.value("status", "missing")}};
      if (m.contains(key) && m[key].is_number()) {
        entry["us"] = m[key];
        entry["mode"] = key.substr(0, key.size() - 3);
      }
      out[method] = entry;
    }
  }
  return out;
}

const suite_entry& entry_of(const suite& s, const std::string& id) {
  for (const auto& e : s.entries) {
    if (e.id == id) return e;
  }
  BLASTER_THROW("suite {} has no entry {}", s.name, id);
}

std::string first_line(std::string_view text) {
  return std::string(text.substr(0, text.find('\n')));
}

std::string fixed(const json& j, const char* key, const char* format) {
  return j.contains(key) && j[key].is_number()
             ? fmt::format(fmt::runtime(format), j[key].get<double>())
             : std::string("-");
}

}  // namespace

std::string run_folder(const portfolio_item& item) {
  return fmt::format("runs/{}-{}-{}", item.id, item.task, item.case_name);
}

json summarize_portfolio(const suite& s, const std::vector<portfolio_outcome>& outcomes,
                         const json& pytorch, const std::vector<portfolio_item>& not_run,
                         const std::map<std::int64_t, json>& measured_by) {
  json rows = json::array();
  std::set<std::string> revisions;
  std::vector<double> speedups;
  std::map<std::string, std::vector<double>> over_pytorch;
  json device;
  // One model's numbers only: a ratio or a mean over two models compares hardware, not kernels.
  std::map<std::string, int> models;  // name: cases
  std::set<std::string> gpus;         // UUIDs
  for (const auto& o : outcomes) {
    if (!o.report.device) continue;
    ++models[o.report.device->name];
    gpus.insert(o.report.device->uuid);
  }
  if (models.size() > 1) {
    std::vector<std::string> counts;
    for (const auto& [name, cases] : models)
      counts.push_back(fmt::format("{} ({} case{})", name, cases, cases == 1 ? "" : "s"));
    BLASTER_INPUT_ERROR(
        "suite {}: its cases were run on GPUs of {} models: {}; a portfolio's report compares one "
        "model's numbers, so run (or merge) each model's cases in a home of its own",
        s.name, models.size(), fmt::join(counts, ", "));
  }
  // PyTorch's times from another model than the cases' would make every ratio compare hardware.
  const std::string torch_device =
      pytorch.is_object() ? pytorch.value(json::json_pointer("/environment/device"), "") : "";
  if (models.size() == 1 && !torch_device.empty() && torch_device != models.begin()->first) {
    BLASTER_INPUT_ERROR(
        "suite {}: PyTorch's times (--pytorch) were measured on an {}, its cases on an {}; a "
        "ratio of the two compares GPUs, not kernels: measure PyTorch on the {} with "
        "scripts/benchmark_pytorch.py and give that file",
        s.name, torch_device, models.begin()->first, models.begin()->first);
  }
  json protocol = {{"suite", s.name},
                   {"suite_sha256", s.sha256},
                   {"sessions", s.protocol.sessions},
                   {"confirm_best", s.protocol.confirm_best},
                   {"cooldown_s", s.protocol.cooldown_s},
                   {"max_noise", s.protocol.max_noise},
                   {"profile", s.protocol.profile}};
  // The bandwidth goal holds at each entry's largest case timed outside graph mode: smaller
  // sizes are served from the L2 or wait on latency, and are held against PyTorch alone. A
  // roofline goal holds at every such case: its floor already counts what each case must move
  // (attention's KV cache, at one sequence of 32k as at 64 of 8k).
  std::map<std::string, const portfolio_outcome*> largest;
  for (const auto& o : outcomes) {
    if (o.report.timing.mode == timing_mode::graph) continue;
    const portfolio_outcome*& l = largest[o.item.id];
    if (l == nullptr || o.report.roofline_bytes > l->report.roofline_bytes) l = &o;
  }
  for (const auto& o : outcomes) {
    const bench_report& report = o.report;
    if (device.is_null() && report.device) {
      device = to_json(*report.device);
      device["copy_bandwidth"] = report.memory ? to_json(report.memory->copy) : json();
      device["matrix_rate"] = report.matrix ? to_json(*report.matrix) : json();
      device["launch_floors"] = report.floors ? to_json(*report.floors) : json();
      device["nvrtc"] = report.nvrtc;
      // Several GPUs of the model ran the cases (--gpus, shards): each row's run names its own.
      if (gpus.size() > 1) device["gpus"] = gpus;
    }
    const std::string mode(to_string(report.timing.mode));
    // The harness that measured the case; runs recorded before revisions were kept have none.
    const std::string revision =
        report.blaster_revision.empty() ? std::string("unrecorded") : report.blaster_revision;
    revisions.insert(revision);
    json row = {{"id", o.item.id},
                {"task", o.item.task},
                {"case", o.item.case_name},
                {"shape", report.timed_shape},
                {"dtype", report.dtype},
                {"mode", mode},
                {"blaster_revision", revision},
                {"sessions", report.sessions},
                {"run_id", o.run_id},
                {"run_bundle", run_folder(o.item)},
                {"resumed", o.resumed}};
    if (measured_by.contains(o.run_id)) row["measured_by"] = measured_by.at(o.run_id);
    if (const variant_result* base = baseline_result(report); base != nullptr && base->time_us) {
      row["baseline_us"] = *base->time_us;
    }
    const variant_result* best = best_result(report);
    json goals = json::array();
    if (best == nullptr) {
      row["best"] = nullptr;
      goals.push_back({{"goal", "a candidate passes the gate"}, {"met", false}, {"by", ""}});
    } else {
      const variant_result& b = *best;
      const double time_us = b.time_us.value_or(0.0);
      row["best"] = {
          {"variant", b.label},
          {"time_us", time_us},
          {"kernel_us", b.timing ? b.timing->cupti.kernel_us : 0.0},
          {"speedup", optional_number(b.speedup)},
          {"speedup_low", b.verdict ? json(b.verdict->speedup.low) : json()},
          {"speedup_high", b.verdict ? json(b.verdict->speedup.high) : json()},
          {"verdict", b.verdict ? std::string(to_string(b.verdict->v)) : std::string()},
          {"copy_bandwidth_pct", optional_number(b.copy_bandwidth_pct)},
          {"matrix_rate_pct", optional_number(b.matrix_rate_pct)},
          {"time_over_floor", optional_number(b.time_over_floor)},
          {"launch_bound", b.launch_bound},
          {"diagnosis",
           b.profile && b.profile->diagnosis ? json(b.profile->diagnosis->line) : json()}};
      if (b.speedup) speedups.push_back(*b.speedup);
      // The goals of the suite: a launch-bound case (timed in graph mode) against the empty
      // kernel, every other case against the copy bandwidth, and every case against PyTorch.
      if (report.timing.mode == timing_mode::graph) {
        const double floor = report.floors ? report.floors->us[timing_mode::graph] : 0.0;
        const double ratio = floor > 0 ? time_us / floor : std::nan("");
        row["over_launch_floor"] = ratio;
        goals.push_back(
            {{"goal", fmt::format("within {}x of an empty kernel (graph mode)", launch_floor_goal)},
             {"met", ratio <= launch_floor_goal},
             {"by", fmt::format("{:.2f}x", ratio)}});
      } else if (const suite_entry& e = entry_of(s, o.item.id);
                 e.roofline_goal_pct || largest.at(o.item.id) == &o) {
        const double launch_us = report.floors ? report.floors->us[report.timing.mode] : 0.0;
        const double floor_us =
            b.time_over_floor && *b.time_over_floor > 0 ? time_us / *b.time_over_floor : 0.0;
        if (floor_us > 0 && floor_us < launch_us) {
          // Bytes that move in less time than an empty kernel takes: no time can show a
          // bandwidth, and the case is held against PyTorch alone.
          row["no_bandwidth_goal"] = fmt::format(
              "its roofline floor, {:.2f} us, is below an empty kernel's {:.2f} us ({})", floor_us,
              launch_us, mode);
        } else if (e.roofline_goal_pct) {
          const double pct = b.time_over_floor ? 100.0 / *b.time_over_floor : 0.0;
          goals.push_back({{"goal", fmt::format("at least {:.0f}% of the roofline floor",
                                                *e.roofline_goal_pct)},
                           {"met", pct >= *e.roofline_goal_pct},
                           {"by", fmt::format("{:.1f}%", pct)}});
        } else {
          const double pct = b.copy_bandwidth_pct.value_or(0.0);
          const double goal = e.bandwidth_goal_pct.value_or(bandwidth_goal_pct);
          goals.push_back({{"goal", fmt::format("at least {:.0f}% of the copy bandwidth at the "
                                                "entry's largest case",
                                                goal)},
                           {"met", pct >= goal},
                           {"by", fmt::format("{:.1f}%", pct)}});
        }
      }
      const json torch = pytorch_times(pytorch, o.item.task, o.item.case_name, mode);
      if (!torch.empty()) row["pytorch"] = torch;
      double fastest = std::numeric_limits<double>::infinity();
      for (const char* method : {"eager", "compile"}) {
        if (!torch.contains(method) || !torch[method].contains("us")) continue;
        const double us = torch[method]["us"].get<double>();
        row["pytorch"][method]["ratio"] = us / time_us;  // above 1: blaster's candidate is faster
        over_pytorch[method].push_back(us / time_us);
        fastest = std::min(fastest, us);
      }
      if (std::isfinite(fastest)) {
        over_pytorch["fastest"].push_back(fastest / time_us);
        goals.push_back({{"goal", "at least as fast as the faster of PyTorch eager and compile"},
                         {"met", time_us <= fastest},
                         {"by", fmt::format("{:.2f}x", fastest / time_us)}});
      }
    }
    row["goals"] = goals;
    rows.push_back(std::move(row));
  }
  json means = {{"speedup_over_baseline", geometric_mean(speedups)}};
  for (const auto& [method, ratios] : over_pytorch) {
    means[fmt::format("ratio_to_pytorch_{}", method)] = geometric_mean(ratios);
  }
  json summary = {{"suite", s.name},
                  {"title", s.title},
                  {"protocol", protocol},
                  {"device", device},
                  {"blaster_revisions", revisions},
                  {"pytorch", pytorch.is_object() ? pytorch.value("environment", json()) : json()},
                  {"rows", rows},
                  {"geometric_means", means}};
  if (!not_run.empty()) {
    json left = json::array();
    for (const auto& item : not_run) {
      left.push_back({{"id", item.id}, {"task", item.task}, {"case", item.case_name}});
    }
    summary["not_run"] = std::move(left);
  }
  return summary;
}

std::string render_portfolio_markdown(const json& summary) {
  std::string md = fmt::format("# {}\n\n", summary.value("title", ""));
  const json& d = summary.at("device");
  if (d.is_object()) {
    md += fmt::format(
        "Device: {} ({}, {} SMs, SM clock {} MHz, driver {}, UUID {}), NVRTC {}. Measured at each "
        "run's start by blaster's own kernels: copy bandwidth {:.1f} GB/s, matrix rate {:.1f} "
        "TFLOP/s, empty-kernel launch floors hot {:.2f} us, cold {:.2f} us, graph {:.2f} us.\n\n",
        d.value("name", "?"), d.value("arch", "?"), d.value("sm_count", 0),
        d.value("sm_clock_khz", 0) / 1000, d.value("driver_version", 0), d.value("uuid", "?"),
        d.value("nvrtc", "?"),
        d.contains("copy_bandwidth") && d["copy_bandwidth"].is_object()
            ? d["copy_bandwidth"].value("bytes_per_second", 0.0) / 1e9
            : 0.0,
        d.contains("matrix_rate") && d["matrix_rate"].is_object()
            ? d["matrix_rate"].value("flops_per_second", 0.0) / 1e12
            : 0.0,
        d.contains("launch_floors") ? number_or(d["launch_floors"], "hot_us", 0) : 0.0,
        d.contains("launch_floors") ? number_or(d["launch_floors"], "cold_us", 0) : 0.0,
        d.contains("launch_floors") ? number_or(d["launch_floors"], "graph_us", 0) : 0.0);
    if (const auto it = d.find("gpus"); it != d.end() && it->is_array()) {
      const auto uuids = it->get<std::vector<std::string>>();
      md += fmt::format(
          "The cases ran on {} GPUs of this model (UUIDs {}); each run's bundle "
          "names its own, and every speedup pairs sessions of one GPU.\n\n",
          uuids.size(), fmt::join(uuids, ", "));
    }
  }
  const json& p = summary.at("protocol");
  md += fmt::format(
      "Protocol: suite {} (sha256 {}), {} sessions per case, each a fresh process per variant in "
      "alternating order, {} s apart (after the first, only the baseline and the {} fastest "
      "candidates; 0 means all); samples until the noise is at most {:.2g}%; speedup is the "
      "baseline's time over the candidate's in the same run, with a 95% paired-bootstrap "
      "interval; PyTorch ratios are PyTorch's time over the candidate's in the same mode (hot for "
      "graph), above 1 when the candidate is faster.\n\n",
      p.value("suite", ""), p.value("suite_sha256", "").substr(0, 16), p.value("sessions", 0),
      p.value("cooldown_s", 0.0), p.value("confirm_best", 0), 100.0 * p.value("max_noise", 0.0));
  if (const auto it = summary.find("blaster_revisions"); it != summary.end() && !it->empty()) {
    std::vector<std::string> names;
    for (const auto& r : *it) names.push_back(r.get<std::string>());
    md += fmt::format("Measured by blaster at revision {} (each case's in results.json).\n\n",
                      fmt::join(names, ", "));
  }
  if (const auto it = summary.find("not_run"); it != summary.end() && !it->empty()) {
    std::vector<std::string> left;
    for (const auto& item : *it) {
      left.push_back(fmt::format("{} {} {}", item.value("id", ""), item.value("task", ""),
                                 item.value("case", "")));
    }
    const std::size_t recorded = summary.at("rows").size();
    md += fmt::format(
        "Partial: {} of the {} cases are recorded; not run yet: {}. The geometric means and the "
        "goals below are those of the recorded cases.\n\n",
        recorded, recorded + left.size(), fmt::join(left, ", "));
  }
  md +=
      "| id | task | case | mode | baseline us | best candidate | best us | speedup [95%] | "
      "verdict | % copy BW | % roof | eager x | compile x | run |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string misses;
  std::string no_goal;
  // A method's failure is a traceback of many lines: the cell names it, a note under the table
  // gives its first line, and pytorch.json keeps the whole.
  std::vector<std::string> failures;
  for (const auto& row : summary.at("rows")) {
    const json& b = row.at("best");
    auto ratio = [&](const char* method) {
      if (!row.contains("pytorch") || !row["pytorch"].contains(method)) return std::string("-");
      const json& m = row["pytorch"][method];
      if (m.contains("ratio")) return fmt::format("{:.2f}", m["ratio"].get<double>());
      const std::string status = m.value("status", "-");
      if (!status.starts_with("failed")) return markdown_cell(status);
      // "failed: why" as the script writes it; the note gives the why.
      std::string_view why = status;
      why.remove_prefix(std::min(why.size(), why.find(':') + 1));
      why.remove_prefix(std::min(why.size(), why.find_first_not_of(' ')));
      failures.push_back(fmt::format("{} {} {} {}: {}", row.value("id", ""), row.value("task", ""),
                                     row.value("case", ""), method,
                                     first_line(why.empty() ? status : why)));
      return fmt::format("failed [{}]", failures.size());
    };
    // The floor over the time, or for a case timed in graph mode its time over an empty kernel's.
    std::string roof = "-";
    if (!b.is_null() && row.contains("over_launch_floor") && row["over_launch_floor"].is_number()) {
      roof = fmt::format("{:.2f}x empty", row["over_launch_floor"].get<double>());
    } else if (!b.is_null() && b.contains("time_over_floor") && b["time_over_floor"].is_number() &&
               b["time_over_floor"].get<double>() > 0) {
      roof = fmt::format("{:.1f}%", 100.0 / b["time_over_floor"].get<double>());
    }
    md += fmt::format(
        "| {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        row.value("id", ""), row.value("task", ""), row.value("case", ""), row.value("shape", ""),
        row.value("mode", ""), fixed(row, "baseline_us", "{:.2f}"),
        b.is_null() ? "none passed" : b.value("variant", ""),
        b.is_null() ? "-" : fixed(b, "time_us", "{:.2f}"),
        b.is_null()
            ? "-"
            : fmt::format("{} [{}, {}]", fixed(b, "speedup", "{:.2f}"),
                          fixed(b, "speedup_low", "{:.3f}"), fixed(b, "speedup_high", "{:.3f}")),
        b.is_null() ? "-" : b.value("verdict", ""),
        b.is_null() ? "-" : fixed(b, "copy_bandwidth_pct", "{:.1f}%"), roof, ratio("eager"),
        ratio("compile"),
        fmt::format("[{}]({})", row.value("run_id", 0), row.value("run_bundle", "")));
    if (row.contains("no_bandwidth_goal")) {
      no_goal += fmt::format("- {} {} case {}: no bandwidth goal, {}\n", row.value("id", ""),
                             row.value("task", ""), row.value("case", ""),
                             row["no_bandwidth_goal"].get<std::string>());
    }
    for (const auto& g : row.at("goals")) {
      if (g.value("met", false)) continue;
      misses += fmt::format("- {} {} case {}: missed \"{}\" ({})", row.value("id", ""),
                            row.value("task", ""), row.value("case", ""), g.value("goal", ""),
                            g.value("by", ""));
      // Why, where the counters were collected: the best variant's diagnosis.
      const json diagnosis = b.is_null() ? json() : b.value("diagnosis", json());
      misses += diagnosis.is_string() ? fmt::format("; {}\n", diagnosis.get<std::string>()) : "\n";
    }
  }
  if (!failures.empty()) {
    md += "\nPyTorch methods that failed (the whole message in pytorch.json):\n\n";
    for (std::size_t i = 0; i < failures.size(); ++i) {
      md += fmt::format("{}. {}\n", i + 1, failures[i]);
    }
  }
  const json& means = summary.at("geometric_means");
  md += "\nGeometric means:";
  for (const auto& [name, value] : means.items()) {
    md += value.is_number() ? fmt::format(" {} {:.3f};", name, value.get<double>())
                            : fmt::format(" {} -;", name);
  }
  md += "\n\n## Goals\n\n";
  md += misses.empty() ? "Every case meets every goal.\n" : misses;
  md += no_goal;
  md += tuned_tables_markdown(summary);
  md += provenance_markdown(summary);
  md += across_cards_markdown(summary);
  md +=
      "\nEach run's folder under runs/ is its own evidence bundle: its report and database rows, "
      "which cite by SHA-256 the samples, the gate's evidence and the cubins every number above "
      "comes from; those objects are in objects/, each once for all the runs. `blaster verify` "
      "checks this bundle; `sha256sum -c SHA256SUMS` checks it without blaster.\n";
  return md;
}

void write_portfolio_bundle(store& records, const suite& s,
                            const std::vector<portfolio_outcome>& outcomes, const json& summary,
                            const json& pytorch, const fs::path& out,
                            const ed25519_key* signing_key,
                            const std::vector<bundle_table>& tables) {
  static_cast<void>(write_bundle(
      out,
      [&](const fs::path& folder) {
        fs::create_directories(folder / "runs");
        for (const auto& o : outcomes) {
          static_cast<void>(export_bundle(records, o.run_id, folder / run_folder(o.item),
                                          signing_key, /*allow_incomplete=*/false,
                                          folder / "objects"));
        }
        write_file_atomically(folder / "results.json", summary.dump(1) + "\n");
        write_file_atomically(folder / "report.md", render_portfolio_markdown(summary));
        write_file_atomically(folder / "figure.svg", render_portfolio_svg(summary));
        write_file_atomically(folder / "suite.json", read_file(s.file));
        // What another home needs to continue the portfolio from this bundle (blaster merge).
        if (const json progress = portfolio_bundle_progress(records, s, outcomes);
            !progress.is_null()) {
          write_file_atomically(folder / bundle_progress_name, progress.dump(1) + "\n");
        }
        for (const bundle_table& t : tables) {
          fs::create_directories((folder / t.path).parent_path());
          write_file_atomically(folder / t.path, read_file(t.source));
        }
        if (pytorch.is_object()) {
          write_file_atomically(folder / "pytorch.json", pytorch.dump(1) + "\n");
        }
      },
      signing_key));
}

}  // namespace blaster
