#include "benchmarking/compare/remeasure.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "benchmarking/compare/run_reference.hpp"
#include "benchmarking/runner/bench_runner.hpp"
#include "benchmarking/runner/gpu_choice.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/private_folder.hpp"
#include "core/sha256.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool overlaps(const interval& a, const interval& b) { return a.low <= b.high && b.low <= a.high; }

// The verdict's speedup interval where it rests on two sessions or more; one session's bootstrap
// only draws that session again.
std::optional<interval> speedup_interval(const variant_result& r) {
  if (!r.verdict || r.verdict->sessions < 2) return std::nullopt;
  return r.verdict->speedup;
}

// An object the run cites, from the run bundle's objects/ or an enclosing bundle's (a portfolio
// keeps its runs' objects in one folder).
std::optional<std::string> bundle_object(const fs::path& run_folder, const fs::path& bundle,
                                         const std::string& sha256) {
  if (!is_sha256_hex(sha256)) return std::nullopt;
  const fs::path top = fs::weakly_canonical(bundle);
  for (fs::path at = fs::weakly_canonical(run_folder);; at = at.parent_path()) {
    if (auto bytes = read_file_if_exists(at / "objects" / sha256)) return bytes;
    if (at == top || at == at.parent_path()) return std::nullopt;
  }
}

// The run's records as its bundle holds them (run.json), or null where they do not parse.
json run_records(const fs::path& run_folder) {
  const std::optional<std::string> bytes = read_file_if_exists(run_folder / "run.json");
  if (!bytes) return nullptr;
  json j = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json(nullptr);
}

// The digest of the task's contract as the run recorded it, where it did.
std::string recorded_spec_sha256(const json& records, const std::string& task) {
  if (!records.is_object() || !records.contains("tasks") || !records["tasks"].is_array()) return {};
  for (const auto& t : records["tasks"]) {
    if (t.is_object() && t.value("name", "") == task) return t.value("spec_sha256", "");
  }
  return {};
}

// The command the run recorded: which case of a portfolio, which step of a session.
std::string recorded_command(const json& records) {
  if (!records.is_object() || !records.contains("runs") || !records["runs"].is_array() ||
      records["runs"].empty() || !records["runs"][0].is_object()) {
    return {};
  }
  const json& first = records["runs"][0];
  const auto command = first.find("command");
  return command != first.end() && command->is_string() ? command->get<std::string>()
                                                        : std::string{};
}

// What stops the checkout from running the claim as it was recorded, or "".
std::string unlike_recorded(const fs::path& root, const loaded_run& run, const json& records) {
  const fs::path spec = root / "tasks" / run.report.task / "task.json";
  const std::optional<std::string> bytes = read_file_if_exists(spec);
  if (!bytes) {
    return fmt::format(
        "the checkout {} has no task {}; give the checkout the bundle was made in "
        "(--root)",
        root.string(), run.report.task);
  }
  const std::string recorded = recorded_spec_sha256(records, run.report.task);
  if (!recorded.empty() && recorded != sha256_hex(*bytes)) {
    return fmt::format(
        "{} is not the task the run checked (task.json {} here, {} in the bundle); "
        "check out blaster {} and try again",
        spec.string(), sha256_hex(*bytes).substr(0, 12), recorded.substr(0, 12),
        run.report.blaster_revision);
  }
  return {};
}

std::string gpu_of(const bench_report& r) { return r.device ? r.device->name : "no GPU"; }

}  // namespace

std::string_view to_string(claim_status status) {
  switch (status) {
    case claim_status::holds:
      return "HOLDS";
    case claim_status::does_not_hold:
      return "DOES NOT HOLD";
    case claim_status::not_remeasured:
      return "NOT REMEASURED";
  }
  return "?";
}

bool bundle_remeasure::ok() const {
  return !claims.empty() && std::all_of(claims.begin(), claims.end(), [](const auto& c) {
    return c.status == claim_status::holds;
  });
}

std::vector<claim_ref> claims_of(const std::vector<loaded_run>& runs) {
  std::vector<claim_ref> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& results = runs[i].report.results;
    for (std::size_t k = 0; k < results.size(); ++k) {
      if (!results[k].baseline && confirmed_time(results[k])) out.push_back({i, k});
    }
  }
  return out;
}

