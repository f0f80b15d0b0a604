// blaster compare as CI runs it: two real stores written as the runner writes them (the task from
// the tree's tasks/, no GPU needed), their exported bundles and the checked-in portfolio, with the
// statuses, the refusals and the exit codes a regression gate relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "benchmarking/report/bench_report.hpp"
#include "benchmarking/report/run_record.hpp"
#include "cli/run_blaster.hpp"
#include "core/cuda_driver.hpp"
#include "evidence/store.hpp"
#include "store/store_test_support.hpp"
#include "tasks/task_spec.hpp"

namespace blaster::testing {
namespace {

using json = nlohmann::json;

// What differs between the runs the tests record.
struct run_spec {
  std::string gpu = "NVIDIA H200";
  double fast_us = 70.0;  // the candidate's time; the baseline's is 120 us
  double copy_bps = 0.0;  // [bytes/s] the copy ceiling the run measured; 0: none recorded
};

variant_result passed(store& s, const std::string& label, bool baseline, double time_us) {
  variant_result r;
  r.candidate = label.substr(0, label.find('['));
  r.label = label;
  r.file = r.candidate + ".cu";
  r.baseline = baseline;
  r.status = "passed";
  r.source_sha256 = s.cas().put("source of " + label);
  r.cubin_sha256 = s.cas().put("cubin of " + label);
  r.timing = timing_samples{};
  r.timing->sample_us = {time_us, time_us * 1.001, time_us * 0.999};
  r.timing->median_us = time_us;
  r.timing->noise = 0.001;
  r.samples_sha256 = s.cas().put(fmt::format("samples of {}: {}", label, time_us));
  r.session_medians_us = {time_us, time_us, time_us, time_us, time_us};
  r.time_us = time_us;
  r.max_noise = 0.001;
  r.session_spread = 0.002;
  return r;
}

// One run of rmsnorm recorded into `home` the way bench_runner records one: the rows, the fuller
// record, then the report in the CAS and the run finished with its digest.
std::int64_t record_run(const fs::path& home, const run_spec& spec) {
  store s(home);
  const task_spec task = load_task(fs::path(BLASTER_SOURCE_DIR) / "tasks" / "rmsnorm");
  bench_report report;
  report.task = task.name;
  report.title = task.title;
  report.timed_case = task.canonical_case;
  report.timed_shape = "B=16 C=64 H=256 W=256";
  report.dtype = "f16";
  report.arch = "sm_90a";
  report.nvrtc = "13.0";
  report.gpu = true;
  report.sessions = 5;
  report.device = cuda::device_properties{.name = spec.gpu,
                                          .uuid = "GPU-" + spec.gpu,
                                          .compute_major = 9,
                                          .sm_count = 132,
                                          .driver_version = 13000};
  if (spec.copy_bps > 0) {
    report.memory = memory_ceilings{};
    report.memory->copy.bytes_per_second = spec.copy_bps;
    report.memory->copy.spread = 0.002;
  }
  variant_result wrong;
  wrong.candidate = wrong.label = "rmsnorm_broken";
  wrong.status = "rejected";
  wrong.reason = reason_code::wrong_result;
  wrong.message = "case odd: out[17] = 3.5, expected 1.25";
  wrong.source_sha256 = s.cas().put("source of rmsnorm_broken");
  report.results = {passed(s, "init", true, 120.0),
                    passed(s, "rmsnorm_fast[VEC=4]", false, spec.fast_us), wrong};
  report.results[1].speedup = 120.0 / spec.fast_us;
  report.run_id =
      s.begin_run("blaster bench --task rmsnorm", report.task, json({{"name", spec.gpu}}).dump());
  report.home = home.string();
  record_run(s, report.run_id, task, report);
  s.finish_run(report.run_id, "completed", s.cas().put(to_json(report).dump(1)));
  return report.run_id;
}

class CompareCli : public ::testing::Test {
 protected:
  CompareCli() : dir_("compare-cli") {}

  fs::path path(const std::string& name) const { return dir_.path() / name; }

  // blaster --home <dir>/a ARGS, run from the test's folder.
  command_result run(const std::string& args) const {
    return run_blaster(dir_.path(), path("a"), args, path("stderr.txt"));
  }

