// The result model: every type has one JSON form that reads back to itself, and the reports the
// previous release wrote (the checked-in core10 bundle's) read into it.
#include "benchmarking/report/bench_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "benchmarking/worker/worker_result.hpp"
#include "core/file_io.hpp"

namespace blaster {
namespace {

using json = nlohmann::json;

// The JSON form, read back and written again, is the same document (compared as text: a NaN
// is null there, and unequal to itself as a number).
template <typename T, typename Parse>
void expect_round_trip(const T& value, Parse parse) {
  const std::string once = to_json(value).dump();
  EXPECT_EQ(to_json(parse(json::parse(once))).dump(), once);
}

cupti_account account() {
  return {.runs = 52,
          .kernel_us = 17.65,
          .event_us = 103.8,
          .kernels = {{.kernel = "_Z4stat", .count = 52, .us = 4.5},
                      {.kernel = "_Z5apply", .count = 52, .us = 13.15}},
          .matches_plan = true,
          .error = ""};
}

timing_samples samples() {
  timing_samples t;
  t.mode = timing_mode::cold;
  t.inner = 1;
  t.buffer_copies = 3;
  t.source = "CUPTI kernel time";
  t.sample_us = {17.6, 17.7, 17.5};
  t.event_us = {22.1, 22.4, 21.9};
  t.median_us = 17.6;
  t.noise = 0.004;
  t.stopped_by = "converged";
  t.taken = 4;
  t.discarded_samples = 1;
  t.mean_clock_mhz = 1979.5;
  t.cupti = account();
  return t;
}

stale_output stale() {
  return {.buffer = "out", .buffer_copy = 2, .first_index = 17, .differing_elements = 4096};
}

unseen_inputs unseen() {
  return {.source = "CUPTI kernel time",
          .seen_us = {10.0, 10.1, 9.9},
          .unseen_us = {10.2, 10.0},
          .in_place_us = {10.1, 10.3},
          .differing = {"out on the draw of seed 0xb1a57e5eed00001 in place"}};
}

poisoned_launches poisoned() {
  return {.source = "CUPTI kernel time",
          .control_us = {10.0, 10.1},
          .poisoned_us = {10.2, 10.0},
          .control_event_us = {10.4, 10.5},
          .poisoned_event_us = {10.6, 10.3},
          .hot_us = 9.8,
          .paused_us = {9.9, 9.8},
          .pause_us = 200.0};
}

check_evidence evidence() {
  return {.check = 3,
          .case_name = "odd",
          .seed = 0x0B1A57E5EED00002ULL,
          .runs = 5,
          .canaries = {{.buffer = "out", .byte_offset = -8, .bytes = 4096}},
          .inputs = {{.buffer = "x", .sha256_before = "ab", .sha256_after = "ab"},
                     {.buffer = "w",
                      .sha256_before = "cd",
                      .sha256_after = "ef",
                      .first_index = 9,
                      .differing_elements = 2}},
          .nondeterministic =
              run_difference{.buffer = "out", .run = 3, .first_index = 5, .differing_elements = 1}};
}

error_metrics metrics() {
  error_metrics m;
  m.buffer = "out";
  m.elements = 3003;
  m.mismatches = 2;
  m.nonfinite = 1;
  m.unwritten = 0;
  m.max_abs = 0.25;
  m.max_rel = 0.5;
  m.p50 = 0.01;
  m.p90 = 0.2;
  m.p99 = 1.5;
  m.p999 = INFINITY;  // a non-finite element counts as infinitely wrong
  m.worst = {{.index = 17, .candidate = NAN, .reference = 1.25, .normalized_error = INFINITY},
             {.index = 4, .candidate = 3.5, .reference = 1.25, .normalized_error = 2.1}};
  return m;
}

verdict_result improved() {
  return {.v = verdict::improved,
          .speedup = {.low = 1.70, .high = 1.78, .point = 1.74},
          .baseline_spread = 0.019,
          .candidate_spread = 0.004,
          .sessions = 5,
          .every_session_faster = true,
          .why = "Improved: over 5 sessions ..."};
}

// rmsnorm_vec_regs on the canonical case, as the H200 counted it.
diagnostics profiled() {
  diagnostics d;
  d.counters.source = "CUPTI range profiler";
  d.counters.chip = "GH100";
  d.counters.passes = 14;
  d.counters.case_name = "canonical";
  d.counters.kernels.push_back(
      {.launch = 0,
       .kernel = "_Z16rmsnorm_vec_regsILi4ELi128ELi64EEvP6__halfPKS0_iifi",
       .counters = {{std::string(counter::dram_bytes_read), 134308864},
                    {std::string(counter::dram_bytes_written), 108381696},
                    {std::string(counter::dram_bytes_written_back), 25821184},
                    {std::string(counter::dram_throughput_pct), 74.74},
                    {stall_counter("long_scoreboard"), 1.93}},
       .occupancy = estimate_occupancy({.threads = 128, .registers_per_thread = 40}, {}),
       .resolution = {},
       .range = {{stall_counter("long_scoreboard"), {1.90, 1.96}}}});
  d.counters.missing = {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"};
  d.diagnosis =
      diagnose(plan_counters(d.counters), {.read = 134217728, .written = 134217728}, 70.3, 4.5);
  d.ncu_report_sha256 = std::string(64, 'b');
  d.ncu = d.counters;
  d.ncu->source = "Nsight Compute";
  d.ncu->kernels[0].resolution = {{std::string(counter::dram_throughput_pct), 0.005}};
  d.profile_ms = {{"context", 210.5}, {"restore", 1840.25}, {"count", 930.0}, {"decode", 41.5}};
  return d;
}

variant_result variant() {
  variant_result r;
  r.candidate = "rmsnorm_vec_regs";
  r.label = "rmsnorm_vec_regs[VEC=4,BLOCK=128]";
  r.file = "kernels/rmsnorm/rmsnorm_vec_regs.cu";
  r.params = {{"VEC", "4"}, {"BLOCK", "128"}};
  r.status = "passed";
  r.log = "ptxas info: Used 158 registers";
  r.compile_ms = 1372.6;
  r.resources = {{.lowered_name = "_Z4rows", .registers = 158, .barriers = 1, .stack_bytes = 0}};
  r.source_sha256 = std::string(64, 'a');
  r.sources_sha256 = std::string(64, 'b');
  r.cubin_sha256 = std::string(64, 'c');
  r.checks = {{.case_name = "odd",
               .seed = 7,
               .reason = reason_code::none,
               .message = "",
               .outputs = {metrics()},
               .evidence = evidence()}};
  sanitizer_report racecheck;
  racecheck.tool = "racecheck";
  racecheck.log = "===== 0 errors";
  racecheck.wall_s = 3.5;
  sanitizer_report memcheck;
  memcheck.tool = "memcheck";
  memcheck.log = "===== 0 errors";
  memcheck.wall_s = 2.0;
  r.sanitizer = {memcheck, racecheck};
  r.sanitizer_s = 3.75;  // side by side: the slower tool's time and the pass's own
  r.gate_s = 1.2;
  r.gate_profile = {{"context", 300.0}, {"run", 50.0}};
  r.timing = samples();
  r.poisoned = poisoned();
  r.unseen = unseen();
  r.samples_sha256 = std::string(64, 'd');
  r.timing_s = 2.5;
  r.first_timing_s = 2.4;
  r.timing_profile = {{"timing", 2000.0}};
  r.session_medians_us = {70.1, 70.3, 70.2, 70.4, 70.0};
  r.time_us = 70.2;
  r.session_spread = 0.0057;
  r.max_noise = 0.0042;
  r.verdict = improved();
  r.speedup = 1.74;
  r.bandwidth_gbs = 3823.9;
  r.copy_bandwidth_pct = 89.6;
  r.flops_per_second = 3.8e12;
  r.matrix_rate_pct = 0.6;
  r.floor = roofline_floor{.level = "dram",
                           .bytes = 268435456,
                           .ceiling_bytes_per_second = 4.27e12,
                           .floor_us = 62.9,
                           .uncertainty = 0.01};
  r.time_over_floor = 1.116;
  r.profile = profiled();
  return r;
}

bench_report report() {
  bench_report r;
  r.task = "rmsnorm";
  r.title = "RMSNorm over dim 1";
  r.timed_case = "canonical";
  r.timed_shape = "B=16 C=64 H=256 W=256";
  r.dtype = "f16";
  r.roofline_bytes = 268435456;
  r.roofline_read_bytes = 134217728;
  r.roofline_write_bytes = 134217728;
  r.roofline_mix_known = true;
  r.footprint_bytes = 268435456;
  r.arch = "sm_90a";
  r.nvrtc = "13.0";
  r.blaster_revision = "abc";
  r.seed = 42;
  r.seeds = {1, 2, 42};
  r.warnings = {"a zero output passes there"};
  r.deadline_s = 7.3;
  r.timing.mode = timing_mode::hot;
  r.gpu = true;
  r.device = cuda::device_properties{.name = "NVIDIA H200", .uuid = "GPU-1", .compute_major = 9};
  r.memory = memory_ceilings{.copy = {.bytes_per_second = 4.27e12, .config = "copy"},
                             .peak_bytes_per_second = 4.81e12};
  r.matrix = matrix_rate{.flops_per_second = 6.3e14, .time_us = 800.0, .config = "mma.sync"};
  r.floors = launch_floors{};
  r.floors->us[timing_mode::graph] = 0.51;
  r.sessions = 5;
  r.bootstrap_seed = 42;
  r.aa_medians_us = {122.6, 122.5};
  r.aa = aa_check{.ratio = 0.9974, .within = true, .bound = 0.01};
  r.results = {variant()};
  r.run_id = 11;
  r.home = "/tmp/bh";
  r.wall_ms = 32300.0;
  return r;
}

TEST(ResultModel, EveryTypeReadsBackItsOwnJson) {
  expect_round_trip(account(), cupti_account_from_json);
  expect_round_trip(samples(), timing_samples_from_json);
  expect_round_trip(stale(), stale_output_from_json);
  expect_round_trip(timing_checks{.spot_sample = 3,
                                  .checked_samples = 1,
                                  .final_stale = stale(),
                                  .poisoned = poisoned(),
                                  .unseen = unseen()},
                    timing_checks_from_json);
  expect_round_trip(unseen(), unseen_inputs_from_json);
  expect_round_trip(evidence(), check_evidence_from_json);
  expect_round_trip(metrics(), error_metrics_from_json);
  expect_round_trip(variant().checks.front(), case_check_from_json);
  expect_round_trip(improved(), verdict_result_from_json);
  expect_round_trip(aa_check{.ratio = 1.0124, .within = false, .bound = 0.01}, aa_check_from_json);
  expect_round_trip(*variant().floor, roofline_floor_from_json);
  expect_round_trip(variant().resources.front(), kernel_resources_from_json);
  expect_round_trip(variant().sanitizer.front(), sanitizer_report_from_json);
  expect_round_trip(*variant().profile, diagnostics_from_json);
  expect_round_trip(variant(), variant_result_from_json);
  expect_round_trip(report(), bench_report_from_json);
  expect_round_trip(device_probe{.device = *report().device,
                                 .memory = *report().memory,
                                 .matrix = *report().matrix,
                                 .floors = *report().floors},
                    device_probe_from_json);
  worker_result answer;
  answer.failure = worker_failure{.reason = reason_code::crash,
                                  .message = "illegal address",
                                  .check = 2,
                                  .cuda_error = "CUDA_ERROR_ILLEGAL_ADDRESS"};
  answer.checks = {evidence()};
  answer.timing = timing_answer{.samples = samples(), .checks = {.poisoned_stale = stale()}};
  answer.located = evidence();
  answer.profile = profiled().counters;
  expect_round_trip(answer, worker_result_from_json);
  expect_round_trip(*profiled().counters.kernels.front().occupancy, occupancy_estimate_from_json);
  expect_round_trip(*profiled().diagnosis, counter_diagnosis_from_json);
}

// A record of poisoned launches written before launches after a pause were timed reads without
// them, and judges nothing by them.
// A report names each check of every variant on every case: a failed check keeps everything that
// says what went wrong, a passed one its error metrics (its worker's evidence is the CAS object
// its gate row cites), and a variant gated by an earlier run of the series cites that run.
TEST(ResultModel, AReportKeepsAFailedChecksEvidenceAndAPassedChecksMetrics) {
  const case_check passed = variant().checks.front();
  const json p = to_json(passed);
  EXPECT_FALSE(p.contains("worker"));
  ASSERT_EQ(p.at("outputs").size(), 1U);
  EXPECT_FALSE(p["outputs"][0].contains("worst"));
  EXPECT_EQ(p["outputs"][0].at("max_abs"), 0.25);
  EXPECT_EQ(p["outputs"][0].at("normalized_error_quantiles").at("p99"), 1.5);

  case_check failed = passed;
  failed.reason = reason_code::wrong_result;
  failed.message = "out[17] = nan, expected 1.25";
  const json f = to_json(failed);
  EXPECT_EQ(f.at("worker").at("check"), 3);
  EXPECT_EQ(f["outputs"][0].at("worst").size(), 2U);
  expect_round_trip(failed, case_check_from_json);

  variant_result reused = variant();
  reused.gated_in_run = 4;
  const json r = to_json(reused);
  EXPECT_EQ(r.at("gated_in_run"), 4);
  EXPECT_TRUE(r.at("checks").empty());
  EXPECT_TRUE(variant_result_from_json(r).checks.empty());
  EXPECT_EQ(to_json(variant()).at("checks").size(), 1U);
}

TEST(ResultModel, PoisonedLaunchesRecordedWithoutPausedLaunchesRead) {
  json j = to_json(poisoned());
  j.erase("paused_us");
  j.erase("pause_us");
  const poisoned_launches p = poisoned_launches_from_json(j);
  EXPECT_TRUE(p.paused_us.empty());
  EXPECT_EQ(p.pause_us, 0.0);
  EXPECT_EQ(p.control_us, poisoned().control_us);
}

// The sanitizer's tools are part of a candidate's time to its verdict: their pass, side by side;
// a record from before they ran side by side counts each tool's time, and one from before they
// were timed reads as zero.
TEST(ResultModel, TheSanitizersToolsCountInTheTimeToAVerdict) {
  const json t = to_json(variant()).at("time_to_verdict");
  EXPECT_DOUBLE_EQ(t.at("sanitizer_s").get<double>(), 3.75);
  EXPECT_DOUBLE_EQ(t.at("total_s").get<double>(),
                   t.at("compile_s").get<double>() + 1.2 + 3.75 + 2.4);
  json one_by_one = to_json(variant());
  one_by_one.erase("sanitizer_s");
  EXPECT_DOUBLE_EQ(variant_result_from_json(one_by_one).sanitizer_s, 2.0 + 3.5);
  json old = to_json(variant().sanitizer.front());
  old.erase("wall_s");
  EXPECT_EQ(sanitizer_report_from_json(old).wall_s, 0.0);
}

// One name per quantity: the model's JSON uses the names the tables and the store use.
TEST(ResultModel, OneNamePerQuantity) {
  const json v = to_json(report()).at("results").at(0);
  EXPECT_TRUE(v.at("timing").contains("buffer_copies"));
  EXPECT_TRUE(v.at("timing").contains("discarded_samples"));
  EXPECT_FALSE(v.at("timing").contains("copies"));
  EXPECT_FALSE(v.at("timing").contains("discarded"));
  EXPECT_EQ(v.at("copy_bandwidth_pct"), 89.6);
  EXPECT_FALSE(v.contains("roofline_pct"));  // the metric of that tag is the floor over the time
  EXPECT_NEAR(v.at("metrics").at("roofline_pct").get<double>(), 100.0 / 1.116, 1e-9);
  EXPECT_EQ(v.at("session_spread"), 0.0057);
}

// The checked-in bundle's run reports were written by the previous release: they read into the
// model with the numbers its portfolio summary quotes.
TEST(ResultModel, ThePreviousReleasesReportsReadIntoTheModel) {
  const std::filesystem::path bundle =
      std::filesystem::path(BLASTER_SOURCE_DIR) / "artifacts" / "core10-h200-v1";
  const json summary = json::parse(read_file(bundle / "results.json"));
  std::size_t read = 0;
  for (const auto& row : summary.at("rows")) {
    const bench_report r = bench_report_from_json(
        json::parse(read_file(bundle / row.at("run_bundle").get<std::string>() / "results.json")));
    EXPECT_EQ(r.task, row.at("task"));
    EXPECT_EQ(r.timed_case, row.at("case"));
    EXPECT_EQ(to_string(r.timing.mode), row.at("mode").get<std::string>());
    ASSERT_TRUE(r.memory) << r.task;
    EXPECT_GT(r.memory->copy.bytes_per_second, 3e12) << r.task;
    bool found = false;
    for (const auto& v : r.results) {
      if (row.at("best").is_null() || v.label != row.at("best").at("variant")) continue;
      found = true;
      EXPECT_EQ(*v.time_us, row.at("best").at("time_us").get<double>());
      ASSERT_TRUE(v.timing);
      EXPECT_EQ(v.timing->cupti.kernel_us, row.at("best").at("kernel_us").get<double>());
      EXPECT_FALSE(v.timing->cupti.kernels.empty());
    }
    EXPECT_TRUE(found) << r.task << " " << r.timed_case;
    ++read;
  }
  EXPECT_EQ(read, 19U);
}

}  // namespace
}  // namespace blaster
