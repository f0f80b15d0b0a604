#include "optimize/trajectory_claims.hpp"

#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/optimization_memory.hpp"
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
  // Each step row of the session against what its reply and its judging run give.
  void check_steps(std::int64_t run, const std::string& where, const json& session,
                   const std::vector<attempt>& steps);
  // The exported row against the one the records render.
  void compare_rows(std::int64_t run, const std::string& where, const json& stated,
                    const json& rendered);

  bundle_verification& v_;
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

void trajectory_checker::check_steps(std::int64_t run, const std::string& where,
                                     const json& session, const std::vector<attempt>& steps) {
  // The session's reward protocol; a session recorded before it had one rewarded the interval's
  // low end over every session.
  const bool has_protocol =
      session.contains("reward_sessions") && session["reward_sessions"].is_number_integer();
  const int protocol =
      has_protocol ? session["reward_sessions"].get<int>() : default_reward_sessions;
  const json recorded_steps = session.value("steps", json::array());
  std::optional<double> best_reward;
  std::optional<int> kept;
  std::vector<std::string> statuses;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const attempt& a = steps[i];
    const auto differs = [&](std::string_view field, const json& stated, const json& evidence,
                             std::string_view from) {
      if (same(stated, evidence)) return;
      claim(where, fmt::format("session {} step {}: {} is {}, {} gives {}", run, a.step, field,
                               shown(stated), from, shown(evidence)));
    };
    // The session's record and its rows say the same of each step.
    if (i < recorded_steps.size() && recorded_steps[i].is_object()) {
      const json row = to_json(a);
      for (const char* field : {"step", "status", "reason", "time_us", "speedup", "reward", "kept",
                                "source_sha256", "reply_sha256", "bench_run_id"}) {
        if (recorded_steps[i].contains(field)) {
          differs(field, row.value(field, json()), recorded_steps[i][field],
                  fmt::format("sessions/{}/session.json", run));
        }
      }
    }
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
    if (const auto* problem = std::get_if<reply_problem>(&parsed)) {
      expected.reason = problem->reason;
      expected.status = std::string(trajectory_status(expected.reason));
      differs("source_sha256", a.source_sha256, "", from);
      differs("bench_run_id", a.bench_run_id, 0, from);
    } else {
      const auto& p = std::get<proposal>(parsed);
      differs("source_sha256", a.source_sha256, sha256_hex(p.source), from);
      differs("sessions", a.sessions, p.sessions.value_or(0), from);
      const std::string results = fmt::format("runs/{}/results.json", a.bench_run_id);
      if (a.bench_run_id <= 0) {
        claim(where, fmt::format("session {} step {}: its reply is a candidate, and no judging "
                                 "run is named (bench_run_id {})",
                                 run, a.step, a.bench_run_id));
        statuses.push_back(a.status);
        continue;
      }
      const std::optional<json> report_json = json_file(results);
      std::optional<bench_report> report;
      if (report_json) {
        try {
          report = bench_report_from_json(*report_json);
        } catch (const std::exception& e) {
          claim(results, fmt::format("not a bench run's report: {}", e.what()));
        }
      }
      if (!report) {
        statuses.push_back(a.status);
        continue;
      }
      from = results;
      differs("bench_run_id", a.bench_run_id, report->run_id, from);
      fill_outcome(*report, expected, p.source, protocol);
      if (!has_protocol) {
        expected.reward = expected.speedup_low.value_or(0.0);
        expected.reward_sessions = a.reward_sessions;
      }
      expected.status = !report->gpu && expected.reason.empty()
                            ? std::string("unjudged")
                            : std::string(trajectory_status(expected.reason));
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
