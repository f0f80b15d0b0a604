#include "optimize/trajectory_claims.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/optimization_memory.hpp"
#include "optimize/optimize_loop.hpp"
#include "optimize/protocol.hpp"
#include "optimize/reward.hpp"
#include "optimize/trajectory.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view trajectories_file = "trajectories.jsonl";

// A value as a problem quotes it: short.
std::string shown(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 100) text = text.substr(0, 97) + "...";
  return text;
}

// Numbers that went through JSON and SQLite are the same doubles; a last-digit difference
// (another standard library's printing) is not a forged number.
bool same(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>();
    const double y = b.get<double>();
    return x == y || std::abs(x - y) <= 1e-12 * std::max(std::abs(x), std::abs(y));
  }
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key) || !same(value, b[key])) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

// Whether the session kept each baseline it timed alone: older sessions did not.
bool keeps_baselines(const json& session) {
  return session.contains("baselines") && session["baselines"].is_array();
}

class trajectory_checker {
 public:
  explicit trajectory_checker(bundle_verification& v) : v_(v) {}

  void claim(const std::string& path, std::string detail) {
    v_.problems.push_back({bundle_problem_kind::claim, path, std::move(detail), "", ""});
  }

  // An object of the bundle by its digest, only where its bytes hash to its name.
  std::optional<std::string> object(const std::string& digest) const {
    if (!is_sha256_hex(digest)) return std::nullopt;
    const fs::path path = v_.dir / "objects" / digest;
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(path, ec))) return std::nullopt;
    std::optional<std::string> bytes;
    try {
      bytes = read_file_if_exists(path);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (!bytes || sha256_hex(*bytes) != digest) return std::nullopt;
    return bytes;
  }

  std::optional<json> json_file(const std::string& path) {
    std::optional<std::string> text;
    try {
      text = read_file_if_exists(v_.dir / path);
    } catch (const std::exception&) {
      text.reset();
    }
    if (!text) {
      claim(path, "missing: the trajectory of its session cannot be recomputed without it");
      return std::nullopt;
    }
    json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      claim(path, "not JSON");
      return std::nullopt;
    }
    return j;
  }

  void check_row(std::size_t line_number, const std::string& line);

 private:
  // A stretch of the session, from a timing of the baseline alone (a resume times it again):
  // that timing as the session recorded it, and the device its run found.
  struct stretch {
    baseline_timing baseline;
    json device;  // device_brief of its run's report; null where it found none
  };
  // The stretch step `step` was asked or taken in: the last whose baseline was timed before it;
  // none where that was before blaster kept its baselines.
  static const stretch* stretch_of(const std::vector<stretch>& stretches, int step);
  // A judging run's report in the bundle (runs/<id>/results.json), read once; none, with a
  // claim, where it is missing or is not one.
  std::optional<bench_report> judging_report(std::int64_t id);
  // The session's baselines, each against the run that timed it.
  std::vector<stretch> check_baselines(std::int64_t run, const json& session);
  // A request the session wrote (a step's, or its last): its best is the step's parent, and
  // its baseline_us what the baseline's runs and the steps recorded before it give.
  void check_request(std::int64_t run, const std::string& where, const std::string& digest,
                     bool of_step, std::optional<int> parent, const std::vector<attempt>& steps,
                     const std::vector<stretch>& stretches);
  // The session's record of a step (its report's `steps`) against the step's row.
  void check_recorded_step(std::int64_t run, const std::string& where, const attempt& a,
                           const json& recorded);
  // What a step set out to improve: its parent's bound, else its stretch's baseline's.
  void check_improved_bound(std::int64_t run, const std::string& where, const attempt& a,
                            const std::vector<attempt>& steps,
                            const std::vector<stretch>& stretches);
  // What the session's record states of the whole: its baseline time, its device (as the last
  // stretch's runs found it, `device`) and its last request.
  void check_session_totals(std::int64_t run, const json& session,
                            const std::vector<attempt>& steps,
                            const std::vector<stretch>& stretches, const json& device);
  // Each step row of the session against what its reply and its judging run give.
  void check_steps(std::int64_t run, const std::string& where, const json& session,
                   const std::vector<attempt>& steps);
  // The exported row against the one the records render.
  void compare_rows(std::int64_t run, const std::string& where, const json& stated,
                    const json& rendered);

  bundle_verification& v_;
  std::map<std::int64_t, std::optional<bench_report>> reports_;
};

