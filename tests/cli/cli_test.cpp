// The blaster command as a user runs it: exit codes, the no-GPU line, JSON on stdout, and
// errors that name the file, line and fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/run_blaster.hpp"
#include "core/cuda_driver.hpp"
#include "core/file_io.hpp"
#include "core/revision.hpp"
#include "core/worker_process.hpp"
#include "evidence/store.hpp"

namespace blaster {
namespace {

using testing::command_result;

class BlasterCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("blaster-cli-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs blaster with a private home, from the source tree, capturing both streams.
  command_result run(const std::string& args) const {
    return testing::run_blaster(root(), dir_ / "home", args, dir_ / "stderr.txt");
  }

  static std::string root() {
    const char* env = std::getenv("BLASTER_ROOT");
    return env != nullptr && *env != '\0' ? env : BLASTER_SOURCE_DIR;
  }

  std::filesystem::path dir_;
};

bool gpu_present() { return cuda::driver_unavailable_reason().empty(); }

TEST_F(BlasterCli, HelpNamesTheSubcommandsAndExitCodes) {
  const auto r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"bench", "compile", "doctor", "Exit status", "BLASTER_HOME"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  }
}

TEST_F(BlasterCli, BenchCompilesEveryKernelThenNeedsAGpu) {
  const auto r = run("bench --task rmsnorm --samples 10");
  // Whatever the machine, the run is on record: its task and every compilation.
  const auto shown = run("--json show latest");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const auto record = nlohmann::json::parse(shown.out);
  EXPECT_EQ(record.at("tasks").size(), 1U);
  // The task's seven fixed cases, and beside them the shapes drawn with the run's seed.
  std::size_t fixed = 0;
  std::size_t drawn = 0;
  for (const auto& c : record.at("task_cases")) {
    (c.at("name").get<std::string>().rfind("drawn:", 0) == 0 ? drawn : fixed) += 1;
  }
  EXPECT_EQ(fixed, 7U);
  EXPECT_GE(drawn, 1U);
  EXPECT_EQ(record.at("compilations").size(), 5U);
  if (gpu_present()) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("% roof"), std::string::npos) << r.out;
    EXPECT_EQ(record.at("device_fingerprints").size(), 1U);
    // Every case with three seeds, the large one only when it is timed.
    EXPECT_EQ(record.at("gate_results").size(), 5U * (6U + drawn) * 3U);
    EXPECT_EQ(record.at("measurements").size(), 5U);
    EXPECT_EQ(record.at("verdicts").size(), 5U);
    return;
  }
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // Every variant of the task was compiled before the GPU was found missing.
  for (const char* label :
       {"init", "rmsnorm_vec_regs[VEC=4,BLOCK=128]", "rmsnorm_vec_regs[VEC=2,BLOCK=256]"}) {
    EXPECT_NE(r.out.find(label), std::string::npos) << label << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("compile_error"), std::string::npos) << r.out;
  // The last line says, in one line, what is missing.
  std::string last = r.err.substr(0, r.err.find_last_not_of('\n') + 1);
  last = last.substr(last.find_last_of('\n') + 1);
  EXPECT_EQ(last.rfind("blaster: correctness and timing need a GPU: ", 0), 0U) << r.err;
}

// Whether a result is of a .cu candidate: ptxas reports NVRTC's kernels, not Triton's, whose .py
// candidates a machine with Triton compiles beside them.
bool is_cuda(const nlohmann::json& result) {
  return std::filesystem::path(result.at("file").get<std::string>()).extension() == ".cu";
}

