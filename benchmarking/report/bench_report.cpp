#include "benchmarking/report/bench_report.hpp"

#include "benchmarking/report/variant_metrics.hpp"
#include "benchmarking/worker/gate_protocol.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> number_at(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

// Text that may be absent: null in the JSON, empty in the model.
json optional_text(const std::string& v) { return v.empty() ? json(nullptr) : json(v); }

std::string text_at(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

template <typename T, typename Parse>
std::vector<T> list_at(const json& j, const char* key, Parse parse) {
  std::vector<T> out;
  if (!j.contains(key) || !j[key].is_array()) return out;
  for (const auto& item : j[key]) out.push_back(parse(item));
  return out;
}

template <typename T>
json list_json(const std::vector<T>& items) {
  json out = json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

template <typename T, typename Parse>
std::optional<T> optional_at(const json& j, const char* key, Parse parse) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return parse(j[key]);
}

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? to_json(*v) : json(nullptr);
}

}  // namespace

json to_json(const diagnostics& d) {
  json j{{"counters", to_json(d.counters)}, {"diagnosis", optional_json(d.diagnosis)}};
  if (!d.ncu_report_sha256.empty()) j["ncu_report_sha256"] = d.ncu_report_sha256;
  if (d.ncu) j["ncu"] = to_json(*d.ncu);
  if (!d.ncu_unavailable.empty()) j["ncu_unavailable"] = d.ncu_unavailable;
  if (!d.profile_ms.empty()) j["profile_ms"] = d.profile_ms;
  return j;
}

diagnostics diagnostics_from_json(const json& j) {
  diagnostics d;
  d.counters = counter_profile_from_json(j.at("counters"));
  d.diagnosis = optional_at<counter_diagnosis>(j, "diagnosis", counter_diagnosis_from_json);
  d.ncu_report_sha256 = j.value("ncu_report_sha256", std::string());
  d.ncu = optional_at<counter_profile>(j, "ncu", counter_profile_from_json);
  d.ncu_unavailable = j.value("ncu_unavailable", std::string());
  d.profile_ms = j.value("profile_ms", step_profile());
  return d;
}

json to_json(const variant_result& r) {
  const double compile_s = r.compile_ms / 1000.0;
  json item = {
      {"candidate", r.candidate},
      {"variant", r.label},
      {"file", r.file},
      {"params", r.params},
      {"tuned", r.tuned ? to_json(*r.tuned) : nlohmann::json(nullptr)},
      {"baseline", r.baseline},
      {"status", r.status},
      {"reason", to_string(r.reason)},
      {"message", r.message},
      {"nvrtc_log", r.log},
      {"compile_ms", r.compile_ms},
      {"cache_hit", r.cache_hit},
      {"kernels", list_json(r.resources)},
      {"source_sha256", r.source_sha256},
      {"sources_sha256", r.sources_sha256},
      {"cubin_sha256", r.cubin_sha256},
      // A variant gated by an earlier run of the series has its checks in that run's report;
      // this run's gate rows cite the same evidence.
      {"checks", r.gated_in_run ? json::array() : list_json(r.checks)},
      {"sanitizer", list_json(r.sanitizer)},
      {"sanitizer_s", r.sanitizer_s},
      {"gate_s", r.gate_s},
      {"gated_in_run", r.gated_in_run ? nlohmann::json(*r.gated_in_run) : nlohmann::json(nullptr)},
      {"gated_on", optional_text(r.gated_on)},
      {"timed_on", optional_text(r.timed_on)},
      {"timing_s", r.timing_s},
      // One candidate's time to a verdict: its compile (cold unless cache_hit), its gate, the
      // sanitizer's tools (with --sanitize) and its first timing session, each an evaluation of
      // its own.
      {"time_to_verdict",
       {{"compile_s", compile_s},
        {"gate_s", r.gate_s},
        {"sanitizer_s", r.sanitizer_s},
        {"timing_s", r.first_timing_s},
        {"total_s", compile_s + r.gate_s + r.sanitizer_s + r.first_timing_s},
        {"gate_profile_ms", r.gate_profile},
        {"timing_profile_ms", r.timing_profile}}},
      {"timing", optional_json(r.timing)},
      {"poisoned_launches", optional_json(r.poisoned)},
      {"unseen_inputs", optional_json(r.unseen)},
      {"samples_sha256", r.samples_sha256},
      {"session_medians_us", r.session_medians_us},
      {"time_us", optional_number(r.time_us)},
      {"session_spread", r.session_spread},
      {"max_noise", r.max_noise},
      {"launch_bound", r.launch_bound},
      {"screened", r.screened},
      {"verdict", optional_json(r.verdict)},
      {"speedup", optional_number(r.speedup)},
      {"bandwidth_gbs", optional_number(r.bandwidth_gbs)},
      {"copy_bandwidth_pct", optional_number(r.copy_bandwidth_pct)},
      {"flops_per_second", optional_number(r.flops_per_second)},
      {"matrix_rate_pct", optional_number(r.matrix_rate_pct)},
      {"roofline", optional_json(r.floor)},
      {"time_over_floor", optional_number(r.time_over_floor)},
      {"diagnostics", optional_json(r.profile)},
  };
  return item;
}

