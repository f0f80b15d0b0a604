#include "benchmarking/correctness_gate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "benchmarking/output_dependence.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parallel_for.hpp"
#include "core/sha256.hpp"
#include "core/worker_process.hpp"
#include "tasks/input_generator.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// A constant (or zero) output passes where the reference barely moves relative to its
// tolerance; such a case proves little, and the task should draw wider inputs.
void guard_task_design(const task_spec& task, const gate_check& check, const std::string& buffer,
                       std::span<const double> r, std::vector<std::string>& warnings) {
  if (r.empty()) return;
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  std::size_t tiny = 0;
  std::mutex merge;  // a large case's outputs run to billions: every core takes a part
  parallel_for(static_cast<std::int64_t>(r.size()), [&](std::int64_t begin, std::int64_t end) {
    double part_low = std::numeric_limits<double>::infinity();
    double part_high = -part_low;
    std::size_t part_tiny = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = r[static_cast<std::size_t>(i)];
      if (!std::isfinite(v)) continue;
      part_low = std::min(part_low, v);
      part_high = std::max(part_high, v);
      if (std::fabs(v) <= task.tol.atol) ++part_tiny;
    }
    const std::lock_guard lock(merge);
    low = std::min(low, part_low);
    high = std::max(high, part_high);
    tiny += part_tiny;
  });
  const double widest = std::max(std::fabs(low), std::fabs(high));
  const double allowed = task.tol.atol + task.tol.rtol * widest;
  if (r.size() > 1 && high - low <= 2.0 * allowed) {
    warnings.push_back(fmt::format(
        "case {} seed {}: {} spans [{:.4g}, {:.4g}], within twice its tolerance ({:.3g}): a "
        "constant output could pass",
        check.case_name, check.seed, buffer, low, high, allowed));
  }
  if (2 * tiny > r.size()) {
    warnings.push_back(fmt::format(
        "case {} seed {}: {} of {} values of {} are within atol ({}) of zero: a zero output "
        "passes there",
        check.case_name, check.seed, tiny, r.size(), buffer, task.tol.atol));
  }
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::vector<std::uint64_t> gate_seeds(std::uint64_t run_seed) {
  return {0x0B1A57E5EED00001ULL, 0x0B1A57E5EED00002ULL, run_seed};
}

