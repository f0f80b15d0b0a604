#include "benchmarking/worker/gate_protocol.hpp"

#include "core/error.hpp"

namespace blaster {
namespace {

nlohmann::json slots_json(const std::vector<buffer_slot>& slots) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : slots) {
    out.push_back(
        {{"buffer", s.buffer}, {"offset", s.offset}, {"bytes", s.bytes}, {"sha256", s.sha256}});
  }
  return out;
}

std::vector<buffer_slot> slots_from(const nlohmann::json& j) {
  std::vector<buffer_slot> out;
  for (const auto& s : j) {
    out.push_back({s.at("buffer").get<std::string>(), s.at("offset").get<std::size_t>(),
                   s.at("bytes").get<std::size_t>(), s.at("sha256").get<std::string>()});
  }
  return out;
}

worker_phase phase_from(std::string_view name) {
  for (worker_phase p : {worker_phase::probe, worker_phase::gate, worker_phase::time,
                         worker_phase::locate, worker_phase::profile, worker_phase::devices}) {
    if (to_string(p) == name) return p;
  }
  BLASTER_THROW("unknown worker phase \"{}\"", name);
}

}  // namespace

std::string_view to_string(worker_phase phase) {
  switch (phase) {
    case worker_phase::probe:
      return "probe";
    case worker_phase::gate:
      return "gate";
    case worker_phase::time:
      return "time";
    case worker_phase::locate:
      return "locate";
    case worker_phase::profile:
      return "profile";
    case worker_phase::devices:
      return "devices";
  }
  return "?";
}

nlohmann::json to_json(const cuda::device_properties& p) {
  return {{"name", p.name},
          {"uuid", p.uuid},
          {"arch", p.arch()},
          {"compute_major", p.compute_major},
          {"compute_minor", p.compute_minor},
          {"sm_count", p.sm_count},
          {"sm_clock_khz", p.sm_clock_khz},
          {"memory_clock_khz", p.memory_clock_khz},
          {"memory_bus_width_bits", p.memory_bus_width_bits},
          {"l2_bytes", p.l2_bytes},
          {"max_shared_per_block_optin_bytes", p.max_shared_per_block_optin_bytes},
          {"max_threads_per_block", p.max_threads_per_block},
          {"total_memory_bytes", p.total_memory_bytes},
          {"driver_version", p.driver_version}};
}

cuda::device_properties device_properties_from_json(const nlohmann::json& d) {
  cuda::device_properties p;
  p.name = d.at("name").get<std::string>();
  p.uuid = d.at("uuid").get<std::string>();
  p.compute_major = d.at("compute_major").get<int>();
  p.compute_minor = d.at("compute_minor").get<int>();
  p.sm_count = d.at("sm_count").get<int>();
  p.sm_clock_khz = d.at("sm_clock_khz").get<int>();
  p.memory_clock_khz = d.at("memory_clock_khz").get<int>();
  p.memory_bus_width_bits = d.at("memory_bus_width_bits").get<int>();
  p.l2_bytes = d.at("l2_bytes").get<int>();
  p.max_shared_per_block_optin_bytes = d.at("max_shared_per_block_optin_bytes").get<int>();
  p.max_threads_per_block = d.at("max_threads_per_block").get<int>();
  p.total_memory_bytes = d.at("total_memory_bytes").get<std::uint64_t>();
  p.driver_version = d.at("driver_version").get<int>();
  return p;
}

nlohmann::json to_json(const bandwidth_ceiling& c) {
  return {{"bytes_per_second", c.bytes_per_second},
          {"bytes_moved", c.bytes_moved},
          {"time_us", c.time_us},
          {"config", c.config},
          {"spread", c.spread}};
}

bandwidth_ceiling bandwidth_ceiling_from_json(const nlohmann::json& c) {
  return {.bytes_per_second = c.at("bytes_per_second").get<double>(),
          .bytes_moved = c.at("bytes_moved").get<std::int64_t>(),
          .time_us = c.at("time_us").get<double>(),
          .config = c.at("config").get<std::string>(),
          .spread = c.value("spread", 0.0)};
}

