// Merging homes: shards' runs come over whole, keep their ids, and export the same bundles as
// from the home that recorded them; merging again changes nothing; a clash is named, never
// written over.
#include "evidence/store_merge.hpp"

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "evidence/evidence_bundle.hpp"
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

class StoreMerge : public ::testing::Test {
 protected:
  StoreMerge() : scratch_("merge") {}
  fs::path home(const std::string& name) const { return scratch_.path() / name; }
  temp_folder scratch_;
};

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

}  // namespace
}  // namespace blaster::testing
