// Merging homes: shards' runs come over whole, keep their ids, and export the same bundles as
// from the home that recorded them; merging again changes nothing; a clash is named, never
// written over. A run's evidence bundle merges as the home that wrote it.
#include "evidence/store_merge.hpp"

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/bundle_merge.hpp"
#include "evidence/bundle_verifier.hpp"
#include "evidence/evidence_bundle.hpp"
#include "evidence/sha256sums.hpp"
#include "recorded_run.hpp"
#include "store_test_support.hpp"

namespace blaster::testing {
namespace {

// A run bundle's evidence: the report and the objects byte for byte, and the database rows with
// the ids the home numbers its own rows by left out (the run's id stays: reports cite it).
std::map<std::string, std::string> evidence_of(const fs::path& bundle) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(bundle / "objects")) {
    if (e.is_regular_file()) out[e.path().filename().string()] = read_file(e.path());
  }
  out["results.json"] = read_file(bundle / "results.json");
  nlohmann::json rows = nlohmann::json::parse(read_file(bundle / "run.json"));
  for (auto& [table, list] : rows.items()) {
    for (auto& row : list) {
      for (auto it = row.begin(); it != row.end();) {
        const std::string& key = it.key();
        const bool numbering =
            (key == "id" && table != "runs") ||
            (key.size() > 3 && key.ends_with("_id") && key != "run_id" && key != "bench_run_id");
        it = numbering ? row.erase(it) : std::next(it);
      }
    }
  }
  out["run.json"] = rows.dump();
  return out;
}

// The rows of a run (run_catalog::records_of) without the ids that number rows: equal in two
// homes that hold the same run, whatever ids each home gave the rows it shifted or named.
nlohmann::json rows_of(store& s, std::int64_t run_id) {
  nlohmann::json rows = run_catalog(s).records_of(run_id);
  for (auto& [table, list] : rows.items()) {
    for (auto& row : list) {
      for (auto it = row.begin(); it != row.end();) {
        const std::string& key = it.key();
        const bool numbering =
            (key == "id" && table != "runs") ||
            (key.size() > 3 && key.ends_with("_id") && key != "run_id" && key != "bench_run_id");
        it = numbering ? row.erase(it) : std::next(it);
      }
    }
  }
  return rows;
}

// What a run's rows say when every citation is followed: each variant with the compilation,
// source, kernels, measurement and metrics it cites. Equal in two homes when the ids that number
// rows were mapped right, whatever they are.
std::vector<std::string> cited_rows(store& s, std::int64_t run_id) {
  statement q = s.db().prepare(
      "SELECT v.variant || ' | ' || coalesce(c.variant, '-') || ' ' || coalesce(c.cubin_sha256, "
      "'-') || ' | ' || coalesce(src.sha256, '-') || ' ' || coalesce(src.file_name, '-') || ' | ' "
      "|| coalesce((SELECT group_concat(k.kernel || ':' || k.registers) FROM compiled_kernels k "
      "WHERE k.compilation_id = c.id), '-') || ' | ' || coalesce(m.samples_sha256, '-') || ' ' || "
      "coalesce(m.median_us, '-') || ' | ' || coalesce((SELECT group_concat(t.tag || '=' || "
      "t.value) FROM variant_metrics t WHERE t.variant_result_id = v.id), '-') || ' | ' || "
      "coalesce(d.fingerprint_sha256, '-') "
      "FROM variant_results v LEFT JOIN compilations c ON c.id = v.compilation_id "
      "LEFT JOIN sources src ON src.id = c.source_id "
      "LEFT JOIN measurements m ON m.id = v.measurement_id "
      "JOIN runs r ON r.id = v.run_id LEFT JOIN device_fingerprints d ON d.id = r.device_id "
      "WHERE v.run_id = ?1 ORDER BY v.variant");
  q.bind(1, run_id);
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.column_text(0));
  return out;
}

std::int64_t count(store& s, const std::string& table) {
  statement q = s.db().prepare("SELECT count(*) FROM " + table);
  q.step();
  return q.column_int64(0);
}

// The rows of every table the runs own, as counts: what a merge must bring over whole.
std::map<std::string, std::int64_t> counts(store& s) {
  std::map<std::string, std::int64_t> out;
  for (const char* t : {"runs", "compilations", "compiled_kernels", "measurements",
                        "variant_results", "variant_metrics", "device_fingerprints", "sources"}) {
    out[t] = count(s, t);
  }
  return out;
}

