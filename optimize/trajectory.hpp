#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/evidence_bundle.hpp"

namespace blaster {

class store;

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
