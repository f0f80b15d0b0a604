#include "optimize/params_search.hpp"

#include <algorithm>
#include <istream>
#include <ostream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/launch_plan.hpp"

namespace blaster {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::string_view plan_opener = "/* blaster";
constexpr std::string_view plan_closer = "*/";
// Past this many sessions a round's order no longer changes; the confirmation has its own.
constexpr int max_round_sessions = 16;

// A param value as the plan reader spells it: integers in decimal, strings as they are.
std::string value_text(const ordered_json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string label_of(const std::filesystem::path& file, const launch_plan& plan,
                     const std::map<std::string, std::string>& config) {
  std::string label = file.stem().string();
  if (plan.params.empty()) return label;
  std::vector<std::string> parts;
  for (const auto& [name, values] : plan.params) parts.push_back(name + "=" + config.at(name));
  return fmt::format("{}[{}]", label, fmt::join(parts, ","));
}

}  // namespace

std::string pin_params(std::string_view source, std::string_view file_name,
                       const std::map<std::string, std::string>& params) {
  const launch_plan plan = parse_launch_plan(source, file_name);  // refuses a bad plan, located
  const std::size_t begin = source.find(plan_opener) + plan_opener.size();
  const std::size_t end = source.find(plan_closer, begin);
  ordered_json header = ordered_json::parse(source.substr(begin, end - begin));
  for (const auto& [name, value] : params) {
    if (!header.contains("params") || !header["params"].contains(name)) {
      BLASTER_INPUT_ERROR("{}: the launch plan has no param \"{}\"", file_name, name);
    }
    ordered_json& values = header["params"][name];
    const auto it = std::find_if(values.begin(), values.end(),
                                 [&](const ordered_json& v) { return value_text(v) == value; });
    if (it == values.end()) {
      BLASTER_INPUT_ERROR("{}: param \"{}\" has no value {}; its values are {}", file_name, name,
                          value, values.dump());
    }
    values = ordered_json::array({*it});
  }
  return fmt::format("{}\n{}\n{}", source.substr(0, begin), header.dump(2), source.substr(end));
}

std::vector<params_arm> arms_of(const std::vector<std::filesystem::path>& files) {
  std::vector<params_arm> arms;
  for (const auto& file : files) {
    const std::string source = read_file(file);
    const launch_plan plan = parse_launch_plan(source, file.string());
    for (const auto& config : expand_params(plan)) {
      arms.push_back({.label = label_of(file, plan, config),
                      .params = config,
                      .source = pin_params(source, file.string(), config),
                      .time_us = std::nullopt,
                      .speedup = std::nullopt,
                      .rejected = {}});
    }
  }
  return arms;
}

params_search::params_search(std::vector<params_arm> arms, int final_sessions)
    : arms_(std::move(arms)), final_sessions_(std::max(1, final_sessions)) {
  for (std::size_t i = 0; i < arms_.size(); ++i) queue_.push_back(i);
}

nlohmann::json params_search::next() {
  if (pending_) {
    // The request did not report the step: the arm is out rather than judged twice.
    arms_[*pending_].rejected = "no_feedback";
    last_rejected_ = *pending_;
    pending_.reset();
  }
  if (queue_.empty()) start_next_round();
  if (queue_.empty()) {
    const auto best = std::min_element(timed_.begin(), timed_.end(),
                                       [&](auto a, auto b) { return faster(a, b); });
    if (best == timed_.end()) {
      // Rejected after an earlier round passed it (a flaky kernel), or every one at once.
      if (last_rejected_ && arms_[*last_rejected_].time_us) {
        return {
            {"stop", true},
            {"why", fmt::format("the last configuration left, {}, was rejected when timed "
                                "again ({})",
                                arms_[*last_rejected_].label, arms_[*last_rejected_].rejected)}};
      }
      return {
          {"stop", true},
          {"why", fmt::format("every one of the {} configurations was rejected", arms_.size())}};
    }
    return {{"stop", true},
            {"why", fmt::format("successive halving over {} configurations in {} rounds: the "
                                "fastest is {} at {:.2f} us{}",
                                arms_.size(), round_ + 1, arms_[*best].label, *arms_[*best].time_us,
                                arms_[*best].speedup
                                    ? fmt::format(", {:.2f}x the baseline", *arms_[*best].speedup)
                                    : std::string())}};
  }
  const std::size_t arm = queue_.front();
  queue_.erase(queue_.begin());
  pending_ = arm;
  const std::string stage =
      confirmed_ ? "confirmation" : fmt::format("round {} of successive halving", round_ + 1);
  return {{"source", arms_[arm].source},
          {"hypothesis", fmt::format("{}: {}, {} session{}", arms_[arm].label, stage, sessions_,
                                     sessions_ == 1 ? "" : "s")},
          {"kind", "tune"},
          {"tags", {"params", confirmed_ ? "confirm" : fmt::format("round-{}", round_ + 1)}},
          {"sessions", sessions_}};
}

void params_search::observe(const nlohmann::json& feedback) {
  if (!pending_) return;
  params_arm& arm = arms_[*pending_];
  if (feedback.value("status", std::string()) == "ok" && feedback.contains("time_us") &&
      feedback["time_us"].is_number()) {
    arm.time_us = feedback["time_us"].get<double>();
    arm.speedup = feedback.contains("speedup") && feedback["speedup"].is_number()
                      ? std::optional<double>(feedback["speedup"].get<double>())
                      : std::nullopt;
    timed_.push_back(*pending_);
  } else {
    const std::string reason = feedback.value("reason", std::string());
    arm.rejected = reason.empty() ? feedback.value("status", std::string("unknown")) : reason;
    last_rejected_ = *pending_;
  }
  pending_.reset();
}

void params_search::replay(const nlohmann::json& step) {
  if (pending_) return;  // asked, and not yet answered: next() settles it first
  if (!step.is_object() || step.value("status", std::string()) == "unjudged") return;
  const std::string hypothesis = step.value("hypothesis", std::string());
  const std::string label = hypothesis.substr(0, hypothesis.find(": "));
  if (queue_.empty()) start_next_round();
  const auto at = std::find_if(queue_.begin(), queue_.end(),
                               [&](std::size_t arm) { return arms_[arm].label == label; });
  if (at == queue_.end()) return;
  pending_ = *at;
  queue_.erase(at);
  observe(step);
}

bool params_search::faster(std::size_t a, std::size_t b) const {
  if (arms_[a].speedup && arms_[b].speedup) return *arms_[a].speedup > *arms_[b].speedup;
  return *arms_[a].time_us < *arms_[b].time_us;
}

void params_search::start_next_round() {
  if (confirmed_ || timed_.empty()) return;  // the search is over
  std::vector<std::size_t> ranked = timed_;
  std::sort(ranked.begin(), ranked.end(), [&](auto a, auto b) { return faster(a, b); });
  ranked.resize((ranked.size() + 1) / 2);
  if (ranked.size() == 1) {
    // One left: confirmed with the run's sessions, unless its last round had as many.
    if (sessions_ >= final_sessions_) {
      timed_ = ranked;
      return;
    }
    confirmed_ = true;
    sessions_ = final_sessions_;
  } else {
    ++round_;
    sessions_ = std::min(2 * sessions_, max_round_sessions);
  }
  queue_ = ranked;
  timed_.clear();
}

void serve_params_proposer(std::istream& in, std::ostream& out, params_search& search) {
  std::optional<int> asked;  // the step the last reply became
  for (std::string line; std::getline(in, line);) {
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      BLASTER_INPUT_ERROR("a request that is not JSON: {}", e.what());
    }
    const nlohmann::json attempts = request.value("attempts", nlohmann::json::array());
    for (const auto& a : attempts.is_array() ? attempts : nlohmann::json::array()) {
      if (!a.is_object()) continue;
      if (!asked) {
        search.replay(a);  // a resumed session's steps, judged before this process began
      } else if (a.value("step", 0) == *asked) {
        search.observe(a);
      }
    }
    asked = request.value("step", 0);
    const nlohmann::json reply = search.next();
    out << reply.dump() << '\n' << std::flush;
    if (reply.contains("stop")) return;
  }
}

}  // namespace blaster