TEST_F(BlasterCli, CompileJsonReportsResourcesPerKernel) {
  const auto r = run("--json compile --task rmsnorm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("arch"), "sm_90a");
  const auto& results = j.at("results");
  ASSERT_EQ(std::count_if(results.begin(), results.end(), is_cuda), 5);
  for (const auto& result : results) {
    if (!is_cuda(result)) continue;
    ASSERT_EQ(result.at("kernels").size(), 1U) << result.dump();
    EXPECT_GT(result.at("kernels")[0].at("registers").get<int>(), 0);
    // -1 where only the driver, not ptxas, reported the kernel (it does not count spills).
    EXPECT_LE(result.at("kernels")[0].at("spill_store_bytes").get<int>(), 0);
  }
}

// A task's folder where there is no Triton (--python names an interpreter that is not there):
// its .cu candidates compile and the exit status says so, and its Triton candidate is left out
// in one line on stderr that names the file and --python, which --json carries as "left_out".
// Named on its own, the same file is a compile_error that names the flag.
TEST_F(BlasterCli, CompileLeavesATasksTritonCandidatesOutWhereThereIsNoTriton) {
  const std::string python = " --python /no/such/python3";
  const auto r = run("--json compile --task softmax" + python);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j.at("results").size(), 2U);
  for (const auto& result : j.at("results")) {
    EXPECT_TRUE(is_cuda(result)) << result.dump();
    EXPECT_EQ(result.at("status"), "compiled") << result.dump();
  }
  ASSERT_EQ(j.at("left_out").size(), 1U) << j.at("left_out").dump();
  const std::string line = j.at("left_out")[0].get<std::string>();
  EXPECT_EQ(line.rfind("kernels/softmax/softmax_triton.py left out: Triton is not installed for "
                       "/no/such/python3",
                       0),
            0U)
      << line;
  EXPECT_NE(line.find("--python PATH"), std::string::npos) << line;
  EXPECT_NE(r.err.find(line), std::string::npos) << r.err;

  const auto named =
      run("--json compile --task softmax --candidate kernels/softmax/softmax_triton.py" + python);
  EXPECT_EQ(named.exit_code, 2) << named.err;
  const auto k = nlohmann::json::parse(named.out);
  ASSERT_FALSE(k.at("results").empty());
  for (const auto& result : k.at("results")) {
    EXPECT_EQ(result.at("reason"), "compile_error") << result.dump();
    EXPECT_NE(result.at("message").get<std::string>().find("--python PATH"), std::string::npos);
  }
  EXPECT_TRUE(k.at("left_out").empty());
}

// The core10 suite: every baseline and every optimized variant compiles for the H200 and its
// launch plan resolves on every case of its task, large ones included.
TEST_F(BlasterCli, EveryCore10KernelCompilesForSm90a) {
  for (const char* task : {"matvec", "matmul_smallk", "relu", "softmax", "gelu", "rmsnorm",
                           "layernorm", "sum_dim1", "newgelu", "cross_entropy"}) {
    const auto r = run(fmt::format("--json compile --task {} --arch sm_90a", task));
    ASSERT_EQ(r.exit_code, 0) << task << ": " << r.err << r.out;
    const auto j = nlohmann::json::parse(r.out);
    const auto& results = j.at("results");
    ASSERT_GE(results.size(), 2U) << task << ": the baseline and at least one candidate";
    EXPECT_TRUE(results[0].at("baseline").get<bool>()) << task;
    for (const auto& result : results) {
      EXPECT_EQ(result.at("status"), "compiled") << task << ": " << result.dump();
      if (is_cuda(result)) {
        EXPECT_FALSE(result.at("kernels").empty()) << task << ": " << result.dump();
      }
    }
  }
}

TEST_F(BlasterCli, BenchCasesCompilesOnceThenNeedsAGpuAndRefusesUnknownCases) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: each case would be timed";
  const auto r = run("bench --task rms_norm --cases t1,t16 --samples 10");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("rms_norm_regs[THREADS=128]"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("correctness and timing need a GPU"), std::string::npos) << r.err;

  const auto unknown = run("bench --task rms_norm --cases t1,t7");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no case \"t7\" (cases: t8192"), std::string::npos) << unknown.err;
  EXPECT_EQ(run("bench --task rms_norm --cases t1,t1").exit_code, 2);
  EXPECT_EQ(run("bench --task rms_norm --cases t1 --case t16").exit_code, 2);
}

