#include "portfolio/suite.hpp"

#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "benchmarking/timing/kernel_timer.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/json_reader.hpp"
#include "core/sha256.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

using json = nlohmann::ordered_json;

// The suite's strings and lists may not be empty: an empty task name or case list is a mistake.
std::string nonempty_text(const json_reader& r, const json& object, std::string_view where,
                          const char* key) {
  std::string value = r.text(object, where, key);
  if (value.empty()) r.fail(fmt::format("{}.{}", where, key), "must not be empty");
  return value;
}

const json& nonempty_array(const json_reader& r, const json& object, std::string_view where,
                           const char* key) {
  if (!object.contains(key)) r.fail(where, fmt::format("missing \"{}\"", key));
  if (!object[key].is_array() || object[key].empty()) {
    r.fail(fmt::format("{}.{}", where, key), "must be a non-empty array");
  }
  return object[key];
}

}  // namespace

suite load_suite(const std::filesystem::path& root, const std::string& name_or_file) {
  std::filesystem::path file = name_or_file;
  if (file.extension() != ".json") file = root / "portfolio" / "suites" / (name_or_file + ".json");
  const std::optional<std::string> bytes = read_file_if_exists(file);
  if (!bytes) {
    BLASTER_INPUT_ERROR(
        "no suite {}: {} does not exist; give a suite's name (a file portfolio/suites/<name>.json "
        "under --root) or a .json file",
        name_or_file, file.string());
  }
  const json_reader r(file.string());
  const json doc = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) r.fail("(document)", "is not valid JSON");
  r.only_keys(doc, "(document)", {"name", "title", "protocol", "entries"});

  suite s;
  s.file = file;
  s.sha256 = sha256_hex(*bytes);
  s.name = nonempty_text(r, doc, "(document)", "name");
  s.title = nonempty_text(r, doc, "(document)", "title");
  if (doc.contains("protocol")) {
    const json& p = doc["protocol"];
    r.only_keys(p, "protocol", {"sessions", "confirm_best", "cooldown_s", "max_noise", "profile"});
    if (p.contains("profile")) {
      if (!p["profile"].is_boolean()) r.fail("protocol.profile", "must be true or false");
      s.protocol.profile = p["profile"].get<bool>();
    }
    if (p.contains("sessions")) {
      if (!p["sessions"].is_number_integer() || p["sessions"].get<int>() < 1) {
        r.fail("protocol.sessions", "must be a positive integer");
      }
      s.protocol.sessions = p["sessions"].get<int>();
    }
    if (p.contains("confirm_best")) {
      if (!p["confirm_best"].is_number_integer() || p["confirm_best"].get<int>() < 0) {
        r.fail("protocol.confirm_best", "must be a whole number, 0 or more (0: all candidates)");
      }
      s.protocol.confirm_best = p["confirm_best"].get<int>();
    }
    if (p.contains("cooldown_s")) {
      if (!p["cooldown_s"].is_number() || p["cooldown_s"].get<double>() < 0) {
        r.fail("protocol.cooldown_s", "must be a number of seconds, 0 or more");
      }
      s.protocol.cooldown_s = p["cooldown_s"].get<double>();
    }
    if (p.contains("max_noise")) {
      if (!p["max_noise"].is_number() || !(p["max_noise"].get<double>() > 0)) {
        r.fail("protocol.max_noise", "must be a positive fraction, e.g. 0.005 for 0.5%");
      }
      s.protocol.max_noise = p["max_noise"].get<double>();
    }
  }
  std::set<std::string> seen;
  const json& entries = nonempty_array(r, doc, "(document)", "entries");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string where = fmt::format("entries[{}]", i);
    r.only_keys(entries[i], where,
                {"id", "task", "cases", "bandwidth_goal_pct", "roofline_goal_pct"});
    suite_entry e;
    e.id = nonempty_text(r, entries[i], where, "id");
    e.task = nonempty_text(r, entries[i], where, "task");
    for (const auto& [key, goal, of] :
         {std::tuple{"bandwidth_goal_pct", &e.bandwidth_goal_pct, "the copy bandwidth"},
          std::tuple{"roofline_goal_pct", &e.roofline_goal_pct, "the roofline floor"}}) {
      if (!entries[i].contains(key)) continue;
      const json& pct = entries[i][key];
      if (!pct.is_number() || !(pct.get<double>() > 0.0 && pct.get<double>() <= 100.0)) {
        r.fail(fmt::format("{}.{}", where, key),
               fmt::format("must be a percentage of {} above 0 and at most 100", of));
      }
      *goal = pct.get<double>();
    }
    if (e.bandwidth_goal_pct && e.roofline_goal_pct) {
      r.fail(where, "name one goal for the largest case: bandwidth_goal_pct or roofline_goal_pct");
    }
    if (!seen.insert(e.task).second) r.fail(where, fmt::format("task {} is listed twice", e.task));
    task_spec task;
    try {
      task = load_task(root, e.task);
    } catch (const input_error& err) {
      r.fail(where + ".task", err.what());
    }
    const json& cases = nonempty_array(r, entries[i], where, "cases");
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const std::string at = fmt::format("{}.cases[{}]", where, k);
      r.only_keys(cases[k], at, {"case", "mode"});
      suite_case c;
      c.name = nonempty_text(r, cases[k], at, "case");
      try {
        static_cast<void>(task.find_case(c.name));
      } catch (const input_error& err) {
        r.fail(at + ".case", err.what());
      }
      if (cases[k].contains("mode")) {
        c.mode = nonempty_text(r, cases[k], at, "mode");
        if (!parse_timing_mode(*c.mode)) r.fail(at + ".mode", "must be " + timing_mode_choices());
      }
      e.cases.push_back(std::move(c));
    }
    s.entries.push_back(std::move(e));
  }
  return s;
}

}  // namespace blaster
