#include "optimize/step_lanes.hpp"

#include <chrono>
#include <thread>

namespace blaster {
namespace {

// How often a wait for several lanes looks at them: far below a step's judging (seconds).
constexpr std::chrono::milliseconds poll_interval{10};

}  // namespace

step_lanes::step_lanes(judging_session& session, std::vector<step_evaluator*> lanes)
    : session_(session), lanes_(std::move(lanes)) {}

bool step_lanes::judged(const under_way_step& u) {
  return u.judged.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

std::optional<std::size_t> step_lanes::free_lane() const {
  for (std::size_t lane = 0; lane < lanes_.size(); ++lane) {
    bool busy = false;
    for (const auto& u : queue_) busy = busy || (u->lane == lane && !judged(*u));
    if (!busy) return lane;
  }
  return std::nullopt;
}

void step_lanes::start(judging_session::pending_step p) {
  auto u = std::make_unique<under_way_step>();
  u->lane = free_lane().value_or(0);
  u->note = {{"step", p.step.step}, {"hypothesis", p.step.hypothesis}, {"tags", p.step.tags}};
  u->step = std::move(p);
  // One lane judges in this thread when waited for, as the loop always did; several judge in
  // threads of their own, each on its own evaluator.
  const auto policy = lanes_.size() > 1 ? std::launch::async : std::launch::deferred;
  under_way_step* step = u.get();
  step_evaluator* evaluator = lanes_[u->lane];
  u->judged = std::async(policy, [this, step, evaluator] {
    session_.evaluate(*evaluator, step->step);
  });
  queue_.push_back(std::move(u));
}

nlohmann::json step_lanes::under_way() const {
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& u : queue_) notes.push_back(u->note);
  return notes;
}

void step_lanes::wait_for_any() {
  if (queue_.empty()) return;
  if (lanes_.size() == 1) {
    queue_.front()->judged.wait();  // runs the deferred judging here
    return;
  }
  for (;;) {
    for (const auto& u : queue_) {
      if (judged(*u)) return;
    }
    std::this_thread::sleep_for(poll_interval);
  }
}

void step_lanes::record_judged(bool wait, const std::function<void(const attempt&)>& recorded) {
  if (wait) wait_for_any();
  while (!queue_.empty() && judged(*queue_.front())) {
    std::unique_ptr<under_way_step> u = std::move(queue_.front());
    queue_.pop_front();
    u->judged.get();  // a lane's failure ends the session here
    const attempt& a = session_.record(std::move(u->step));
    if (recorded) recorded(a);
  }
}

void step_lanes::drain(const std::function<void(const attempt&)>& recorded) {
  while (!queue_.empty()) {
    queue_.front()->judged.wait();
    record_judged(/*wait=*/false, recorded);
  }
}

}  // namespace blaster