// A bench run with a row in every table a run owns: record_bench_run's, and its task and cases,
// a gate result with its evidence, a verdict, an artifact, and a variant with a metric of its
// own and its counters' diagnosis.
recorded_run record_whole_run(store& s, const std::string& task, const std::string& salt) {
  const recorded_run r = record_bench_run(s, task, salt);
  const std::int64_t task_id = s.record_task(task_record{
      .name = task,
      .title = task + " of the test",
      .spec_sha256 = s.cas().put(R"({"name":")" + task + R"("})"),
      .cases = {
          {.name = "canonical", .canonical = true, .shape = "B=16", .symbols_json = R"({"B":16})"},
          {.name = "odd", .shape = "B=3"}}});
  s.set_run_task(r.run_id, task_id);
  const std::int64_t compilation =
      query_int(s.db(), fmt::format("SELECT id FROM compilations WHERE run_id = {}", r.run_id));
  s.record_gate_result(compilation,
                       gate_result_record{.case_name = "odd",
                                          .seed = 42,
                                          .passed = true,
                                          .max_abs_error = 1e-3,
                                          .mismatches = 0,
                                          .metrics_json = R"({"p99":0.25})",
                                          .evidence_sha256 = s.cas().put("evidence " + salt)});
  s.record_verdict(r.run_id, verdict_record{.measurement_id = r.fast_measurement_id,
                                            .verdict = "improved",
                                            .speedup = 1.7667,
                                            .speedup_ci_low = 1.75,
                                            .speedup_ci_high = 1.78});
  s.record_artifact(r.run_id, artifact_record{.kind = "figure",
                                              .name = "speedup.svg",
                                              .sha256 = s.cas().put("<svg>" + salt + "</svg>"),
                                              .media_type = "image/svg+xml"});
  s.record_metric_definitions({metric_definition{.tag = "time_over_floor",
                                                 .name = "x floor",
                                                 .unit = "x",
                                                 .description = "the time over the floor",
                                                 .format = "{:.2f}",
                                                 .console = false}});
  s.record_variant_result(
      r.run_id, variant_result_record{
                    .compilation_id = compilation,
                    .candidate = "rmsnorm_fast",
                    .variant = "rmsnorm_fast[VEC=4] profiled",
                    .case_name = "canonical",
                    .status = "passed",
                    .metrics = {{"time_us", 70.9}, {"time_over_floor", 1.25}},
                    .diagnostics = diagnosis_record{
                        .bound = "bandwidth-bound",
                        .diagnosis = "bandwidth-bound; 91% of DRAM",
                        .profile_sha256 = s.cas().put(R"({"counters":")" + salt + R"("})")}});
  return r;
}

// Verified as blaster verify verifies a run's bundle (a portfolio's claims aside: none here).
bundle_verification verified(const fs::path& bundle) {
  bundle_verification v = verify_bundle(bundle, nullptr);
  check_run_records(v);
  return v;
}

class StoreMerge : public ::testing::Test {
 protected:
  StoreMerge() : scratch_("merge") {}
  fs::path home(const std::string& name) const { return scratch_.path() / name; }
  temp_folder scratch_;
};

