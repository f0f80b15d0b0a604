// The store's commands as a user runs them: blaster runs, show, history, export, verify and
// keygen, with their tables, their JSON and their exit codes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/run_blaster.hpp"
#include "core/file_io.hpp"
#include "core/sha256.hpp"
#include "evidence/signature.hpp"
#include "store/recorded_run.hpp"
#include "store/store_test_support.hpp"

namespace blaster::testing {
namespace {

class StoreCli : public ::testing::Test {
 protected:
  StoreCli() : dir_("store-cli") {}

  fs::path home() const { return dir_.path() / "home"; }

  // Runs blaster with the test's home, from the test's folder, capturing both streams.
  command_result run(const std::string& args) const {
    return run_blaster(dir_.path(), home(), args, dir_.path() / "stderr.txt");
  }

  // Two runs of rmsnorm and one of softmax, recorded as the runner records them.
  std::vector<recorded_run> record_runs() {
    store s(home());
    std::vector<recorded_run> runs;
    runs.push_back(record_bench_run(s, "rmsnorm", "1"));
    runs.push_back(record_bench_run(s, "softmax", "2"));
    runs.push_back(record_bench_run(s, "rmsnorm", "3"));
    return runs;
  }

  // A checked-in bundle, copied: it verifies, and one changed byte of a file fails it.
  void verify_checked_in(const fs::path& checked_in);

  temp_folder dir_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(StoreCli, RunsListsNewestFirstAsTableAndJson) {
  const auto runs = record_runs();
  auto r = run("runs");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* column : {"run", "started (UTC)", "status", "task", "device", "passed"}) {
    EXPECT_TRUE(contains(r.out, column)) << column << "\n" << r.out;
  }
  EXPECT_TRUE(contains(r.out, "NVIDIA H200")) << r.out;
  EXPECT_TRUE(contains(r.out, "2/3")) << r.out;
  EXPECT_TRUE(contains(r.out, "1.77x")) << r.out;
  // Newest first: the rows start with the run ids 3, 2, 1.
  EXPECT_LT(r.out.find(fmt::format("\n{:>5}  ", runs[2].run_id)),
            r.out.find(fmt::format("\n{:>5}  ", runs[1].run_id)))
      << r.out;
  EXPECT_LT(r.out.find(fmt::format("\n{:>5}  ", runs[1].run_id)),
            r.out.find(fmt::format("\n{:>5}  ", runs[0].run_id)))
      << r.out;

  r = run("runs --json --task rmsnorm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2U);
  EXPECT_EQ(j[0].at("id"), runs[2].run_id);
  EXPECT_EQ(j[1].at("id"), runs[0].run_id);
  EXPECT_EQ(j[0].at("device"), "NVIDIA H200");
  EXPECT_EQ(j[0].at("passed"), 2);
  EXPECT_EQ(j[0].at("results"), 3);
  EXPECT_EQ(j[0].at("report_sha256"), runs[2].report_sha256);

  r = run("runs --json --limit 1");
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 1U);
}

TEST_F(StoreCli, RunsOnAnEmptyHomeSaysSoAndCreatesNothing) {
  auto r = run("runs");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "no runs recorded")) << r.out;
  EXPECT_FALSE(fs::exists(home())) << "a read created a store";
  r = run("runs --json");
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::array());
}

TEST_F(StoreCli, ShowPrintsTheRunAndEveryVerdict) {
  const auto runs = record_runs();
  auto r = run(fmt::format("show {}", runs[0].run_id));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& expected :
       {fmt::format("run {}: rmsnorm · completed", runs[0].run_id), std::string("NVIDIA H200"),
        std::string("rmsnorm_fast[VEC=4]"), std::string("70.77"), std::string("1.77x"),
        std::string("94.5%"), std::string("wrong_result"),
        std::string("case odd: out[17] = 3.5, expected 1.25"), runs[0].report_sha256}) {
    EXPECT_TRUE(contains(r.out, expected)) << expected << "\n" << r.out;
  }

  r = run("show latest --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("runs").at(0).at("id"), runs[2].run_id);
  EXPECT_EQ(j.at("variant_results").size(), 3U);
  EXPECT_EQ(j.at("compilations").at(0).at("variant"), "rmsnorm_fast[VEC=4]");
  EXPECT_EQ(j.at("report").at("title"), "RMSNorm over channels");
}

