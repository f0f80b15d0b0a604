#pragma once

// One step of an optimization session: what the proposer sent and what blaster made of it. The
// loop builds it, the store keeps it (optimize_steps), the next request carries it back as
// feedback, and the trajectory export reads it. One JSON form.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace blaster {

struct attempt {
  int step = 0;                // 1, 2, ... within the session
  std::optional<int> parent;   // the step that was best when the proposer was asked
  std::string hypothesis;      // the proposer's one line
  std::string kind;            // the proposer's word for the step (rewrite, tune, fix), free
  std::vector<std::string> tags;
  int sessions = 0;  // timing sessions the proposer asked for; 0: the run's --sessions
  // The reward's protocol: the timing sessions its interval is drawn from (the first this many
  // of the run that judged the step), whatever `sessions` asked for; 0 for a step never timed.
  int reward_sessions = 0;

  // The trajectory's status (ok, compileerror, wrongresult) and blaster's finer reason: a
  // reason code of the gate or the compile, or what was wrong with the reply (invalid_reply).
  std::string status;
  std::string reason;
  std::string message;            // the evidence, one line
  std::string log;                // the compile log, as blaster stores it (no host file bytes)
  std::optional<int> error_line;  // the first line of the source the compile log blames

  // The timing, for ok steps: the fastest passing variant of the candidate.
  std::string variant;
  std::map<std::string, std::string> params;
  std::optional<double> time_us;
  std::optional<double> baseline_us;
  std::optional<double> speedup;       // baseline over candidate, the same run
  std::optional<double> speedup_low;   // its 95% interval
  std::optional<double> speedup_high;
  std::optional<double> roofline_pct;  // the roofline floor over the time [%]
  // The reward a loop may train on: the interval's lower bound after the gate, 0 for a step
  // the gate rejected, so that noise cannot lift it.
  double reward = 0.0;
  std::string diagnosis;  // the counters' one line, where they were collected
  // What bounds the step's kernel: the counters' bound ("bandwidth-bound", ...) where they were
  // collected, else what the roofline says of its time, else unknown_bound; empty for a step
  // never timed.
  std::string bound;
  // The bound of the kernel the step set out to improve: the session's best when it was asked,
  // else the baseline. With the GPU, it keys the memory: what worked on this card for kernels
  // in the same state.
  std::string improved_bound;
  std::string gpu;  // the short model of the session's GPU ("H200"); empty: none was found

  bool kept = false;      // it became the session's best
  double at_s = 0.0;      // [seconds] since the session started, when the reply came
  double elapsed_s = 0.0; // [seconds] the step's own: waiting for the reply, then judging it
  std::map<std::string, double> phase_ms;  // [milliseconds] the judging's, by phase (bench's)
  std::int64_t bench_run_id = 0;  // the run that judged it, with all its evidence; 0: none
  std::string source_sha256;      // the candidate's source in the CAS
  std::string reply_sha256;       // the proposer's raw reply in the CAS
  // The request line blaster wrote to the proposer for this step, as written (without its
  // newline), in the CAS; empty for a serve or eval step, which answers a request instead.
  std::string request_sha256;
  // The answer line blaster wrote back to a served request (serve, eval), as written, in the
  // CAS; empty for an optimize step, whose feedback is in the next request.
  std::string answer_sha256;
};

// A step's bound where neither its counters nor the roofline tell what bounds it.
inline constexpr std::string_view unknown_bound = "unknown";

// The trajectory format's status for blaster's reason: ok, compileerror (the source never
// became a kernel: compile, plan or reply errors) or wrongresult (it ran and was rejected).
std::string_view trajectory_status(std::string_view reason);

// The first line of the candidate's own file `file_name` that a compile log blames
// ("file.cu(12): error: ..."), if any. NVRTC places an error in a kernel name the source does not
// define in a file of its own, __nv_name_map: such an error is blamed on the first line of
// `source` that names the kernel (the plan's entry), never on the name map's line.
std::optional<int> first_error_line(std::string_view log, std::string_view file_name,
                                    std::string_view source = {});

nlohmann::json to_json(const attempt& a);
attempt attempt_from_json(const nlohmann::json& j);

}  // namespace blaster