TEST_F(BlasterCli, AOneTokenCaseIsTimedInTheModeItsTaskNamesUnlessTheUserNamesOne) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: the case would be timed";
  auto mode_of = [&](const std::string& arguments) {
    const auto r = run("--json bench --task rms_norm " + arguments);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    return nlohmann::json::parse(r.out).at("timing").at("mode").get<std::string>();
  };
  EXPECT_EQ(mode_of("--case t1"), "graph");  // launch-bound: task.json says so for this case
  EXPECT_EQ(mode_of("--case t8192"), "hot");
  EXPECT_EQ(mode_of("--case t1 --mode hot"), "hot");
}

TEST_F(BlasterCli, TuneCompilesItsCandidateThenNeedsAGpuAndTakesOneFile) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: each case would be tuned";
  const auto r =
      run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
          "--cases t1,t16");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("tuning needs a GPU"), std::string::npos) << r.err;
  // What was compiled is printed as bench prints it, every configuration with its registers.
  EXPECT_NE(r.out.find("rms_norm_regs["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compiled"), std::string::npos) << r.out;
  const auto json =
      run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu --cases t1 --json");
  EXPECT_EQ(json.exit_code, 3) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("error").at("code"), "no_gpu") << json.out;
  EXPECT_FALSE(j.at("results").empty()) << json.out;
  // A candidate that does not compile shows NVRTC's log, then why nothing was tuned.
  const auto bad = dir_ / "broken.cu";
  std::ofstream(bad) << "/* blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 32, "
                        "\"args\": [\"out\"]}]}\n*/\n__global__ void k(float* out) { out[0] = "
                        "undeclared; }\n";
  const auto broken = run("tune --task rms_norm --candidate '" + bad.string() + "' --cases t1");
  EXPECT_EQ(broken.exit_code, 3) << broken.err;
  EXPECT_NE(broken.out.find("compile_error"), std::string::npos) << broken.out;
  EXPECT_NE(broken.out.find("identifier \"undeclared\" is undefined"), std::string::npos)
      << broken.out;
  EXPECT_NE(broken.err.find("tuning needs a GPU"), std::string::npos) << broken.err;
  const auto none = run("tune --task rms_norm --cases t1");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("one --candidate file"), std::string::npos) << none.err;
  const auto size =
      run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
          "--cases t1 --size Q");
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_NE(size.err.find("no symbol Q"), std::string::npos) << size.err;
  const auto screen =
      run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
          "--cases t1 --screen-budget 0");
  EXPECT_EQ(screen.exit_code, 2);
  EXPECT_NE(screen.err.find("--screen-budget"), std::string::npos) << screen.err;

  // --check reads the table, finds its entries' cases, and needs the GPU to measure them.
  const auto table = dir_ / "H=4096,device_name=NVIDIA_H200,dtype=bf16.json";
  std::ofstream(table) << R"({"16": {"THREADS": 256}, "1": {"THREADS": 128}})";
  const auto check =
      run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
          "--check '" +
          table.string() + "'");
  EXPECT_EQ(check.exit_code, 3) << check.err;
  EXPECT_NE(check.err.find("tuning needs a GPU"), std::string::npos) << check.err;
  // A table that says it is another task's or another candidate's is refused before anything.
  for (const auto& [about, refusal] : std::map<std::string, std::string>{
           {R"("task": "rope", "candidate": "rms_norm_regs.cu")",
            "a table of task rope, not of "
            "rms_norm"},
           {R"("task": "rms_norm", "candidate": "rms_norm_vec.cu")",
            "a table of candidate rms_norm_vec.cu, not of rms_norm_regs.cu"}}) {
    std::ofstream(table) << R"({"16": {"THREADS": 256}, "1": {"THREADS": 128}, )" << about << "}";
    const auto other =
        run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
            "--check '" +
            table.string() + "'");
    EXPECT_EQ(other.exit_code, 2) << other.err;
    EXPECT_NE(other.err.find(table.string() + ": " + refusal), std::string::npos) << other.err;
  }
  EXPECT_EQ(run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu --cases t1 "
                "--check '" +
                table.string() + "'")
                .exit_code,
            2)
      << "--check measures the table's sizes, not --cases";
}