// A run's bundle is all a later session has of a home that is gone: merged, it leaves a home as
// merging that home would, keeps the run's id, and exports the same evidence again.
TEST_F(StoreMerge, ARunBundleMergesAsTheHomeThatWroteIt) {
  recorded_run second;
  {
    store source(home("source"));
    record_whole_run(source, "rmsnorm", "a1");
    second = record_whole_run(source, "softmax", "a2");
    EXPECT_EQ(export_bundle(source, second.run_id, home("bundle"), nullptr).objects, 13U);
  }
  store from_home(home("from-home"));
  EXPECT_EQ(merge_home(from_home, home("source")).runs_added, 2);
  // One fresh home, and one whose own run and rows come first, so that the bundle's rows are
  // shifted past them and its device, task and metric map onto this home's.
  store fresh(home("fresh"));
  store busy(home("busy"));
  busy.number_runs_from(100);
  const recorded_run own = record_whole_run(busy, "softmax", "own");
  for (store* into : {&fresh, &busy}) {
    SCOPED_TRACE(into->home().string());
    const merge_outcome m = merge_bundle(*into, verified(home("bundle")));
    EXPECT_EQ(m.runs_added, 1);
    EXPECT_EQ(m.runs_present, 0);
    // The report (results.json) as well; the busy home holds softmax's task.json already.
    EXPECT_EQ(m.objects_added, into == &fresh ? 14 : 13);
    EXPECT_TRUE(m.conflicts.empty());
    EXPECT_EQ(rows_of(*into, second.run_id), rows_of(from_home, second.run_id));
    EXPECT_EQ(cited_rows(*into, second.run_id), cited_rows(from_home, second.run_id));
    EXPECT_EQ(run_catalog(*into).results_of(second.run_id).size(), 4U);
    expect_store_is_whole(*into);
    const fs::path again =
        scratch_.path() / fmt::format("again-{}", into->home().filename().string());
    export_bundle(*into, second.run_id, again, nullptr);
    EXPECT_EQ(evidence_of(again), evidence_of(home("bundle")));
  }
  // The busy home's rows are where they were, and its run is its own.
  EXPECT_EQ(cited_rows(busy, own.run_id).size(), 4U);
  EXPECT_EQ(query_int(busy.db(), "SELECT count(*) FROM device_fingerprints"), 1);
  EXPECT_EQ(query_int(busy.db(), "SELECT count(*) FROM tasks"), 1) << "one softmax task row";

  // Merging again changes nothing.
  const auto before = counts(busy);
  const merge_outcome again = merge_bundle(busy, verified(home("bundle")));
  EXPECT_EQ(again.runs_added, 0);
  EXPECT_EQ(again.runs_present, 1);
  EXPECT_EQ(again.objects_added, 0);
  EXPECT_EQ(counts(busy), before);
}

// One changed byte of an object refuses the bundle, whether SHA256SUMS was left as it was or
// computed again over the changed file, and nothing of it is written.
TEST_F(StoreMerge, ABundleWithAChangedObjectIsRefusedAndNothingIsWritten) {
  recorded_run r;
  {
    store source(home("source"));
    r = record_bench_run(source, "rmsnorm", "a");
    export_bundle(source, r.run_id, home("bundle"), nullptr);
  }
  for (const bool resummed : {false, true}) {
    SCOPED_TRACE(resummed ? "SHA256SUMS computed again" : "SHA256SUMS as it was");
    const fs::path bundle = scratch_.path() / fmt::format("changed-{}", resummed);
    fs::copy(home("bundle"), bundle, fs::copy_options::recursive);
    const std::string object = "objects/" + r.fast_samples_sha256;
    std::string bytes = read_file(bundle / object);
    bytes[bytes.size() / 2] ^= 1;
    write_file_atomically(bundle / object, bytes);
    if (resummed) {
      std::vector<sha256sums_entry> manifest = parse_sha256sums(read_file(bundle / "SHA256SUMS"));
      for (auto& entry : manifest) {
        if (entry.path == object) entry.sha256 = sha256_hex(bytes);
      }
      write_file_atomically(bundle / "SHA256SUMS", format_sha256sums(manifest));
      EXPECT_TRUE(verify_bundle(bundle, nullptr).ok()) << "only the run's records catch it";
    }
    store into(scratch_.path() / fmt::format("into-{}", resummed));
    try {
      merge_bundle(into, verified(bundle));
      ADD_FAILURE() << "a changed bundle was merged";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("changed " + object), std::string::npos) << e.what();
    }
    EXPECT_EQ(query_int(into.db(), "SELECT count(*) FROM runs"), 0);
    EXPECT_TRUE(fs::is_empty(into.cas().root())) << "an object of the refused bundle came over";
  }
}

