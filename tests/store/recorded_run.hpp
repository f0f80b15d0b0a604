#pragma once

// A bench run recorded through the store API as the runner records one, without a GPU: objects
// first, then the rows that cite them. Shared by the store tests and the CLI tests.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "evidence/store.hpp"

namespace blaster::testing {

struct recorded_run {
  std::int64_t run_id = 0;
  std::string report_sha256;
  std::string init_source_sha256;
  std::string fast_cubin_sha256;
  std::string fast_samples_sha256;
  std::int64_t fast_measurement_id = 0;
};

// Three variants of `task` on an H200: the baseline, a faster candidate, a rejected one.
// `salt` makes every object of the run distinct from other runs'.
inline recorded_run record_bench_run(store& s, const std::string& task = "rmsnorm",
                                     const std::string& salt = "") {
  recorded_run out;
  cas_store& cas = s.cas();
  const std::string init_source = "/* blaster {\"launch\": []} */\n// init " + salt + "\n";
  const std::string fast_source = "/* blaster {\"launch\": []} */\n// fast " + salt + "\n";
  const std::string broken_source = "/* blaster {\"launch\": []} */\n// broken " + salt + "\n";
  out.init_source_sha256 = cas.put(init_source);
  const std::string fast_source_sha256 = cas.put(fast_source);
  const std::string broken_source_sha256 = cas.put(broken_source);
  const std::string init_cubin = cas.put(std::string("\x7f"
                                                     "ELF\0\0init",
                                                     10) +
                                         salt);
  out.fast_cubin_sha256 = cas.put(std::string("\x7f"
                                              "ELF\0\0fast",
                                              10) +
                                  salt);
  const std::string broken_cubin = cas.put(std::string("\x7f"
                                                       "ELF\0\0broken",
                                                       12) +
                                           salt);
  const std::string init_samples =
      cas.put(nlohmann::json{{"sample_us", {125.0, 125.1, 124.9}}, {"salt", salt}}.dump());
  out.fast_samples_sha256 =
      cas.put(nlohmann::json{{"sample_us", {70.7, 70.8, 70.77}}, {"salt", salt}}.dump());
  const std::string log_sha256 = cas.put("ptxas info: Used 32 registers " + salt);

  const nlohmann::json device = {{"name", "NVIDIA H200"},   {"arch", "sm_90a"},
                                 {"sm_count", 132},         {"driver_version", 13000},
                                 {"uuid", "GPU-test"},      {"nvrtc", "13.0"},
                                 {"copy_bandwidth_gbs", 4000.0}};
  out.run_id = s.begin_run("blaster bench --task " + task, task, device.dump());
  const std::int64_t device_id = s.record_device(device_fingerprint{.name = "NVIDIA H200",
                                                                    .uuid = "GPU-test",
                                                                    .compute_capability = "9.0",
                                                                    .arch = "sm_90a",
                                                                    .sm_count = 132,
                                                                    .driver_version = "13.0",
                                                                    .nvrtc_version = "13.0"});
  s.set_run_device(out.run_id, device_id);

  const std::int64_t compilation =
      s.record_compilation(out.run_id, compilation_record{.candidate = "rmsnorm_fast",
                                                          .variant = "rmsnorm_fast[VEC=4]",
                                                          .file_name = "rmsnorm_fast.cu",
                                                          .source_sha256 = fast_source_sha256,
                                                          .arch = "sm_90a",
                                                          .options = {"-arch=sm_90a", "-DVEC=4"},
                                                          .nvrtc_version = "13.0",
                                                          .succeeded = true,
                                                          .log_sha256 = log_sha256,
                                                          .cubin_sha256 = out.fast_cubin_sha256,
                                                          .compile_ms = 310.0,
                                                          .kernels = {{.kernel = "_Z4fastPf",
                                                                       .registers = 32,
                                                                       .spill_store_bytes = 0,
                                                                       .shared_bytes = 0}}});
  out.fast_measurement_id = s.record_measurement(
      compilation, measurement_record{.case_name = "canonical",
                                      .mode = "hot",
                                      .protocol_json = R"({"clock":"CUDA events","samples":3})",
                                      .samples_sha256 = out.fast_samples_sha256,
                                      .sample_count = 3,
                                      .median_us = 70.77});

  // The variants' rows: the fast one cites its compilation and measurement, the others keep
  // their digests on the row.
  s.record_variant_result(
      out.run_id, variant_result_record{.candidate = "init",
                                        .variant = "init",
                                        .baseline = true,
                                        .case_name = "canonical",
                                        .status = "passed",
                                        .source_sha256 = out.init_source_sha256,
                                        .cubin_sha256 = init_cubin,
                                        .samples_sha256 = init_samples,
                                        .metrics = {{"time_us", 125.03},
                                                    {"speedup", 1.0},
                                                    {"bandwidth_gbs", 2147.0},
                                                    {"copy_bandwidth_pct", 53.5}}});
  s.record_variant_result(out.run_id,
                          variant_result_record{.compilation_id = compilation,
                                                .measurement_id = out.fast_measurement_id,
                                                .candidate = "rmsnorm_fast",
                                                .variant = "rmsnorm_fast[VEC=4]",
                                                .case_name = "canonical",
                                                .status = "passed",
                                                .params_json = R"({"VEC":"4"})",
                                                .metrics = {{"time_us", 70.77},
                                                            {"speedup", 1.7667},
                                                            {"bandwidth_gbs", 3793.3},
                                                            {"copy_bandwidth_pct", 94.5}}});
  s.record_variant_result(out.run_id,
                          variant_result_record{.candidate = "rmsnorm_broken",
                                                .variant = "rmsnorm_broken",
                                                .case_name = "canonical",
                                                .status = "rejected",
                                                .reason = "wrong_result",
                                                .message = "case odd: out[17] = 3.5, expected 1.25",
                                                .source_sha256 = broken_source_sha256,
                                                .cubin_sha256 = broken_cubin});

  const nlohmann::json report = {
      {"task", task},
      {"title", "RMSNorm over channels"},
      {"case", "canonical"},
      {"shape", "B=16 C=64 H=256 W=256"},
      {"dtype", "f16"},
      {"arch", "sm_90a"},
      {"nvrtc", "13.0"},
      {"seed", 42},
      {"gpu", true},
      {"run_id", out.run_id},
      {"device", device},
      {"timing",
       {{"mode", "hot"}, {"clock", "CUDA events"}, {"samples", 3}, {"target_sample_ms", 1.0}}},
      {"copy_bandwidth", {{"bytes_per_second", 4.0e12}, {"config", "float4 grid-stride"}}},
      {"results",
       {{{"variant", "init"}, {"baseline", true}, {"status", "passed"}, {"time_us", 125.03}},
        {{"variant", "rmsnorm_fast[VEC=4]"},
         {"baseline", false},
         {"status", "passed"},
         {"time_us", 70.77}},
        {{"variant", "rmsnorm_broken"},
         {"baseline", false},
         {"status", "rejected"},
         {"reason", "wrong_result"}}}}};
  out.report_sha256 = cas.put(report.dump(1));
  s.finish_run(out.run_id, "completed", out.report_sha256);
  return out;
}

}  // namespace blaster::testing
