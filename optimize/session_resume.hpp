#pragma once

// `blaster optimize --resume RUN`: an optimize session that did not finish (blaster was killed,
// the machine failed, the proposer died, hung or flooded) is continued from its last recorded
// step, with the settings it was started with, as the same run.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace blaster {

class store;

// The artifact that holds a session's settings (optimize_options::settings), recorded when it
// begins: what a resume starts the session again with.
inline constexpr std::string_view session_settings_name = "settings.json";

struct resumable_session {
  std::int64_t run_id = 0;
  std::string task;
  nlohmann::json settings;    // as the session recorded them
  std::string status;         // the run's: interrupted, failed, no_gpu, completed
  std::string ended;          // how its report says it ended; empty where it has none
  std::string report_sha256;  // that report, kept cited by the run when it is resumed
  int resumes = 0;            // how often it was resumed before
};

// The session `reference` (a run id, or "latest": the newest optimize session) names, if it can
// be resumed; else an input_error that names the run, says why, and what to do instead: a run
// that is not there, is not an optimize session, is still running, finished (by its steps, its
// minutes or the proposer's stop), or was recorded without its settings.
resumable_session find_resumable_session(store& records, std::string_view reference);

}  // namespace blaster
