#pragma once

// The built-in proposer of `blaster optimize --proposer params`: a search of the params space of
// the task's candidate files by successive halving. Every configuration is proposed once, pinned
// to its values and timed in one session; the faster half (by speedup over the baseline of the
// same run) is proposed again with twice the sessions, and so on until one is left, which is
// confirmed with the run's sessions. Each proposal is a step of the session like any
// proposer's, so the memory, the trajectory and the evidence are the same.

#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace blaster {

// One configuration of one candidate file: an arm of the search.
struct params_arm {
  std::string label;  // "rmsnorm_vec_regs[VEC=4,BLOCK=128]"
  std::map<std::string, std::string> params;
  std::string source;  // the file with each param's list cut to this configuration's value
  std::optional<double> time_us;  // [us] the median of its latest round
  // The baseline's time over its own in that round's run: what rounds rank by, since a run's
  // baseline carries the drift between runs that the times alone would not show.
  std::optional<double> speedup;
  std::string rejected;  // the reason, once a step of it was not ok
};

// `source` with every param named in `params` reduced to that one value, the rest of the file as
// it was. Throws input_error naming the file when a param or a value is not in its plan.
std::string pin_params(std::string_view source, std::string_view file_name,
                       const std::map<std::string, std::string>& params);

// Every configuration of every file, in the files' order and each plan's params order.
std::vector<params_arm> arms_of(const std::vector<std::filesystem::path>& files);

class params_search {
 public:
  // `final_sessions`: the sessions of the confirming step (the run's --sessions).
  params_search(std::vector<params_arm> arms, int final_sessions);

  // The next reply line's JSON: a candidate with its sessions, or {"stop": true, "why": ...}.
  nlohmann::json next();
  // The feedback on the step that the last candidate became (a request's attempt).
  void observe(const nlohmann::json& feedback);
  // A step judged before this search began (a resumed session's first request carries every
  // step so far): the configuration its hypothesis names ("label: stage, ...") is taken as
  // proposed in the current round and judged, so that the search goes on from where the session
  // was and does not propose it again. A step of no configuration still to propose this round,
  // and one never judged (unjudged: no GPU), changes nothing.
  void replay(const nlohmann::json& step);

  [[nodiscard]] const std::vector<params_arm>& arms() const { return arms_; }
  [[nodiscard]] int round() const { return round_; }

 private:
  void start_next_round();
  // Whether arm a ranks before arm b: the higher speedup, else (none reported) the lower time.
  [[nodiscard]] bool faster(std::size_t a, std::size_t b) const;

  std::vector<params_arm> arms_;
  int final_sessions_;
  int round_ = 0;
  int sessions_ = 1;
  std::vector<std::size_t> queue_;  // arms still to propose this round
  std::vector<std::size_t> timed_;  // arms of this round that came back ok
  std::optional<std::size_t> pending_;
  std::optional<std::size_t> last_rejected_;
  bool confirmed_ = false;
};

// Speaks the protocol on `in` and `out` until the input ends: answers each request with
// search.next(), after feeding back the attempt that the previous reply became. The steps the
// first request carries (a resumed session's) are replayed first.
void serve_params_proposer(std::istream& in, std::ostream& out, params_search& search);

}  // namespace blaster