std::vector<std::size_t> draw_claims(std::size_t available, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> order(available);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 draw(seed);
  std::shuffle(order.begin(), order.end(), draw);
  order.resize(std::min(count, available));
  return order;
}

void judge_claim(const bench_report& recorded, const variant_result& result,
                 const bench_report& fresh, remeasured_claim& claim) {
  claim.fresh_run_id = fresh.run_id;
  claim.recorded_us = *result.time_us;
  claim.recorded_uncertainty = relative_uncertainty(result, recorded.aa);
  claim.recorded_speedup = speedup_interval(result);
  auto not_remeasured = [&](std::string why) {
    claim.status = claim_status::not_remeasured;
    claim.note = std::move(why);
  };
  if (!fresh.gpu) return not_remeasured("no GPU ran it: " + fresh.gpu_unavailable);
  if (const auto d = key_differences(recorded, fresh); !d.empty()) {
    std::string text;
    for (const auto& x : d) {
      text += fmt::format("{}{} {} here, {} recorded", text.empty() ? "" : "; ", x.what, x.b, x.a);
    }
    return not_remeasured("the run is not the recorded one's kind: " + text);
  }
  const variant_result* recorded_baseline = baseline_result(recorded);
  const variant_result* fresh_baseline = baseline_result(fresh);
  if (recorded_baseline != nullptr && fresh_baseline != nullptr &&
      recorded_baseline->source_sha256 != fresh_baseline->source_sha256) {
    return not_remeasured(fmt::format(
        "the checkout's baseline ({}) is not the bundle's; check out blaster {} and try again",
        fresh_baseline->file, recorded.blaster_revision));
  }
  const auto match = std::find_if(fresh.results.begin(), fresh.results.end(), [&](const auto& r) {
    return !r.baseline && r.label == result.label;
  });
  if (match == fresh.results.end()) {
    return not_remeasured(fmt::format("the source gave no variant {} here", result.label));
  }
  const variant_result& now = *match;
  if (!result.sources_sha256.empty() && now.sources_sha256 != result.sources_sha256) {
    return not_remeasured(
        fmt::format("the checkout's shared headers are not the ones {} was compiled with; check "
                    "out blaster {} and try again",
                    result.label, recorded.blaster_revision));
  }
  if (now.status != "passed" || !now.time_us) {
    claim.status = claim_status::does_not_hold;
    claim.note = fmt::format("{} here: {} {}", now.status, to_string(now.reason), now.message);
    return;
  }
  claim.fresh_us = now.time_us;
  claim.fresh_uncertainty = relative_uncertainty(now, fresh.aa);
  claim.fresh_speedup = speedup_interval(now);
  claim.time_ratio = ratio_of(claim.recorded_us, claim.recorded_uncertainty, *now.time_us,
                              claim.fresh_uncertainty);
  std::vector<std::string> apart;
  if (claim.time_ratio->low > 1.0 || claim.time_ratio->high < 1.0) {
    apart.push_back(
        fmt::format("time {:.4g} us here vs {:.4g} us recorded (ratio {:.3f}, "
                    "interval [{:.3f}, {:.3f}] excludes 1)",
                    *now.time_us, claim.recorded_us, claim.time_ratio->ratio, claim.time_ratio->low,
                    claim.time_ratio->high));
  }
  if (claim.recorded_speedup && claim.fresh_speedup &&
      !overlaps(*claim.recorded_speedup, *claim.fresh_speedup)) {
    apart.push_back(fmt::format("speedup [{:.3f}, {:.3f}] here vs [{:.3f}, {:.3f}] recorded",
                                claim.fresh_speedup->low, claim.fresh_speedup->high,
                                claim.recorded_speedup->low, claim.recorded_speedup->high));
  }
  if (apart.empty()) {
    claim.status = claim_status::holds;
    if (claim.recorded_speedup.has_value() != claim.fresh_speedup.has_value()) {
      claim.note = "speedup not compared: one side has a single session";
    }
    return;
  }
  claim.status = claim_status::does_not_hold;
  for (const auto& a : apart) claim.note += (claim.note.empty() ? "" : "; ") + a;
}

