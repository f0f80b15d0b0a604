#include "optimize/serve_loop.hpp"

#include <istream>
#include <ostream>

#include <fmt/format.h>

#include "optimize/judging_session.hpp"

namespace blaster {

nlohmann::json verdict_json(std::int64_t run_id, const attempt& a) {
  nlohmann::json j = feedback_json(a);
  j["run_id"] = run_id;
  j["kept"] = a.kept;
  j["bench_run_id"] = a.bench_run_id;
  j["source_sha256"] = a.source_sha256;
  j["request_sha256"] = a.reply_sha256;
  j["elapsed_s"] = a.elapsed_s;
  if (a.baseline_us) j["baseline_us"] = *a.baseline_us;
  return j;
}

serve_outcome serve_requests(std::istream& in, std::ostream& out, judging_session& session,
                             const reply_limits& limits) {
  serve_outcome o;
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) {
      // The input ended before this line's new-line: the client left while sending it.
      o.ended = "client_left";
      o.why =
          fmt::format("the input ended inside a request ({} bytes, dropped unjudged)", line.size());
      return o;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json id = nullptr;
    if (const auto j = nlohmann::json::parse(line, nullptr, false); j.is_object()) {
      id = j.value("id", nlohmann::json(nullptr));
    }
    const parsed_reply request = parse_reply(line, limits);
    if (const auto* stop = std::get_if<stop_request>(&request)) {
      o.ended = "stopped";
      o.why =
          stop->why.empty() ? "the client asked to stop" : "the client asked to stop: " + stop->why;
      return o;
    }
    const attempt& a = session.judge(line, request);
    ++o.judged;
    nlohmann::json answer = verdict_json(session.run_id(), a);
    answer["id"] = id;
    if (a.status == "unjudged") answer["message"] = session.cannot_judge();
    out << answer.dump() << '\n' << std::flush;
    if (!out) {
      o.ended = "client_gone";
      o.why = fmt::format("the answer to step {} could not be written: the client closed its end",
                          a.step);
      return o;
    }
    if (a.status == "unjudged") {
      o.ended = "no_gpu";
      o.why = session.cannot_judge();
      return o;
    }
  }
  o.ended = "input_closed";
  o.why = fmt::format("the client closed the input after {} request{}", o.judged,
                      o.judged == 1 ? "" : "s");
  return o;
}

}  // namespace blaster
