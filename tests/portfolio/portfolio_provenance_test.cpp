// Which session and machine measured each case of a portfolio: stated in every row, shown in the
// report by session, and held by `blaster verify` to each run's own rows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "benchmarking/report/run_record.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/store.hpp"
#include "portfolio/portfolio_provenance.hpp"
#include "portfolio/portfolio_report.hpp"
#include "portfolio/portfolio_runner.hpp"
#include "portfolio/suite.hpp"
#include "tasks/task_spec.hpp"

namespace blaster {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class PortfolioProvenance : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("blaster-provenance-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_file_atomically(dir_ / "two.json", R"({
      "name": "two", "title": "two tasks", "protocol": {"sessions": 5},
      "entries": [{"id": "019", "task": "relu", "cases": [{"case": "canonical"}]},
                  {"id": "036", "task": "rmsnorm", "cases": [{"case": "canonical"}]}]})");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The suite's cases recorded in `records` as bench records them, on an H200.
  std::vector<portfolio_outcome> run_two(store& records) const {
    const suite s = load_suite(BLASTER_SOURCE_DIR, (dir_ / "two.json").string());
    portfolio_options options;
    options.root = BLASTER_SOURCE_DIR;
    options.command = "t";
    return run_portfolio(
        s, options, records, [](const bench_options& o, store& r, warm_bench& warm) {
          if (warm.series.empty()) warm.join("fake");
          bench_report report;
          report.task = o.task;
          report.timed_case = o.timed_case;
          report.timing = o.timing;
          report.sessions = o.sessions;
          report.gpu = true;
          report.blaster_revision = "0123abc";
          report.arch = "sm_90a";
          report.nvrtc = "13.0";
          report.device = cuda::device_properties{
              .name = "NVIDIA H200", .uuid = "GPU-h200", .compute_major = 9};
          variant_result base;
          base.label = base.candidate = "init";
          base.baseline = true;
          base.status = "passed";
          base.time_us = 10.0;
          base.source_sha256 = r.cas().put("source of init for " + o.task);
          base.cubin_sha256 = r.cas().put("cubin of init for " + o.task);
          base.timing = timing_samples{};
          base.timing->sample_us = {10.0, 10.01, 9.99};
          base.timing->median_us = 10.0;
          base.samples_sha256 = r.cas().put("samples of init for " + o.task);
          base.session_medians_us = {10.0};
          report.results = {base};
          report.run_id = r.begin_run(o.command, o.task, "{}");
          record_run(r, report.run_id, load_task(fs::path(BLASTER_SOURCE_DIR) / "tasks" / o.task),
                     report);
          r.finish_run(report.run_id, "completed", r.cas().put(stored_report_bytes(report)));
          return report;
        });
  }

  suite two() const { return load_suite(BLASTER_SOURCE_DIR, (dir_ / "two.json").string()); }

  fs::path dir_;
};

TEST_F(PortfolioProvenance, EachRowNamesTheProcessHostGpuAndRevisionThatMeasuredIt) {
  store records(dir_ / "home");
  const std::vector<portfolio_outcome> outcomes = run_two(records);
  ASSERT_EQ(outcomes.size(), 2U);
  const auto measured = portfolio_provenance(records, outcomes);
  const json summary = summarize_portfolio(two(), outcomes, json(), {}, measured);
  for (const json& row : summary.at("rows")) {
    const json& p = row.at("measured_by");
    // This process ran both: the host's digest, this pid and its start.
    std::istringstream parts(p.at("session").get<std::string>());
    std::string host;
    long pid = 0;
    std::string start;
    ASSERT_TRUE(static_cast<bool>(parts >> host >> pid >> start)) << p;
    EXPECT_EQ(pid, static_cast<long>(::getpid()));
    EXPECT_EQ(p.at("host"), host);
    EXPECT_EQ(p.at("gpu"), "NVIDIA H200");
    EXPECT_EQ(p.at("gpu_uuid"), "GPU-h200");
    EXPECT_TRUE(p.at("device_fingerprint").is_string()) << p;
    EXPECT_EQ(p.at("blaster_revision"), "0123abc");
    EXPECT_TRUE(p.at("started_at").is_string()) << p;
    EXPECT_TRUE(p.at("finished_at").is_string()) << p;
  }
  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("## Who measured each case"), std::string::npos) << md;
  EXPECT_NE(md.find("1 session (a session is the process"), std::string::npos) << md;
  EXPECT_NE(md.find(fmt::format("pid {}", ::getpid())), std::string::npos) << md;
  EXPECT_NE(md.find("019 relu canonical, 036 rmsnorm canonical"), std::string::npos) << md;
  // A summary given no provenance states none and shows no section.
  const json without = summarize_portfolio(two(), outcomes, json());
  EXPECT_FALSE(without.at("rows").at(0).contains("measured_by"));
  EXPECT_EQ(render_portfolio_markdown(without).find("Who measured"), std::string::npos);
}