// A bundle's rows that cite a row it lacks, or name tables and columns that no schema of this
// blaster holds (a newer blaster's, or a forger's SQL), are refused before anything is written.
TEST_F(StoreMerge, ABundleWhoseRowsDoNotMakeAHomeIsRefused) {
  recorded_run r;
  {
    store source(home("source"));
    r = record_bench_run(source, "rmsnorm", "a");
    export_bundle(source, r.run_id, home("bundle"), nullptr);
  }
  auto refused = [&](const std::string& name, auto&& edit) {
    const fs::path bundle = scratch_.path() / name;
    fs::copy(home("bundle"), bundle, fs::copy_options::recursive);
    nlohmann::json rows = nlohmann::json::parse(read_file(bundle / "run.json"));
    edit(rows);
    write_file_atomically(bundle / "run.json", rows.dump(1) + "\n");
    std::vector<sha256sums_entry> manifest = parse_sha256sums(read_file(bundle / "SHA256SUMS"));
    for (auto& entry : manifest) {
      if (entry.path == "run.json") entry.sha256 = sha256_file_hex(bundle / "run.json");
    }
    write_file_atomically(bundle / "SHA256SUMS", format_sha256sums(manifest));
    store into(scratch_.path() / ("into-" + name));
    std::string message = "merged";
    try {
      merge_bundle(into, verified(bundle));
    } catch (const input_error& e) {
      message = e.what();
    }
    EXPECT_EQ(query_int(into.db(), "SELECT count(*) FROM runs"), 0) << name;
    EXPECT_TRUE(fs::is_empty(into.cas().root())) << name;
    return message;
  };
  EXPECT_NE(
      refused("dangling", [](nlohmann::json& rows) { rows["compilations"][0]["source_id"] = 999; })
          .find("cites a row of sources that the bundle lacks"),
      std::string::npos);
  EXPECT_NE(
      refused("newer", [](nlohmann::json& rows) { rows["runs"][0]["flavour"] = "from the future"; })
          .find("no schema version this blaster knows"),
      std::string::npos);
  EXPECT_NE(refused("injected",
                    [](nlohmann::json& rows) { rows["runs; DROP TABLE runs; --"] = rows["runs"]; })
                .find("no schema version this blaster knows"),
            std::string::npos);
}

TEST_F(StoreMerge, ShardsMergeWholeKeepTheirRunIdsAndExportTheSameBundles) {
  std::vector<recorded_run> first_runs;
  std::vector<recorded_run> second_runs;
  {
    store first(home("shard1"));
    first_runs.push_back(record_bench_run(first, "rmsnorm", "a1"));
    first_runs.push_back(record_bench_run(first, "softmax", "a2"));
    store second(home("shard2"));
    second.number_runs_from(1000);  // numbered apart, as a second shard numbers its runs
    second_runs.push_back(record_bench_run(second, "rmsnorm", "b1"));
    second_runs.push_back(record_bench_run(second, "relu", "b2"));
  }
  EXPECT_EQ(second_runs[0].run_id, 1000);
  EXPECT_EQ(second_runs[1].run_id, 1001);

  store merged(home("merged"));
  const merge_outcome a = merge_home(merged, home("shard1"));
  const merge_outcome b = merge_home(merged, home("shard2"));
  EXPECT_EQ(a.runs_added, 2);
  EXPECT_EQ(b.runs_added, 2);
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(b.conflicts.empty());
  EXPECT_GT(a.objects_added, 0);

  // Each run exports the evidence its own home exports.
  for (const auto& [shard, runs] :
       {std::pair{home("shard1"), first_runs}, std::pair{home("shard2"), second_runs}}) {
    store source(shard);
    for (const recorded_run& r : runs) {
      SCOPED_TRACE(r.run_id);
      const fs::path from = scratch_.path() / fmt::format("from-{}", r.run_id);
      const fs::path in = scratch_.path() / fmt::format("in-{}", r.run_id);
      export_bundle(source, r.run_id, from, nullptr);
      export_bundle(merged, r.run_id, in, nullptr);
      EXPECT_EQ(evidence_of(from), evidence_of(in));
      const auto rows = cited_rows(source, r.run_id);
      EXPECT_EQ(rows.size(), 3U);
      EXPECT_EQ(rows, cited_rows(merged, r.run_id));
    }
  }
  // The rows are the sum of the shards', and every citation resolves.
  std::map<std::string, std::int64_t> sum;
  for (const char* shard : {"shard1", "shard2"}) {
    store s(home(shard));
    for (const auto& [t, n] : counts(s)) sum[t] += n;
  }
  auto after = counts(merged);
  EXPECT_EQ(after.at("runs"), 4);
  EXPECT_EQ(after.at("variant_results"), sum.at("variant_results"));
  EXPECT_EQ(after.at("variant_metrics"), sum.at("variant_metrics"));
  EXPECT_EQ(after.at("compiled_kernels"), sum.at("compiled_kernels"));
  EXPECT_EQ(after.at("device_fingerprints"), 1);  // one H200, named the same in both
  statement orphans = merged.db().prepare("PRAGMA foreign_key_check");
  EXPECT_FALSE(orphans.step()) << "a merged row cites a row that is not there";

  // Merging again changes nothing.
  const merge_outcome again = merge_home(merged, home("shard2"));
  EXPECT_EQ(again.runs_added, 0);
  EXPECT_EQ(again.runs_present, 2);
  EXPECT_EQ(again.objects_added, 0);
  EXPECT_EQ(counts(merged), after);
}

