#include "optimize/serve_loop.hpp"

#include <istream>
#include <ostream>

#include <fmt/format.h>

#include "optimize/judging_session.hpp"

namespace blaster {

nlohmann::json answer_request(judging_session& session, const std::string& line,
                              const parsed_reply& request) {
  const attempt& a = session.judge(line, request);
  nlohmann::json j = feedback_json(a);
  const auto sent = nlohmann::json::parse(line, nullptr, false);
  j["id"] = sent.is_object() ? sent.value("id", nlohmann::json(nullptr)) : nullptr;
  if (a.status == "unjudged") j["message"] = session.cannot_judge();
  j["run_id"] = session.run_id();
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
    const parsed_reply request = parse_reply(line, limits);
    if (const auto* stop = std::get_if<stop_request>(&request)) {
      o.ended = "stopped";
      o.why =
          stop->why.empty() ? "the client asked to stop" : "the client asked to stop: " + stop->why;
      return o;
    }
    const nlohmann::json answer = answer_request(session, line, request);
    ++o.judged;
    out << answer.dump() << '\n' << std::flush;
    if (!out) {
      o.ended = "client_gone";
      o.why = fmt::format("the answer to step {} could not be written: the client closed its end",
                          answer.at("step").get<int>());
      return o;
    }
    if (answer.at("status") == "unjudged") {
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