nlohmann::json to_json(const memory_ceilings& m) {
  return {{"copy", to_json(m.copy)},
          {"read", to_json(m.read)},
          {"write", to_json(m.write)},
          {"l2", to_json(m.l2)},
          {"peak_bytes_per_second", m.peak_bytes_per_second}};
}

memory_ceilings memory_ceilings_from_json(const nlohmann::json& m) {
  return {.copy = bandwidth_ceiling_from_json(m.at("copy")),
          .read = bandwidth_ceiling_from_json(m.at("read")),
          .write = bandwidth_ceiling_from_json(m.at("write")),
          .l2 = bandwidth_ceiling_from_json(m.at("l2")),
          .peak_bytes_per_second = m.at("peak_bytes_per_second").get<double>()};
}

nlohmann::json to_json(const matrix_rate& m) {
  return {{"flops_per_second", m.flops_per_second}, {"time_us", m.time_us}, {"config", m.config}};
}

matrix_rate matrix_rate_from_json(const nlohmann::json& m) {
  return {.flops_per_second = m.at("flops_per_second").get<double>(),
          .time_us = m.at("time_us").get<double>(),
          .config = m.at("config").get<std::string>()};
}

// {"hot_us": ..., "cold_us": ..., "graph_us": ...}: one member per mode.
nlohmann::json to_json(const launch_floors& f) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& mode : timing_modes()) j[std::string(mode.name) + "_us"] = f.us[mode.mode];
  return j;
}

// A mode the recording harness did not have reads as 0: not measured.
launch_floors launch_floors_from_json(const nlohmann::json& j) {
  launch_floors f;
  for (const auto& mode : timing_modes()) {
    f.us[mode.mode] = j.value(std::string(mode.name) + "_us", 0.0);
  }
  return f;
}

nlohmann::json to_json(const timing_options& o) {
  return {{"mode", to_string(o.mode)},
          {"target_sample_ms", o.target_sample_ms},
          {"warmup_launches", o.warmup_launches},
          {"min_samples", o.min_samples},
          {"max_samples", o.max_samples},
          {"max_noise", o.max_noise},
          {"budget_ms", o.budget_ms},
          {"min_clock_fraction", o.min_clock_fraction},
          {"rotate_buffers", o.rotate_buffers}};
}

timing_options timing_options_from_json(const nlohmann::json& j) {
  timing_options o;
  const std::string mode = j.at("mode").get<std::string>();
  o.mode = parse_timing_mode(mode).value_or(timing_mode::hot);
  o.target_sample_ms = j.at("target_sample_ms").get<double>();
  o.warmup_launches = j.at("warmup_launches").get<int>();
  o.min_samples = j.at("min_samples").get<int>();
  o.max_samples = j.at("max_samples").get<int>();
  o.max_noise = j.at("max_noise").get<double>();
  o.budget_ms = j.at("budget_ms").get<double>();
  o.min_clock_fraction = j.at("min_clock_fraction").get<double>();
  o.rotate_buffers = j.value("rotate_buffers", false);
  return o;
}

