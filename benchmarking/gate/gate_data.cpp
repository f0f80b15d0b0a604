#include "benchmarking/gate/gate_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/parallel_for.hpp"
#include "core/sha256.hpp"
#include "tasks/input_generator.hpp"

namespace blaster {
namespace {

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
  // An integer's zeros are exact values: a zero output matches only those, and fails the rest.
  const bool integer = !is_floating(task.find_buffer(buffer)->type);
  if (!integer && 2 * tiny > r.size()) {
    warnings.push_back(fmt::format(
        "case {} seed {}: {} of {} values of {} are within atol ({}) of zero: a zero output "
        "passes there",
        check.case_name, check.seed, tiny, r.size(), buffer, task.tol.atol));
  }
}

}  // namespace

std::vector<std::uint64_t> gate_seeds(std::uint64_t run_seed) {
  return {0x0B1A57E5EED00001ULL, 0x0B1A57E5EED00002ULL, run_seed};
}

gate_data::gate_data(const task_spec& task, reference_fn reference,
                     const std::vector<std::uint64_t>& seeds, const std::filesystem::path& dir,
                     const std::vector<std::string>& timed_cases, std::size_t lanes)
    : inputs_path_(dir / "inputs.bin") {
  for (std::size_t lane = 0; lane < std::max<std::size_t>(lanes, 1); ++lane) {
    outputs_paths_.push_back(
        dir / (lane == 0 ? std::string("outputs.bin") : fmt::format("outputs-{}.bin", lane)));
  }
  const std::vector<std::string> timed =
      timed_cases.empty() ? std::vector<std::string>{task.canonical_case} : timed_cases;
  auto is_timed = [&](const task_case& c) {
    return std::find(timed.begin(), timed.end(), c.name) != timed.end();
  };
  // Lay out every check: its inputs in one file, its outputs in the other.
  std::size_t input_bytes = 0;
  std::size_t output_bytes = 0;
  auto align = [](std::size_t n) { return (n + 4095) / 4096 * 4096; };
  for (const auto& c : task.cases) {
    // A large case (gigabytes, KernelBench's current size) is checked only when it is timed, with
    // the run's own seed and the fixed one before it, one run each: it adds index ranges to the
    // proof, not more values, and the timing a draw it did not time (time_phase); determinism is
    // proven by the repeated runs of the other cases.
    if (c.large && !is_timed(c)) continue;
    const std::size_t first_seed =
        c.large ? seeds.size() - std::min<std::size_t>(2, seeds.size()) : 0;
    for (std::size_t s = first_seed; s < seeds.size(); ++s) {
      gate_check check{.case_name = c.name,
                       .seed = seeds[s],
                       .repeat = s == first_seed && !c.large,
                       .inputs = {},
                       .outputs = {}};
      // An inout buffer is both: drawn into the inputs, its final bytes into the outputs.
      for (const auto& b : task.buffers) {
        const std::size_t bytes = static_cast<std::size_t>(task.buffer_bytes(b, c));
        if (is_drawn(b.role)) {
          check.inputs.push_back({b.name, input_bytes, bytes, {}});
          input_bytes += align(bytes);
        }
        if (is_checked(b.role)) {
          check.outputs.push_back({b.name, output_bytes, bytes, {}});
          output_bytes += align(bytes);
        }
      }
      if (is_timed(c) && s + 1 == seeds.size()) timed_checks_[c.name] = checks_.size();
      checks_.push_back(std::move(check));
    }
  }

  for (const auto& name : timed) {
    if (!timed_checks_.contains(name))
      BLASTER_THROW("task {} has no case {} to time", task.name, name);
  }
  timed_check_ = timed_checks_.at(timed.front());

  mapped_file inputs = mapped_file::create(inputs_path_, std::max<std::size_t>(input_bytes, 1));
  for (const auto& path : outputs_paths_)
    outputs_.push_back(mapped_file::create(path, std::max<std::size_t>(output_bytes, 1)));
  expected_.resize(checks_.size());
  alternatives_.resize(checks_.size());
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
    alternatives_[i].resize(check.outputs.size());
    for (std::size_t k = 0; k < check.outputs.size(); ++k) {
      const buffer_spec& b = *task.find_buffer(check.outputs[k].buffer);
      const std::size_t elements = check.outputs[k].bytes / size_of(b.type);
      expected_[i][k].assign(elements, 0.0);
      io.outputs[b.name] = expected_[i][k];
      if (!is_floating(b.type)) {
        alternatives_[i][k].assign(elements, std::numeric_limits<double>::quiet_NaN());
        io.alternatives[b.name] = alternatives_[i][k];
      }
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
  for (const auto& path : outputs_paths_) std::filesystem::remove(path, ignored);
}

std::span<const double> gate_data::alternatives(std::size_t check, std::size_t output) const {
  return alternatives_.at(check).at(output);
}

std::span<const double> gate_data::expected(std::size_t check, std::size_t output) const {
  return expected_.at(check).at(output);
}

std::span<const std::byte> gate_data::produced(std::size_t check, std::size_t output,
                                               std::size_t lane) const {
  const buffer_slot& slot = checks_.at(check).outputs.at(output);
  return outputs_.at(lane).slice(slot.offset, slot.bytes);
}

std::size_t gate_data::timed_check(const std::string& case_name) const {
  const auto found = timed_checks_.find(case_name);
  if (found == timed_checks_.end()) {
    BLASTER_THROW("case {} is not among the cases this gate data was prepared to time", case_name);
  }
  return found->second;
}

std::vector<std::string> gate_data::timed_cases() const {
  std::vector<std::string> names;
  for (const auto& [name, check] : timed_checks_) names.push_back(name);
  return names;
}

std::size_t gate_data::keep_timed_outputs(const std::filesystem::path& path,
                                          const std::string& case_name, std::size_t lane) const {
  const auto& slots = checks_.at(timed_check(case_name)).outputs;
  const std::size_t base = slots.empty() ? 0 : slots.front().offset;
  const std::size_t end = slots.empty() ? 0 : slots.back().offset + slots.back().bytes;
  const auto bytes = outputs_.at(lane).slice(base, end - base);
  // Scratch for this run alone: no need for write_file_atomically's fsync.
  mapped_file kept = mapped_file::create(path, std::max<std::size_t>(bytes.size(), 1));
  std::copy(bytes.begin(), bytes.end(), kept.slice(0, bytes.size()).begin());
  return base;
}

std::map<std::size_t, std::vector<std::string>> gate_data::other_draws_sha256(
    const std::string& case_name, std::size_t lane) const {
  const std::size_t timed = timed_check(case_name);
  std::map<std::size_t, std::vector<std::string>> out;
  for (std::size_t k = 0; k < checks_.size(); ++k) {
    if (k == timed || checks_[k].case_name != case_name) continue;
    for (std::size_t o = 0; o < checks_[k].outputs.size(); ++o)
      out[k].push_back(piecewise_sha256_hex(produced(k, o, lane)));
  }
  return out;
}

worker_request with_data(worker_request request, const gate_data& data, worker_phase phase,
                         std::size_t lane) {
  request.phase = phase;
  request.checks = data.checks();
  request.timed_check = data.timed_check();
  request.inputs_file = data.inputs_file();
  if (phase == worker_phase::gate || request.outputs_file.empty()) {
    request.outputs_file = data.outputs_file(lane);
    request.outputs_base = 0;
  }
  return request;
}

}  // namespace blaster
