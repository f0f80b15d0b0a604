#pragma once

// Several steps of an optimize session under way at once (optimize --gpus 0,1): while a step is
// judged on one lane (an evaluator of its own, on a GPU of its own) the proposer is asked for the
// next, and the steps are recorded in step order, whatever order their judging ends in. With one
// lane a step is judged when it is waited for, in this thread: one step at a time, as always.

#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/judging_session.hpp"

namespace blaster {

class step_lanes {
 public:
  step_lanes(judging_session& session, std::vector<step_evaluator*> lanes);
  step_lanes(const step_lanes&) = delete;
  step_lanes& operator=(const step_lanes&) = delete;
  // Waits for the judging under way; what was not recorded stays unrecorded.
  ~step_lanes() = default;

  // Whether a lane is free to judge one more step.
  [[nodiscard]] bool free() const { return free_lane().has_value(); }
  // Starts judging `p` on a free lane.
  void start(judging_session::pending_step p);
  // The steps under way, oldest first, as a request shows them: step, hypothesis, tags.
  [[nodiscard]] nlohmann::json under_way() const;
  // Records the judged steps at the head of the queue, in step order, each then passed to
  // `recorded`; with `wait`, first waits until some step under way is judged. A lane's failure
  // is thrown here.
  void record_judged(bool wait, const std::function<void(const attempt&)>& recorded);
  // Waits for every step under way and records them all.
  void drain(const std::function<void(const attempt&)>& recorded);

 private:
  struct under_way_step {
    judging_session::pending_step step;
    std::size_t lane = 0;
    nlohmann::json note;
    std::future<void> judged;
  };
  [[nodiscard]] static bool judged(const under_way_step& u);
  [[nodiscard]] std::optional<std::size_t> free_lane() const;
  void wait_for_any();

  judging_session& session_;
  std::vector<step_evaluator*> lanes_;
  std::deque<std::unique_ptr<under_way_step>> queue_;  // in step order
};

}  // namespace blaster