void trajectory_checker::compare_rows(std::int64_t run, const std::string& where,
                                      const json& stated, const json& rendered) {
  std::set<std::string> keys;
  for (const auto& [key, value] : stated.items()) keys.insert(key);
  for (const auto& [key, value] : rendered.items()) keys.insert(key);
  for (const std::string& key : keys) {
    const json said = stated.contains(key) ? stated[key] : json();
    const json given = rendered.contains(key) ? rendered[key] : json();
    if (same(said, given)) continue;
    if (key == "trace" && said.is_array() && given.is_array()) {
      for (std::size_t i = 0; i < std::max(said.size(), given.size()); ++i) {
        const json s = i < said.size() ? said[i] : json();
        const json g = i < given.size() ? given[i] : json();
        if (same(s, g)) continue;
        const json step = g.is_object() ? g.value("step", json(i + 1)) : s.value("step", json(i + 1));
        if (!s.is_object() || !g.is_object()) {
          claim(where, fmt::format("session {} step {}: trace[{}] is {}, the records give {}", run,
                                   shown(step), i, shown(s), shown(g)));
          continue;
        }
        std::set<std::string> fields;
        for (const auto& [f, x] : s.items()) fields.insert(f);
        for (const auto& [f, x] : g.items()) fields.insert(f);
        for (const std::string& f : fields) {
          const json a = s.contains(f) ? s[f] : json();
          const json b = g.contains(f) ? g[f] : json();
          if (!same(a, b)) {
            claim(where, fmt::format("session {} step {}: trace {} is {}, the records give {}", run,
                                     shown(step), f, shown(a), shown(b)));
          }
        }
      }
      continue;
    }
    if (key == "messages" && said.is_array() && given.is_array()) {
      for (std::size_t i = 0; i < std::max(said.size(), given.size()); ++i) {
        const json s = i < said.size() ? said[i] : json();
        const json g = i < given.size() ? given[i] : json();
        if (same(s, g)) continue;
        const json& any = g.is_object() ? g : s;
        const std::string turn =
            any.is_object() && any.contains("blaster_step")
                ? fmt::format("step {}: messages[{}]", shown(any["blaster_step"]), i)
                : fmt::format("messages[{}]", i);
        claim(where, fmt::format("session {} {}: the turn is {}, the records give {}", run, turn,
                                 shown(s), shown(g)));
      }
      continue;
    }
    claim(where, fmt::format("session {}: {} is {}, the records give {}", run, key, shown(said),
                             shown(given)));
  }
}

const trajectory_checker::stretch* trajectory_checker::stretch_of(
    const std::vector<stretch>& stretches, int step) {
  const stretch* in = nullptr;
  for (const stretch& s : stretches) {
    if (s.baseline.taken_before < step) in = &s;
  }
  return in;
}

std::optional<bench_report> trajectory_checker::judging_report(std::int64_t id) {
  if (const auto cached = reports_.find(id); cached != reports_.end()) return cached->second;
  const std::string results = fmt::format("runs/{}/results.json", id);
  std::optional<bench_report> report;
  if (const std::optional<json> j = json_file(results)) {
    try {
      report = bench_report_from_json(*j);
    } catch (const std::exception& e) {
      claim(results, fmt::format("not a bench run's report: {}", e.what()));
    }
  }
  reports_.emplace(id, report);
  return report;
}