// --from-runs measures nothing, so it needs no GPU. A home that is not there is refused, not
// created; with no run of the task in the home, each case says so, no table is written, and the
// command fails (it exited 0, having taken nothing).
TEST_F(BlasterCli, TuneFromRunsNeedsNoGpuAndSaysWhereACaseHasNoRun) {
  const auto out = dir_ / "tables";
  const std::string from_runs =
      "tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu --cases t1,t16 "
      "--from-runs --out '" +
      out.string() + "'";
  auto r = run(from_runs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no blaster store at " + (dir_ / "home").string()), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "home")) << "a read created the home";

  { store home(dir_ / "home"); }  // a home, with no run of rms_norm
  r = run(from_runs + " --json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("cases").size(), 2U);
  EXPECT_EQ(j["cases"][0].at("case"), "t1");
  EXPECT_NE(j["cases"][1].at("why").get<std::string>().find("no completed run of rms_norm at "
                                                            "case t16"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(j.at("tables").empty());
  EXPECT_EQ(j.at("error").at("code"), "bad_input") << r.out;
  EXPECT_NE(r.err.find("no case of --cases has a run in"), std::string::npos) << r.err;
  r = run(from_runs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("no completed run of rms_norm at case t16"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto both =
      run("tune --task rms_norm --candidate kernels/rms_norm/rms_norm_regs.cu "
          "--from-runs --check '" +
          (dir_ / "x.json").string() + "'");
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

// --recorded benches nothing: in a home that recorded no case of the suite it has no bundle to
// write, and says where to look; with a flag that benches or picks GPUs it is refused.
TEST_F(BlasterCli, PortfolioRecordedWithNothingRecordedSaysSo) {
  std::ofstream(dir_ / "one.json") << R"({"name": "one", "title": "one task", "entries": [
      {"id": "1", "task": "rmsnorm", "cases": [{"case": "canonical"}]}]})";
  const std::string suite = "portfolio --suite '" + (dir_ / "one.json").string() + "' --recorded";
  const auto empty = run(suite + " --out '" + (dir_ / "bundle").string() + "'");
  EXPECT_EQ(empty.exit_code, 2) << empty.err;
  EXPECT_NE(empty.err.find("has no case of it recorded"), std::string::npos) << empty.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "bundle"));
  for (const char* other : {" --fresh", " --compile-only", " --gpus all"}) {
    const auto refused = run(suite + other);
    EXPECT_EQ(refused.exit_code, 2) << other << ": " << refused.err;
  }
}

// A compile-only portfolio and a timed one keep their progress apart: the timed one said the
// compile-only one's file "is of another suite or protocol: starting over", and wrote over it.
TEST_F(BlasterCli, ACompileOnlyPortfolioKeepsItsProgressApartFromTheTimedOnes) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: the timed portfolio would time its case";
  std::ofstream(dir_ / "one.json") << R"({"name": "one", "title": "one task", "entries": [
      {"id": "1", "task": "matvec", "cases": [{"case": "canonical"}]}]})";
  const std::string suite = "portfolio --suite '" + (dir_ / "one.json").string() + "'";
  auto r = run(suite + " --compile-only");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "home/portfolio/one.compile-only.progress.json"));
  r = run(suite);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find("starting over"), std::string::npos) << r.err;
  r = run(suite + " --compile-only");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("starting over"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not redone"), std::string::npos) << "its progress is its own\n" << r.err;
}