variant_result variant_result_from_json(const json& j) {
  variant_result r;
  r.candidate = j.at("candidate").get<std::string>();
  r.label = j.at("variant").get<std::string>();
  r.file = j.at("file").get<std::string>();
  r.params = j.value("params", std::map<std::string, std::string>());
  r.tuned = optional_at<tuned_choice>(j, "tuned", tuned_choice_from_json);
  r.baseline = j.at("baseline").get<bool>();
  r.status = j.at("status").get<std::string>();
  r.reason = parse_reason_code(j.at("reason").get<std::string>()).value_or(reason_code::crash);
  r.message = j.value("message", std::string());
  r.log = j.value("nvrtc_log", std::string());
  r.compile_ms = j.value("compile_ms", 0.0);
  r.cache_hit = j.value("cache_hit", false);
  r.resources = list_at<kernel_resources>(j, "kernels", kernel_resources_from_json);
  r.source_sha256 = j.value("source_sha256", std::string());
  r.sources_sha256 = j.value("sources_sha256", std::string());
  r.cubin_sha256 = j.value("cubin_sha256", std::string());
  r.checks = list_at<case_check>(j, "checks", case_check_from_json);
  r.sanitizer = list_at<sanitizer_report>(j, "sanitizer", sanitizer_report_from_json);
  // A record from before the tools ran side by side ran them one after another.
  double one_by_one = 0.0;
  for (const auto& tool : r.sanitizer) one_by_one += tool.wall_s;
  r.sanitizer_s = j.value("sanitizer_s", one_by_one);
  r.gate_s = j.value("gate_s", 0.0);
  if (j.contains("gated_in_run") && j["gated_in_run"].is_number_integer()) {
    r.gated_in_run = j["gated_in_run"].get<std::int64_t>();
  }
  r.gated_on = text_at(j, "gated_on");
  r.timed_on = text_at(j, "timed_on");
  r.timing_s = j.value("timing_s", 0.0);
  if (const json t = j.value("time_to_verdict", json::object()); t.is_object()) {
    r.first_timing_s = t.value("timing_s", 0.0);
    r.gate_profile = t.value("gate_profile_ms", step_profile());
    r.timing_profile = t.value("timing_profile_ms", step_profile());
  }
  r.timing = optional_at<timing_samples>(j, "timing", timing_samples_from_json);
  r.poisoned = optional_at<poisoned_launches>(j, "poisoned_launches", poisoned_launches_from_json);
  r.unseen = optional_at<unseen_inputs>(j, "unseen_inputs", unseen_inputs_from_json);
  // The previous release kept the samples' digest inside the timing.
  r.samples_sha256 = j.value("samples_sha256", std::string());
  if (r.samples_sha256.empty() && j.contains("timing") && j["timing"].is_object()) {
    r.samples_sha256 = j["timing"].value("samples_sha256", std::string());
  }
  r.session_medians_us = j.value("session_medians_us", std::vector<double>());
  r.time_us = number_at(j, "time_us");
  r.session_spread = j.value("session_spread", 0.0);
  r.max_noise = j.value("max_noise", r.timing ? r.timing->noise : 0.0);
  r.launch_bound = j.value("launch_bound", false);
  r.screened = j.value("screened", false);
  r.verdict = optional_at<verdict_result>(j, "verdict", verdict_result_from_json);
  r.speedup = number_at(j, "speedup");
  r.bandwidth_gbs = number_at(j, "bandwidth_gbs");
  r.copy_bandwidth_pct = number_at(j, "copy_bandwidth_pct");
  r.flops_per_second = number_at(j, "flops_per_second");
  r.matrix_rate_pct = number_at(j, "matrix_rate_pct");
  r.floor = optional_at<roofline_floor>(j, "roofline", roofline_floor_from_json);
  r.time_over_floor = number_at(j, "time_over_floor");
  r.profile = optional_at<diagnostics>(j, "diagnostics", diagnostics_from_json);
  return r;
}

std::optional<double> confirmed_time(const variant_result& r) {
  return r.status == "passed" && !r.screened ? r.time_us : std::nullopt;
}

const variant_result* baseline_result(const bench_report& report) {
  for (const auto& r : report.results) {
    if (r.baseline) return &r;
  }
  return nullptr;
}

std::string stored_report_bytes(const bench_report& report) { return to_json(report).dump(); }