std::vector<trajectory_checker::stretch> trajectory_checker::check_baselines(std::int64_t run,
                                                                             const json& session) {
  const std::string record = fmt::format("sessions/{}/session.json", run);
  std::vector<stretch> stretches;
  baseline_timing last;  // as recorded
  for (const json& recorded : session.at("baselines")) {
    stretch s{.baseline = baseline_timing_from_json(recorded), .device = nullptr};
    last = s.baseline;
    baseline_timing& b = s.baseline;
    const std::size_t n = stretches.size() + 1;
    if (!stretches.empty() && (b.taken_before < stretches.back().baseline.taken_before ||
                               b.recorded_before < stretches.back().baseline.recorded_before)) {
      claim(record,
            fmt::format("session {}: baseline {} begins before baseline {}", run, n, n - 1));
    }
    if (b.recorded_before > b.taken_before) {
      claim(record, fmt::format("session {}: baseline {} has more steps recorded ({}) than taken "
                                "({}) before it",
                                run, n, b.recorded_before, b.taken_before));
    }
    if (b.bench_run_id <= 0) {
      if (b.time_us) {
        claim(record, fmt::format("session {}: baseline {} states time_us {} and names no run that "
                                  "timed it",
                                  run, n, *b.time_us));
      }
    } else if (const std::optional<bench_report> report = judging_report(b.bench_run_id)) {
      const baseline_timing given = baseline_timing_of(*report);
      const std::string from = fmt::format("runs/{}/results.json", b.bench_run_id);
      const auto differs = [&](std::string_view field, const json& stated, const json& evidence) {
        if (same(stated, evidence)) return;
        claim(record, fmt::format("session {}: baseline {} (run {}): {} is {}, {} gives {}", run, n,
                                  b.bench_run_id, field, shown(stated), from, shown(evidence)));
      };
      differs("time_us", optional_number(b.time_us), optional_number(given.time_us));
      differs("bound", b.bound, given.bound);
      differs("diagnosis", b.diagnosis, given.diagnosis);
      // What follows from the baseline (the requests' time, the steps' improved_bound, the
      // session's time) is held to the run, so that each claim names where it first differs.
      b.time_us = given.time_us;
      b.bound = given.bound;
      s.device = device_brief(*report);
    }
    stretches.push_back(std::move(s));
  }
  // The last stretch's baseline is the one the record names on its own.
  if (session.contains("baseline")) {
    const baseline_timing named = baseline_timing_from_json(session["baseline"]);
    if (stretches.empty() || named.bench_run_id != last.bench_run_id ||
        !same(optional_number(named.time_us), optional_number(last.time_us)) ||
        named.bound != last.bound) {
      claim(record, fmt::format("session {}: baseline is {}, not the last of its baselines", run,
                                shown(session["baseline"])));
    }
  }
  return stretches;
}