  temp_folder dir_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// {variant: status} of a `compare --json` output.
std::map<std::string, std::string> statuses(const std::string& out) {
  std::map<std::string, std::string> by_variant;
  const json j = json::parse(out);
  for (const auto& row : j.at("rows")) {
    by_variant[row.at("variant").get<std::string>()] = row.at("status").get<std::string>();
  }
  return by_variant;
}

const std::map<std::string, std::string> all_same = {
    {"init", "SAME"}, {"rmsnorm_fast[VEC=4]", "SAME"}, {"rmsnorm_broken", "UNTIMED"}};

TEST_F(CompareCli, ARunComparedWithItselfIsTheSameEverywhere) {
  const std::int64_t id = record_run(path("a"), {});
  auto r = run("compare latest latest --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(statuses(r.out), all_same) << r.out;
  const json j = json::parse(r.out);
  EXPECT_FALSE(j.contains("error")) << r.out;
  const json& fast = j.at("rows").at(1);
  EXPECT_DOUBLE_EQ(fast.at("a_time_us").get<double>(), 70.0);
  EXPECT_DOUBLE_EQ(fast.at("ratio").get<double>(), 1.0);
  EXPECT_LT(fast.at("ratio_low").get<double>(), 1.0);
  EXPECT_GT(fast.at("ratio_high").get<double>(), 1.0);

  // The same run recorded in a second store, named as a folder and as a folder's run.
  record_run(path("b"), {});
  r = run(fmt::format("compare {} b --json", id));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(statuses(r.out), all_same) << r.out;
  r = run("compare a@latest b@1");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "no regression")) << r.out;
  EXPECT_TRUE(contains(r.out, "rmsnorm_fast[VEC=4]")) << r.out;
}

TEST_F(CompareCli, ACandidateOneAndAHalfTimesSlowerIsSlowAndExitsOne) {
  record_run(path("a"), {});
  record_run(path("b"), {.fast_us = 105.0});
  auto r = run("compare a b");
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "SLOW")) << r.out;
  EXPECT_TRUE(contains(r.out, "1.500")) << r.out;
  EXPECT_TRUE(contains(r.out, "REGRESSION: 1 SLOW")) << r.out;
  EXPECT_TRUE(contains(r.err, "regression from a to b")) << r.err;