bundle_remeasure remeasure_bundle(const remeasure_options& options) {
  bundle_remeasure out;
  const fs::path bundle = fs::absolute(options.bundle);
  const std::vector<loaded_run> runs = load_runs(bundle.string(), {});
  const fs::path executable =
      options.worker_executable.empty() ? this_executable() : options.worker_executable;
  // The GPU a bench without --gpus runs on: this process's device 0.
  const std::vector<gpu_lane> lanes = choose_gpus(gpu_choice{.ordinals = {0}}, executable);
  out.gpu = lanes.front().device.name;

  std::vector<claim_ref> all = claims_of(runs);
  if (all.empty()) {
    BLASTER_INPUT_ERROR("{}: no candidate was timed in its runs, so there is nothing to remeasure",
                        bundle.string());
  }
  std::set<std::string> models;
  std::vector<claim_ref> here;
  for (const auto& c : all) {
    const std::string model = gpu_of(runs[c.run].report);
    models.insert(model);
    if (model == out.gpu) here.push_back(c);
  }
  if (here.empty()) {
    std::string listed;
    for (const auto& m : models) listed += (listed.empty() ? "" : ", ") + m;
    BLASTER_INPUT_ERROR(
        "{}: its times were measured on {}; this machine's GPU is {}; remeasure on "
        "a GPU of the bundle's model",
        bundle.string(), listed, out.gpu);
  }
  out.claims_available = here.size();
  out.seed = options.seed ? *options.seed : std::random_device{}();

  // The re-judged sources and the store of their runs are the verification's scratch, not the
  // user's records.
  const private_folder scratch("blaster-remeasure");
  store records(scratch.path() / "home");
  for (const std::size_t pick : draw_claims(here.size(), options.claims, out.seed)) {
    const loaded_run& run = runs[here[pick].run];
    const variant_result& result = run.report.results[here[pick].result];
    remeasured_claim claim{.run = fs::relative(run.source, bundle).string(),
                           .task = run.report.task,
                           .case_name = run.report.timed_case,
                           .variant = result.label,
                           .recorded_us = *result.time_us};
    if (claim.run.empty() || claim.run == ".") claim.run = bundle.filename().string();
    const std::optional<std::string> source =
        bundle_object(run.source, bundle, result.source_sha256);
    const json records_json = run_records(run.source);
    claim.command = recorded_command(records_json);
    std::string why_not = unlike_recorded(options.root, run, records_json);
    // The bundle names the file; only its last component is used, and never one that is no
    // file's name.
    const fs::path name = fs::path(result.file).filename();
    if (why_not.empty() && !source) {
      why_not = fmt::format("its source {} is not in the bundle", result.source_sha256);
    } else if (why_not.empty() && (name.empty() || name == "." || name == "..")) {
      why_not = fmt::format("its run names its file '{}', which has no file name to judge it by",
                            result.file);
    }
    if (!why_not.empty()) {
      claim.status = claim_status::not_remeasured;
      claim.note = why_not;
      out.claims.push_back(std::move(claim));
      continue;
    }
    // The source under its own name: the candidate's name, and so the variant's label, is the
    // file's.
    const fs::path folder = scratch.path() / fmt::format("claim-{}", out.claims.size());
    fs::create_directories(folder);
    const fs::path file = folder / name;
    write_file_atomically(file, *source);

    bench_options o;
    o.root = options.root;
    o.task = run.report.task;
    o.candidates = {file};
    o.use_tuned = false;
    o.only_params = result.params;
    o.timing = run.report.timing;
    o.mode_given = true;
    o.timed_case = run.report.timed_case;
    o.sessions = run.report.sessions;
    o.worker_executable = executable;
    o.command = fmt::format("blaster verify {} --remeasure (claim {} of run {}: {})",
                            bundle.string(), out.claims.size() + 1, claim.run, result.label);
    spdlog::info("remeasuring {} case {} {} ({})", claim.task, claim.case_name, claim.variant,
                 claim.run);
    try {
      judge_claim(run.report, result, run_bench(o, records), claim);
    } catch (const input_error& e) {
      claim.status = claim_status::not_remeasured;
      claim.note = e.what();
    }
    out.claims.push_back(std::move(claim));
  }
  return out;
}

}  // namespace blaster