void trajectory_checker::check_request(std::int64_t run, const std::string& where,
                                       const std::string& digest, bool of_step,
                                       std::optional<int> parent, const std::vector<attempt>& steps,
                                       const std::vector<stretch>& stretches) {
  const std::optional<std::string> bytes = object(digest);
  if (!bytes) return;  // rendering the row names a missing object
  const json request = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("step") || !request["step"].is_number_integer()) {
    claim(where, fmt::format("session {}: request objects/{} is not a request blaster wrote", run,
                             digest.substr(0, 12)));
    return;
  }
  const int step = request["step"].get<int>();
  const std::string said = fmt::format("session {} step {}: its request", run, step);
  // The best when the proposer was asked is the step's parent.
  if (of_step) {
    const json best = request.value("best", json());
    const json asked = best.is_object() ? best.value("step", json()) : json();
    if (!same(parent ? json(*parent) : json(), asked)) {
      claim(where, fmt::format("session {} step {}: parent is {}, its request's best is step {}",
                               run, step, parent ? std::to_string(*parent) : "none", shown(asked)));
    }
  }
  // The baseline's time it carried: its stretch's baseline timed alone, or the last step
  // recorded before it that timed one (steps are recorded in step order, so those before the
  // first still under way, in_flight).
  const stretch* in = stretch_of(stretches, step);
  if (in == nullptr) return;  // asked in a stretch recorded before blaster kept its baseline
  int last_recorded = step - 1;
  for (const json& u : request.value("in_flight", json::array())) {
    if (u.is_object() && u.contains("step") && u["step"].is_number_integer()) {
      last_recorded = std::min(last_recorded, u["step"].get<int>() - 1);
    }
  }
  std::optional<double> expected;
  const auto recorded_before = static_cast<std::size_t>(std::max(0, in->baseline.recorded_before));
  for (std::size_t i = 0; i < steps.size() && i < recorded_before; ++i) {
    if (steps[i].baseline_us) expected = steps[i].baseline_us;
  }
  if (in->baseline.time_us) expected = in->baseline.time_us;
  for (std::size_t i = recorded_before; i < steps.size() && steps[i].step <= last_recorded; ++i) {
    if (steps[i].baseline_us) expected = steps[i].baseline_us;
  }
  const json carried = request.value("baseline_us", json());
  if (!same(carried, optional_number(expected))) {
    claim(where, fmt::format("{} carried baseline_us {}, its baseline's run ({}) and the steps "
                             "recorded before it give {}",
                             said, shown(carried),
                             in->baseline.bench_run_id > 0
                                 ? fmt::format("runs/{}/results.json", in->baseline.bench_run_id)
                                 : std::string("none"),
                             shown(optional_number(expected))));
  }
}

void trajectory_checker::check_recorded_step(std::int64_t run, const std::string& where,
                                             const attempt& a, const json& recorded) {
  if (!recorded.is_object()) return;
  const json row = to_json(a);
  for (const char* field : {"step", "status", "reason", "time_us", "baseline_us", "speedup",
                            "reward", "kept", "source_sha256", "reply_sha256", "bench_run_id",
                            "parent", "gpu", "bound", "improved_bound"}) {
    if (!recorded.contains(field) || same(row.value(field, json()), recorded[field])) continue;
    claim(where,
          fmt::format("session {} step {}: {} is {}, sessions/{}/session.json gives {}", run,
                      a.step, field, shown(row.value(field, json())), run, shown(recorded[field])));
  }
}

void trajectory_checker::check_improved_bound(std::int64_t run, const std::string& where,
                                              const attempt& a, const std::vector<attempt>& steps,
                                              const std::vector<stretch>& stretches) {
  const auto differs = [&](const std::string& given, const std::string& from) {
    if (a.improved_bound == given) return;
    claim(where, fmt::format("session {} step {}: improved_bound is {}, {} gives {}", run, a.step,
                             shown(a.improved_bound), from, shown(given)));
  };
  if (a.parent) {
    const auto parent = std::find_if(steps.begin(), steps.end(),
                                     [&](const attempt& p) { return p.step == *a.parent; });
    if (parent == steps.end() || parent->step >= a.step) {
      claim(where, fmt::format("session {} step {}: parent is step {}, which is no earlier step",
                               run, a.step, *a.parent));
    } else {
      differs(parent->bound, fmt::format("its parent step {}", *a.parent));
    }
    return;
  }
  const stretch* taken_in = stretch_of(stretches, a.step);
  if (taken_in == nullptr) return;  // taken before blaster kept the baselines
  differs(taken_in->baseline.bound,
          taken_in->baseline.bench_run_id > 0
              ? fmt::format("runs/{}/results.json (its baseline)", taken_in->baseline.bench_run_id)
              : std::string("its stretch's baseline"));
}

