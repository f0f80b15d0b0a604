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
  // The line the client gets is the line kept: serve and HTTP write j.dump() as it is.
  session.keep_answer(j.dump());
  return j;
}

std::string too_large_request(std::size_t bytes, std::size_t max_bytes) {
  return fmt::format("the request has {} bytes, more than the {} a request may have", bytes,
                     max_bytes);
}

namespace {

enum class line_read { line, too_long, cut_off, end };

// One line of `in`, without its newline, kept only up to `max_bytes`: a longer one is read to
// its end and dropped (too_long, `bytes` its length), so that no client can make serve hold
// more than the cap. cut_off: the input ended inside the line.
line_read read_line(std::istream& in, std::string& line, std::size_t max_bytes,
                    std::size_t& bytes) {
  line.clear();
  bytes = 0;
  std::streambuf* buffer = in.rdbuf();
  for (;;) {
    const auto c = buffer->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return bytes == 0 ? line_read::end : line_read::cut_off;
    }
    if (c == '\n') return bytes > max_bytes ? line_read::too_long : line_read::line;
    ++bytes;
    if (bytes <= max_bytes) line.push_back(static_cast<char>(c));
  }
}

}  // namespace

serve_outcome serve_requests(std::istream& in, std::ostream& out, judging_session& session,
                             const reply_limits& limits, std::size_t max_line_bytes) {
  serve_outcome o;
  std::string line;
  for (;;) {
    std::size_t bytes = 0;
    const line_read read = read_line(in, line, max_line_bytes, bytes);
    if (read == line_read::end) break;
    if (read == line_read::cut_off) {
      // The input ended before this line's new-line: the client left while sending it.
      o.ended = "client_left";
      o.why = fmt::format("the input ended inside a request ({} bytes, dropped unjudged)", bytes);
      return o;
    }
    if (read == line_read::too_long) {
      ++o.refused;
      out << nlohmann::json{{"id", nullptr}, {"error", too_large_request(bytes, max_line_bytes)}}
                 .dump()
          << '\n'
          << std::flush;
      if (!out) {
        o.ended = "client_gone";
        o.why = "an answer could not be written: the client closed its end";
        return o;
      }
      continue;
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
  if (o.refused > 0) {
    o.why += fmt::format("; {} line{} over {} bytes refused", o.refused, o.refused == 1 ? "" : "s",
                         max_line_bytes);
  }
  return o;
}

}  // namespace blaster