TEST_F(StoreCli, ShowOfAnUnknownRunIsBadInput) {
  // No store at all: say where blaster looked.
  auto r = run("show 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "no blaster store at " + home().string())) << r.err;
  EXPECT_FALSE(fs::exists(home())) << "a read created a store";

  record_runs();
  r = run("show 999");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "no run 999")) << r.err;
  r = run("show twelve");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "'twelve' is not a run")) << r.err;
}

TEST_F(StoreCli, HistoryFollowsOneTaskAcrossRuns) {
  const auto runs = record_runs();
  auto r = run("history --task rmsnorm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Each metric under its recorded name.
  EXPECT_TRUE(contains(r.out, "% copy BW")) << r.out;
  EXPECT_TRUE(contains(r.out, "    3  ")) << r.out;  // the run column, aligned on every row
  EXPECT_FALSE(contains(r.out, "softmax")) << r.out;
  r = run("history --task rmsnorm --candidate rmsnorm_fast --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2U);
  EXPECT_EQ(j[0].at("run_id"), runs[0].run_id);  // oldest first
  EXPECT_EQ(j[1].at("run_id"), runs[2].run_id);
  EXPECT_DOUBLE_EQ(j[0].at("metrics").at("time_us").get<double>(), 70.77);
  EXPECT_EQ(j[0].at("device"), "NVIDIA H200");
  r = run("history --task nothing_like_it");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "no results of task nothing_like_it")) << r.out;
}

TEST_F(StoreCli, ExportThenVerifyThenTamper) {
  const auto runs = record_runs();
  auto r = run(fmt::format("export {} --out bundle", runs[0].run_id));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "blaster verify")) << r.out;
  const fs::path bundle = dir_.path() / "bundle";

  r = run("verify bundle");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "OK")) << r.out;
  r = run("verify bundle --json");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("ok").get<bool>());
  EXPECT_EQ(j.at("files_listed"), j.at("files_matched"));

  // Two problems at once: both are named, and the exit code says the bundle does not verify.
  fs::remove(bundle / "report.md");
  std::ofstream(bundle / "results.json", std::ios::app) << " ";
  r = run("verify bundle");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, "missing     report.md")) << r.out;
  EXPECT_TRUE(contains(r.out, "changed     results.json")) << r.out;
  EXPECT_TRUE(contains(r.out, "FAILED: 2 problems")) << r.out;
  r = run("verify bundle --json");
  EXPECT_EQ(r.exit_code, 4);
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("ok").get<bool>());
  ASSERT_EQ(j.at("problems").size(), 2U);
  EXPECT_EQ(j.at("problems")[0].at("problem"), "missing");

  // Never over an existing bundle.
  r = run(fmt::format("export {} --out bundle", runs[0].run_id));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "not an empty folder")) << r.err;
}