// A suite compiled in two shards, each into a home of its own, then merged: the merged home
// resumes every case, and its runs hold the compilations one process compiling the whole suite
// records (each variant of the same source, compiled, with the same registers per kernel).
TEST_F(BlasterCli, CompileOnlyShardsMergeIntoWhatOneProcessRecords) {
  std::ofstream(dir_ / "two.json") << R"({"name": "two", "title": "two tasks", "entries": [
      {"id": "1", "task": "matvec", "cases": [{"case": "canonical"}]},
      {"id": "2", "task": "rmsnorm", "cases": [{"case": "canonical"}]}]})";
  auto in = [&](const std::string& home, const std::string& args) {
    return testing::run_blaster(root(), dir_ / home, args, dir_ / "stderr.txt");
  };
  const std::string suite =
      "portfolio --suite '" + (dir_ / "two.json").string() + "' --compile-only --json";
  ASSERT_EQ(in("one", suite).exit_code, 0);
  ASSERT_EQ(in("shard1", suite + " --shard 1/2").exit_code, 0);
  ASSERT_EQ(in("shard2", suite + " --shard 2/2").exit_code, 0);
  const auto merged = in(
      "merged", "merge '" + (dir_ / "shard1").string() + "' '" + (dir_ / "shard2").string() + "'");
  ASSERT_EQ(merged.exit_code, 0) << merged.out << merged.err;

  const auto resumed = in("merged", suite);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto rows = nlohmann::json::parse(resumed.out).at("compiled");
  const auto single = nlohmann::json::parse(in("one", suite).out).at("compiled");
  ASSERT_EQ(rows.size(), 2U);
  ASSERT_EQ(single.size(), 2U);
  auto compilations = [&](const std::string& home, std::int64_t run) {
    const auto shown = nlohmann::json::parse(in(home, fmt::format("show {} --json", run)).out);
    std::map<std::int64_t, std::string> sources;
    for (const auto& s : shown.at("sources")) {
      sources[s.at("id").get<std::int64_t>()] = s.at("sha256").get<std::string>();
    }
    std::map<std::int64_t, std::string> registers;
    for (const auto& k : shown.at("compiled_kernels")) {
      registers[k.at("compilation_id").get<std::int64_t>()] +=
          fmt::format(" {}:{}", k.at("kernel").get<std::string>(), k.at("registers").dump());
    }
    std::set<std::string> out;
    for (const auto& c : shown.at("compilations")) {
      const auto id = c.at("id").get<std::int64_t>();
      out.insert(fmt::format("{} {} {}{}", c.at("variant").get<std::string>(),
                             sources[c.at("source_id").get<std::int64_t>()],
                             c.at("succeeded").dump(), registers[id]));
    }
    return out;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(rows[i].at("resumed").get<bool>()) << "nothing compiled again after the merge";
    EXPECT_EQ(rows[i].at("run_id"), i == 0 ? 1'000'000 : 2'000'000);  // each shard's numbering
    EXPECT_GT(rows[i].at("compiled").get<int>(), 0);
    EXPECT_EQ(rows[i].at("compiled"), single[i].at("compiled"));
    const auto merged_rows = compilations("merged", rows[i].at("run_id"));
    EXPECT_EQ(merged_rows.size(), rows[i].at("compiled").get<std::size_t>());
    EXPECT_EQ(merged_rows, compilations("one", single[i].at("run_id")));
  }
}

TEST_F(BlasterCli, AShardIsIOfNOrBadInput) {
  for (const char* shard : {"3/2", "0/2", "1/0", "1-2", "1/2x", "a/b"}) {
    const auto r = run(std::string("portfolio --suite core10 --shard ") + shard);
    EXPECT_EQ(r.exit_code, 2) << shard << "\n" << r.err;
    EXPECT_NE(r.err.find("give i/N"), std::string::npos) << shard << "\n" << r.err;
  }
}

TEST_F(BlasterCli, GpusIsAllOrNumbersElseBadInput) {
  const std::string rope = std::string(BLASTER_SOURCE_DIR) + "/kernels/rope/rope_packs.cu";
  for (const std::string& command :
       {std::string("bench --task rmsnorm --gpus 0,x"),
        "tune --task rope --candidate " + rope + " --cases t1 --gpus ,",
        std::string("portfolio --suite core10 --gpus -1"),
        std::string("optimize --task rmsnorm --proposer true --gpus two")}) {
    const auto r = run(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("give 'all' or GPU numbers"), std::string::npos) << command << "\n"
                                                                          << r.err;
  }
  const auto both = run("portfolio --suite core10 --gpus 0 --compile-only");
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("uses no GPU"), std::string::npos) << both.err;
}

