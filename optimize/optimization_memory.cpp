#include "optimize/optimization_memory.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "evidence/detail/row_binding.hpp"
#include "evidence/store.hpp"
#include "optimize/device_brief.hpp"
#include "optimize/untrusted_text.hpp"

namespace blaster {
namespace {

using detail::bind_int_or_null;
using detail::bind_real_or_null;
using detail::bind_text_or_null;

constexpr std::string_view step_columns =
    "s.step, s.parent_step, s.hypothesis, s.kind, s.tags_json, s.status, s.reason, s.message, "
    "s.variant, s.params_json, s.time_us, s.baseline_us, s.speedup, s.speedup_low, "
    "s.speedup_high, s.reward, s.diagnosis, s.kept, s.at_s, s.elapsed_s, s.bench_run_id, "
    "s.source_sha256, s.reply_sha256, s.request_sha256, s.log, s.error_line, s.roofline_pct, "
    "s.sessions, s.reward_sessions, s.answer_sha256, s.gpu, s.bound, s.improved_bound";

std::optional<double> real_or_null(const statement& row, int column) {
  if (row.column_is_null(column)) return std::nullopt;
  return row.column_double(column);
}

// A text column as the rest of blaster may use it: a home written by an older blaster can hold
// bytes that are not UTF-8 (a proposer's reply quoted in a message), which no JSON form takes.
std::string text_of(const statement& row, int column) {
  return valid_utf8(row.column_text(column));
}

// A JSON column that must hold an array or object of strings: what does not parse as one is
// left out rather than failing every later read of the memory.
template <typename T>
T json_column(const statement& row, int column) {
  if (row.column_is_null(column)) return T{};
  const auto j = nlohmann::json::parse(text_of(row, column), nullptr, false);
  try {
    return j.get<T>();
  } catch (const nlohmann::json::exception&) {
    return T{};
  }
}

// step_columns, read from `first` on.
attempt read_step(const statement& row, int first) {
  attempt a;
  a.step = static_cast<int>(row.column_int64(first));
  if (!row.column_is_null(first + 1)) a.parent = static_cast<int>(row.column_int64(first + 1));
  a.hypothesis = text_of(row, first + 2);
  a.kind = text_of(row, first + 3);
  a.tags = json_column<std::vector<std::string>>(row, first + 4);
  a.status = text_of(row, first + 5);
  a.reason = text_of(row, first + 6);
  a.message = text_of(row, first + 7);
  a.variant = text_of(row, first + 8);
  a.params = json_column<std::map<std::string, std::string>>(row, first + 9);
  a.time_us = real_or_null(row, first + 10);
  a.baseline_us = real_or_null(row, first + 11);
  a.speedup = real_or_null(row, first + 12);
  a.speedup_low = real_or_null(row, first + 13);
  a.speedup_high = real_or_null(row, first + 14);
  a.reward = row.column_double(first + 15);
  a.diagnosis = text_of(row, first + 16);
  a.kept = row.column_int64(first + 17) != 0;
  a.at_s = row.column_double(first + 18);
  a.elapsed_s = row.column_double(first + 19);
  a.bench_run_id = row.column_is_null(first + 20) ? 0 : row.column_int64(first + 20);
  a.source_sha256 = row.column_text(first + 21);
  a.reply_sha256 = row.column_text(first + 22);
  a.request_sha256 = row.column_text(first + 23);
  a.log = text_of(row, first + 24);
  if (!row.column_is_null(first + 25)) a.error_line = static_cast<int>(row.column_int64(first + 25));
  a.roofline_pct = real_or_null(row, first + 26);
  a.sessions = row.column_is_null(first + 27) ? 0 : static_cast<int>(row.column_int64(first + 27));
  a.reward_sessions =
      row.column_is_null(first + 28) ? 0 : static_cast<int>(row.column_int64(first + 28));
  a.answer_sha256 = row.column_text(first + 29);
  // A step migrated from an older store holds the device's name: read as its model.
  a.gpu = row.column_is_null(first + 30) ? std::string() : gpu_model(text_of(row, first + 30));
  a.bound = text_of(row, first + 31);
  a.improved_bound = text_of(row, first + 32);
  return a;
}

}  // namespace

attempt attempt_from_row(const nlohmann::json& row) {
  using json = nlohmann::json;
  const auto text = [&](const char* key) {
    return row.contains(key) && row[key].is_string() ? valid_utf8(row[key].get<std::string>())
                                                     : std::string();
  };
  const auto real = [&](const char* key) -> std::optional<double> {
    if (!row.contains(key) || !row[key].is_number()) return std::nullopt;
    return row[key].get<double>();
  };
  const auto whole = [&](const char* key) -> std::optional<std::int64_t> {
    if (!row.contains(key) || !row[key].is_number_integer()) return std::nullopt;
    return row[key].get<std::int64_t>();
  };
  const auto parsed = [&](const char* key) {
    return json::parse(text(key), nullptr, /*allow_exceptions=*/false);
  };
  attempt a;
  a.step = static_cast<int>(whole("step").value_or(0));
  if (const auto p = whole("parent_step")) a.parent = static_cast<int>(*p);
  a.hypothesis = text("hypothesis");
  a.kind = text("kind");
  try {
    a.tags = parsed("tags_json").get<std::vector<std::string>>();
  } catch (const json::exception&) {
    a.tags.clear();
  }
  a.status = text("status");
  a.reason = text("reason");
  a.message = text("message");
  a.variant = text("variant");
  try {
    const json params = parsed("params_json");
    if (params.is_object()) a.params = params.get<std::map<std::string, std::string>>();
  } catch (const json::exception&) {
    a.params.clear();
  }
  a.time_us = real("time_us");
  a.baseline_us = real("baseline_us");
  a.speedup = real("speedup");
  a.speedup_low = real("speedup_low");
  a.speedup_high = real("speedup_high");
  a.reward = real("reward").value_or(0.0);
  a.diagnosis = text("diagnosis");
  a.kept = whole("kept").value_or(0) != 0;
  a.at_s = real("at_s").value_or(0.0);
  a.elapsed_s = real("elapsed_s").value_or(0.0);
  a.bench_run_id = whole("bench_run_id").value_or(0);
  a.source_sha256 = text("source_sha256");
  a.reply_sha256 = text("reply_sha256");
  a.request_sha256 = text("request_sha256");
  a.answer_sha256 = text("answer_sha256");
  a.log = text("log");
  if (const auto line = whole("error_line")) a.error_line = static_cast<int>(*line);
  a.roofline_pct = real("roofline_pct");
  a.sessions = static_cast<int>(whole("sessions").value_or(0));
  a.reward_sessions = static_cast<int>(whole("reward_sessions").value_or(0));
  a.gpu = text("gpu");
  a.bound = text("bound");
  a.improved_bound = text("improved_bound");
  return a;
}

void optimization_memory::record(std::int64_t run_id, const std::string& task,
                                 const std::string& case_name, const attempt& a) {
  records_.require_object("optimize_steps.source_sha256", a.source_sha256);
  records_.require_object("optimize_steps.reply_sha256", a.reply_sha256);
  records_.require_object("optimize_steps.request_sha256", a.request_sha256);
  statement s = records_.db().prepare(
      "INSERT INTO optimize_steps(run_id, step, parent_step, task, case_name, hypothesis, kind, "
      "tags_json, status, reason, message, variant, params_json, time_us, baseline_us, speedup, "
      "speedup_low, speedup_high, reward, diagnosis, kept, at_s, elapsed_s, bench_run_id, "
      "source_sha256, reply_sha256, request_sha256, log, error_line, roofline_pct, sessions, "
      "reward_sessions, gpu, bound, improved_bound) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
      "?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, "
      "?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35)");
  s.bind(1, run_id);
  s.bind(2, a.step);
  bind_int_or_null(s, 3, a.parent ? std::optional<std::int64_t>(*a.parent) : std::nullopt);
  s.bind(4, task);
  bind_text_or_null(s, 5, case_name);
  s.bind(6, a.hypothesis);
  s.bind(7, a.kind);
  s.bind(8, nlohmann::json(a.tags).dump());
  s.bind(9, a.status);
  bind_text_or_null(s, 10, a.reason);
  bind_text_or_null(s, 11, a.message);
  bind_text_or_null(s, 12, a.variant);
  bind_text_or_null(s, 13, a.params.empty() ? std::string() : nlohmann::json(a.params).dump());
  bind_real_or_null(s, 14, a.time_us);
  bind_real_or_null(s, 15, a.baseline_us);
  bind_real_or_null(s, 16, a.speedup);
  bind_real_or_null(s, 17, a.speedup_low);
  bind_real_or_null(s, 18, a.speedup_high);
  s.bind(19, a.reward);
  bind_text_or_null(s, 20, a.diagnosis);
  s.bind(21, a.kept ? 1 : 0);
  s.bind(22, a.at_s);
  s.bind(23, a.elapsed_s);
  bind_int_or_null(s, 24, a.bench_run_id > 0 ? std::optional(a.bench_run_id) : std::nullopt);
  bind_text_or_null(s, 25, a.source_sha256);
  bind_text_or_null(s, 26, a.reply_sha256);
  bind_text_or_null(s, 27, a.request_sha256);
  bind_text_or_null(s, 28, a.log);
  bind_int_or_null(s, 29, a.error_line ? std::optional<std::int64_t>(*a.error_line) : std::nullopt);
  bind_real_or_null(s, 30, a.roofline_pct);
  bind_int_or_null(s, 31, a.sessions > 0 ? std::optional<std::int64_t>(a.sessions) : std::nullopt);
  bind_int_or_null(s, 32, a.reward_sessions > 0 ? std::optional<std::int64_t>(a.reward_sessions)
                                                : std::nullopt);
  bind_text_or_null(s, 33, a.gpu);
  bind_text_or_null(s, 34, a.bound);
  bind_text_or_null(s, 35, a.improved_bound);
  s.step();
  if (a.kept) {
    // One best per run: the step kept last replaces any kept before it.
    statement clear = records_.db().prepare(
        "UPDATE optimize_steps SET kept = 0 WHERE run_id = ?1 AND step <> ?2 AND kept = 1");
    clear.bind(1, run_id);
    clear.bind(2, a.step);
    clear.step();
  }
}

void optimization_memory::record_answer(std::int64_t run_id, int step,
                                        const std::string& answer_sha256) {
  records_.require_object("optimize_steps.answer_sha256", answer_sha256);
  statement s = records_.db().prepare(
      "UPDATE optimize_steps SET answer_sha256 = ?1 WHERE run_id = ?2 AND step = ?3");
  s.bind(1, answer_sha256);
  s.bind(2, run_id);
  s.bind(3, step);
  s.step();
}

const std::filesystem::path& optimization_memory::home() const { return records_.home(); }

std::vector<attempt> optimization_memory::steps_of(std::int64_t run_id) const {
  statement s = records_.db().prepare("SELECT " + std::string(step_columns) +
                                      " FROM optimize_steps s WHERE s.run_id = ?1 ORDER BY s.step");
  s.bind(1, run_id);
  std::vector<attempt> out;
  while (s.step()) out.push_back(read_step(s, 0));
  return out;
}

std::vector<optimization_memory::entry> optimization_memory::recall(const query& q) const {
  std::string sql = "SELECT s.run_id, s.task, s.case_name, r.started_at, " +
                    std::string(step_columns) +
                    " FROM optimize_steps s JOIN runs r ON r.id = s.run_id WHERE 1";
  if (q.task) sql += " AND s.task = ?1";
  if (q.tag) sql += " AND EXISTS (SELECT 1 FROM json_each(s.tags_json) t WHERE t.value = ?2)";
  if (q.exclude_run) sql += " AND s.run_id <> ?3";
  sql += " ORDER BY s.reward DESC, r.started_at DESC, s.run_id DESC, s.step DESC LIMIT ?4";
  statement s = records_.db().prepare(sql);
  if (q.task) s.bind(1, *q.task);
  if (q.tag) s.bind(2, *q.tag);
  if (q.exclude_run) s.bind(3, *q.exclude_run);
  s.bind(4, q.limit);
  std::vector<entry> out;
  while (s.step()) {
    out.push_back(entry{.run_id = s.column_int64(0),
                        .task = text_of(s, 1),
                        .case_name = text_of(s, 2),
                        .started_at = text_of(s, 3),
                        .step = read_step(s, 4)});
  }
  return out;
}

nlohmann::json to_json(const optimization_memory::entry& e) {
  const attempt& a = e.step;
  nlohmann::json j = {{"run_id", e.run_id},         {"task", e.task},
                      {"case", e.case_name},        {"started_at", e.started_at},
                      {"step", a.step},             {"hypothesis", a.hypothesis},
                      {"kind", a.kind},             {"tags", a.tags},
                      {"status", a.status},         {"reason", a.reason},
                      {"message", a.message},       {"variant", a.variant},
                      {"reward", a.reward},         {"diagnosis", a.diagnosis},
                      {"kept", a.kept},             {"source_sha256", a.source_sha256},
                      {"gpu", a.gpu},               {"bound", a.bound},
                      {"improved_bound", a.improved_bound}};
  j["speedup"] = a.speedup ? nlohmann::json(*a.speedup) : nullptr;
  j["speedup_interval"] = a.speedup_low && a.speedup_high
                              ? nlohmann::json{*a.speedup_low, *a.speedup_high}
                              : nlohmann::json(nullptr);
  j["time_us"] = a.time_us ? nlohmann::json(*a.time_us) : nullptr;
  return j;
}

namespace {

// How near an entry is to the session's state: on the same card and improving a kernel of the
// same bound, 0; the same card, 1; another card (or one not known), 2. The card comes first,
// since what is fast on one card need not be on another.
int distance(const optimization_memory::entry& e, const memory_context& context) {
  const bool same_gpu = !context.gpu.empty() && e.step.gpu == context.gpu;
  const bool same_bound = !context.bound.empty() && context.bound != unknown_bound &&
                          e.step.improved_bound == context.bound;
  return same_gpu ? (same_bound ? 0 : 1) : 2;
}

using entry_list = std::vector<optimization_memory::entry>;

// `found` (the most rewarding first) with the nearest to the session's state first, each group
// keeping that order.
entry_list nearest_first(entry_list found, const memory_context& context) {
  std::stable_sort(found.begin(), found.end(), [&](const auto& x, const auto& y) {
    return distance(x, context) < distance(y, context);
  });
  return found;
}

}  // namespace

nlohmann::json memory_for_request(const optimization_memory& memory,
                                  const memory_context& context, int limit) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::pair<std::int64_t, int>> seen;
  auto add = [&](const std::vector<optimization_memory::entry>& entries, int most) {
    for (const auto& e : nearest_first(entries, context)) {
      if (most <= 0 || static_cast<int>(out.size()) >= limit) return;
      if (!seen.insert({e.run_id, e.step.step}).second) continue;
      nlohmann::json j = to_json(e);
      // A step an older blaster recorded may quote a path of the home; the proposer sees none.
      j["message"] = without_home_paths(e.step.message, memory.home());
      out.push_back(std::move(j));
      --most;
    }
  };
  // What worked on this task, best first; then what this task's sessions saw rejected.
  const auto of_task = memory.recall({.task = context.task, .tag = std::nullopt,
                                      .exclude_run = context.this_run, .limit = 4 * limit});
  std::vector<optimization_memory::entry> worked;
  std::vector<optimization_memory::entry> failed;
  for (const auto& e : of_task) (e.step.status == "ok" ? worked : failed).push_back(e);
  add(worked, limit / 2);
  add(failed, limit / 4);
  // Other tasks' experience with the ideas the proposer names.
  for (const std::string& tag : context.tags) {
    add(memory.recall({.task = std::nullopt, .tag = tag, .exclude_run = context.this_run,
                       .limit = limit}),
        limit / 8 + 1);
  }
  return out;
}

}  // namespace blaster