TEST_F(StoreCli, SignedBundleChecksOnlyUnderItsKey) {
  const auto runs = record_runs();
  auto r = run("keygen --out me");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat info {};
  ASSERT_EQ(::stat((dir_.path() / "me.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
  ASSERT_TRUE(fs::is_regular_file(dir_.path() / "me.pub"));
  r = run("keygen --out me");
  EXPECT_EQ(r.exit_code, 2) << "replaced a key";
  EXPECT_TRUE(contains(r.err, "me.key exists")) << r.err;
  ASSERT_EQ(run("keygen --out other").exit_code, 0);

  r = run("export latest --out signed --sign me.key");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir_.path() / "signed" / "SHA256SUMS.sig"));
  r = run("verify signed --pubkey me.pub");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "signature: valid")) << r.out;
  // A signature nobody checks proves nothing: without --pubkey the bundle does not verify,
  // and the message names the key that signed it.
  const std::string fingerprint = read_file(dir_.path() / "signed" / "SHA256SUMS.signer")
                                      .substr(std::string("ed25519 ").size(), 64);
  // keygen printed that fingerprint with the recipe that computes it from me.pub without
  // blaster, and the recipe gives it (sha256sum of the .pub file does not: it hashes the PEM).
  const auto again = run("keygen --out third");
  const std::string recipe =
      "openssl pkey -pubin -in third.pub -outform DER | tail -c 32 | sha256sum";
  EXPECT_TRUE(contains(again.out, "fingerprint ed25519 ")) << again.out;
  EXPECT_TRUE(contains(again.out, recipe)) << again.out;
  if (std::system("openssl version >/dev/null 2>&1") == 0) {
    const std::string printed = again.out.substr(again.out.find("fingerprint ed25519 ") + 20, 64);
    EXPECT_EQ(std::system(fmt::format("cd '{}' && test \"$({} | cut -c1-64)\" = {}",
                                      dir_.path().string(), recipe, printed)
                              .c_str()),
              0)
        << printed;
  }
  r = run("verify signed");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, fingerprint)) << r.out;
  EXPECT_TRUE(contains(r.out, "--allow-unchecked-signature")) << r.out;
  // Asked for explicitly, the files are checked and the last line says the signature was not.
  r = run("verify signed --allow-unchecked-signature");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(r.out.ends_with(
      "UNCHECKED: every file matches SHA256SUMS and nothing else is there, but the signature "
      "was not checked; pass --pubkey KEY.pub to check it\n"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "OK")) << r.out;
  // A junk signature of the right length: refused unchecked, caught with the key.
  ASSERT_EQ(run("export latest --out junk --sign me.key").exit_code, 0);
  write_file_atomically(dir_.path() / "junk" / "SHA256SUMS.sig", std::string(64, 'x'));
  EXPECT_EQ(run("verify junk").exit_code, 4);
  EXPECT_EQ(run("verify junk --pubkey me.pub").exit_code, 4);
  r = run("verify junk --allow-unchecked-signature --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("signature"), "unchecked");
  r = run("verify signed --pubkey other.pub");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, "signature   SHA256SUMS.sig")) << r.out;

  // --pubkey on an unsigned bundle fails; a private key where a public one belongs is bad input.
  ASSERT_EQ(run(fmt::format("export {} --out plain", runs[0].run_id)).exit_code, 0);
  r = run("verify plain --pubkey me.pub");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, "not signed")) << r.out;
  r = run("verify plain --pubkey me.key");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "me.key: this is a private key")) << r.err;
  r = run("export latest --out never --sign me.pub");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "me.pub: this is a public key")) << r.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "never"));
}

TEST_F(StoreCli, VerifyRejectsLinksAndEscapingPaths) {
  record_runs();
  ASSERT_EQ(run("export latest --out bundle").exit_code, 0);
  const fs::path bundle = dir_.path() / "bundle";
  fs::create_symlink("/etc/hostname", bundle / "hostname");
  std::ofstream(bundle / "SHA256SUMS", std::ios::app)
      << sha256_hex(std::string_view("x")) << "  ../outside\n";
  const auto r = run("verify bundle");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_TRUE(contains(r.out, "symlink     hostname")) << r.out;
  EXPECT_TRUE(contains(r.out, "'..' component")) << r.out;
}

TEST_F(StoreCli, VerifyOfANonFolderIsBadInput) {
  const auto r = run("verify no_such_bundle");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "no_such_bundle: not a folder")) << r.err;
}

TEST_F(StoreCli, DamagedOrForeignDatabaseIsBadInputNamingTheFile) {
  fs::create_directories(home());
  std::ofstream(home() / "blaster.db") << "these are somebody's notes, not a database\n";
  auto r = run("runs");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "blaster.db: not a blaster database")) << r.err;

  fs::remove(home() / "blaster.db");
  {
    database other(home() / "blaster.db");
    other.exec("CREATE TABLE recipes(name TEXT)");
  }
  r = run("runs");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "holds tables recipes")) << r.err;
}

