#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace blaster {

// One case of a suite's task, and the mode it is timed in (none: the task's own).
struct suite_case {
  std::string name;
  std::optional<std::string> mode;
};

struct suite_entry {
  std::string id;  // KernelBench's number ("036") or the suite's own ("i01")
  std::string task;
  std::vector<suite_case> cases;
  // [% of the copy bandwidth] what the entry's largest case must reach where the suite's
  // default (portfolio_report.hpp) does not apply.
  std::optional<double> bandwidth_goal_pct = std::nullopt;
  // [% of the roofline floor] instead, at every case timed outside graph mode: the floor over
  // the time, the floor being the task's bytes at the measured ceilings of their mix (a
  // read-only op against the read bandwidth, e.g. attention's 80% of what its KV-cache bytes
  // allow, at one sequence of 32k as at 64 of 1k).
  std::optional<double> roofline_goal_pct = std::nullopt;
};

// How every case of the suite is timed: the confirmation protocol by default.
struct suite_protocol {
  int sessions = 5;
  // After the first session, only the baseline and this many of the fastest candidates are
  // timed in the others (0: every candidate in every session).
  int confirm_best = 0;
  double cooldown_s = 1.0;  // [seconds] between two sessions
  double max_noise = 0.005;
  // Every passing variant's hardware counters after its timing, so that a missed goal comes
  // with the profile's diagnosis.
  bool profile = false;
};

// portfolio/suites/<name>.json: the tasks and cases a portfolio runs, and how.
struct suite {
  std::string name;
  std::string title;
  std::filesystem::path file;
  std::string sha256;  // of the file's bytes: a resumed portfolio must run the same suite
  suite_protocol protocol;
  std::vector<suite_entry> entries;
};

// `name_or_file` is a suite's name (portfolio/suites/<name>.json under root) or a file. Every
// problem is an input_error naming the file, the JSON path and the fix; every task and case the
// suite names must exist under root.
suite load_suite(const std::filesystem::path& root, const std::string& name_or_file);

}  // namespace blaster
