// The fuller record of schema version 2: devices, tasks, compilations, gate results,
// measurements, verdicts and artifacts, written through typed store methods.
#include <gtest/gtest.h>

#include <set>

#include "../store/recorded_run.hpp"
#include "../store/store_test_support.hpp"
#include "core/error.hpp"
#include "evidence/run_catalog.hpp"
#include "evidence/stored_results_table.hpp"

namespace blaster {
namespace {

using testing::query_int;
using testing::query_text;
using testing::temp_folder;

class StoreRecords : public ::testing::Test {
 protected:
  StoreRecords() : home_("records"), s_(home_.path()) {}

  compilation_record compiled(const std::string& variant) {
    return compilation_record{.candidate = "k",
                              .variant = variant,
                              .file_name = "k.cu",
                              .source_sha256 = s_.cas().put("source of k"),
                              .arch = "sm_90a",
                              .options = {"-arch=sm_90a"},
                              .succeeded = true,
                              .cubin_sha256 = s_.cas().put("cubin of " + variant)};
  }

  measurement_record measured(const std::string& samples) {
    return measurement_record{.case_name = "canonical",
                              .mode = "hot",
                              .protocol_json = R"({"clock":"CUDA events"})",
                              .samples_sha256 = s_.cas().put(samples),
                              .sample_count = 30,
                              .median_us = 70.0};
  }

  temp_folder home_;
  store s_;
};

TEST_F(StoreRecords, DeviceFingerprintsAreRecordedOnce) {
  const device_fingerprint h200{.name = "NVIDIA H200",
                                .uuid = "GPU-1",
                                .compute_capability = "9.0",
                                .arch = "sm_90a",
                                .sm_count = 132,
                                .sm_clock_khz = 1980000,
                                .total_memory_bytes = std::int64_t{150} << 30,
                                .driver_version = "13.0",
                                .cuda_version = "13.0",
                                .nvrtc_version = "13.0"};
  const std::int64_t first = s_.record_device(h200);
  EXPECT_EQ(s_.record_device(h200), first);
  device_fingerprint other_card = h200;
  other_card.uuid = "GPU-2";
  EXPECT_NE(s_.record_device(other_card), first);
  device_fingerprint new_driver = h200;
  new_driver.driver_version = "13.1";
  EXPECT_NE(s_.record_device(new_driver), first);
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM device_fingerprints"), 3);
  EXPECT_EQ(query_int(s_.db(), "SELECT sm_clock_khz FROM device_fingerprints WHERE id = 1"),
            1980000);
  EXPECT_THROW(s_.record_device(device_fingerprint{.name = "no capability"}), error);

  const std::int64_t run = s_.begin_run("blaster bench", "t", "");
  s_.set_run_device(run, first);
  EXPECT_EQ(run_catalog(s_).runs({}).at(0).device_name, "NVIDIA H200");
  EXPECT_THROW(s_.set_run_device(run, 999), error);  // no such device: foreign key
  EXPECT_THROW(s_.set_run_device(999, first), error);
}

TEST_F(StoreRecords, TasksAreRecordedPerSpecWithTheirCases) {
  const task_record rmsnorm{
      .name = "rmsnorm",
      .title = "RMSNorm",
      .spec_sha256 = s_.cas().put(R"({"name":"rmsnorm"})"),
      .cases = {
          {.name = "canonical", .canonical = true, .shape = "B=16", .symbols_json = R"({"B":16})"},
          {.name = "odd", .shape = "B=3"}}};
  const std::int64_t id = s_.record_task(rmsnorm);
  EXPECT_EQ(s_.record_task(rmsnorm), id);
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM task_cases"), 2);
  EXPECT_EQ(query_text(s_.db(), "SELECT name FROM task_cases WHERE canonical = 1"), "canonical");
  task_record edited = rmsnorm;
  edited.spec_sha256 = s_.cas().put(R"({"name":"rmsnorm","edited":true})");
  EXPECT_NE(s_.record_task(edited), id);

  task_record unstored = rmsnorm;
  unstored.spec_sha256 = std::string(64, 'f');
  EXPECT_THROW(s_.record_task(unstored), error);
  task_record bad_json = rmsnorm;
  bad_json.cases[0].symbols_json = "{B:";
  EXPECT_THROW(s_.record_task(bad_json), error);

  const std::int64_t run = s_.begin_run("blaster bench", "rmsnorm", "");
  s_.set_run_task(run, id);
  EXPECT_EQ(run_catalog(s_).find_run(run)->task_id, id);
}

TEST_F(StoreRecords, CompilationsKeepTheirSourceOptionsAndKernels) {
  const std::int64_t run = s_.begin_run("blaster bench", "t", "");
  compilation_record c = compiled("k[VEC=4]");
  c.options = {"-arch=sm_90a", "-DVEC=4"};
  c.log_sha256 = s_.cas().put("ptxas info: 40 registers");
  c.compile_ms = 301.5;
  c.cache_hit = true;
  c.kernels = {{.kernel = "_Z1kPf", .registers = 40, .spill_store_bytes = 0, .shared_bytes = 1024},
               {.kernel = "_Z6finishPf"}};
  const std::int64_t id = s_.record_compilation(run, c);
  EXPECT_EQ(query_text(s_.db(), "SELECT options_json FROM compilations"),
            R"(["-arch=sm_90a","-DVEC=4"])");
  EXPECT_EQ(query_int(s_.db(), "SELECT cache_hit FROM compilations"), 1);
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM compiled_kernels WHERE compilation_id = " +
                                   std::to_string(id)),
            2);
  // Unknown counts stay unknown rather than becoming 0.
  EXPECT_EQ(query_text(s_.db(),
                       "SELECT registers IS NULL FROM compiled_kernels WHERE kernel = "
                       "'_Z6finishPf'"),
            "1");
  // The same source compiled again is one source row.
  s_.record_compilation(run, compiled("k[VEC=8]"));
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM sources"), 1);
  EXPECT_EQ(query_int(s_.db(), "SELECT size_bytes FROM sources"),
            static_cast<std::int64_t>(std::string("source of k").size()));