// One rule for --format: a command prints the formats it has a renderer for and refuses the
// others by name; runs, show and merge printed their table under csv and md.
TEST_F(StoreCli, EveryCommandRefusesAFormatItDoesNotPrint) {
  record_runs();
  { store shard(dir_.path() / "shard"); }
  for (const std::string& command :
       {std::string("runs"), std::string("show 1"), std::string("merge shard"),
        std::string("export 1 --out b"), std::string("keygen --out k")}) {
    for (const char* format : {"csv", "md"}) {
      const auto r = run(command + " --format " + format);
      const std::string name = command.substr(0, command.find(' '));
      EXPECT_EQ(r.exit_code, 2) << command << " " << format << "\n" << r.out << r.err;
      EXPECT_TRUE(
          contains(r.err, fmt::format("--format {}: {} prints table, json only", format, name)))
          << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
  EXPECT_FALSE(fs::exists(dir_.path() / "b"));
  const auto csv = run("history --task rmsnorm --format csv");
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(contains(csv.out, ",")) << csv.out;
}

TEST_F(StoreCli, HelpDocumentsEveryExitCode) {
  auto r = run("verify --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* code : {"0 the bundle verifies", "1 the machine failed", "2 bad input",
                           "4 the bundle does not verify"}) {
    EXPECT_TRUE(contains(r.out, code)) << code << "\n" << r.out;
  }
  for (const char* command : {"runs", "show", "history", "export", "keygen"}) {
    r = run(fmt::format("{} --help", command));
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_TRUE(contains(r.out, "Exit status: 0")) << command << "\n" << r.out;
  }
  r = run("--help");
  EXPECT_TRUE(contains(r.out, "4 (verify)")) << r.out;
}

// blaster merge: a shard numbered apart comes over whole; merging it again adds nothing; a run
// whose id names another is named and exits 5; a folder that is not a home is bad input.
TEST_F(StoreCli, MergeBringsShardsOverAndNamesConflicts) {
  record_runs();  // this home's runs 1 to 3
  {
    store shard(dir_.path() / "shard");
    shard.number_runs_from(1'000'000);
    record_bench_run(shard, "relu", "shard");
    store clash(dir_.path() / "clash");
    record_bench_run(clash, "gelu", "clash");  // its run 1 is not this home's run 1
  }
  auto r = run("merge shard");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "shard: 1 runs added, 0 already here")) << r.out;
  EXPECT_TRUE(contains(run("show 1000000").out, "relu"));
  r = run("merge shard --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("merged").at(0).at("runs_added"), 0);
  EXPECT_EQ(j.at("merged").at(0).at("runs_present"), 1);

  r = run("merge clash");
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "conflict, left out: run 1 (blaster bench --task gelu)")) << r.out;
  EXPECT_TRUE(contains(r.err, "1 left out as a conflict: run 1 (blaster bench --task gelu)"))
      << r.err;
  EXPECT_TRUE(contains(run("show 1").out, "rmsnorm")) << "this home's run 1 stays";
  // --json: what was merged, and the error every failing command prints, as bench's.
  r = run("merge clash --json");
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  const auto clash = nlohmann::json::parse(r.out);
  EXPECT_EQ(clash.at("merged").at(0).at("conflicts").size(), 1U) << r.out;
  EXPECT_EQ(clash.at("error").at("code"), "conflict") << r.out;
  EXPECT_TRUE(contains(clash.at("error").at("message").get<std::string>(),
                       "run 1 (blaster bench --task gelu) names another run of this home"))
      << r.out;

  fs::create_directories(dir_.path() / "not-a-home");
  r = run("merge not-a-home");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "is neither a blaster home")) << r.err;
}