void trajectory_checker::check_session_totals(std::int64_t run, const json& session,
                                              const std::vector<attempt>& steps,
                                              const std::vector<stretch>& stretches,
                                              const json& device) {
  const std::string record = fmt::format("sessions/{}/session.json", run);
  if (!keeps_baselines(session)) {
    // Recorded before the baselines were kept: its time is the last step's that timed one.
    std::optional<double> last;
    for (const attempt& a : steps) {
      if (a.baseline_us) last = a.baseline_us;
    }
    if (!same(session.value("baseline_us", json()), optional_number(last))) {
      claim(record,
            fmt::format("session {}: baseline_us is {}, its steps give {}", run,
                        shown(session.value("baseline_us", json())), shown(optional_number(last))));
    }
    return;
  }
  // The baseline's time the trajectory states (baseline_ms), and the device it names (gpu,
  // arch), as the judging runs give them.
  std::vector<baseline_timing> timed;
  for (const stretch& s : stretches) timed.push_back(s.baseline);
  const json baseline_us = optional_number(session_baseline_us(steps, timed));
  if (!same(session.value("baseline_us", json()), baseline_us)) {
    claim(record,
          fmt::format("session {}: baseline_us is {}, its steps' and baselines' runs give {}", run,
                      shown(session.value("baseline_us", json())), shown(baseline_us)));
  }
  const json stated = session.value("device", json());
  for (const char* field : {"name", "model", "arch"}) {
    const json said = stated.is_object() ? stated.value(field, json()) : json();
    const json given = device.is_object() ? device.value(field, json()) : json();
    if (!same(said, given)) {
      claim(record, fmt::format("session {}: device {} is {}, its judging runs give {}", run, field,
                                shown(said), shown(given)));
    }
  }
  const std::string final_request = session.value("final_request_sha256", "");
  if (!final_request.empty()) {
    check_request(run, record, final_request, /*of_step=*/false, std::nullopt, steps, stretches);
  }
}