// An empty value is a mistake, never the flag left out: `--shard ''` ran the whole suite, and
// `--gpus ''` and `--cases ''` ran as if not given.
TEST_F(BlasterCli, AnEmptyFlagValueIsBadInput) {
  const std::string rope = std::string(BLASTER_SOURCE_DIR) + "/kernels/rope/rope_packs.cu";
  for (const std::string& command :
       {std::string("portfolio --suite core10 --shard ''"),
        std::string("portfolio --suite core10 --gpus ''"),
        std::string("bench --task rmsnorm --gpus ''"),
        std::string("bench --task rmsnorm --cases ''"),
        "tune --task rope --candidate " + rope + " --cases ''",
        std::string("bench --task rmsnorm --case ''"),
        std::string("bench --task rmsnorm --arch ''"), std::string("runs --task ''"),
        std::string("--home '' runs"), std::string("optimize --task rmsnorm --proposer ''")}) {
    const auto r = run(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("an empty value; give one, or leave the flag out"), std::string::npos)
        << command << "\n"
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "home")) << "a refused command wrote the home";
}

// A whole-number flag says its range in a few words, not as the range of a double.
TEST_F(BlasterCli, AWholeNumberOutOfRangeSaysSoBriefly) {
  const auto verify = run("verify '" + dir_.string() + "' --max-file-bytes 0");
  EXPECT_EQ(verify.exit_code, 2) << verify.err;
  EXPECT_NE(verify.err.find("--max-file-bytes: 0 is not a whole number of at least 1"),
            std::string::npos)
      << verify.err;
  const auto runs = run("runs --limit -1");
  EXPECT_EQ(runs.exit_code, 2) << runs.err;
  EXPECT_NE(runs.err.find("--limit: -1 is not a whole number of at least 0"), std::string::npos)
      << runs.err;
  for (const auto& r : {verify, runs}) EXPECT_LT(r.err.size(), 200U) << r.err;
}

TEST_F(BlasterCli, GpusWithNoGpuHereSaysSoAndExits3) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: tests/gpu/multi_gpu_test.cpp uses it";
  const auto bench = run("bench --task rmsnorm --gpus all");
  EXPECT_EQ(bench.exit_code, 3) << bench.err;
  EXPECT_NE(bench.err.find("correctness and timing need a GPU"), std::string::npos) << bench.err;
  const auto portfolio = run("portfolio --suite core10 --gpus 0,1");
  EXPECT_EQ(portfolio.exit_code, 3) << portfolio.err;
}

TEST_F(BlasterCli, UnknownTaskIsBadInput) {
  const auto r = run("bench --task no_such_task");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tasks/no_such_task/task.json"), std::string::npos) << r.err;
}

TEST_F(BlasterCli, MalformedPlanNamesFileLineAndColumn) {
  const auto bad = dir_ / "bad_plan.cu";
  std::ofstream(bad) << "/* blaster\n{\n  \"launch\": [\n    {\"kernel\": \"k\", \"grid\": \"B *\","
                        " \"block\": 32}\n  ]\n}\n*/\n__global__ void k() {}\n";
  const auto r = run("compile --task rmsnorm --candidate " + bad.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("plan_error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad_plan.cu:4:"), std::string::npos) << r.out;
}

TEST_F(BlasterCli, CompileErrorShowsTheNvrtcLog) {
  const auto bad = dir_ / "broken.cu";
  std::ofstream(bad) << "/* blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 32, "
                        "\"args\": [\"out\"]}]}\n*/\n__global__ void k(float* out) { out[0] = "
                        "undeclared; }\n";
  const auto r = run("compile --task rmsnorm --candidate " + bad.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("compile_error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("identifier \"undeclared\" is undefined"), std::string::npos) << r.out;
}

