#pragma once

// The other direction of the loop: a trainer that drives itself sends candidates and blaster
// answers each with the verdict an optimize step gets. Requests are newline-delimited JSON in
// the reply format of optimize/PROTOCOL.md, with an optional "id" echoed in the answer; they are
// judged one at a time in arrival order, each recorded as a step of the serving run.

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
// and the judging run; for a step that found no GPU, why.
nlohmann::json answer_request(judging_session& session, const std::string& line,
                              const parsed_reply& request);

struct serve_outcome {
  // Why serving ended: input_closed (the client's end-of-file), client_left (it closed the
  // input in the middle of a request, which is dropped unjudged), client_gone (the answer
  // could not be written), stopped ({"stop": true}) or no_gpu; `why` in words.
  std::string ended;
  std::string why;
  int judged = 0;
};

serve_outcome serve_requests(std::istream& in, std::ostream& out, judging_session& session,
                             const reply_limits& limits);

}  // namespace blaster