void trajectory_checker::check_steps(std::int64_t run, const std::string& where,
                                     const json& session, const std::vector<attempt>& steps) {
  // The session's reward protocol; a session recorded before it had one rewarded the interval's
  // low end over every session.
  const bool has_protocol =
      session.contains("reward_sessions") && session["reward_sessions"].is_number_integer();
  const int protocol =
      has_protocol ? session["reward_sessions"].get<int>() : default_reward_sessions;
  const json recorded_steps = session.value("steps", json::array());
  // A session that kept each baseline it timed alone (baselines) is held to those runs: its
  // baseline time, its device, and what each step set out from. One recorded before is held to
  // what its record has.
  const bool has_baselines = keeps_baselines(session);
  const std::vector<stretch> stretches =
      has_baselines ? check_baselines(run, session) : std::vector<stretch>{};
  std::optional<double> best_reward;
  std::optional<int> kept;
  std::vector<std::string> statuses;
  // The device the session knew when each step was recorded, as the judging runs found it: each
  // stretch starts from its baseline's run, and each run that found a GPU is the latest.
  std::size_t next_stretch = 0;
  json device = nullptr;
  const auto device_model = [&] {
    return device.is_object() ? device.value("model", std::string()) : std::string();
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const attempt& a = steps[i];
    while (next_stretch < stretches.size() &&
           stretches[next_stretch].baseline.recorded_before <= static_cast<int>(i)) {
      device = stretches[next_stretch++].device;
    }
    const auto differs = [&](std::string_view field, const json& stated, const json& evidence,
                             std::string_view from) {
      if (same(stated, evidence)) return;
      claim(where, fmt::format("session {} step {}: {} is {}, {} gives {}", run, a.step, field,
                               shown(stated), from, shown(evidence)));
    };
    // Whether the step was recorded with the memory's keys (gpu, bound), which older sessions'
    // steps got from their diagnosis when the store was migrated.
    const bool keyed =
        has_baselines || (i < recorded_steps.size() && recorded_steps[i].is_object() &&
                          recorded_steps[i].contains("bound"));
    if (i < recorded_steps.size()) check_recorded_step(run, where, a, recorded_steps[i]);
    if (!a.request_sha256.empty()) {
      check_request(run, where, a.request_sha256, /*of_step=*/true, a.parent, steps, stretches);
    }
    if (has_baselines) check_improved_bound(run, where, a, steps, stretches);
    const std::optional<std::string> reply = object(a.reply_sha256);
    if (!reply) {
      claim(where, fmt::format("session {} step {}: its reply objects/{} is missing or changed",
                               run, a.step, a.reply_sha256));
      statuses.push_back(a.status);
      continue;
    }
    const parsed_reply parsed = parse_reply(*reply);
    attempt expected;
    expected.sessions = a.sessions;
    std::string from = fmt::format("its reply objects/{}", a.reply_sha256.substr(0, 12));
    if (std::holds_alternative<stop_request>(parsed)) {
      claim(where, fmt::format("session {} step {}: its reply is a stop line, which is no step",
                               run, a.step));
      statuses.push_back(a.status);
      continue;
    }
    // A step no run judged on a GPU has the session's, where the records say which it was.
    bool gpu_known = has_baselines && next_stretch > 0;
    bool gpu_of_run = false;
    if (const auto* problem = std::get_if<reply_problem>(&parsed)) {
      expected.reason = problem->reason;
      expected.status = std::string(trajectory_status(expected.reason));
      differs("source_sha256", a.source_sha256, "", from);
      differs("bench_run_id", a.bench_run_id, 0, from);
    } else {
      const auto& p = std::get<proposal>(parsed);
      differs("source_sha256", a.source_sha256, sha256_hex(p.source), from);
      differs("sessions", a.sessions, p.sessions.value_or(0), from);
      if (a.bench_run_id <= 0) {
        claim(where, fmt::format("session {} step {}: its reply is a candidate, and no judging "
                                 "run is named (bench_run_id {})",
                                 run, a.step, a.bench_run_id));
        statuses.push_back(a.status);
        continue;
      }
      const std::optional<bench_report> report = judging_report(a.bench_run_id);
      if (!report) {
        statuses.push_back(a.status);
        continue;
      }
      from = fmt::format("runs/{}/results.json", a.bench_run_id);
      differs("bench_run_id", a.bench_run_id, report->run_id, from);
      fill_outcome(*report, expected, p.source, protocol);
      if (!has_protocol) {
        expected.reward = expected.speedup_low.value_or(0.0);
        expected.reward_sessions = a.reward_sessions;
      }
      expected.status = !report->gpu && expected.reason.empty()
                            ? std::string("unjudged")
                            : std::string(trajectory_status(expected.reason));
      if (report->device) {
        device = device_brief(*report);
        gpu_known = gpu_of_run = true;
      }
      differs("variant", a.variant, expected.variant, from);
      differs("params", a.params, expected.params, from);
      differs("baseline_us", optional_number(a.baseline_us), optional_number(expected.baseline_us),
              from);
      differs("speedup_low", optional_number(a.speedup_low), optional_number(expected.speedup_low),
              from);
      differs("speedup_high", optional_number(a.speedup_high),
              optional_number(expected.speedup_high), from);
      differs("reward_sessions", a.reward_sessions, expected.reward_sessions, from);
    }
    differs("status", a.status, expected.status, from);
    differs("reason", a.reason, expected.reason, from);
    differs("time_us", optional_number(a.time_us), optional_number(expected.time_us), from);
    differs("speedup", optional_number(a.speedup), optional_number(expected.speedup), from);
    differs("reward", a.reward, expected.reward, from);
    // The memory's keys: the GPU that judged it (the session's, for a step no run judged on
    // one), and the bound of its kernel.
    if (expected.gpu.empty()) expected.gpu = device_model();
    if (gpu_known) {
      differs("gpu", gpu_model(a.gpu), expected.gpu,
              gpu_of_run ? std::string_view(from) : std::string_view("the session's device"));
    }
    if (keyed) differs("bound", a.bound, expected.bound, from);
    // The best is the step whose reward passed every earlier one's.
    if (expected.status == "ok" && (!best_reward || expected.reward > *best_reward)) {
      best_reward = expected.reward;
      kept = a.step;
    }
    statuses.push_back(expected.status);
  }
  for (const attempt& a : steps) {
    if (a.kept != (kept && *kept == a.step)) {
      claim(where, fmt::format("session {} step {}: kept is {}, the rewards make step {} the best",
                               run, a.step, a.kept ? "true" : "false",
                               kept ? std::to_string(*kept) : std::string("none")));
    }
  }
  const json best = session.value("best", json());
  if (!same(best, kept ? json(*kept) : json(nullptr))) {
    claim(fmt::format("sessions/{}/session.json", run),
          fmt::format("session {}: best is step {}, the rewards make it {}", run, shown(best),
                      kept ? fmt::format("step {}", *kept) : std::string("none")));
  }
  // The device the session knew when it ended: its last stretch's.
  while (next_stretch < stretches.size()) device = stretches[next_stretch++].device;
  check_session_totals(run, session, steps, stretches, device);
}