// A Triton candidate where the interpreter has no triton: a compile_error that says so and names
// the flag that picks another.
TEST_F(BlasterCli, TritonCandidateWithoutTritonIsACompileErrorNamingPython) {
  const auto file = dir_ / "rows.py";
  std::ofstream(file) << "\"\"\"blaster\n{\"launch\": [{\"kernel\": \"rows\", \"grid\": 1, "
                         "\"args\": [\"out\"]}]}\n\"\"\"\nimport triton\n";
  const auto r = run("--json compile --task rmsnorm --candidate " + file.string() +
                     " --python " + (dir_ / "no-python").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto results = nlohmann::json::parse(r.out).at("results");
  ASSERT_EQ(results.size(), 1U) << r.out;
  EXPECT_EQ(results.at(0).at("reason"), "compile_error");
  const std::string message = results.at(0).at("message");
  EXPECT_NE(message.find("Triton is not installed for " + (dir_ / "no-python").string()),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--python PATH"), std::string::npos) << message;
}

// eval names the user's file, not the copy of it the session compiled under the home, and shows
// NVRTC's log in its human output as well as under --json; optimize shows the log of a step that
// did not compile.
TEST_F(BlasterCli, EvalAndOptimizeShowTheCompileLogOfTheUsersFile) {
  const auto bad = dir_ / "broken.cu";
  std::ofstream(bad) << "/* blaster\n{\"launch\": [{\"kernel\": \"k\", \"grid\": 1, \"block\": 32, "
                        "\"args\": [\"out\"]}]}\n*/\n__global__ void k(float* out) { out[0] = "
                        "undeclared; }\n";
  const auto eval = run("eval --task rmsnorm --candidate '" + bad.string() + "'");
  EXPECT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NE(eval.out.find(bad.string() + " does not compile"), std::string::npos) << eval.out;
  EXPECT_NE(eval.out.find(bad.string() + "(4): error: identifier \"undeclared\" is undefined"),
            std::string::npos)
      << eval.out;
  EXPECT_EQ(eval.out.find("candidate-"), std::string::npos) << eval.out;

  std::ofstream(dir_ / "proposer.sh")
      << "read line\npython3 -c 'import json; print(json.dumps({\"source\": open(\"" << bad.string()
      << "\").read()}))'\nread line\necho '{\"stop\": true}'\n";
  const auto optimize = run("optimize --task rmsnorm --steps 1 --proposer 'sh " +
                            (dir_ / "proposer.sh").string() + "'");
  EXPECT_EQ(optimize.exit_code, 0) << optimize.err;
  EXPECT_NE(optimize.out.find("error: identifier \"undeclared\" is undefined"), std::string::npos)
      << optimize.out;
}

// The compile sandbox and its limits, as a user meets them.
TEST_F(BlasterCli, CompileRefusesAHostIncludeBeforeNvrtcRunsAndExitsTwo) {
  const std::string file = root() + "/tests/adversarial/include_absolute_path.cu";
  const auto r = run("compile --task rmsnorm --candidate " + file);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("compile_error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(file + ":14:11: \"/etc/passwd\": an absolute path; a candidate may "
                              "include only the CUDA toolkit's headers by name"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("root:"), std::string::npos) << r.out;  // no line of the file itself

  const auto j = run("--json compile --task rmsnorm --candidate " + file);
  EXPECT_EQ(j.exit_code, 2);
  const auto result = nlohmann::json::parse(j.out).at("results").at(0);
  EXPECT_EQ(result.at("reason"), "compile_error");
  EXPECT_EQ(result.at("message").get<std::string>().rfind(file + ":14:11: ", 0), 0U);
}

TEST_F(BlasterCli, EveryCompileLimitHasAFlagThatReachesTheCompile) {
  auto message_of = [&](const std::string& args) {
    const auto r = run("--json compile --task rmsnorm " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err << r.out;
    const auto results = nlohmann::json::parse(r.out).at("results");
    return results.empty() ? std::string() : results.at(0).at("message").get<std::string>();
  };
  const std::string kernels = root() + "/kernels/rmsnorm/";
  EXPECT_NE(message_of("--max-variants 3 --candidate " + kernels + "rmsnorm_vec_regs.cu")
                .find("expand to 4 combinations (VEC 2 x BLOCK 2), over the limit of 3; "
                      "--max-variants raises the limit"),
            std::string::npos);
  EXPECT_NE(message_of("--max-source-bytes 100 --candidate " + kernels + "rmsnorm_vec_regs.cu")
                .find("bytes, over the limit of 100 bytes; --max-source-bytes raises the limit"),
            std::string::npos);
  const auto two = dir_ / "two_launches.cu";
  std::string init = read_file(root() + "/tasks/rmsnorm/init.cu");
  const std::size_t step = init.find("    {\"kernel\"");
  const std::size_t step_end = init.find("}\n", step) + 1;
  init.insert(step_end, ",\n" + init.substr(step, step_end - step));
  std::ofstream(two) << init;
  EXPECT_NE(message_of("--max-launches 1 --candidate " + two.string())
                .find("the plan has 2 launches, over the limit of 1; --max-launches raises"),
            std::string::npos);

  const std::string adversarial = root() + "/tests/adversarial/";
  const auto started = std::chrono::steady_clock::now();
  EXPECT_NE(message_of("--compile-timeout 2 --candidate " + adversarial + "constexpr_time_bomb.cu")
                .find("within the compile deadline of 2 s"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  if (address_space_caps_apply) {  // uncapped, the bomb would grow without end
    EXPECT_NE(
        message_of("--compile-memory 0.5 --candidate " + adversarial + "template_memory_bomb.cu")
            .find("under the compile memory cap of 0.5 GiB"),
        std::string::npos);
  }
}

TEST_F(BlasterCli, BenchRecordsTheCompileLimitFlagsItWasGiven) {
  const std::string file = root() + "/kernels/rmsnorm/rmsnorm_vec_regs.cu";
  const auto r = run("bench --task rmsnorm --samples 10 --candidate " + file +
                     " --compile-timeout 30 --max-variants 8");
  EXPECT_EQ(r.exit_code, gpu_present() ? 0 : 3) << r.err;
  const auto runs = run("--json runs");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  const std::string command = nlohmann::json::parse(runs.out).at(0).at("command");
  EXPECT_NE(command.find(" --compile-timeout 30 --max-variants 8"), std::string::npos) << command;
}

TEST_F(BlasterCli, BenchSaysHowToRunEveryConfigurationAndRecordsThatItDid) {
  const auto help = run("bench --help");
  EXPECT_NE(help.out.find("--all-params"), std::string::npos);
  EXPECT_NE(help.out.find("kernels/<task>/tuned/"), std::string::npos);
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: the case would be timed";
  EXPECT_EQ(run("bench --task rms_norm --case t1 --all-params").exit_code, 3);
  const auto runs = run("--json runs");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  const std::string command = nlohmann::json::parse(runs.out).at(0).at("command");
  EXPECT_NE(command.find(" --all-params"), std::string::npos) << command;
}

TEST_F(BlasterCli, HelpNamesTheCompileLimits) {
  for (const char* command : {"bench", "compile", "portfolio"}) {
    const auto r = run(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    for (const char* flag : {"--compile-timeout", "--compile-memory", "--max-source-bytes",
                             "--max-launches", "--max-variants", "--python"}) {
      EXPECT_NE(r.out.find(flag), std::string::npos) << command << " " << flag;
    }
  }
}

TEST_F(BlasterCli, VersionNamesTheSourceRevision) {
  const auto r = run("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, fmt::format("blaster 0.1.0 ({})\n", source_revision()));
}

TEST_F(BlasterCli, DoctorJsonNamesNvrtcAndTheGpuState) {
  const auto r = run("doctor --json");
  // Without a GPU doctor still did its job: it says so, and succeeds.
  EXPECT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("nvrtc").get<std::string>().empty());
  EXPECT_EQ(j.at("blaster_revision"), source_revision());
  if (gpu_present()) {
    EXPECT_FALSE(j.at("gpu").is_null());
  } else {
    EXPECT_TRUE(j.at("gpu").is_null());
    EXPECT_FALSE(j.at("gpu_unavailable").get<std::string>().empty());
  }
}

}  // namespace
}  // namespace blaster

namespace blaster {
namespace {

TEST_F(BlasterCli, ProfileWithoutAGpuSaysWhyInOneLineAndExitsThree) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is here: tests/gpu/profile_test.cpp profiles on it";
  const auto r = run("profile --task rmsnorm");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string last = r.err.substr(r.err.rfind("blaster: "));
  EXPECT_EQ(last.rfind("blaster: counters need a GPU: ", 0), 0U) << r.err;
  EXPECT_EQ(std::count(last.begin(), last.end(), '\n'), 1) << last;
  const auto j = run("--json profile --task rmsnorm");
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_EQ(nlohmann::json::parse(j.out).at("error").at("code"), "no_gpu");
}

}  // namespace
}  // namespace blaster
