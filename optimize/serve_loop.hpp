#pragma once

// The other direction of the loop: a trainer that drives itself sends candidates and blaster
// answers each with the verdict an optimize step gets. Requests are newline-delimited JSON in
// the reply format of optimize/PROTOCOL.md, with an optional "id" echoed in the answer; they are
// judged one at a time in arrival order, each recorded as a step of the serving run.

#include <cstddef>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "optimize/attempt.hpp"
#include "optimize/protocol.hpp"

namespace blaster {

class judging_session;

// Judges one request (`line` as it came, `request` what parse_reply made of it; not a stop) as the
// session's next step and answers it: the step's feedback (status, reason, evidence, timing,
// speedup interval, reward, diagnosis) with the request's "id", the run, the step's CAS digests
// and the judging run; for a step that found no GPU, why. Its compact form (dump()) is kept in the
// CAS as the step's answer: the caller writes exactly that.
nlohmann::json answer_request(judging_session& session, const std::string& line,
                              const parsed_reply& request);

// [bytes] The largest request taken, a line on standard input or a body over HTTP: a 256 KiB
// source, JSON-escaped, and more.
inline constexpr std::size_t max_request_bytes = 2 * 1024 * 1024;

// What a client is told of a request over the cap, which is refused unread and unjudged.
std::string too_large_request(std::size_t bytes, std::size_t max_bytes);

struct serve_outcome {
  // Why serving ended: input_closed (the client's end-of-file), client_left (it closed the
  // input in the middle of a request, which is dropped unjudged), client_gone (the answer
  // could not be written), stopped ({"stop": true}) or no_gpu; `why` in words.
  std::string ended;
  std::string why;
  int judged = 0;
  int refused = 0;  // lines over max_line_bytes, answered with an error and not judged
};

// Judges each line of `in` and answers it on `out`. A line over `max_line_bytes` is answered
// {"id": null, "error": "..."}, as HTTP refuses such a body with 400, and is not a step.
serve_outcome serve_requests(std::istream& in, std::ostream& out, judging_session& session,
                             const reply_limits& limits,
                             std::size_t max_line_bytes = max_request_bytes);

}  // namespace blaster