gate_data::gate_data(const task_spec& task, reference_fn reference,
                     const std::vector<std::uint64_t>& seeds, const std::filesystem::path& dir,
                     const std::string& timed_case)
    : inputs_path_(dir / "inputs.bin"), outputs_path_(dir / "outputs.bin") {
  const std::string& timed = timed_case.empty() ? task.canonical_case : timed_case;
  // Lay out every check: its inputs in one file, its outputs in the other.
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  auto align = [](std::size_t n) { return (n + 4095) / 4096 * 4096; };
  for (const auto& c : task.cases) {
    // A large case (gigabytes, KernelBench's current size) is checked only when it is timed, with
    // the run's own seed alone and one run: it adds index ranges to the proof, not more values;
    // determinism is proven by the repeated runs of the other cases.
    if (c.large && c.name != timed) continue;
    const std::size_t first_seed = c.large ? seeds.size() - 1 : 0;
    for (std::size_t s = first_seed; s < seeds.size(); ++s) {
      gate_check check{.case_name = c.name,
                       .seed = seeds[s],
                       .repeat = s == first_seed && !c.large,
                       .inputs = {},
                       .outputs = {}};
      for (const auto& b : task.buffers) {
        const std::size_t bytes = static_cast<std::size_t>(task.buffer_bytes(b, c));
        std::size_t& cursor = b.role == buffer_role::input ? input_bytes : output_bytes;
        (b.role == buffer_role::input ? check.inputs : check.outputs)
            .push_back({b.name, cursor, bytes, {}});
        cursor += align(bytes);
      }
      if (c.name == timed && s + 1 == seeds.size()) timed_check_ = checks_.size();
      checks_.push_back(std::move(check));
    }
  }

  mapped_file inputs = mapped_file::create(inputs_path_, std::max<std::size_t>(input_bytes, 1));
  outputs_ = mapped_file::create(outputs_path_, std::max<std::size_t>(output_bytes, 1));
  expected_.resize(checks_.size());
  for (std::size_t i = 0; i < checks_.size(); ++i) {
    gate_check& check = checks_[i];
    const task_case& c = task.find_case(check.case_name);
    std::vector<host_tensor> drawn;
    drawn.reserve(check.inputs.size());  // the reference reads spans into them
    reference_context io{.task = task, .which = c, .inputs = {}, .outputs = {}};
    for (buffer_slot& slot : check.inputs) {
      const buffer_spec& b = *task.find_buffer(slot.buffer);
      // The case's distribution: an override such as large magnitudes applies to it alone.
      drawn.push_back(generate_input(task, b, c, derive_seed(check.seed, c.name, slot.buffer)));
      const std::vector<std::byte>& bytes = drawn.back().bytes;
      std::copy(bytes.begin(), bytes.end(), inputs.slice(slot.offset, slot.bytes).begin());
      slot.sha256 = sha256_hex(std::span<const std::byte>(bytes));
      io.inputs[slot.buffer] = drawn.back().values;
    }
    expected_[i].resize(check.outputs.size());
    for (std::size_t k = 0; k < check.outputs.size(); ++k) {
      const buffer_spec& b = *task.find_buffer(check.outputs[k].buffer);
      expected_[i][k].assign(check.outputs[k].bytes / size_of(b.type), 0.0);
      io.outputs[b.name] = expected_[i][k];
    }
    reference(io);
    for (std::size_t k = 0; k < check.outputs.size(); ++k) {
      guard_task_design(task, check, check.outputs[k].buffer, expected_[i][k], warnings_);
    }
  }
}

gate_data::~gate_data() {
  std::error_code ignored;
  std::filesystem::remove(inputs_path_, ignored);
  std::filesystem::remove(outputs_path_, ignored);
}

std::span<const double> gate_data::expected(std::size_t check, std::size_t output) const {
  return expected_.at(check).at(output);
}

std::span<const std::byte> gate_data::produced(std::size_t check, std::size_t output) const {
  const buffer_slot& slot = checks_.at(check).outputs.at(output);
  return outputs_.slice(slot.offset, slot.bytes);
}

std::size_t gate_data::keep_timed_outputs(const std::filesystem::path& path) const {
  const auto& slots = checks_.at(timed_check_).outputs;
  const std::size_t base = slots.empty() ? 0 : slots.front().offset;
  const std::size_t end = slots.empty() ? 0 : slots.back().offset + slots.back().bytes;
  const auto bytes = outputs_.slice(base, end - base);
  // Scratch for this run alone: no need for write_file_atomically's fsync.
  mapped_file kept = mapped_file::create(path, std::max<std::size_t>(bytes.size(), 1));
  std::copy(bytes.begin(), bytes.end(), kept.slice(0, bytes.size()).begin());
  return base;
}