// A home whose run cites an object its cas/ lacks is refused, naming the run and the object, and
// nothing is written: merged, it left the home it went into citing a missing object, exit 0.
TEST_F(StoreCli, MergeRefusesAHomeThatLacksAnObjectItsRunCites) {
  recorded_run damaged;
  {
    store shard(dir_.path() / "damaged");
    shard.number_runs_from(1'000'000);
    damaged = record_bench_run(shard, "relu", "damaged");
    {
      store whole(dir_.path() / "whole");
      record_bench_run(whole, "gelu", "whole");
    }
  }
  const fs::path object = dir_.path() / "damaged" / "cas" /
                          damaged.fast_samples_sha256.substr(0, 2) / damaged.fast_samples_sha256;
  ASSERT_TRUE(fs::exists(object));
  fs::remove(object);
  for (const char* json : {"", " --json"}) {
    const auto r = run(std::string("merge whole damaged") + json);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "run 1000000 (blaster bench --task relu) cites object " +
                                    damaged.fast_samples_sha256))
        << r.err;
    EXPECT_TRUE(contains(r.err, "nothing was merged")) << r.err;
    EXPECT_FALSE(fs::exists(home())) << "a refused merge wrote the home";
  }
}

// blaster merge BUNDLE: a reviewer loads a run's bundle into a home of their own and shows it;
// a bundle that does not verify is refused with its problems named and nothing written; a run
// bundle of the checked-in portfolio, written by an earlier schema, loads and exports its report
// as it was; the portfolio's own bundle, which predates progress.json, is refused for that.
TEST_F(StoreCli, MergeTakesAnEvidenceBundle) {
  const auto runs = record_runs();
  ASSERT_EQ(run("export 2 --out bundle").exit_code, 0);
  auto in = [&](const std::string& home, const std::string& args) {
    return run_blaster(dir_.path(), dir_.path() / home, args, dir_.path() / "stderr.txt");
  };
  auto r = in("reviewer", "merge bundle --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out).at("merged").at(0);
  EXPECT_EQ(j.at("kind"), "bundle");
  EXPECT_EQ(j.at("runs_added"), 1);
  EXPECT_EQ(j.at("objects_added"), 10);  // the report among them
  EXPECT_EQ(j.at("portfolio_items_added"), 0);
  r = in("reviewer", "show 2");
  EXPECT_TRUE(contains(r.out, "softmax")) << r.out;
  EXPECT_TRUE(contains(r.out, runs[1].report_sha256)) << r.out;
  r = in("reviewer", "merge bundle");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "bundle (bundle): 0 runs added, 1 already here, 0 objects")) << r.out;

  fs::copy(dir_.path() / "bundle", dir_.path() / "changed", fs::copy_options::recursive);
  const std::string object = "objects/" + runs[1].fast_cubin_sha256;
  std::string bytes = read_file(dir_.path() / "changed" / object);
  bytes[0] ^= 1;
  write_file_atomically(dir_.path() / "changed" / object, bytes);
  r = in("refused", "merge bundle changed");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "changed: the bundle does not verify (changed " + object)) << r.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "refused")) << "a refused merge wrote the home";

  const fs::path v1 = fs::path(BLASTER_SOURCE_DIR) / "artifacts" / "core10-h200-v1";
  r = in("v1", "merge '" + (v1 / "runs" / "004-matvec-canonical").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(in("v1", "export 3 --out v1-again").exit_code, 0);
  EXPECT_EQ(read_file(dir_.path() / "v1-again" / "results.json"),
            read_file(v1 / "runs" / "004-matvec-canonical" / "results.json"));
  for (const auto& entry :
       fs::directory_iterator(v1 / "runs" / "004-matvec-canonical" / "objects")) {
    EXPECT_TRUE(fs::exists(dir_.path() / "v1-again" / "objects" / entry.path().filename()))
        << entry.path();
  }
  r = in("v1-portfolio", "merge '" + v1.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.err, "a portfolio's bundle without progress.json")) << r.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "v1-portfolio"));

  r = run("merge --help");
  EXPECT_TRUE(contains(r.out, "A source may be an evidence bundle")) << r.out;
  EXPECT_TRUE(contains(r.out, "Exit status: 0")) << r.out;
}