TEST_F(StoreMerge, ARunWhoseIdNamesAnotherIsAConflictNamedAndLeftOut) {
  {
    store first(home("first"));
    record_bench_run(first, "rmsnorm", "mine");
    store other(home("other"));  // numbered from 1 too: its run 1 is another run
    record_bench_run(other, "softmax", "theirs");
    record_bench_run(other, "relu", "theirs too");
  }
  store merged(home("first"));
  const std::string before = [&] {
    statement q = merged.db().prepare("SELECT command FROM runs WHERE id = 1");
    q.step();
    return q.column_text(0);
  }();
  const merge_outcome m = merge_home(merged, home("other"));
  ASSERT_EQ(m.conflicts.size(), 1U);
  EXPECT_NE(m.conflicts[0].find("run 1 (blaster bench --task softmax)"), std::string::npos)
      << m.conflicts[0];
  EXPECT_EQ(m.runs_added, 1);  // its run 2 comes over
  statement q = merged.db().prepare("SELECT command FROM runs WHERE id = 1");
  q.step();
  EXPECT_EQ(q.column_text(0), before);  // never written over
}

TEST_F(StoreMerge, ASourceThatIsNotAHomeIsBadInput) {
  store merged(home("merged"));
  fs::create_directories(home("empty"));
  EXPECT_THROW(merge_home(merged, home("empty")), input_error);
  EXPECT_THROW(merge_home(merged, home("merged")), input_error);
}

// An optimize run's bundle holds its steps, not the bench runs that judged them: the steps come
// over citing no bench run, as merge_home leaves a citation of a run it does not bring.
TEST_F(StoreMerge, AnOptimizeRunsBundleMergesWithoutTheBenchRunsItDoesNotHold) {
  std::int64_t session = 0;
  {
    store source(home("source"));
    const recorded_run judged = record_bench_run(source, "rmsnorm", "judged");
    session = source.begin_run("blaster optimize --task rmsnorm", "rmsnorm", "");
    statement step = source.db().prepare(
        "INSERT INTO optimize_steps(run_id, step, task, status, at_s, elapsed_s, bench_run_id, "
        "reply_sha256) VALUES(?1, 1, 'rmsnorm', 'ok', 0.5, 0.5, ?2, ?3)");
    step.bind(1, session);
    step.bind(2, judged.run_id);
    step.bind(3, source.cas().put(R"({"hypothesis":"vectorize"})"));
    step.step();
    source.finish_run(session, "completed", source.cas().put(R"({"ended":"steps"})"));
    export_bundle(source, session, home("bundle"), nullptr);
  }
  store into(home("into"));
  const merge_outcome m = merge_bundle(into, verified(home("bundle")));
  EXPECT_EQ(m.runs_added, 1);
  EXPECT_EQ(query_int(into.db(), "SELECT count(*) FROM optimize_steps WHERE bench_run_id IS NULL"),
            1);
  expect_store_is_whole(into);
}

TEST_F(StoreMerge, ASourceIsAHomeOrABundleAndNothingElse) {
  {
    store source(home("source"));
    const recorded_run r = record_bench_run(source, "rmsnorm", "a");
    export_bundle(source, r.run_id, home("bundle"), nullptr);
  }
  EXPECT_EQ(merge_source_kind_of(home("source")), merge_source_kind::home);
  EXPECT_EQ(merge_source_kind_of(home("bundle")), merge_source_kind::bundle);
  fs::create_directories(home("empty"));
  EXPECT_THROW(merge_source_kind_of(home("empty")), input_error);
  fs::create_directories(home("objects-only/objects"));
  write_file_atomically(home("objects-only/SHA256SUMS"), "");
  EXPECT_THROW(merge_source_kind_of(home("objects-only")), input_error);
}

}  // namespace
}  // namespace blaster::testing