worker_answer worker_launcher::run(const worker_request& request,
                                   std::chrono::milliseconds deadline,
                                   const std::vector<std::string>& wrapper) const {
  const auto request_path =
      dir / fmt::format("request-{}-{}.json", to_string(request.phase), ::getpid());
  write_file_atomically(request_path, to_json(request).dump());
  std::string last_step;
  std::vector<std::string> argv = wrapper;
  argv.insert(argv.end(), {executable.string(), "__worker", request_path.string()});
  const worker_outcome outcome = run_worker(argv, deadline);
  std::error_code ignored;
  std::filesystem::remove(request_path, ignored);
  worker_answer answer;
  answer.wall_s = outcome.wall_s;
  answer.exit_code = outcome.how == worker_outcome::ending::exited ? outcome.exit_code : -1;
  json result;
  // Each step lasts until the next message; what precedes the first is the worker's start.
  std::string current = "start";
  double since_ms = 0.0;
  auto account = [&](double until_ms) {
    const double previous = answer.profile.value(current, 0.0);
    answer.profile[current] = previous + std::max(0.0, until_ms - since_ms);
    since_ms = until_ms;
  };
  for (const auto& line : outcome.messages) {
    const json message = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!message.is_object()) continue;
    if (message.contains("ms") && message["ms"].is_number()) {
      account(message["ms"].get<double>());
      if (message.contains("step") && message["step"].is_string()) {
        const auto name = message["step"].get<std::string>();
        current = name.substr(0, name.find(' '));  // "run 2" counts as "run"
      }
    }
    if (message.contains("step")) {
      last_step = message.dump();
    } else if (message.contains("result")) {
      result = message["result"];
    }
  }
  answer.profile["process"] = std::max(0.0, 1000.0 * outcome.wall_s - since_ms);
  if (!result.is_null() && outcome.how != worker_outcome::ending::timed_out) {
    answer.result = std::move(result);
    return answer;
  }
  answer.ended = reason_for_worker_ending(outcome);
  std::string where;
  if (!last_step.empty()) {
    const json step = json::parse(last_step);
    where = step.contains("check")
                ? fmt::format(" during {} of check {}", step["step"].get<std::string>(),
                              step["check"].get<std::size_t>())
                : fmt::format(" during {}", step["step"].get<std::string>());
  }
  answer.why = fmt::format("the worker {}{}", outcome.describe(), where);
  return answer;
}

namespace {

// The request for one phase over the run's shared data.
worker_request with_data(worker_request request, const gate_data& data, worker_phase phase) {
  request.phase = phase;
  request.checks = data.checks();
  request.timed_check = data.timed_check();
  request.inputs_file = data.inputs_file();
  if (phase == worker_phase::gate || request.outputs_file.empty()) {
    request.outputs_file = data.outputs_file();
    request.outputs_base = 0;
  }
  return request;
}

}  // namespace