// The evidence checked in with the project: real H200 portfolios (core10, and every other bundle
// under artifacts/). Each verifies as it is, sha256sum agrees, and changing any one byte of a
// report, a result or a run's raw object makes blaster verify fail and name the file.
TEST_F(StoreCli, EveryCheckedInPortfolioVerifiesAndOneChangedByteFailsIt) {
  const fs::path artifacts = fs::path(BLASTER_SOURCE_DIR) / "artifacts";
  ASSERT_TRUE(fs::is_regular_file(artifacts / "core10-h200-v1" / "SHA256SUMS")) << artifacts;
  std::vector<fs::path> bundles;
  for (const auto& entry : fs::directory_iterator(artifacts)) {
    if (fs::is_regular_file(entry.path() / "SHA256SUMS")) bundles.push_back(entry.path());
  }
  std::sort(bundles.begin(), bundles.end());
  for (const fs::path& checked_in : bundles) {
    SCOPED_TRACE(checked_in.filename().string());
    verify_checked_in(checked_in);
  }
}

// artifacts/README.md names the checked-in key by the fingerprint a signed bundle's
// SHA256SUMS.signer carries (the SHA-256 of its 32 raw bytes), so that a reviewer can hold one to
// the other; and it calls no checked-in bundle signed that is not.
TEST_F(StoreCli, TheArtifactsReadmeNamesTheKeyAsSignedBundlesDo) {
  const fs::path artifacts = fs::path(BLASTER_SOURCE_DIR) / "artifacts";
  std::string readme = read_file(artifacts / "README.md");
  std::replace(readme.begin(), readme.end(), '\n', ' ');
  const ed25519_key key = read_public_key(artifacts / "keys" / "blaster-artifacts.pub");
  EXPECT_TRUE(contains(readme, "`ed25519 " + key.public_sha256() + "`")) << readme;
  EXPECT_FALSE(contains(readme, "from core10's second bundle on")) << readme;
  bool any_signed = false;
  for (const auto& entry : fs::directory_iterator(artifacts)) {
    any_signed = any_signed || fs::exists(entry.path() / "SHA256SUMS.sig");
  }
  if (!any_signed) {
    EXPECT_TRUE(contains(readme, "No bundle here is signed yet")) << readme;
  }
}

void StoreCli::verify_checked_in(const fs::path& checked_in) {
  const std::string name = checked_in.filename().string();
  const fs::path bundle = dir_.path() / name;
  fs::copy(checked_in, bundle, fs::copy_options::recursive);
  // A signed bundle verifies against the key whose public half is checked in beside it.
  const std::string verify =
      "verify " + name +
      (fs::exists(bundle / "SHA256SUMS.sig")
           ? " --pubkey " + (checked_in.parent_path() / "keys" / "blaster-artifacts.pub").string()
           : std::string());

  auto r = run(verify);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "OK")) << r.out;
  EXPECT_EQ(std::system(
                fmt::format("cd '{}' && sha256sum --quiet -c SHA256SUMS", bundle.string()).c_str()),
            0);

  std::vector<fs::path> raw;
  for (const auto& entry : fs::recursive_directory_iterator(bundle / "runs")) {
    if (entry.is_regular_file()) raw.push_back(entry.path());
  }
  ASSERT_FALSE(raw.empty());
  std::sort(raw.begin(), raw.end());
  for (const fs::path& file : {bundle / "report.md", bundle / "results.json", raw.front()}) {
    const std::string original = read_file(file);
    ASSERT_FALSE(original.empty()) << file;
    std::string changed = original;
    changed[changed.size() / 2] ^= 0x01;
    write_file_atomically(file, changed);
    r = run(verify);
    EXPECT_EQ(r.exit_code, 4) << file << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, fs::relative(file, bundle).generic_string())) << r.out;
    write_file_atomically(file, original);
  }
  r = run(verify);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

}  // namespace
}  // namespace blaster::testing