void trajectory_checker::check_row(std::size_t line_number, const std::string& line) {
  const std::string where = std::string(trajectories_file);
  const json stated = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!stated.is_object() || !stated.contains("blaster_run_id") ||
      !stated["blaster_run_id"].is_number_integer()) {
    claim(where, fmt::format("line {}: not a session exported by blaster (no blaster_run_id)",
                             line_number));
    return;
  }
  const std::int64_t run = stated["blaster_run_id"].get<std::int64_t>();
  const std::string folder = fmt::format("sessions/{}", run);
  std::optional<std::string> session_text;
  try {
    session_text = read_file_if_exists(v_.dir / folder / "session.json");
  } catch (const std::exception&) {
    session_text.reset();
  }
  if (!session_text) {
    claim(folder + "/session.json",
          fmt::format("missing: line {} (session {}) cannot be recomputed", line_number, run));
    return;
  }
  const std::optional<json> records = json_file(folder + "/run.json");
  if (!records) return;
  session_records s{.run_id = run,
                    .session = json::parse(*session_text, nullptr, /*allow_exceptions=*/false),
                    .session_sha256 = sha256_hex(*session_text),
                    .steps = {}};
  const json runs = records->value("runs", json::array());
  if (!runs.is_array() || runs.empty() || !runs[0].is_object() ||
      runs[0].value("report_sha256", json()) != json(s.session_sha256)) {
    claim(folder + "/run.json",
          fmt::format("session {}: its runs row does not cite session.json ({}) as its report",
                      run, s.session_sha256));
  }
  for (const json& row : records->value("optimize_steps", json::array())) {
    if (!row.is_object()) continue;
    // Rows of a store before version 7 have no request digest column at all (a row of a step
    // with no request holds null): their transcript and reward protocol were never kept.
    if (!row.contains("request_sha256")) {
      claim(folder + "/run.json",
            fmt::format("session {} was recorded by a blaster that kept neither its requests nor "
                        "its reward protocol, so its trajectory cannot be recomputed; export it "
                        "again from its home with this blaster",
                        run));
      return;
    }
    s.steps.push_back(attempt_from_row(row));
  }
  std::sort(s.steps.begin(), s.steps.end(),
            [](const attempt& x, const attempt& y) { return x.step < y.step; });
  check_steps(run, folder + "/run.json", s.session, s.steps);
  json rendered;
  try {
    rendered = render_trajectory(s, [&](const std::string& digest) { return object(digest); });
  } catch (const std::exception& e) {
    claim(where, fmt::format("line {} (session {}): cannot be rendered from the bundle: {}",
                             line_number, run, e.what()));
    return;
  }
  compare_rows(run, where, stated, rendered);
}

}  // namespace

void check_trajectory_claims(bundle_verification& v) {
  std::optional<std::string> text;
  try {
    text = read_file_if_exists(v.dir / std::string(trajectories_file));
  } catch (const std::exception&) {
    return;  // unreadable: verify_bundle names it
  }
  if (!text) return;
  trajectory_checker checker(v);
  std::istringstream lines(*text);
  std::size_t number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    checker.check_row(number, line);
  }
}

}  // namespace blaster
