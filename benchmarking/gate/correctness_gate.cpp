#include "benchmarking/gate/correctness_gate.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace blaster {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string canary_message(const canary_hit& c) {
  return c.byte_offset < 0
             ? fmt::format("{} was written {} bytes before its start", c.buffer, -c.byte_offset)
             : fmt::format("{} was written at byte {}, past its end at {}", c.buffer, c.byte_offset,
                           c.bytes);
}

// A check whose first run faulted on an illegal address ran again with its guards mapped as
// canaries: a write into them names the buffer and the offset; else the access went farther
// than every guard, or it was a read.
std::pair<reason_code, std::string> locate_fault(const gate_data& data, worker_request request,
                                                 std::size_t check, const worker_launcher& launcher,
                                                 std::chrono::milliseconds deadline) {
  const std::size_t guard_mib = request.guard_bytes >> 20U;
  request = with_data(std::move(request), data, worker_phase::locate, launcher.lane);
  request.timed_check = check;
  const worker_answer answer = launcher.run(request, deadline);
  if (answer.result && answer.result->located) {
    const auto& canaries = answer.result->located->canaries;
    if (!canaries.empty()) {
      return {reason_code::out_of_bounds_write,
              canary_message(canaries.front()) +
                  " (the access faulted on the unmapped guard; a rerun with the guard mapped "
                  "found the write)"};
    }
    return {reason_code::crash,
            fmt::format("an illegal address: a rerun with {} MiB of mapped guards on each side of "
                        "every buffer wrote none of them, so the kernel read outside its buffers",
                        guard_mib)};
  }
  return {reason_code::crash,
          fmt::format("an illegal address farther than {} MiB from every buffer (a rerun with the "
                      "guards mapped faulted too)",
                      guard_mib)};
}

// One check's verdict from its evidence and the outputs it left in `lane`'s file; the first
// failure in this order decides.
case_check judge_check(const task_spec& task, const gate_data& data, std::size_t lane,
                       std::uint64_t poison_seed, const check_evidence& reported) {
  const gate_check& check = data.checks().at(reported.check);
  const task_case& c = task.find_case(check.case_name);
  case_check verdict{.case_name = check.case_name,
                     .seed = check.seed,
                     .reason = reason_code::none,
                     .message = {},
                     .outputs = {},
                     .evidence = reported};
  const std::string where =
      fmt::format("case {} ({}), seed {:#x}", c.name, task.describe(c), check.seed);
  auto set = [&](reason_code reason, std::string message) {
    if (verdict.reason != reason_code::none) return;
    verdict.reason = reason;
    verdict.message = fmt::format("{}: {}", where, message);
  };
  for (const auto& canary : reported.canaries) {
    set(reason_code::out_of_bounds_write, canary_message(canary));
  }
  for (const auto& input : reported.inputs) {
    if (!input.first_index) continue;
    set(reason_code::input_modified,
        fmt::format("input {} changed: {} elements, the first at [{}] (sha256 {} before, {} after)",
                    input.buffer, input.differing_elements, *input.first_index,
                    input.sha256_before.substr(0, 12), input.sha256_after.substr(0, 12)));
  }
  for (std::size_t k = 0; k < check.outputs.size(); ++k) {
    const buffer_spec& b = *task.find_buffer(check.outputs[k].buffer);
    verdict.outputs.push_back(compare_output(
        b.name, b.type, poison_pattern(b.type, poison_seed), data.produced(reported.check, k, lane),
        data.expected(reported.check, k), task.tol, data.alternatives(reported.check, k)));
    if (const reason_code r = failure_reason(verdict.outputs.back()); r != reason_code::none) {
      set(r, describe_failure(verdict.outputs.back()));
    }
  }
  if (const auto& n = reported.nondeterministic) {
    set(reason_code::nondeterministic,
        fmt::format("run {} of {} on the same inputs differs from run 1 in {} elements of {}, "
                    "the first at [{}]",
                    n->run, reported.runs, n->differing_elements, n->buffer, n->first_index));
  }
  return verdict;
}

std::string stale_message(const stale_output& s, const std::string& when) {
  return fmt::format(
      "{} of a timed launch differs from the checked output in {} elements, the first at [{}] "
      "({})",
      s.buffer, s.differing_elements, s.first_index, when);
}

