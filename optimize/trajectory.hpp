#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/evidence_bundle.hpp"
#include "optimize/attempt.hpp"

namespace blaster {

class store;

// What a trajectory row is rendered from, as the store or an exported bundle holds it: the
// session's record (the run's report object) and its optimize_steps rows, in step order.
struct session_records {
  std::int64_t run_id = 0;
  nlohmann::json session;      // the run's report: optimize_loop's to_json(optimize_result)
  std::string session_sha256;  // its CAS digest
  std::vector<attempt> steps;
};

// The bytes of a CAS object by its digest; nothing where it is not there.
using object_reader = std::function<std::optional<std::string>(const std::string& sha256)>;

// The trajectory row of a session, from its records and the objects they cite (the requests
// and replies exactly as they were written and read): the one renderer of the export, and of
// `blaster verify`, which renders each row again from the bundle's own files and holds the
// exported row to it. A cited object that is missing is a blaster::error naming it.
nlohmann::json render_trajectory(const session_records& records, const object_reader& objects);

// The kernel's parameter list, in argument order, as the baseline source declares the kernel
// that its launch plan's first launch names ("__half* out, const __half* x, int batches");
// else the plan's args with the task's types; else the task's buffers and symbols.
std::string kernel_signature(const std::string& baseline_source, const nlohmann::json& contract);

// Params as the format has them: each value a number where it reads whole as one ("4", "0.5"),
// else the string.
nlohmann::json params_as_numbers(const std::map<std::string, std::string>& params);

// One optimize run as a session of the chat-style trajectory format
// (../shared/formats/trajectories.md): its fields exactly, each step's status and time taken
// from the recorded evaluation, plus blaster's own fields beside them (the finer reason, the
// speedup interval, the reward, the CAS digests of the reply and the source, the judging run).
// A run that is not an optimize run, or is still running, is an input_error.
nlohmann::json trajectory_of(store& records, std::int64_t run_id);

// An optimize run by id, or "latest": the newest optimize run. Anything else, or a run that is
// not there, is an input_error.
std::int64_t resolve_session(store& records, std::string_view reference);

// "H:MM:SS".
std::string hms(double seconds);

// Writes the sessions of `runs` as an evidence bundle in `out` (a new or empty folder):
//   trajectories.jsonl          one session per line
//   sessions/<run>/session.json the session's record as the store keeps it (its report object)
//   sessions/<run>/run.json     every database row of the session
//   objects/<sha256>            every reply and source the sessions cite
//   runs/<run>/                 each judging bench run's own bundle
// and SHA256SUMS over all of it (signed with a key), so that `blaster verify` checks it.
bundle_written export_trajectories(store& records, const std::vector<std::int64_t>& runs,
                                   const std::filesystem::path& out,
                                   const ed25519_key* signing_key);

}  // namespace blaster