  EXPECT_THROW(s_.record_compilation(999, compiled("x")), error);  // no such run
  compilation_record no_source = compiled("x");
  no_source.source_sha256 = std::string(64, '0');
  EXPECT_THROW(s_.record_compilation(run, no_source), error);
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM compilations"), 2)
      << "a refused compilation left rows";
}

TEST_F(StoreRecords, GateResultsKeepTheFullSeed) {
  const std::int64_t run = s_.begin_run("blaster bench", "t", "");
  const std::int64_t c = s_.record_compilation(run, compiled("k"));
  s_.record_gate_result(c, gate_result_record{.case_name = "odd",
                                              .seed = 18446744073709551557ULL,
                                              .passed = false,
                                              .reason = "wrong_result",
                                              .message = "out[3] = 2, expected 1",
                                              .max_abs_error = 1.0,
                                              .mismatches = 1,
                                              .metrics_json = R"({"p99":3.5})",
                                              .evidence_sha256 = s_.cas().put("outputs")});
  EXPECT_EQ(query_text(s_.db(), "SELECT seed FROM gate_results"), "18446744073709551557");
  EXPECT_EQ(query_text(s_.db(), "SELECT json_extract(metrics_json, '$.p99') FROM gate_results"),
            "3.5");
  EXPECT_THROW(s_.record_gate_result(999, gate_result_record{.case_name = "odd"}), error);
  EXPECT_THROW(
      s_.record_gate_result(c, gate_result_record{.case_name = "odd", .metrics_json = "{"}), error);
}

