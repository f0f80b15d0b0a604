// blaster serve and blaster eval: candidates from a trainer that drives its own loop, judged as
// optimize's steps are and recorded the same way.
#include <atomic>
#include <csignal>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "benchmarking/candidate/candidate.hpp"
#include "cli/commands.hpp"
#include "cli/error_report.hpp"
#include "cli/judge_flags.hpp"
#include "cli/step_log.hpp"
#include "core/candidate_frontend.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/store.hpp"
#include "optimize/bench_evaluator.hpp"
#include "optimize/http_front.hpp"
#include "optimize/judging_session.hpp"
#include "optimize/serve_loop.hpp"
#include "optimize/untrusted_text.hpp"

namespace blaster::cli {

namespace {

// Where SIGINT and SIGTERM end serving over HTTP (a lock-free atomic: read in a handler).
std::atomic<http_front*> serving{nullptr};

extern "C" void stop_serving(int /*signal*/) {
  if (http_front* front = serving.load(); front != nullptr) front->stop();
}

}  // namespace

command_fn add_serve_command(CLI::App& app, const global_options& global) {
  struct flags {
    judge_flags judge;
    std::optional<int> http_port;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Judge candidates sent on standard input, one JSON object per line, and answer each on "
      "standard output with the verdict and reward an optimize step gets.");
  cmd->footer(
      "A request is a proposer's reply of optimize/PROTOCOL.md: {\"id\": 7, \"source\": \"/* "
      "blaster {...} */ ...\", \"hypothesis\": \"...\", \"tags\": [...], \"sessions\": 1}; \"id\" "
      "(any JSON) comes back in the answer. Requests are judged one at a time, in the order "
      "they arrive. An answer is the step's feedback: status (ok, compileerror, wrongresult), "
      "reason, message, compile_log, time_us, speedup, speedup_interval, roofline_pct, "
      "diagnosis, bound (bandwidth-, compute-, latency- or launch-bound, or unknown) and reward "
      "(the interval's low end after the gate; 0 when rejected or timed in one session), with "
      "run_id, step, bench_run_id and the CAS digests of the request and the source. A line "
      "that is not a candidate is answered as an invalid_reply step. Every request is a step of "
      "the serving run in the optimization memory; `blaster trajectories export --run R` "
      "exports it.\n\n"
      "Serving ends at the end of the input, at {\"stop\": true}, when the client closes its "
      "end, or when there is no GPU (exit 3, after answering the request that found out). A "
      "request cut off by the end of the input is dropped unjudged; a line over 2 MiB is "
      "answered {\"id\": null, \"error\": \"...\"} and not judged.\n\n"
      "With --http PORT the same requests come over HTTP on 127.0.0.1 only, and standard input "
      "is not read: POST /v1/evaluate with one request as the body (Content-Type: "
      "application/json and a Content-Length, at most 2 MiB) answers with its verdict; a "
      "request with an Origin other than this machine's loopback is refused (403), so that no "
      "web page can post candidates; "
      "POST /v1/stop, SIGINT or SIGTERM end serving after the requests under way. Connections "
      "are read concurrently and judged one at a time, in the order they arrived whole; a client "
      "that leaves before its request is whole is dropped unjudged.\n\n"
      "Examples:\n"
      "  trainer | blaster serve --task rmsnorm --sessions 2 | trainer-reader\n"
      "  blaster serve --task rmsnorm --http 8123 &\n"
      "  curl -s -H 'Content-Type: application/json' --data-binary @request.json "
      "http://127.0.0.1:8123/v1/evaluate");
  add_judge_flags(*cmd, f->judge, "request");
  cmd->add_option("--http", f->http_port,
                  "serve over HTTP on this port of 127.0.0.1 instead of standard input (0: any "
                  "free port, printed on stderr)")
      ->check(CLI::Range(0, 65535));
  return [f, &global]() {
    const judge_flags& j = f->judge;
    const auto root = resolve_root(global);
    const task_brief task = brief_of(root, j.task, j.case_name);
    std::string command = fmt::format("blaster serve --task {}{}", j.task, judge_flags_text(j));
    if (f->http_port) command += fmt::format(" --http {}", *f->http_port);
    store records(resolve_home(global.home));
    bench_evaluator evaluator(judge_options(root, task, j, command), records, j.reward_sessions);
    // A client that closed its end is an ending, not a signal that kills blaster.
    std::signal(SIGPIPE, SIG_IGN);
    std::optional<http_front> front;
    if (f->http_port) front.emplace(static_cast<std::uint16_t>(*f->http_port));
    judging_session session(records, evaluator, command, task, records.home() / "serve");
    serve_outcome o;
    if (front) {
      serving = &*front;
      std::signal(SIGINT, stop_serving);
      std::signal(SIGTERM, stop_serving);
      std::cerr << fmt::format(
                       "blaster: serving {} at http://127.0.0.1:{}/v1/evaluate (POST "
                       "/v1/stop ends it)\n",
                       task.name, front->port())
                << std::flush;
      o = front->run(session, {});
      serving = nullptr;
    } else {
      o = serve_requests(std::cin, std::cout, session, {});
    }
    if (o.ended == "failed") {
      session.fail();
      BLASTER_THROW("serving stopped: {}", o.why);
    }
    session.finish(o.ended, o.why, "serve");
    if (!global.quiet) {
      std::cerr << fmt::format("blaster: serve run {}: {} judged; {}\n", session.run_id(), o.judged,
                               o.why);
    }
    return static_cast<int>(o.ended == "no_gpu" ? exit_no_gpu : exit_ok);
  };
}

command_fn add_eval_command(CLI::App& app, const global_options& global) {
  struct flags {
    judge_flags judge;
    std::filesystem::path candidate;
    std::string hypothesis;
  };
  auto f = std::make_shared<flags>();
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Judge one candidate file as serve and optimize judge a step, record it, and print its "
      "verdict and reward.");
  cmd->footer(
      "The candidate is compiled, gated on every case and timed against the baseline like "
      "`bench --candidate F`; the result is the same answer `blaster serve` gives (with --json, "
      "its JSON), and the evaluation is a one-step run in the optimization memory.\n\n"
      "Exit status: 0 judged (whatever the verdict); 2 bad input (a candidate that is not a "
      "regular UTF-8 file of at most 256 KiB, say); 3 no GPU (with --json, the answer carries "
      "{\"error\": {...}} as bench's does).\n\n"
      "Example:\n  blaster eval --task rmsnorm --candidate kernels/rmsnorm/rmsnorm_vec_regs.cu "
      "--json");
  add_judge_flags(*cmd, f->judge, "evaluation");
  cmd->add_option("--candidate", f->candidate, "the candidate .cu file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--hypothesis", f->hypothesis, "one line kept with the evaluation");
  return [f, &global]() {
    const auto root = resolve_root(global);
    const judge_flags& j = f->judge;
    const task_brief task = brief_of(root, j.task, j.case_name);
    const std::string command = fmt::format("blaster eval --task {} --candidate {}{}", j.task,
                                            f->candidate.string(), judge_flags_text(j));
    // A candidate is a regular file, as bench takes one: a device such as /dev/zero or a FIFO is
    // refused unread, and so is a file larger than a reply's source may be.
    static_cast<void>(discover_candidates(root, j.task, {f->candidate}, compile_limits{}));
    // A step's source is compiled as CUDA C++, as a proposer's reply is: another kind would be
    // judged as what it is not.
    if (candidate_kind_of(f->candidate) != candidate_kind::cuda) {
      BLASTER_INPUT_ERROR(
          "{}: eval judges a CUDA C++ source (.cu), as serve and optimize judge a step; judge a "
          "{} candidate with `blaster bench --task {} --candidate {}`",
          f->candidate.string(), f->candidate.extension().string(), j.task,
          f->candidate.string());
    }
    const std::uintmax_t size = std::filesystem::file_size(f->candidate);
    const reply_limits limits;
    if (size > limits.max_source_bytes) {
      BLASTER_INPUT_ERROR("{}: {} bytes, more than the {} a candidate may have",
                          f->candidate.string(), size, limits.max_source_bytes);
    }
    const std::string source = read_file(f->candidate);
    if (const auto at = invalid_utf8_at(source)) {
      BLASTER_INPUT_ERROR("{}: byte 0x{:02X} at offset {} is not UTF-8 text; save the file as "
                          "UTF-8",
                          f->candidate.string(), static_cast<unsigned char>(source[*at]), *at);
    }
    store records(resolve_home(global.home));
    bench_evaluator evaluator(judge_options(root, task, j, command), records, j.reward_sessions);
    judging_session session(records, evaluator, command, task, records.home() / "serve");
    const std::string line =
        nlohmann::json{{"source", source}, {"hypothesis", valid_utf8(f->hypothesis)}}.dump();
    nlohmann::json answer = answer_request(session, line, parse_reply(line, limits));
    const attempt& a = session.steps().back();
    const bool unjudged = a.status == "unjudged";
    session.finish(unjudged ? "no_gpu" : "judged", unjudged ? session.cannot_judge() : a.status,
                   "eval");
    const std::string no_gpu = "judging a candidate needs a GPU: " + session.cannot_judge();
    if (global.json) {
      if (unjudged) answer["error"] = error_json("no_gpu", no_gpu)["error"];
      std::cout << answer.dump(2) << '\n';
    } else {
      // The user's file, not the copy the session compiled, and NVRTC's log under the step.
      const attempt shown = naming_file(a, f->candidate);
      fmt::print("eval {} ({}, {}): run {}\n{}\n{}", task.name, task.timed_case, task.shape,
                 session.run_id(), step_line(shown), log_lines(shown));
      if (!a.diagnosis.empty()) fmt::print("          {}\n", a.diagnosis);
    }
    if (unjudged) {
      std::cerr << "blaster: " << no_gpu << '\n';
      return static_cast<int>(exit_no_gpu);
    }
    return static_cast<int>(exit_ok);
  };
}

}  // namespace blaster::cli