  r = run("compare a b --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("error").at("code"), "regression");
  EXPECT_EQ(statuses(r.out).at("rmsnorm_fast[VEC=4]"), "SLOW");
  EXPECT_EQ(statuses(r.out).at("init"), "SAME");

  // The other way round it is FAST, and no regression.
  r = run("compare b a --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(statuses(r.out).at("rmsnorm_fast[VEC=4]"), "FAST");
  // Under a threshold wider than the change, the same numbers are SAME.
  r = run("compare a b --threshold 60 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(statuses(r.out).at("rmsnorm_fast[VEC=4]"), "SAME");
}

TEST_F(CompareCli, StoresFromDifferentGpusAreRefusedUnlessAllowed) {
  record_run(path("a"), {});
  record_run(path("b"), {.gpu = "NVIDIA H100", .fast_us = 105.0});
  // Refused: nothing was compared, so nothing regressed; the rows and a note say why.
  auto r = run("compare a b");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "MISMATCH")) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU NVIDIA H200 vs NVIDIA H100")) << r.out;
  EXPECT_TRUE(contains(r.out, "--allow-mismatch compares them")) << r.out;
  r = run("compare a b --json");
  EXPECT_EQ(r.exit_code, 0);
  for (const auto& [variant, status] : statuses(r.out)) EXPECT_EQ(status, "MISMATCH") << variant;

  // Allowed: compared, and every affected row and a note say so.
  r = run("compare a b --allow-mismatch --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(statuses(r.out).at("rmsnorm_fast[VEC=4]"), "SLOW");
  for (const auto& row : j.at("rows")) {
    EXPECT_TRUE(contains(row.at("note").get<std::string>(),
                         "compared although GPU NVIDIA H200 vs NVIDIA H100"))
        << row;
  }
  bool noted = false;
  for (const auto& note : j.at("notes")) {
    noted = noted || contains(note.get<std::string>(), "compared although the GPUs differ");
  }
  EXPECT_TRUE(noted) << j.at("notes");
}

TEST_F(CompareCli, AnExportedBundleIsTheSameAsItsStoresRun) {
  const std::int64_t id = record_run(path("a"), {});
  auto r = run(fmt::format("export {} --out bundle", id));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run(fmt::format("compare bundle a@{} --json", id));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(statuses(r.out), all_same) << r.out;
  EXPECT_TRUE(contains(json::parse(r.out).at("preamble").at(0).get<std::string>(), "bundle"));
  r = run("compare --format md latest bundle");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| task | case | candidate |")) << r.out;
}

// A bundle whose results.json was edited (here to another run's slower numbers) is refused as one
// that does not verify: it was compared as it stood and reported SLOW, with no word of it.
TEST_F(CompareCli, ABundleThatDoesNotVerifyIsRefusedNotCompared) {
  const std::int64_t id = record_run(path("a"), {});
  record_run(path("b"), {.fast_us = 105.0});
  ASSERT_EQ(run(fmt::format("export {} --out bundle", id)).exit_code, 0);
  ASSERT_EQ(run_blaster(dir_.path(), path("b"), "export latest --out slower", path("stderr.txt"))
                .exit_code,
            0);
  write_file_atomically(path("bundle") / "results.json",
                        read_file(path("slower") / "results.json"));
  for (const char* json : {"", " --json"}) {
    const auto r = run(std::string("compare a bundle") + json);
    EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
    EXPECT_TRUE(contains(r.err, "bundle: the bundle does not verify (changed results.json"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "its results were not compared")) << r.err;
    EXPECT_FALSE(contains(r.out, "SLOW")) << r.out;
  }
  // A folder of run bundles without a SHA256SUMS of its own has each of them verified.
  fs::create_directories(path("several"));
  fs::rename(path("bundle"), path("several") / "one");
  write_file_atomically(path("several") / "results.json", "{}");
  const auto r = run("compare a several");
  EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
  EXPECT_TRUE(contains(r.err, "one: the bundle does not verify")) << r.err;
}

// The checked-in portfolio, a bundle of nineteen run bundles from the previous release: every
// run under it is read, compared with itself nothing changed, and against one of its own runs
// the others are on one side only.
TEST_F(CompareCli, APortfolioBundleComparesEveryRunUnderIt) {
  const fs::path portfolio = fs::path(BLASTER_SOURCE_DIR) / "artifacts" / "core10-h200-v1";
  auto r = run(fmt::format("compare '{}' '{}' --json", portfolio.string(), portfolio.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json j = json::parse(r.out);
  std::set<std::string> tasks;
  for (const auto& row : j.at("rows")) {
    tasks.insert(row.at("task").get<std::string>());
    const std::string status = row.at("status").get<std::string>();
    EXPECT_TRUE(status == "SAME" || status == "INCONCLUSIVE" || status == "UNTIMED") << row;
    if (status != "UNTIMED") {
      EXPECT_DOUBLE_EQ(row.at("ratio").get<double>(), 1.0) << row;
    }
  }
  EXPECT_EQ(tasks.size(), 10U) << r.out;  // core10
  EXPECT_TRUE(contains(j.at("preamble").at(0).get<std::string>(), "19 runs")) << j["preamble"];

  const fs::path one = portfolio / "runs" / "019-relu-canonical";
  r = run(fmt::format("compare '{}' '{}' --json", portfolio.string(), one.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::size_t paired = 0;
  const json against_one = json::parse(r.out);
  for (const auto& row : against_one.at("rows")) {
    const bool relu = row.at("task") == "relu" && row.at("case") == "canonical";
    EXPECT_EQ(row.at("status") == "ONLY_A", !relu) << row;
    paired += relu ? 1 : 0;
  }
  EXPECT_GT(paired, 0U);
}

TEST_F(CompareCli, BadInputExitsTwoNamingTheFolderOrRun) {
  // No store at --home yet.
  auto r = run("compare latest latest");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "no blaster store at " + path("a").string())) << r.err;
  EXPECT_FALSE(fs::exists(path("a"))) << "a read created a store";

  record_run(path("a"), {});
  r = run("compare latest missing-folder");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "missing-folder: no such folder")) << r.err;
  r = run("compare 99 latest");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "no run 99 in " + path("a").string())) << r.err;
  r = run("compare a@42 latest --json");
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("error").at("code"), "bad_input");
  EXPECT_TRUE(contains(j.at("error").at("message").get<std::string>(), "no run 42")) << j;
  fs::create_directories(path("empty"));
  r = run("compare latest empty");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "empty: neither a blaster store")) << r.err;
  r = run("compare latest latest --threshold -1");
  EXPECT_EQ(r.exit_code, 2);
}