TEST_F(StoreRecords, MeasurementsNeedTheirSamplesAndVerdictsStayInTheirRun) {
  const std::int64_t run = s_.begin_run("blaster bench", "t", "");
  const std::int64_t baseline_c = s_.record_compilation(run, compiled("init"));
  const std::int64_t candidate_c = s_.record_compilation(run, compiled("fast"));
  const std::int64_t baseline = s_.record_measurement(baseline_c, measured("baseline samples"));
  const std::int64_t candidate = s_.record_measurement(candidate_c, measured("fast samples"));

  measurement_record no_samples = measured("x");
  no_samples.samples_sha256 = std::string(64, '1');
  EXPECT_THROW(s_.record_measurement(candidate_c, no_samples), error);
  measurement_record bad_protocol = measured("y");
  bad_protocol.protocol_json = "hot mode";
  EXPECT_THROW(s_.record_measurement(candidate_c, bad_protocol), error);

  s_.record_verdict(run, verdict_record{.measurement_id = candidate,
                                        .baseline_measurement_id = baseline,
                                        .verdict = "improved",
                                        .speedup = 1.77,
                                        .speedup_ci_low = 1.75,
                                        .speedup_ci_high = 1.79});
  EXPECT_EQ(query_text(s_.db(), "SELECT verdict FROM verdicts"), "improved");

  // A verdict of another run may not cite these measurements.
  const std::int64_t other_run = s_.begin_run("blaster bench", "t", "");
  EXPECT_THROW(s_.record_verdict(
                   other_run, verdict_record{.measurement_id = candidate, .verdict = "improved"}),
               error);
  EXPECT_THROW(s_.record_verdict(run, verdict_record{.measurement_id = 999, .verdict = "x"}),
               error);
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM verdicts"), 1);
}

TEST_F(StoreRecords, ArtifactsAreNamedOncePerRun) {
  const std::int64_t run = s_.begin_run("blaster bench", "t", "");
  const artifact_record figure{.kind = "figure",
                               .name = "speedup.svg",
                               .sha256 = s_.cas().put("<svg/>"),
                               .media_type = "image/svg+xml"};
  s_.record_artifact(run, figure);
  EXPECT_THROW(s_.record_artifact(run, figure), error);
  artifact_record missing = figure;
  missing.name = "other.svg";
  missing.sha256 = std::string(64, '2');
  EXPECT_THROW(s_.record_artifact(run, missing), error);
}

TEST_F(StoreRecords, RowsCitingAbsentObjectsAreRefused) {
  const std::int64_t run = s_.begin_run("blaster bench", "t", "");
  const std::string absent(64, 'e');
  EXPECT_THROW(s_.record_variant_result(run, variant_result_record{.candidate = "c",
                                                                   .variant = "v",
                                                                   .status = "passed",
                                                                   .samples_sha256 = absent}),
               error);
  try {
    s_.finish_run(run, "completed", absent);
    ADD_FAILURE() << "finished a run citing an absent report";
  } catch (const error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("runs.report_sha256"), std::string::npos) << message;
    EXPECT_NE(message.find(absent), std::string::npos) << message;
  }
  EXPECT_EQ(query_int(s_.db(), "SELECT count(*) FROM results"), 0);
  EXPECT_EQ(query_text(s_.db(), "SELECT status FROM runs"), "running");
}

// Every digest column of the schema is one the catalog knows to cite, so that bundles and the
// crash test's check miss no object; a new *_sha256 column must be added to run_catalog.cpp.
TEST_F(StoreRecords, CatalogKnowsEveryDigestColumn) {
  const auto run = testing::record_bench_run(s_);
  const std::int64_t c = s_.record_compilation(run.run_id, compiled("k"));
  s_.record_gate_result(
      c, gate_result_record{.case_name = "odd", .evidence_sha256 = s_.cas().put("evidence")});
  s_.record_artifact(
      run.run_id,
      artifact_record{.kind = "figure", .name = "f.svg", .sha256 = s_.cas().put("<svg/>")});
  s_.set_run_task(run.run_id, s_.record_task(task_record{.name = "rmsnorm",
                                                         .spec_sha256 = s_.cas().put("{}")}));
  s_.record_variant_result(
      run.run_id,
      variant_result_record{.candidate = "c",
                            .variant = "c",
                            .status = "profiled",
                            .diagnostics = diagnosis_record{
                                .bound = "bandwidth-bound",
                                .diagnosis = "bandwidth-bound (DRAM at 76% of peak)",
                                .profile_sha256 = s_.cas().put("{\"counters\": {}}"),
                                .ncu_report_sha256 = s_.cas().put("NVIDIA Nsight Compute report")}});
  // An optimization step, as optimize/optimization_memory.cpp writes it.
  statement step = s_.db().prepare(
      "INSERT INTO optimize_steps(run_id, step, task, status, at_s, elapsed_s, source_sha256, "
      "reply_sha256, request_sha256, answer_sha256) VALUES(?1, 1, 'rmsnorm', 'ok', 0, 0, ?2, ?3, "
      "?4, ?5)");
  step.bind(1, run.run_id);
  step.bind(2, s_.cas().put("/* blaster {} */"));
  step.bind(3, s_.cas().put("{\"source\": \"/* blaster {} */\"}"));
  step.bind(4, s_.cas().put("{\"protocol\": \"blaster-optimize/1\", \"step\": 1}"));
  step.bind(5, s_.cas().put("{\"id\": null, \"step\": 1, \"status\": \"ok\"}"));
  step.step();

  std::set<std::string> schema_columns;
  statement tables = s_.db().prepare(
      "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
      "WHERE m.type = 'table' AND p.name LIKE '%sha256'");
  while (tables.step()) {
    if (tables.column_text(1) == "fingerprint_sha256") continue;  // a key, not an object
    schema_columns.insert(tables.column_text(0) + "." + tables.column_text(1));
  }
  std::set<std::string> cited;
  for (const auto& citation : run_catalog(s_).cited_objects(run.run_id)) {
    cited.insert(citation.table + "." + citation.column);
    EXPECT_TRUE(s_.cas().contains(citation.sha256));
  }
  EXPECT_EQ(cited, schema_columns);
}

}  // namespace
}  // namespace blaster