// What one timing worker's answer comes to; `dependent` is set where the only fault found is the
// time of launches timed one at a time: on poisoned outputs against their control, or on the
// case's other draws against the timed one.
timing_outcome judge_timing(const worker_answer& answer, bool& dependent) {
  dependent = false;
  timing_outcome out;
  out.wall_s = answer.wall_s;
  out.profile = answer.profile;
  if (!answer.result) {
    out.reason = answer.ended;
    out.message = "timing: " + answer.why;
    return out;
  }
  if (const auto& f = answer.result->failure) {
    out.reason = f->reason;
    out.message = "timing: " + first_line(f->message);
    return out;
  }
  if (!answer.result->timing) {
    out.reason = reason_code::crash;
    out.message = "timing: the worker answered without a timing";
    return out;
  }
  const timing_answer& t = *answer.result->timing;
  const timing_checks& c = t.checks;
  auto stale = [&](const stale_output& s, const std::string& when) {
    out.reason = reason_code::stale_in_timing;
    out.message = stale_message(s, when);
    return out;
  };
  if (c.spot_stale) {
    return stale(*c.spot_stale,
                 c.spot_every_sample
                     ? fmt::format("sample {} of the timing, each on freshly poisoned outputs",
                                   c.spot_sample + 1)
                     : fmt::format("sample {} of the timing", c.spot_sample + 1));
  }
  if (c.final_stale) return stale(*c.final_stale, "a launch after the timing");
  if (c.poisoned_stale) {
    return stale(*c.poisoned_stale, "a launch on poisoned outputs after the timing");
  }
  out.unseen = c.unseen;
  if (c.unseen) {
    if (auto why = kept_answers(*c.unseen)) {
      out.reason = reason_code::stale_in_timing;
      out.message = "timing: " + *why;
      return out;
    }
  }
  if (c.poisoned) {
    out.poisoned = c.poisoned;
    if (auto why = output_dependence(*c.poisoned)) {
      dependent = true;
      out.reason = reason_code::stale_in_timing;
      out.message = "timing: " + *why;
      return out;
    }
  }
  if (c.unseen) {
    if (auto why = input_dependence(*c.unseen)) {
      dependent = true;
      out.reason = reason_code::stale_in_timing;
      out.message = "timing: " + *why;
      return out;
    }
  }
  out.timing = t.samples;
  return out;
}

}  // namespace

gate_outcome run_gate(const task_spec& task, const gate_data& data, worker_request request,
                      const worker_launcher& launcher, std::chrono::milliseconds deadline) {
  const std::uint64_t poison_seed = request.poison_seed;
  const worker_request asked = request;
  const worker_answer answer = launcher.run(
      with_data(std::move(request), data, worker_phase::gate, launcher.lane), deadline);
  gate_outcome out;
  out.wall_s = answer.wall_s;
  out.profile = answer.profile;

  auto fail = [&](reason_code reason, std::string message) {
    if (out.reason != reason_code::none) return;
    out.reason = reason;
    out.message = std::move(message);
  };
  // Judge every check the worker finished, in order; the first failure is the verdict.
  if (answer.result) {
    // The parent's share of the gate: the outputs against the float64 references.
    const phase_timer judging(out.profile, "judge");
    for (const auto& reported : answer.result->checks) {
      if (reported.check >= data.checks().size()) {
        fail(reason_code::crash, fmt::format("the worker reported check {} of {}", reported.check,
                                             data.checks().size()));
        break;
      }
      case_check verdict = judge_check(task, data, launcher.lane, poison_seed, reported);
      if (verdict.reason != reason_code::none) fail(verdict.reason, verdict.message);
      out.checks.push_back(std::move(verdict));
    }
  }
  if (answer.result && answer.result->failure) {
    const worker_failure& f = *answer.result->failure;
    std::string where;
    reason_code reason = f.reason;
    std::string message = first_line(f.message);
    if (f.check && *f.check < data.checks().size()) {
      const gate_check& check = data.checks()[*f.check];
      where = fmt::format("case {}, seed {:#x}: ", check.case_name, check.seed);
      if (f.cuda_error == "CUDA_ERROR_ILLEGAL_ADDRESS" && out.reason == reason_code::none) {
        auto [located, why] = locate_fault(data, asked, *f.check, launcher, deadline);
        reason = located;
        message = fmt::format("{} ({})", why, message);
      }
    }
    fail(reason, where + message);
  }
  if (!answer.result) fail(answer.ended, answer.why);
  if (out.reason == reason_code::none && out.checks.size() != data.checks().size()) {
    fail(reason_code::crash, fmt::format("the worker reported {} of {} checks", out.checks.size(),
                                         data.checks().size()));
  }
  return out;
}

timing_outcome run_timing(const gate_data& data, worker_request request,
                          const worker_launcher& launcher, std::chrono::milliseconds deadline) {
  request = with_data(std::move(request), data, worker_phase::time, launcher.lane);
  bool dependent = false;
  timing_outcome out = judge_timing(launcher.run(request, deadline), dependent);
  if (!dependent || launcher.kept == nullptr) return out;
  // A kept worker's context has lived through other evaluations, and there an honest kernel's
  // launches on poisoned outputs have come out slower than their control (the naive softmax on
  // the H200: 37 against 30 us, in 5 of 14 loop steps, and in none of the fresh processes of the
  // bench runs beside them). A fresh worker, as bench starts for every evaluation, times it
  // again, and its answer stands.
  spdlog::info(
      "{}: launches in the kept worker depended on the outputs ({}); timing again in a "
      "fresh worker",
      request.variant, out.message);
  worker_launcher fresh = launcher;
  fresh.kept = nullptr;
  const double kept_wall_s = out.wall_s;
  out = judge_timing(fresh.run(request, deadline), dependent);
  out.wall_s += kept_wall_s;
  return out;
}

}  // namespace blaster