namespace {

// A check whose first run faulted on an illegal address ran again with its guards mapped as
// canaries: a write into them names the buffer and the offset; else the access went farther
// than every guard, or it was a read.
std::pair<reason_code, std::string> locate_fault(const gate_data& data, worker_request request,
                                                 std::size_t check, const worker_launcher& launcher,
                                                 std::chrono::milliseconds deadline) {
  const std::size_t guard_mib = request.guard_bytes >> 20U;
  request = with_data(std::move(request), data, worker_phase::locate);
  request.timed_check = check;
  const worker_answer answer = launcher.run(request, deadline);
  const json& result = answer.result;
  if (result.is_object() && result.contains("located")) {
    const json& canaries = result["located"].at("canaries");
    if (!canaries.empty()) {
      const json& c = canaries.front();
      const long long offset = c.at("byte_offset").get<long long>();
      const std::string buffer = c.at("buffer").get<std::string>();
      return {reason_code::out_of_bounds_write,
              offset < 0 ? fmt::format("{} was written {} bytes before its start (the access "
                                       "faulted on the unmapped guard; a rerun with the guard "
                                       "mapped found the write)",
                                       buffer, -offset)
                         : fmt::format("{} was written at byte {}, past its end at {} (the "
                                       "access faulted on the unmapped guard; a rerun with the "
                                       "guard mapped found the write)",
                                       buffer, offset, c.at("bytes").get<std::size_t>())};
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

}  // namespace

gate_outcome run_gate(const task_spec& task, const gate_data& data, worker_request request,
                      const worker_launcher& launcher, std::chrono::milliseconds deadline) {
  const std::uint64_t poison_seed = request.poison_seed;
  const worker_request asked = request;
  const worker_answer answer =
      launcher.run(with_data(std::move(request), data, worker_phase::gate), deadline);
  const json& result = answer.result;
  gate_outcome out;
  out.wall_s = answer.wall_s;
  out.profile = answer.profile;

  auto fail = [&](reason_code reason, std::string message) {
    if (out.reason != reason_code::none) return;
    out.reason = reason;
    out.message = std::move(message);
  };
  // Judge every check the worker finished, in order; the first failure is the verdict.
  const json checks = result.is_object() ? result.value("checks", json::array()) : json::array();
  for (const auto& reported : checks) {
    const std::size_t i = reported.at("check").get<std::size_t>();
    const gate_check& check = data.checks().at(i);
    const task_case& c = task.find_case(check.case_name);
    case_check verdict{.case_name = check.case_name,
                       .seed = check.seed,
                       .reason = reason_code::none,
                       .message = {},
                       .outputs = {},
                       .worker = reported};
    const std::string where =
        fmt::format("case {} ({}), seed {:#x}", c.name, task.describe(c), check.seed);
    auto set = [&](reason_code reason, std::string message) {
      if (verdict.reason != reason_code::none) return;
      verdict.reason = reason;
      verdict.message = fmt::format("{}: {}", where, message);
    };
    for (const auto& canary : reported.at("canaries")) {
      const long long offset = canary.at("byte_offset").get<long long>();
      set(reason_code::out_of_bounds_write,
          offset < 0 ? fmt::format("{} was written {} bytes before its start",
                                   canary.at("buffer").get<std::string>(), -offset)
                     : fmt::format("{} was written at byte {}, past its end at {}",
                                   canary.at("buffer").get<std::string>(), offset,
                                   canary.at("bytes").get<std::size_t>()));
    }
    for (const auto& input : reported.at("inputs")) {
      if (input.contains("first_index")) {
        set(reason_code::input_modified,
            fmt::format("input {} changed: {} elements, the first at [{}] (sha256 {} before, {} "
                        "after)",
                        input.at("buffer").get<std::string>(),
                        input.at("differing_elements").get<std::size_t>(),
                        input.at("first_index").get<std::size_t>(),
                        input.at("sha256_before").get<std::string>().substr(0, 12),
                        input.at("sha256_after").get<std::string>().substr(0, 12)));
      }
    }
    for (std::size_t k = 0; k < check.outputs.size(); ++k) {
      const buffer_spec& b = *task.find_buffer(check.outputs[k].buffer);
      verdict.outputs.push_back(compare_output(b.name, b.type, poison_pattern(b.type, poison_seed),
                                               data.produced(i, k), data.expected(i, k), task.tol));
      if (const reason_code r = failure_reason(verdict.outputs.back()); r != reason_code::none) {
        set(r, describe_failure(verdict.outputs.back()));
      }
    }
    if (reported.contains("nondeterministic")) {
      const json& n = reported["nondeterministic"];
      set(reason_code::nondeterministic,
          fmt::format("run {} of {} on the same inputs differs from run 1 in {} elements of {}, "
                      "the first at [{}]",
                      n.at("run").get<int>(), reported.at("runs").get<int>(),
                      n.at("differing_elements").get<std::size_t>(),
                      n.at("buffer").get<std::string>(), n.at("first_index").get<std::size_t>()));
    }
    if (verdict.reason != reason_code::none) fail(verdict.reason, verdict.message);
    out.checks.push_back(std::move(verdict));
  }
  if (result.is_object() && result.contains("failure")) {
    const json& f = result["failure"];
    std::string where;
    reason_code reason =
        parse_reason_code(f.at("reason").get<std::string>()).value_or(reason_code::crash);
    std::string message = first_line(f.at("message").get<std::string>());
    if (f.contains("check")) {
      const std::size_t i = f["check"].get<std::size_t>();
      const gate_check& check = data.checks().at(i);
      where = fmt::format("case {}, seed {:#x}: ", check.case_name, check.seed);
      if (f.value("cuda_error", std::string()) == "CUDA_ERROR_ILLEGAL_ADDRESS" &&
          out.reason == reason_code::none) {
        auto [located, why] = locate_fault(data, asked, i, launcher, deadline);
        reason = located;
        message = fmt::format("{} ({})", why, message);
      }
    }
    fail(reason, where + message);
  }
  if (result.is_null()) fail(answer.ended, answer.why);
  if (out.reason == reason_code::none && out.checks.size() != data.checks().size()) {
    fail(reason_code::crash, fmt::format("the worker reported {} of {} checks", out.checks.size(),
                                         data.checks().size()));
  }
  return out;
}

timing_outcome run_timing(const gate_data& data, worker_request request,
                          const worker_launcher& launcher, std::chrono::milliseconds deadline,
                          double copy_bytes_per_second) {
  const worker_answer answer =
      launcher.run(with_data(std::move(request), data, worker_phase::time), deadline);
  const json& result = answer.result;
  timing_outcome out;
  out.wall_s = answer.wall_s;
  out.profile = answer.profile;
  if (result.is_null()) {
    out.reason = answer.ended;
    out.message = "timing: " + answer.why;
    return out;
  }
  if (result.contains("failure")) {
    const json& f = result["failure"];
    out.reason = parse_reason_code(f.at("reason").get<std::string>()).value_or(reason_code::crash);
    out.message = "timing: " + first_line(f.at("message").get<std::string>());
    return out;
  }
  const json& t = result.at("timing");
  const json& poisoned = t.at("poisoned_launches");
  const json no_stale;
  const bool every = t.at("spot_every_sample").get<bool>();
  for (const char* key : {"spot_stale", "final_stale", "poisoned_stale"}) {
    const std::string which = key;
    const json& s = which == "poisoned_stale"
                        ? (poisoned.is_null() ? no_stale : poisoned.at("stale"))
                        : t.at(key);
    if (s.is_null()) continue;
    out.reason = reason_code::stale_in_timing;
    std::string when = "a launch on poisoned outputs after the timing";
    if (which == "spot_stale") {
      when = every ? fmt::format("sample {} of the timing, each on freshly poisoned outputs",
                                 t.at("spot_sample").get<int>() + 1)
                   : fmt::format("sample {} of the timing", t.at("spot_sample").get<int>() + 1);
    } else if (which == "final_stale") {
      when = "a launch after the timing";
    }
    out.message = fmt::format(
        "{} of a timed launch differs from the checked output in {} elements, the first at [{}] "
        "({})",
        s.at("buffer").get<std::string>(), s.at("differing_elements").get<std::size_t>(),
        s.at("first_index").get<std::size_t>(), when);
    return out;
  }
  if (!poisoned.is_null()) {
    out.poisoned = poisoned_launches_from_json(poisoned);
    if (auto why = output_dependence(*out.poisoned, copy_bytes_per_second)) {
      out.reason = reason_code::stale_in_timing;
      out.message = "timing: " + *why;
      return out;
    }
  }
  timing_samples samples;
  samples.mode = parse_timing_mode(t.at("mode").get<std::string>()).value_or(timing_mode::hot);
  samples.inner = t.at("inner").get<int>();
  samples.copies = t.value("copies", 1);
  samples.source = t.at("source").get<std::string>();
  samples.sample_us = t.at("sample_us").get<std::vector<double>>();
  samples.event_us = t.at("event_us").get<std::vector<double>>();
  samples.taken = t.at("taken").get<int>();
  samples.median_us = t.at("median_us").get<double>();
  samples.noise = t.at("noise").get<double>();
  samples.stopped_by = t.at("stopped_by").get<std::string>();
  samples.discarded = t.at("discarded").get<int>();
  samples.mean_clock_mhz = t.at("mean_clock_mhz").get<double>();
  const json& activity = t.at("activity");
  samples.kernel_us = activity.at("kernel_us").get<double>();
  samples.activity_event_us = activity.at("event_us").get<double>();
  samples.observed_runs = activity.at("runs").get<int>();
  for (const auto& k : activity.at("kernels")) {
    samples.kernels.emplace_back(k.at("kernel").get<std::string>(), k.at("count").get<int>());
    samples.kernel_us_by_name[k.at("kernel").get<std::string>()] = k.at("us").get<double>();
  }
  samples.activity_error = activity.value("error", std::string());
  out.timing = std::move(samples);
  return out;
}

}  // namespace blaster