json to_json(const bench_report& report) {
  json timing = to_json(report.timing);
  timing["clock"] = traits_of(report.timing.mode).clock;
  // Each result with its metrics by tag, as the tables show them (derived; not read back).
  json results = json::array();
  for (const auto& r : report.results) {
    json item = to_json(r);
    item["metrics"] = metric_values(report, r);
    results.push_back(std::move(item));
  }
  return {
      {"task", report.task},
      {"title", report.title},
      {"case", report.timed_case},
      {"shape", report.timed_shape},
      {"dtype", report.dtype},
      {"roofline_bytes", report.roofline_bytes},
      {"roofline_read_bytes", report.roofline_read_bytes},
      {"roofline_write_bytes", report.roofline_write_bytes},
      {"roofline_mix_known", report.roofline_mix_known},
      {"footprint_bytes", report.footprint_bytes},
      {"roofline_flops", report.roofline_flops},
      {"arch", report.arch},
      {"nvrtc", report.nvrtc},
      {"blaster_revision", report.blaster_revision},
      {"seed", report.seed},
      {"seeds", report.seeds},
      {"warnings", report.warnings},
      {"left_out", report.left_out},
      {"deadline_s", report.deadline_s},
      {"kept_worker", report.kept_worker},
      {"timing", timing},
      {"gpu", report.gpu},
      {"gpu_unavailable", report.gpu_unavailable},
      {"sanitize", report.sanitize},
      {"sanitizer", report.sanitizer},
      {"device", optional_json(report.device)},
      {"memory_ceilings", optional_json(report.memory)},
      {"matrix_rate", optional_json(report.matrix)},
      {"launch_floors", optional_json(report.floors)},
      {"gpus", list_json(report.gpus)},
      {"sessions", report.sessions},
      {"bootstrap_seed", report.bootstrap_seed},
      {"aa_medians_us", report.aa_medians_us},
      {"aa_check", optional_json(report.aa)},
      {"results", results},
      {"run_id", report.run_id},
      {"home", report.home},
      {"wall_ms", report.wall_ms},
      {"phase_ms", report.phase_ms},
  };
}

bench_report bench_report_from_json(const json& j) {
  bench_report r;
  r.task = j.at("task").get<std::string>();
  r.title = j.value("title", std::string());
  r.timed_case = j.at("case").get<std::string>();
  r.timed_shape = j.value("shape", std::string());
  r.dtype = j.value("dtype", std::string());
  r.roofline_bytes = j.value("roofline_bytes", std::int64_t{0});
  r.roofline_read_bytes = j.value("roofline_read_bytes", r.roofline_bytes);
  r.roofline_write_bytes = j.value("roofline_write_bytes", std::int64_t{0});
  r.roofline_mix_known = j.value("roofline_mix_known", false);
  r.footprint_bytes = j.value("footprint_bytes", std::int64_t{0});
  r.roofline_flops = j.value("roofline_flops", std::int64_t{0});
  r.arch = j.value("arch", std::string());
  r.nvrtc = j.value("nvrtc", std::string());
  r.blaster_revision = j.value("blaster_revision", std::string());
  r.seed = j.value("seed", std::uint64_t{0});
  r.seeds = j.value("seeds", std::vector<std::uint64_t>());
  r.warnings = j.value("warnings", std::vector<std::string>());
  r.left_out = j.value("left_out", std::vector<std::string>());
  r.deadline_s = j.value("deadline_s", 0.0);
  r.kept_worker = j.value("kept_worker", false);
  r.timing = timing_options_from_json(j.at("timing"));
  r.gpu = j.value("gpu", false);
  r.gpu_unavailable = j.value("gpu_unavailable", std::string());
  r.sanitize = j.value("sanitize", j.contains("sanitizer"));
  r.sanitizer = j.value("sanitizer", std::string());
  r.device = optional_at<cuda::device_properties>(j, "device", device_properties_from_json);
  r.memory = optional_at<memory_ceilings>(j, "memory_ceilings", memory_ceilings_from_json);
  if (!r.memory && j.contains("copy_bandwidth") && j["copy_bandwidth"].is_object()) {
    // The previous release measured the copy ceiling alone.
    r.memory = memory_ceilings{.copy = bandwidth_ceiling_from_json(j["copy_bandwidth"])};
  }
  r.matrix = optional_at<matrix_rate>(j, "matrix_rate", matrix_rate_from_json);
  r.floors = optional_at<launch_floors>(j, "launch_floors", launch_floors_from_json);
  r.gpus = list_at<cuda::device_properties>(j, "gpus", device_properties_from_json);
  r.sessions = j.value("sessions", 1);
  r.bootstrap_seed = j.value("bootstrap_seed", std::uint64_t{0});
  r.aa_medians_us = j.value("aa_medians_us", std::vector<double>());
  r.aa = optional_at<aa_check>(j, "aa_check", aa_check_from_json);
  r.results = list_at<variant_result>(j, "results", variant_result_from_json);
  r.run_id = j.value("run_id", std::int64_t{0});
  r.home = j.value("home", std::string());
  r.wall_ms = j.value("wall_ms", 0.0);
  r.phase_ms = j.value("phase_ms", step_profile());
  return r;
}

}  // namespace blaster