// Two cards' homes of the same case: its time ratio beside the ratio of the copy ceilings each
// card measured, the case flagged where the H100 takes longer than its ceiling explains.
TEST_F(CompareCli, AcrossCardsFlagsACaseWhoseTimesDoNotScaleWithTheCeilings) {
  record_run(path("a"), {.fast_us = 30.0, .copy_bps = 4.0e12});
  // The H100's home holds an older run of the case that scaled; its latest one did not.
  record_run(path("b"), {.gpu = "NVIDIA H100", .fast_us = 40.0, .copy_bps = 3.0e12});
  record_run(path("b"), {.gpu = "NVIDIA H100", .fast_us = 60.0, .copy_bps = 3.0e12});
  auto r = run("compare --across-cards a b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j.at("a").at("card"), "NVIDIA H200");
  EXPECT_EQ(j.at("b").at("card"), "NVIDIA H100");
  ASSERT_EQ(j.at("cases").size(), 1U) << r.out;
  const json& k = j.at("cases").at(0);
  EXPECT_EQ(k.at("status"), "DEPARTS") << k;
  EXPECT_EQ(k.at("bound"), "bandwidth-bound");
  EXPECT_DOUBLE_EQ(k.at("time_ratio").at("ratio").get<double>(), 2.0);
  EXPECT_NEAR(k.at("ceiling_ratio").at("ratio").get<double>(), 4.0 / 3.0, 1e-12);
  EXPECT_EQ(k.at("b").at("ceiling"), "copy bandwidth");
  EXPECT_TRUE(contains(k.at("hint").get<std::string>(), "on the NVIDIA H100")) << k;
  EXPECT_EQ(j.at("departs"), 1);

  // The table names the flagged case, both cards' numbers and the hint.
  r = run("compare --across-cards a b");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (const char* part :
       {"time B/A", "ceilings B/A", "A: NVIDIA H200 (a)", "B: NVIDIA H100 (b)", "DEPARTS", "2.000",
        "1.333", "hint: ", "copy bandwidth 3000.0 GB/s", "flagged: the DEPARTS rows"}) {
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
  }
  // A wide enough tau takes it in.
  r = run("compare --across-cards a b --threshold 60 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("cases").at(0).at("status"), "AGREES") << r.out;

  // The older H100 run, named as a run of its home, scales with the ceilings.
  r = run("compare --across-cards a b@1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  j = json::parse(r.out);
  EXPECT_EQ(j.at("cases").at(0).at("status"), "AGREES") << r.out;
  EXPECT_EQ(j.at("departs"), 0);
}

// The checked-in H200 portfolio, verified and read run by run, against an H100 home that holds
// one of its cases: that case is compared, the others are the H200's only.
TEST_F(CompareCli, AcrossCardsReadsAPortfolioBundleOfTheOtherCard) {
  const fs::path portfolio = fs::path(BLASTER_SOURCE_DIR) / "artifacts" / "core10-h200-v1";
  // The bundle's best rmsnorm time, 70.03 us at a copy ceiling of 3996.6 GB/s, at the H100's.
  record_run(path("b"),
             {.gpu = "NVIDIA H100", .fast_us = 70.03 * 3996.6 / 3000.0, .copy_bps = 3.0e12});
  const auto r = run(fmt::format("compare --across-cards '{}' b --json", portfolio.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("cases").size(), 1U) << r.out;
  const json& k = j.at("cases").at(0);
  EXPECT_EQ(k.at("task"), "rmsnorm");
  EXPECT_EQ(k.at("status"), "AGREES") << k;
  EXPECT_EQ(k.at("a").at("variant"), "rmsnorm_vec_regs[VEC=4,BLOCK=128]");
  EXPECT_TRUE(contains(k.at("a").at("source").get<std::string>(), "036-rmsnorm-canonical")) << k;
  EXPECT_EQ(j.at("only_a").size(), 18U) << j.at("only_a");
}

TEST_F(CompareCli, AcrossCardsRefusesTheSameCardNoCommonCaseAndWhatIsNoBundle) {
  record_run(path("a"), {.copy_bps = 4.0e12});
  record_run(path("same"), {.copy_bps = 4.0e12});
  auto r = run("compare --across-cards a same");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "are both NVIDIA H200")) << r.err;
  EXPECT_TRUE(contains(r.err, "blaster compare A B")) << r.err;

  // The H200's relu run has no case of the H100 home's (rmsnorm).
  const fs::path one =
      fs::path(BLASTER_SOURCE_DIR) / "artifacts" / "core10-h200-v1" / "runs" / "019-relu-canonical";
  record_run(path("b"), {.gpu = "NVIDIA H100", .copy_bps = 3.0e12});
  r = run(fmt::format("compare --across-cards '{}' b --json", one.string()));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(json::parse(r.out).at("error").at("code"), "bad_input") << r.out;
  EXPECT_TRUE(contains(r.err, "no case in common")) << r.err;

  fs::create_directories(path("empty"));
  r = run("compare --across-cards a empty");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "empty: neither a blaster store")) << r.err;

  // An edited bundle of the other card is refused, not compared.
  ASSERT_EQ(
      run_blaster(dir_.path(), path("b"), "export latest --out h100", path("stderr.txt")).exit_code,
      0);
  record_run(path("c"), {.gpu = "NVIDIA H100", .fast_us = 105.0, .copy_bps = 3.0e12});
  ASSERT_EQ(run_blaster(dir_.path(), path("c"), "export latest --out slower", path("stderr.txt"))
                .exit_code,
            0);
  r = run("compare --across-cards a h100");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  write_file_atomically(path("h100") / "results.json", read_file(path("slower") / "results.json"));
  r = run("compare --across-cards a h100");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "h100: the bundle does not verify")) << r.err;

  // A home with no run timed on a GPU has nothing to compare.
  { const store empty_home(path("nogpu")); }
  r = run("compare --across-cards a nogpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "holds no completed run timed on a GPU")) << r.err;
}

