#include "optimize/session_resume.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

// The newest optimize session, or an input_error.
std::int64_t latest_session(store& records) {
  statement s = records.db().prepare(
      "SELECT id FROM runs WHERE command LIKE 'blaster optimize %' ORDER BY id DESC LIMIT 1");
  if (!s.step()) {
    BLASTER_INPUT_ERROR(
        "{} holds no optimize session to resume; start one with `blaster "
        "optimize --task T --proposer CMD`",
        records.home().string());
  }
  return s.column_int64(0);
}

std::int64_t run_id_of(store& records, std::string_view reference) {
  if (reference == "latest") return latest_session(records);
  std::int64_t id = 0;
  try {
    std::size_t used = 0;
    id = std::stoll(std::string(reference), &used);
    if (used != reference.size()) id = 0;
  } catch (const std::exception&) {
    id = 0;
  }
  if (id <= 0) {
    BLASTER_INPUT_ERROR(
        "--resume {}: give an optimize run's id (`blaster runs` lists them) or "
        "'latest'",
        reference);
  }
  return id;
}

// The settings a session recorded when it began, or null.
nlohmann::json settings_of(store& records, std::int64_t run_id) {
  statement s = records.db().prepare(
      "SELECT sha256 FROM artifacts WHERE run_id = ?1 AND kind = 'settings' AND name = ?2");
  s.bind(1, run_id);
  s.bind(2, session_settings_name);
  if (!s.step()) return nullptr;
  const auto text = records.cas().get(s.column_text(0));
  if (!text) return nullptr;
  return nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
}

int resumes_of(store& records, std::int64_t run_id) {
  statement s = records.db().prepare(
      "SELECT count(*) FROM artifacts WHERE run_id = ?1 AND kind = 'resume' AND name LIKE "
      "'resume-%'");
  s.bind(1, run_id);
  s.step();
  return static_cast<int>(s.column_int64(0));
}

}  // namespace

resumable_session find_resumable_session(store& records, std::string_view reference) {
  const std::int64_t id = run_id_of(records, reference);
  const auto run = run_catalog(records).find_run(id);
  if (!run) {
    BLASTER_INPUT_ERROR("run {} does not exist in {}; `blaster runs` lists the runs there", id,
                        records.home().string());
  }
  if (run->command.rfind("blaster optimize ", 0) != 0) {
    BLASTER_INPUT_ERROR(
        "run {} is not an optimize session (it ran `{}`); --resume continues an "
        "optimize session: `blaster runs` lists them",
        id, run->command);
  }
  resumable_session r;
  r.run_id = id;
  r.task = run->task;
  r.status = run->status;
  if (r.status == "running") {
    BLASTER_INPUT_ERROR(
        "run {} is still running in another blaster; wait for it to end, or end "
        "that blaster, then resume it",
        id);
  }
  r.report_sha256 = run->report_sha256;
  if (!run->report_sha256.empty()) {
    const auto report = nlohmann::json::parse(
        records.cas().get(run->report_sha256).value_or(std::string()), nullptr,
        /*allow_exceptions=*/false);
    if (report.is_object()) r.ended = report.value("ended", std::string());
    if (r.ended == "steps" || r.ended == "minutes" || r.ended == "proposer_stopped") {
      BLASTER_INPUT_ERROR(
          "run {} finished ({}): there is nothing to resume; start a new session "
          "with `blaster optimize --task {} --proposer CMD`",
          id, report.value("why", r.ended), r.task);
    }
  }
  r.settings = settings_of(records, id);
  if (!r.settings.is_object()) {
    BLASTER_INPUT_ERROR(
        "run {} was recorded without its session's settings (by an older blaster), "
        "so it cannot be resumed as it was; start a new session with `blaster "
        "optimize --task {} --proposer CMD`",
        id, r.task);
  }
  r.resumes = resumes_of(records, id);
  return r;
}

}  // namespace blaster
