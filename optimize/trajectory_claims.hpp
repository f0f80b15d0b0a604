#pragma once

// What a trajectory bundle (`blaster trajectories export`) claims, held to its own records:
// `blaster verify` renders every row of trajectories.jsonl again from the bundle's session
// records and objects, and recomputes every step from the judging run in the bundle that
// judged it, so that a row edited after the export (and SHA256SUMS recomputed) does not verify.

#include "evidence/bundle_verifier.hpp"

namespace blaster {

// For a bundle with a trajectories.jsonl, appends a claim problem for each of:
// - a row that is not the one the bundle's records render (render_trajectory over
//   sessions/<run>/session.json, the optimize_steps rows of sessions/<run>/run.json and the
//   requests and replies in objects/), naming the session, the step and the field that differ;
// - a step row that its evidence does not give: its reply (objects/) parsed again says whether it
//   was a candidate and which source; a candidate's outcome (status, reason, variant, params,
//   time, baseline, speedup and its interval, reward under the session's reward protocol) is
//   fill_outcome of its judging run's report (runs/<id>/results.json), and so are its memory
//   keys (gpu, bound; improved_bound is its parent's bound, else its stretch's baseline's, and
//   its parent the best its request showed); which step is kept and the session's best follow
//   from the rewards; the session's record agrees with the rows;
// - a session's baselines that the runs which timed them alone do not give, a request whose
//   baseline_us is neither its stretch's baseline nor the last step recorded before it, and a
//   session's baseline_us (the row's baseline_ms) and device (its gpu and arch) that its runs do
//   not give.
// A bundle without trajectories.jsonl is left alone.
void check_trajectory_claims(bundle_verification& verification);

}  // namespace blaster