nlohmann::json to_json(const worker_request& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks) {
    checks.push_back({{"case", c.case_name},
                      {"seed", c.seed},
                      {"repeat", c.repeat},
                      {"inputs", slots_json(c.inputs)},
                      {"outputs", slots_json(c.outputs)}});
  }
  nlohmann::json other_draws = nlohmann::json::array();
  for (const auto& [check, sha256] : r.other_draws_sha256)
    other_draws.push_back({{"check", check}, {"sha256", sha256}});
  return {{"phase", to_string(r.phase)},
          {"root", r.root.string()},
          {"home", r.home.string()},
          {"task", r.task},
          {"candidate_file", r.candidate_file.string()},
          {"source_sha256", r.source_sha256},
          {"variant", r.variant},
          {"arch", r.arch},
          {"checks", checks},
          {"inputs_file", r.inputs_file.string()},
          {"outputs_file", r.outputs_file.string()},
          {"outputs_base", r.outputs_base},
          {"other_draws_sha256", other_draws},
          {"determinism_runs", r.determinism_runs},
          {"canary_pattern", r.canary_pattern},
          {"poison_seed", r.poison_seed},
          {"canary_bytes", r.canary_bytes},
          {"guard_bytes", r.guard_bytes},
          {"timed_check", r.timed_check},
          {"timing", to_json(r.timing)},
          {"spot_seed", r.spot_seed},
          {"wrapped_profiler", r.wrapped_profiler},
          {"counted_runs", r.counted_runs},
          {"compile",
           {{"timeout_ms", r.compile.timeout.count()},
            {"memory_bytes", r.compile.memory_bytes},
            {"max_source_bytes", r.compile.max_source_bytes},
            {"max_launches", r.compile.max_launches},
            {"max_variants", r.compile.max_variants},
            {"executable", r.compile.executable.string()},
            {"python", r.compile.python.string()}}}};
}

worker_request worker_request_from_json(const nlohmann::json& j) {
  worker_request r;
  r.phase = phase_from(j.at("phase").get<std::string>());
  r.root = j.at("root").get<std::string>();
  r.home = j.at("home").get<std::string>();
  r.task = j.at("task").get<std::string>();
  r.candidate_file = j.at("candidate_file").get<std::string>();
  r.source_sha256 = j.at("source_sha256").get<std::string>();
  r.variant = j.at("variant").get<std::string>();
  r.arch = j.at("arch").get<std::string>();
  for (const auto& c : j.at("checks")) {
    r.checks.push_back({c.at("case").get<std::string>(), c.at("seed").get<std::uint64_t>(),
                        c.at("repeat").get<bool>(), slots_from(c.at("inputs")),
                        slots_from(c.at("outputs"))});
  }
  r.inputs_file = j.at("inputs_file").get<std::string>();
  r.outputs_file = j.at("outputs_file").get<std::string>();
  r.outputs_base = j.at("outputs_base").get<std::size_t>();
  for (const auto& d : j.value("other_draws_sha256", nlohmann::json::array())) {
    r.other_draws_sha256[d.at("check").get<std::size_t>()] =
        d.at("sha256").get<std::vector<std::string>>();
  }
  r.determinism_runs = j.at("determinism_runs").get<int>();
  r.canary_pattern = j.at("canary_pattern").get<std::uint32_t>();
  r.poison_seed = j.at("poison_seed").get<std::uint64_t>();
  r.canary_bytes = j.at("canary_bytes").get<std::size_t>();
  r.guard_bytes = j.at("guard_bytes").get<std::size_t>();
  r.timed_check = j.at("timed_check").get<std::size_t>();
  r.timing = timing_options_from_json(j.at("timing"));
  r.spot_seed = j.at("spot_seed").get<std::uint64_t>();
  r.wrapped_profiler = j.value("wrapped_profiler", false);
  r.counted_runs = j.value("counted_runs", 5);
  const nlohmann::json& compile = j.at("compile");
  r.compile.timeout = std::chrono::milliseconds(compile.at("timeout_ms").get<std::int64_t>());
  r.compile.memory_bytes = compile.at("memory_bytes").get<std::uint64_t>();
  r.compile.max_source_bytes = compile.at("max_source_bytes").get<std::uint64_t>();
  r.compile.max_launches = compile.at("max_launches").get<std::size_t>();
  r.compile.max_variants = compile.at("max_variants").get<std::size_t>();
  r.compile.executable = compile.at("executable").get<std::string>();
  r.compile.python = compile.value("python", "");
  return r;
}

}  // namespace blaster