TEST_F(PortfolioProvenance, CasesOfAnotherSessionAreShownApart) {
  store records(dir_ / "home");
  const std::vector<portfolio_outcome> outcomes = run_two(records);
  // The second case measured by another process on another host, as a merged shard's would be.
  records.db().exec(fmt::format("UPDATE runs SET owner = 'feedbeef00000000 77 4242' WHERE id = {}",
                                outcomes[1].run_id));
  const json summary =
      summarize_portfolio(two(), outcomes, json(), {}, portfolio_provenance(records, outcomes));
  EXPECT_EQ(summary.at("rows").at(1).at("measured_by").at("host"), "feedbeef00000000");
  EXPECT_NE(summary.at("rows").at(0).at("measured_by").at("session"),
            summary.at("rows").at(1).at("measured_by").at("session"));
  const std::string md = render_portfolio_markdown(summary);
  EXPECT_NE(md.find("2 sessions"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | pid 77, started at tick 4242 | feedbeef00000000 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 036 rmsnorm canonical |"), std::string::npos) << md;
  // A run that kept no process (recorded before runs did) says so.
  const json old = run_provenance(json{{"runs", {{{"started_at", "x"}}}}}, "");
  EXPECT_TRUE(old.at("session").is_null());
  EXPECT_TRUE(old.at("host").is_null());
  EXPECT_EQ(old.at("blaster_revision"), "unrecorded");
}

TEST_F(PortfolioProvenance, VerifyHoldsEachRowsProvenanceToItsRun) {
  store records(dir_ / "home");
  const std::vector<portfolio_outcome> outcomes = run_two(records);
  const json summary =
      summarize_portfolio(two(), outcomes, json(), {}, portfolio_provenance(records, outcomes));
  const fs::path out = dir_ / "bundle";
  write_portfolio_bundle(records, two(), outcomes, summary, json(), out, nullptr);
  bundle_verification clean = verify_evidence_bundle(out, nullptr);
  EXPECT_TRUE(clean.ok()) << (clean.problems.empty() ? "" : clean.problems[0].detail);
  EXPECT_NE(read_file(out / "report.md").find("Who measured each case"), std::string::npos);

  // Another GPU claimed for a case, SHA256SUMS rewritten to match: the hashes hold, the claim not.
  json edited = json::parse(read_file(out / "results.json"));
  edited["rows"][0]["measured_by"]["gpu_uuid"] = "GPU-elsewhere";
  const std::string before = sha256_file_hex(out / "results.json");
  write_file_atomically(out / "results.json", edited.dump(1) + "\n");
  std::string sums = read_file(out / "SHA256SUMS");
  sums.replace(sums.find(before), before.size(), sha256_file_hex(out / "results.json"));
  write_file_atomically(out / "SHA256SUMS", sums);
  const bundle_verification forged = verify_evidence_bundle(out, nullptr);
  ASSERT_FALSE(forged.ok());
  bool named = false;
  for (const auto& p : forged.problems) {
    named = named || (p.path == "results.json rows[0]" &&
                      p.detail.find("measured_by is") != std::string::npos &&
                      p.detail.find("GPU-elsewhere") != std::string::npos);
  }
  EXPECT_TRUE(named) << forged.problems.front().path << ": " << forged.problems.front().detail;
}

}  // namespace
}  // namespace blaster