// portfolio --across-cards reads the other card's runs before it benches anything: a wrong
// folder is said at once, not after hours of cases.
TEST_F(CompareCli, APortfolioAcrossCardsReadsTheOtherCardFirst) {
  write_file_atomically(path("one.json"), R"({"name": "one", "title": "one task", "entries": [
      {"id": "1", "task": "rmsnorm", "cases": [{"case": "canonical"}]}]})");
  const std::string suite = "portfolio --suite '" + path("one.json").string() + "' --recorded";
  auto r = run(suite + " --across-cards missing-folder --out bundle");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "missing-folder: no such folder")) << r.err;
  EXPECT_FALSE(fs::exists(path("bundle")));
  r = run("portfolio --suite '" + path("one.json").string() +
          "' --compile-only --across-cards missing-folder");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run("portfolio --help");
  EXPECT_TRUE(contains(r.out, "--across-cards")) << r.out;
  EXPECT_TRUE(contains(r.out, "The two cards against each other")) << r.out;
}

// `verify --remeasure` holds a bundle's numbers to a fresh run on a GPU of its model: none here
// is a GPU error (exit 3); a GPU of another model is refused with the models named (exit 2);
// files that do not verify are never remeasured (exit 4).
TEST_F(CompareCli, RemeasureNeedsTheBundlesGpuModelAndAVerifiedBundle) {
  const std::int64_t id = record_run(path("a"), {.gpu = "NVIDIA Imaginary 9000"});
  ASSERT_EQ(run(fmt::format("export {} --out bundle", id)).exit_code, 0);
  const bool gpu = cuda::driver_unavailable_reason().empty();
  for (const char* json : {"", " --json"}) {
    const auto r = run(std::string("verify bundle --remeasure 2") + json);
    if (gpu) {
      EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
      EXPECT_TRUE(contains(r.err,
                           "its times were measured on NVIDIA Imaginary 9000; this "
                           "machine's GPU is"))
          << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
      EXPECT_TRUE(contains(r.err, "this command needs a GPU")) << r.err;
    }
  }
  // A flag that only seeds the draw needs the draw; none, and a draw of none, are bad input.
  auto r = run("verify bundle --remeasure-seed 7");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--remeasure-seed seeds the draw of --remeasure N")) << r.err;
  EXPECT_EQ(run("verify bundle --remeasure 0").exit_code, 2);

  // An edited report fails on its hashes; nothing is measured against it.
  write_file_atomically(path("bundle") / "results.json",
                        read_file(path("bundle") / "results.json") + " ");
  r = run("verify bundle --remeasure 2");
  EXPECT_EQ(r.exit_code, 4) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "not remeasured: the bundle does not verify")) << r.out;
}

TEST_F(CompareCli, HelpSaysHowEachSideIsWrittenTheStatisticsAndTheExitCodes) {
  const auto r = run("compare --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* part :
       {"DIR@12", "latest", "evidence bundle", "r = tB/tA", "max(noise, spread, A/A)",
        "--allow-mismatch", "MISMATCH", "Exit status: 0", "1 something is SLOW", "2 bad input",
        "--across-cards", "ceilings for the case's bound", "DEPARTS", "run `blaster tune`"}) {
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
  }
}

}  // namespace
}  // namespace blaster::testing
