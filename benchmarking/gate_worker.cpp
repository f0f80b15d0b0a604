#include "benchmarking/gate_worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "benchmarking/candidate.hpp"
#include "benchmarking/device_compare.hpp"
#include "benchmarking/gate_protocol.hpp"
#include "benchmarking/kernel_binding.hpp"
#include "benchmarking/kernel_timer.hpp"
#include "benchmarking/l2_flush.hpp"
#include "benchmarking/launch_floor.hpp"
#include "benchmarking/memory_ceilings.hpp"
#include "benchmarking/output_dependence.hpp"
#include "benchmarking/reason_code.hpp"
#include "benchmarking/sm_clock_probe.hpp"
#include "core/cas_store.hpp"
#include "core/compile_cache.hpp"
#include "core/cuda_context.hpp"
#include "core/cuda_driver.hpp"
#include "core/cuda_module.hpp"
#include "core/cuda_stream.hpp"
#include "core/device_buffer.hpp"
#include "core/file_io.hpp"
#include "core/guarded_buffer.hpp"
#include "core/mapped_file.hpp"
#include "core/sha256.hpp"
#include "core/worker_process.hpp"
#include "profiling/kernel_activity.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

std::chrono::steady_clock::time_point worker_start;

// The result channel: one JSON document per line, each stamped with the milliseconds since the
// worker started, so that the parent can tell where an evaluation's time goes.
void send(json message) {
  message["ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - worker_start)
          .count();
  const std::string line = message.dump() + "\n";
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = ::write(worker_result_fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);  // the parent is gone; nobody is left to tell
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

void step(const std::string& what, std::optional<std::size_t> check = std::nullopt) {
  json j = {{"step", what}};
  if (check) j["check"] = *check;
  send(j);
}

// A failure the worker can name itself; the parent turns it into the candidate's verdict.
struct worker_failure {
  reason_code reason;
  std::string message;
};

void set_pattern(CUdeviceptr at, std::size_t bytes, std::uint32_t pattern, std::size_t width,
                 CUstream stream) {
  const cuda::driver_api& api = cuda::driver();
  if (bytes == 0) return;
  if (width == 2) {
    cuda::check(
        api.cuMemsetD16Async(at, static_cast<unsigned short>(pattern & 0xFFFFU), bytes / 2, stream),
        "cuMemsetD16Async");
  } else if (width == 1) {
    cuda::check(api.cuMemsetD8Async(at, static_cast<unsigned char>(pattern & 0xFFU), bytes, stream),
                "cuMemsetD8Async");
  } else {
    cuda::check(api.cuMemsetD32Async(at, pattern, bytes / 4, stream), "cuMemsetD32Async");
  }
}

// Everything a check needs on the device: the task's buffers and the plan's scratch.
struct check_buffers {
  std::map<std::string, cuda::guarded_buffer, std::less<>> buffers;
  std::map<std::string, CUdeviceptr, std::less<>> pointers;
  std::map<std::string, dtype, std::less<>> output_types;  // outputs and scratch, to poison
};

struct worker_context {
  worker_context(const worker_request& r, cuda::context& c, cuda::stream& s)
      : request(r), context(c), stream(s) {}

  const worker_request& request;
  cuda::context& context;
  cuda::stream& stream;
  std::optional<cas_store> cas;
  std::optional<compile_cache> cache;
  task_spec task;
  candidate_file candidate;
  const candidate_variant* variant = nullptr;
  std::optional<cuda::module> module;
  mapped_file inputs;
  mapped_file outputs;
  // Draws each buffer's jitter: where its guard ends and its data begins is new every time.
  std::mt19937_64 placement{std::random_device{}()};
  // Host memory for what is downloaded only to be compared, kept across checks: a fresh
  // vector would be zero-filled and paged in for every download.
  std::vector<std::byte> host;
  std::span<std::byte> host_bytes(std::size_t bytes) {
    if (host.size() < bytes) host.resize(bytes);
    return {host.data(), bytes};
  }
};

// Every buffer between unmapped guards, with canaries of `canary_bytes` inside them (the
// request's, or the whole guard where a fault is being located).
check_buffers allocate_check(worker_context& w, const gate_check& check, const resolved_plan& plan,
                             std::size_t canary_bytes) {
  const task_case& c = w.task.find_case(check.case_name);
  check_buffers out;
  std::uniform_int_distribution<std::size_t> jitter(0, 31);
  auto add = [&](const std::string& name, std::size_t bytes) -> cuda::guarded_buffer& {
    const cuda::guard_layout layout{.canary_bytes = canary_bytes,
                                    .guard_bytes = w.request.guard_bytes,
                                    .jitter_granules = jitter(w.placement)};
    auto [it, inserted] = out.buffers.try_emplace(name, w.context.device(), bytes, layout);
    it->second.fill_canaries(w.request.canary_pattern, w.stream.get());
    out.pointers[name] = it->second.data();
    return it->second;
  };
  for (const auto& b : w.task.buffers) {
    add(b.name, static_cast<std::size_t>(w.task.buffer_bytes(b, c)));
    if (b.role == buffer_role::output) out.output_types[b.name] = b.type;
  }
  for (const auto& [name, bytes] : plan.scratch) {
    add(name, static_cast<std::size_t>(bytes));
    out.output_types[name] = dtype::i32;  // scratch is poisoned with the integer pattern
  }
  // In stream order: the canaries first, then the inputs in the middle of them.
  for (const auto& slot : check.inputs) {
    out.buffers.at(slot.buffer)
        .upload_async(w.inputs.slice(slot.offset, slot.bytes), w.stream.get());
  }
  return out;
}

check_buffers allocate_check(worker_context& w, const gate_check& check,
                             const resolved_plan& plan) {
  return allocate_check(w, check, plan, w.request.canary_bytes);
}

// Outputs and scratch get the run's poison pattern, which no kernel can know in advance.
void poison(worker_context& w, check_buffers& b) {
  for (const auto& [name, type] : b.output_types) {
    const cuda::guarded_buffer& buffer = b.buffers.at(name);
    const std::size_t width = size_of(type) == 2 ? 2 : (buffer.bytes() % 4 == 0 ? 4 : 1);
    set_pattern(buffer.data(), buffer.bytes(), poison_pattern(type, w.request.poison_seed), width,
                w.stream.get());
  }
}

// [bytes] what poison() writes: every output and scratch buffer of a set.
std::size_t poisoned_bytes(const check_buffers& b) {
  std::size_t bytes = 0;
  for (const auto& [name, type] : b.output_types) bytes += b.buffers.at(name).bytes();
  return bytes;
}

// [bytes] every buffer of a set: what one run of the plan keeps in memory.
std::size_t footprint_bytes(const check_buffers& b) {
  std::size_t bytes = 0;
  for (const auto& [name, buffer] : b.buffers) bytes += buffer.bytes();
  return bytes;
}

// The canaries that changed, each with its buffer and byte offset.
json changed_canaries(const worker_context& w, const check_buffers& b) {
  json canaries = json::array();
  for (const auto& [name, buffer] : b.buffers) {
    if (auto offset = buffer.changed_canary(w.request.canary_pattern)) {
      canaries.push_back({{"buffer", name}, {"byte_offset", *offset}, {"bytes", buffer.bytes()}});
    }
  }
  return canaries;
}

// Every fill and upload goes on the harness's stream, in order; waiting for it here makes the
// setup's cost, and any error in it, show before the first launch rather than in it.
void settle(worker_context& w) { w.stream.synchronize(); }

// Host comparisons report what the device's do: the first differing element, and how many.
using difference = device_compare::difference;

std::optional<difference> compare_bytes(std::span<const std::byte> a, std::span<const std::byte> b,
                                        std::size_t width) {
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return std::nullopt;
  difference d{.first = a.size(), .count = 0};
  for (std::size_t i = 0; i < a.size(); i += width) {
    if (std::memcmp(a.data() + i, b.data() + i, width) != 0) {
      d.first = std::min(d.first, i / width);
      ++d.count;
    }
  }
  return d;
}

std::size_t width_of(const worker_context& w, const std::string& buffer) {
  const buffer_spec* spec = w.task.find_buffer(buffer);
  return spec == nullptr ? 1 : size_of(spec->type);
}

json run_check(worker_context& w, std::size_t index) {
  const gate_check& check = w.request.checks[index];
  const task_case& c = w.task.find_case(check.case_name);
  step("resolve", index);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  check_device_limits(plan, *w.variant, w.context.properties(), w.candidate.file.string());
  step("allocate", index);
  check_buffers buffers = allocate_check(w, check, plan);
  poison(w, buffers);
  settle(w);
  const launch_sequence launches(plan, *w.module, buffers.pointers);

  json result = {{"check", index}, {"case", check.case_name}, {"seed", check.seed}};
  const int runs = check.repeat ? w.request.determinism_runs : 1;
  for (int run = 0; run < runs; ++run) {
    if (run > 0) {
      poison(w, buffers);
      settle(w);
    }
    step(fmt::format("run {}", run + 1), index);
    launches.enqueue(w.stream.get());
    w.stream.synchronize();
    for (const auto& slot : check.outputs) {
      const auto checked = w.outputs.slice(slot.offset, slot.bytes);
      if (run == 0) {
        buffers.buffers.at(slot.buffer).download(checked);
        continue;
      }
      const std::span<std::byte> again = w.host_bytes(slot.bytes);
      buffers.buffers.at(slot.buffer).download(again);
      if (auto d = compare_bytes(checked, again, width_of(w, slot.buffer));
          d && !result.contains("nondeterministic")) {
        result["nondeterministic"] = {{"buffer", slot.buffer},
                                      {"run", run + 1},
                                      {"first_index", d->first},
                                      {"differing_elements", d->count}};
      }
    }
  }
  result["runs"] = runs;

  // What the kernels left outside their outputs, after every run.
  step("inspect", index);
  result["canaries"] = changed_canaries(w, buffers);
  json inputs = json::array();
  for (const auto& slot : check.inputs) {
    const auto uploaded = w.inputs.slice(slot.offset, slot.bytes);
    const std::span<std::byte> now = w.host_bytes(slot.bytes);
    buffers.buffers.at(slot.buffer).download(now);
    // Compared bit for bit; the digest after is computed only when it differs from before.
    json entry = {
        {"buffer", slot.buffer}, {"sha256_before", slot.sha256}, {"sha256_after", slot.sha256}};
    if (auto d = compare_bytes(uploaded, now, width_of(w, slot.buffer))) {
      entry["sha256_after"] = sha256_hex(std::span<const std::byte>(now));
      entry["first_index"] = d->first;
      entry["differing_elements"] = d->count;
    }
    inputs.push_back(entry);
  }
  result["inputs"] = inputs;
  return result;
}

// What CUPTI recorded of a timing: which kernels ran and how often, beside their device time
// and the events' time, and how they differ from the plan's, if they do.
json account(const kernel_recorder& recorder, const resolved_plan& plan, const timing_samples& t) {
  if (t.observed_runs == 0) {
    return {
        {"runs", 0},
        {"kernels", json::array()},
        {"kernel_us", 0.0},
        {"event_us", 0.0},
        {"matches_plan", false},
        {"error", "CUPTI is unavailable (" + recorder.unavailable() + "): nothing was recorded"}};
  }
  const std::map<std::string, int>& seen = recorder.seen();
  std::map<std::string, int> expected;
  for (const auto& l : plan.launches) expected[l.lowered] += t.observed_runs;
  json kernels = json::array();
  int executions = 0;
  for (const auto& [name, count] : seen) {
    kernels.push_back({{"kernel", name},
                       {"count", count},
                       {"us", recorder.seen_us().at(name) / t.observed_runs}});
    executions += count;
  }
  json out = {{"runs", t.observed_runs},
              {"kernels", kernels},
              {"kernel_us", t.kernel_us},
              {"event_us", t.activity_event_us},
              {"matches_plan", seen == expected}};
  // Kernels cannot take longer on the device than the events around them; the bound allows
  // for the two clocks' granularity.
  if (seen != expected) {
    out["error"] = fmt::format(
        "CUPTI saw {} kernel executions of {} names; the plan launches {} kernels {} times",
        executions, seen.size(), expected.size(), t.observed_runs);
  } else if (t.kernel_us > t.activity_event_us * 1.02 + 0.5) {
    out["error"] = fmt::format(
        "the kernels took {:.2f} us on the device but the events around them only {:.2f} us",
        t.kernel_us, t.activity_event_us);
  }
  return out;
}

// How many buffer sets a rotating timing needs so that the sets of one sample span twice the
// L2: a launch then finds none of its inputs left in the cache by the launches before it.
int rotation_copies(const check_buffers& one, std::int64_t l2_bytes) {
  const std::size_t bytes = footprint_bytes(one);
  const auto wanted =
      (2 * static_cast<std::size_t>(l2_bytes) + bytes - 1) / std::max<std::size_t>(bytes, 1);
  // Beyond this the sets are tiny and launches dominate; and each buffer maps at least one
  // allocation granule of its own.
  constexpr std::size_t most = 256;
  return static_cast<int>(std::clamp<std::size_t>(wanted, 1, most));
}

// Launches after which nothing of the output may be left from before: each preceded by a write
// of the run's poison over the outputs (poisoned), or by a write of as many bytes to a buffer of
// its own (control), so that both meet the same state of the caches and only the outputs differ.
// A kernel whose work depends on what its outputs hold is slower when they hold poison.
constexpr int poisoned_pairs = 10;

json run_timing(worker_context& w) {
  const std::size_t index = w.request.timed_check;
  const gate_check& check = w.request.checks.at(index);
  const task_case& c = w.task.find_case(check.case_name);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  const auto& device = w.context.properties();
  const timing_mode_traits& mode = traits_of(w.request.timing.mode);
  std::vector<check_buffers> sets;
  sets.push_back(allocate_check(w, check, plan));
  const bool rotate = w.request.timing.rotate_buffers && mode.rotates_buffers;
  const int copies = rotate ? rotation_copies(sets.front(), device.l2_bytes) : 1;
  while (static_cast<int>(sets.size()) < copies) sets.push_back(allocate_check(w, check, plan));
  std::vector<launch_sequence> launches;
  for (auto& set : sets) {
    poison(w, set);
    launches.emplace_back(plan, *w.module, set.pointers);
  }
  settle(w);
  auto enqueue = [&](CUstream s, int i) {
    launches[static_cast<std::size_t>(i) % sets.size()].enqueue(s);
  };

  // The output the gate checked goes to the device once; each stale check compares there, so a
  // case of gigabytes costs milliseconds per check rather than a download and a host pass.
  device_compare compare(w.request.arch, &*w.cache);
  std::map<std::string, cuda::device_buffer, std::less<>> gated;
  for (const auto& slot : check.outputs) {
    auto [it, inserted] = gated.try_emplace(slot.buffer, slot.bytes);
    it->second.upload_async(w.outputs.slice(slot.offset - w.request.outputs_base, slot.bytes),
                            w.stream.get());
  }
  settle(w);

  // Does the last launch on set k reproduce the output the gate checked?
  auto stale_set = [&](std::size_t k) -> json {
    for (const auto& slot : check.outputs) {
      if (auto d = compare(sets[k].buffers.at(slot.buffer).data(), gated.at(slot.buffer).get(),
                           slot.bytes, width_of(w, slot.buffer), w.stream)) {
        return {{"buffer", slot.buffer},
                {"copy", k},
                {"first_index", d->first},
                {"differing_elements", d->count}};
      }
    }
    return nullptr;
  };
  // ... and on each of the first `used` sets?
  auto stale = [&](std::size_t used) -> json {
    for (std::size_t k = 0; k < std::min(used, sets.size()); ++k) {
      if (json d = stale_set(k); !d.is_null()) return d;
    }
    return nullptr;
  };
  auto poison_all = [&] {
    for (auto& set : sets) poison(w, set);
  };
  // Cold mode poisons the outputs before every launch and checks every launch's output: a
  // single launch has nothing of its own to find there. Hot and graph modes check one sample,
  // drawn from a seed the kernel cannot see, among the samples that always run (the budget may
  // stop the rest); its outputs are poisoned first, outside the timed region, so that only its
  // own launches can fill them.
  const bool every = mode.checks_every_sample;
  const int always =
      std::max(1, std::min(w.request.timing.max_samples, w.request.timing.min_samples));
  const int spot_sample =
      every ? 0 : static_cast<int>(w.request.spot_seed % static_cast<std::uint64_t>(always));
  json spot_result = nullptr;
  int checked_samples = 0;
  int spot_failed_sample = -1;
  const spot_check spot{
      .sample = spot_sample, .every_sample = every, .before = poison_all, .after = [&](int inner) {
        ++checked_samples;
        if (!spot_result.is_null()) return;
        spot_result = stale(static_cast<std::size_t>(inner));
        if (!spot_result.is_null()) spot_failed_sample = checked_samples - 1;
      }};
  std::optional<l2_flush> flush;
  if (mode.flushes_l2) flush.emplace(device.l2_bytes, w.request.arch, &*w.cache);
  const sm_clock_probe clock(w.request.arch, &*w.cache);
  kernel_recorder recorder({std::string(sm_clock_probe::kernel_name),
                            std::string(l2_flush::kernel_name),
                            std::string(device_compare::kernel_name)});
  timing_environment environment{.flush_l2 = [&](CUstream s) { (*flush)(s); },
                                 .clock = &clock,
                                 .rated_clock_mhz = device.sm_clock_khz / 1000.0,
                                 .record = {},
                                 .recorded_us = {}};
  record_through(recorder, environment);
  step("timing");
  const timing_samples timing =
      time_kernel(enqueue, w.stream, w.request.timing, environment, &spot);
  const json activity = account(recorder, plan, timing);

  // Hot and graph: poisoned launches against control launches, each timed alone on the device.
  json poisoned = nullptr;
  if (mode.checks_output_dependence) {
    step("poisoned launches");
    cuda::device_buffer elsewhere(poisoned_bytes(sets.front()));
    const bool recorded = recorder.start();
    cuda::event start;
    cuda::event stop;
    auto one_launch_us = [&](std::size_t k) {
      start.record(w.stream);
      enqueue(w.stream.get(), static_cast<int>(k));
      stop.record(w.stream);
      const double event_us = 1000.0 * static_cast<double>(cuda::elapsed_ms(start, stop));
      if (!recorded) return event_us;
      w.stream.synchronize();
      return recorder.take_us();
    };
    std::vector<double> control_us;
    std::vector<double> poisoned_us;
    json launch_stale = nullptr;
    for (int i = 0; i < poisoned_pairs; ++i) {
      const std::size_t k = static_cast<std::size_t>(i) % sets.size();
      elsewhere.fill_u32(w.request.canary_pattern, w.stream.get());
      control_us.push_back(one_launch_us(k));
      poison(w, sets[k]);
      poisoned_us.push_back(one_launch_us(k));
      if (launch_stale.is_null()) launch_stale = stale_set(k);
    }
    recorder.stop();
    poisoned = to_json(poisoned_launches{
        .source = recorded ? "CUPTI kernel time" : "CUDA events",
        .control_us = control_us,
        .poisoned_us = poisoned_us,
        .hot_us = timing.kernel_us,
        .footprint_bytes = static_cast<std::int64_t>(footprint_bytes(sets.front())),
        .poisoned_bytes = static_cast<std::int64_t>(poisoned_bytes(sets.front())),
        .l2_bytes = device.l2_bytes});
    poisoned["stale"] = launch_stale;
  }
  // And once more after the last sample, one launch on poisoned outputs.
  poison_all();
  enqueue(w.stream.get(), 0);
  const json final_result = stale(1);

  return {{"mode", to_string(timing.mode)},
          {"inner", timing.inner},
          {"copies", copies},
          {"source", timing.source},
          {"sample_us", timing.sample_us},
          {"event_us", timing.event_us},
          {"median_us", timing.median_us},
          {"noise", timing.noise},
          {"stopped_by", timing.stopped_by},
          {"taken", timing.taken},
          {"discarded", timing.discarded},
          {"mean_clock_mhz", timing.mean_clock_mhz},
          {"spot_sample", every ? spot_failed_sample : spot_sample},
          {"spot_every_sample", every},
          {"checked_samples", checked_samples},
          {"spot_stale", spot_result},
          {"final_stale", final_result},
          {"poisoned_launches", poisoned},
          {"activity", activity}};
}

// A check run again with its guards mapped and filled with canaries, after its first run
// faulted: the fault is then a write that lands in them (its buffer and offset found), or an
// access beyond every guard, or a read.
json run_locate(worker_context& w) {
  const std::size_t index = w.request.timed_check;
  const gate_check& check = w.request.checks.at(index);
  const task_case& c = w.task.find_case(check.case_name);
  const resolved_plan plan = resolve_plan(*w.candidate.plan, *w.variant, w.task, c);
  step("allocate", index);
  check_buffers buffers = allocate_check(w, check, plan, w.request.guard_bytes);
  poison(w, buffers);
  settle(w);
  const launch_sequence launches(plan, *w.module, buffers.pointers);
  step("run 1", index);
  launches.enqueue(w.stream.get());
  w.stream.synchronize();
  step("inspect", index);
  return {{"check", index}, {"canaries", changed_canaries(w, buffers)}};
}

json run_probe(const cuda::context& context, const cuda::stream& stream) {
  return {{"device", to_json(context.properties())},
          {"memory", to_json(measure_memory_ceilings(context, stream, nullptr))},
          {"matrix", to_json(measure_matrix_rate(context, stream, nullptr))},
          {"launch_floors", to_json(measure_launch_floors(context, stream, nullptr))}};
}

// The variant the parent compiled: the same source bytes, the same label, from the compile
// cache the parent filled.
void load_variant(worker_context& w) {
  const worker_request& r = w.request;
  w.cas.emplace(r.home / "cas");
  w.cache.emplace(r.home / "cache", *w.cas);
  w.candidate =
      load_candidate(r.candidate_file, r.arch, &*w.cache, r.compile, common_headers_folder(r.root));
  if (sha256_hex(w.candidate.source) != r.source_sha256) {
    BLASTER_INPUT_ERROR("{} changed while it was being evaluated", r.candidate_file.string());
  }
  for (const auto& v : w.candidate.variants) {
    if (v.label == r.variant) w.variant = &v;
  }
  if (w.variant == nullptr || !w.variant->compiled.ok || !w.candidate.plan) {
    BLASTER_INPUT_ERROR("{}: no compiled variant {}", r.candidate_file.string(), r.variant);
  }
  w.module.emplace(w.variant->compiled.cubin);
}

}  // namespace

int run_gate_worker(const std::filesystem::path& request_file) {
  // Which check was running when something failed: the evidence names it.
  std::optional<std::size_t> current;
  json checks = json::array();  // the checks finished before a failure are still evidence
  auto fail = [&](reason_code reason, const std::string& message,
                  std::optional<CUresult> code = std::nullopt) {
    json failure = {{"reason", to_string(reason)}, {"message", message}};
    if (current) failure["check"] = *current;
    if (code) failure["cuda_error"] = cuda::error_name(*code);
    send({{"result", {{"failure", failure}, {"checks", checks}}}});
    return 0;
  };
  worker_start = std::chrono::steady_clock::now();
  try {
    const worker_request request = worker_request_from_json(json::parse(read_file(request_file)));
    step("context");
    cuda::context context;
    cuda::stream stream;
    if (request.phase == worker_phase::probe) {
      send({{"result", run_probe(context, stream)}});
      return 0;
    }
    worker_context w(request, context, stream);
    step("load");
    w.task = load_task(request.root, request.task);
    load_variant(w);
    step("map");
    w.inputs = mapped_file::open(request.inputs_file, mapped_file::access::read_only);
    w.outputs = mapped_file::open(request.outputs_file, request.phase == worker_phase::gate
                                                            ? mapped_file::access::read_write
                                                            : mapped_file::access::read_only);
    if (request.phase == worker_phase::time) {
      current = request.timed_check;
      send({{"result", {{"timing", run_timing(w)}}}});
      return 0;
    }
    if (request.phase == worker_phase::locate) {
      current = request.timed_check;
      send({{"result", {{"located", run_locate(w)}}}});
      return 0;
    }
    for (std::size_t i = 0; i < request.checks.size(); ++i) {
      current = i;
      checks.push_back(run_check(w, i));
    }
    send({{"result", {{"checks", checks}}}});
    return 0;
  } catch (const cuda::gpu_unavailable& e) {
    send({{"result", {{"unavailable", e.what()}}}});
    return 0;
  } catch (const cuda::cuda_error& e) {
    return fail(reason_for_cuda_error(e.code()), e.what(), e.code());
  } catch (const input_error& e) {
    return fail(reason_code::plan_error, e.what());
  } catch (const std::exception& e) {
    return fail(reason_code::crash, e.what());
  }
}

}  // namespace blaster