namespace blaster {
namespace {

// A profiled variant's diagnosis comes back with its result, and show's table prints it.
TEST_F(StoreRecords, ADiagnosisIsKeptBesideItsResultAndShown) {
  const std::int64_t run = s_.begin_run("blaster profile", "rmsnorm", "");
  const std::string line =
      "bandwidth-bound (DRAM at 76% of peak); DRAM reads 1.00x, writes 1.00x the minimal bytes";
  s_.record_variant_result(
      run, variant_result_record{
               .candidate = "rmsnorm_vec_regs",
               .variant = "rmsnorm_vec_regs[VEC=4,BLOCK=128]",
               .status = "profiled",
               .metrics = {{"dram_throughput_pct", 76.2}},
               .diagnostics = diagnosis_record{.bound = "bandwidth-bound",
                                               .diagnosis = line,
                                               .profile_sha256 = s_.cas().put("{}")}});
  const auto results = run_catalog(s_).results_of(run);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].diagnosis, line);
  EXPECT_EQ(query_text(s_.db(), "SELECT bound FROM variant_diagnostics"), "bandwidth-bound");
  const result_table t = stored_results_table(
      results,
      {metric_definition{
          .tag = "dram_throughput_pct", .name = "DRAM %", .unit = "%", .description = {}, .format = {}}},
      false);
  ASSERT_EQ(t.rows.size(), 1U);
  EXPECT_EQ(t.rows[0].details, std::vector<std::string>{"diagnosis: " + line});
  EXPECT_EQ(std::get<double>(t.rows[0].cells.back()), 76.2);
}

// A table is rendered after the definitions it came from are gone (show, the bundle's reports):
// its columns keep their own text, so that a later change to those definitions is not seen.
TEST_F(StoreRecords, AStoredResultsTableOwnsItsColumnsText) {
  const std::int64_t run = s_.begin_run("blaster bench", "rmsnorm", "");
  s_.record_variant_result(run, variant_result_record{.candidate = "rmsnorm_vec",
                                                      .variant = "rmsnorm_vec[VEC=4]",
                                                      .status = "passed",
                                                      .metrics = {{"time_us", 7.5}}});
  std::vector<metric_definition> definitions{{.tag = "time_us",
                                              .name = "time us",
                                              .unit = "us",
                                              .description = "median time",
                                              .format = "{:.2f}"}};
  const result_table t = stored_results_table(run_catalog(s_).results_of(run), definitions, false);
  // Overwritten in place, as freed storage is by the next allocation.
  definitions[0].name.assign("XXXXXXX");
  definitions[0].format.assign("{:}}}}");
  ASSERT_EQ(t.columns.size(), 3U);
  EXPECT_EQ(t.columns[2].metric.name, "time us");
  EXPECT_EQ(format_cell(t.columns[2], t.rows[0].cells[2]), "7.50");
}

}  // namespace
}  // namespace blaster
